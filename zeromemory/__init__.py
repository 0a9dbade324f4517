"""The project: settings, URLs, ASGI/WSGI, the web process, `manage.py serve` and its
supervisor, the embedded database launcher, health, readiness and metrics.

`core/` is the plumbing every app imports and that imports no app.
"""
