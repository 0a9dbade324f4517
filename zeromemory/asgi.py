"""The ASGI application: Django (dashboard, REST API, admin) in one process."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")

application = get_asgi_application()
