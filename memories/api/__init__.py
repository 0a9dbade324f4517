"""The REST surface of memories under /api/v1/: thin views by resource, and their URLs.

`memories.py` is remember, the batch, the list and one memory's lifecycle; `read.py` is recall,
context, briefing and the caller's activity log. Views validate with DRF Input serializers, call
one service or selector, and render its schema.
"""
