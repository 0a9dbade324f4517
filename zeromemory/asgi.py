"""The ASGI application: Django (dashboard, REST API, admin) in one process."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")

application = get_asgi_application()

# A model whose vectors do not fit the embedding column stops the web server at start.
from memories.embeddings import check_dimension, declared_dimension  # noqa: E402

check_dimension(declared_dimension())
