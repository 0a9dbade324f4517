"""The ASGI application: Django (dashboard, REST API, admin) and the MCP endpoint at /mcp, in one
process on one port. `uvicorn zeromemory.asgi:application` serves both."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")

django_application = get_asgi_application()

# A model whose vectors do not fit the embedding column stops the web server at start.
from memories.embeddings import check_dimension, declared_dimension  # noqa: E402

check_dimension(declared_dimension())

# Imported once Django is set up: the MCP tools use the ORM and the services.
from memories.mcp.http import with_mcp  # noqa: E402

application = with_mcp(django_application)
