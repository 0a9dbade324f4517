"""What the surfaces call: which scopes an export holds, an upload read into a bounded file."""

from __future__ import annotations

import tempfile
from typing import IO

from django.conf import settings
from django.utils.translation import gettext as _

from memories.portability.archive import BadArchive
from scopes.access import administrable_scope, administrable_scopes
from scopes.models import Scope
from zeromemory.core.actor import Actor

READ_BYTES = 1 << 16


def exportable_scopes(*, actor: Actor, scope_ids: list[str] | None = None) -> list[Scope]:
    """The scopes an export by this actor holds: the named ones (each must be administrable),
    or every scope it administers (a personal scope's owner administers it)."""
    if scope_ids:
        return [administrable_scope(actor, public_id) for public_id in dict.fromkeys(scope_ids)]
    return list(administrable_scopes(actor).order_by("id"))


def spool_upload(stream: IO[bytes], *, declared: int | None) -> IO[bytes]:
    """The upload in a temporary file (in memory while small), refused past the limit: the
    declared length first, then the bytes actually read."""
    limit = settings.IMPORT_MAX_BYTES
    too_large = BadArchive(_("The archive is larger than %(n)d bytes.") % {"n": limit})
    if declared is not None and declared > limit:
        raise too_large
    spool = tempfile.SpooledTemporaryFile(max_size=8 * READ_BYTES)  # noqa: SIM115 - returned
    size = 0
    while chunk := stream.read(READ_BYTES):
        size += len(chunk)
        if size > limit:
            spool.close()
            raise too_large
        spool.write(chunk)
    spool.seek(0)
    return spool
