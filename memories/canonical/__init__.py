"""Canonical English: every memory's content is English, whatever language it was written in.

In the order a non-English write travels: `language` decides whether a text needs translation
(over `scripts` and `function_words`, after masking the spans `protected` keeps verbatim);
`service` claims the memory and records the outcome; `tasks` queue it on commit and sweep what is
due; `translator` makes the one Messages API call and checks the protected spans survived.
django-modeltranslation's registry for the kind catalogue is `memories/translation.py` (the name
that library looks for); it translates labels, never memory content.
"""
