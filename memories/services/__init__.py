"""Writes of memories. Surfaces and tasks call these; reads are in selectors and recall.

`remember` is the one write path (a single remember is a batch of one), with its input checks,
duplicate lookups in `duplicates` and idempotency keys in `idempotency`; `lifecycle` edits,
forgets, supersedes and restores; `relocate` moves and shares. What a memory derives from its
text (hash, language, embedding, windows, the translation claim) is set by one owner that every
write calls, `memories.canonical.content`.
"""
