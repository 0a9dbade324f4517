"""Plumbing every app imports, importing none of them: the domain errors and the one error
envelope (`errors`, with the DRF handler in `envelope`), public ids, the Actor and its Surface,
the strict JSON parser and serializer fields, the shared rate limit, URL converters, REST
rendering of the pydantic answers, SQL helpers and the LLM client factory.

`make lint` checks (import-linter) that nothing here imports an app.
"""
