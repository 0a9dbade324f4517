"""Portability: export of scopes as files, import of an export, erasure of an account or a scope,
and the purge of one memory for a legal request."""
