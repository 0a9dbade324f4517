"""Writes of memories. Surfaces and tasks call these; reads are in selectors and recall.

`remember` is the one write path (a single remember is a batch of one), with its input checks in
`remember_input`, duplicate lookups in `duplicates` and idempotency keys in `idempotency`;
`lifecycle` edits, forgets, supersedes and restores; `common` holds the text hash and the window
rows both share with canonicalization.
"""
