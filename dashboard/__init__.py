"""The HTMX dashboard for people: views and forms over the same services and selectors as the
API, no business logic of its own. Templates live in the project's `templates/`."""
