"""The project: settings, URLs, ASGI/WSGI, `manage.py serve`, the embedded database launcher.

`core/` is the plumbing every app imports and that imports no app.
"""
