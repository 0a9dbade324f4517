"""Capture: memory that fills itself from transcripts, documents and history.

`ingest` stores a chunk at once (secrets redacted, a per-user hash ledger, so a resend is
harmless) and answers 202; `tasks` then run `service.chunk_extract` off the request path: one
Messages API call (`extractor`, a forced `record_memories` tool) proposes memories in canonical
English with their evidence, `gates` keep the sure ones, and each goes through `remember()` with
the chunk and its evidence in provenance. Retries, leases and the sweeper work as
canonicalization's do; `schemas` are the answers.
"""
