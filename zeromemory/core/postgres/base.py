"""Django's PostgreSQL backend, with a health check that costs no round trip on a quiet
connection (ENGINE "zeromemory.core.postgres").

Django checks a kept connection at the first query of each request (CONN_HEALTH_CHECKS) by
sending `SELECT 1`, a round trip before every request's real work (about 0.3 ms of an API call
here). A connection the server closed (a restart, a terminated backend, a pooler going away)
has something to read on its socket: the server's last error, or the end of the stream. So a
connection that is idle, outside a transaction and with nothing to read is taken as usable,
and any other still gets Django's own `SELECT 1`.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        raw = self.connection
        if raw is None or raw.closed or raw.broken:
            return False
        if raw.pgconn.transaction_status == TransactionStatus.IDLE and not _readable(raw):
            return True
        return super().is_usable()


def _readable(raw) -> bool:
    """Whether the server sent anything this connection has not read (or closed it)."""
    try:
        poller = select.poll()
        poller.register(raw.pgconn.socket, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # no socket any more
        return True
