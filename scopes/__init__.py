"""Tenancy: scopes, memberships with roles, and API tokens.

`access.py` is the one door: which scopes a user or token may read, write or administer, and
what each kind of caller may do. `services.py` writes, `selectors.py` reads, `schemas.py` the
answers, `api.py` and `urls.py` the REST surface, `authentication.py` the bearer-token lookup.
"""
