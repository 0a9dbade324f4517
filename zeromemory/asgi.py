"""The ASGI application: Django (dashboard, REST API, admin) and the MCP endpoint at /mcp, in one
process on one port. `python -m zeromemory.web` (what `make run` starts) serves both.

Django runs as a WSGI application in a pool of ZM_WEB_THREADS threads (zeromemory.core.wsgi_bridge,
on a2wsgi): a request crosses from the event loop to a thread once and its whole answer comes
back in one message, instead of once per middleware hook as under Django's ASGI handler, and each
thread keeps its own database connection. MCP is served on the event loop itself.
"""

import gc
import os
import tempfile

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from zeromemory.core.bulk import ARCHIVE_IMPORT, BulkRouting
from zeromemory.core.wsgi_bridge import WSGIBridge

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")


def body_limit(path: str) -> int:
    """The archive imports (`ARCHIVE_IMPORT`) take more than ZM_MAX_BODY_BYTES, up to the
    import's own limit."""
    if ARCHIVE_IMPORT.fullmatch(path):
        return settings.IMPORT_MAX_BYTES
    return settings.MAX_BODY_BYTES


def with_chunked_bodies(app):
    """Django reads a request body by its Content-Length, and a chunked request has none, so its
    body would read as empty. Here it is read first into a temporary file (in memory while small),
    at most the path's limit + 1 bytes so that the parser still refuses one that is too large, and
    given its length."""

    def application(environ, start_response):
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH"):
            left = body_limit(environ.get("PATH_INFO", "")) + 1
            body = tempfile.SpooledTemporaryFile(max_size=settings.MAX_BODY_BYTES + 1)  # noqa: SIM115
            while left > 0 and (piece := environ["wsgi.input"].read(min(left, 1_048_576))):
                body.write(piece)
                left -= len(piece)
            environ["CONTENT_LENGTH"] = str(body.tell())
            body.seek(0)
            environ["wsgi.input"] = body
        return app(environ, start_response)

    return application


django_application = WSGIBridge(
    with_chunked_bodies(get_wsgi_application()),
    workers=settings.WEB_THREADS,
    hold_bytes=settings.MAX_BODY_BYTES,
)

# A model whose vectors do not fit the embedding column stops the web server at start; the model
# is loaded (and run once) before the first request, which would otherwise wait seconds for it.
from memories.embeddings import check_dimension, declared_dimension, embed_query  # noqa: E402

check_dimension(declared_dimension())
embed_query("warm up")

if settings.SERVES_BULK:  # its database sessions named (embedded database)
    from memories.background import sessions_named

    sessions_named(application="zero-memory bulk")

# Imported once Django is set up: the MCP tools use the ORM and the services.
from memories.mcp.http import with_mcp  # noqa: E402
from zeromemory.core.body_limit import BodyLimit  # noqa: E402

application = BodyLimit(
    BulkRouting(with_mcp(django_application), port=settings.BULK_PORT or None),
    body_limit,
    hold_at_most=settings.MAX_BODY_BYTES,
)

# Everything loaded so far lives as long as the process (the model, torch, transformers,
# Django): about 670,000 objects the garbage collector would walk in each full collection, a
# third of a second during which every thread of the process waits. A batch's objects set one
# off now and then, and a recall served beside it in the same process waited that long. What
# is left after one collection now is set aside for good (gc.freeze): a full collection then
# walks only what requests made since, and startup's own garbage is gone before.
gc.collect()
gc.freeze()
