"""Memories: what agents and people write, kept in canonical English, and how it is read back.

Grouped by capability, each a package whose docstring says what it holds:

- `models/` the tables; `schemas.py` one pydantic model per answer;
- `selectors.py` reads of memories by id and in lists, always through `scopes.access`;
- `jobs.py` the background-job engine that translation, extraction and judging declare on;
  `background.py` how background work yields to requests (priority, threads, slices);
- `state_rows.py` the rows a change of state writes: validity periods, moved provenance;
- `activity/` the activity log: its model, writes, reads and answers, and `activity_logged`;
- `services/` writes: remember (the one write path) and the lifecycle;
- `recall/` hybrid recall, build_context and briefings over the token budget;
- `canonical/` language detection and the background translation to English;
- `capture/` ingest, extraction by an LLM off the request path, import and bootstrap;
- `hygiene/` duplicates, supersessions and contradictions: the scan, the judge, review;
- `api/` the REST views and their URLs; `mcp/` the MCP server and tools;
- beside them `embeddings.py`, `kinds.py` (the catalogue), `admin.py`, `tasks.py` (the activity
  log's scheduled tasks) and `translation.py` (django-modeltranslation's registry for kind
  labels). Secrets are refused by `zeromemory.core.secrets`, which tenancy uses too.

The next capabilities land as siblings of these packages.
"""
