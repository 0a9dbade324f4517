"""The deployment: which hosts, their addresses, and bringing them up and down.

db1     PostgreSQL primary            .11:5432
db2     PostgreSQL streaming replica  .12:5432   (full only)
pgb     PgBouncer, transaction pool   .13:6432   (full only; else the apps use db1)
redis   Redis, the django-q2 broker   .14:6379
web1/2  manage.py serve --no-worker   .21/.22:8000
wk1/2   manage.py qcluster            .31/.32    (the reduced cluster has wk1 only)
lb      HAProxy, /readyz checks       .40:80
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from scripts.zmcluster import hosts, services

ROOT = Path(__file__).resolve().parent.parent.parent
LAST_OCTETS = {
    "db1": 11,
    "db2": 12,
    "pgb": 13,
    "redis": 14,
    "web1": 21,
    "web2": 22,
    "wk1": 31,
    "wk2": 32,
    "lb": 40,
}
REDUCED = ("db1", "redis", "web1", "web2", "wk1", "lb")
WEB_PORT, LB_PORT, PG_PORT, PGB_PORT, REDIS_PORT = 8000, 80, 5432, 6432, 6379
# Short leases so a dead worker's chunk is taken over within the drill (timeout < lease).
JOB_ENV = {"ZM_EXTRACTOR_TIMEOUT": "5", "ZM_EXTRACTION_LEASE": "10", "ZM_TRANSLATION_LEASE": "10"}


@dataclass(frozen=True)
class Cluster:
    prefix: str  # namespace and interface names start with it
    subnet: str  # the first three octets, inside 198.18.0.0/15
    full: bool

    @property
    def state_dir(self) -> Path:
        return Path(tempfile.gettempdir()) / f"zmcluster-{self.prefix}"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(LAST_OCTETS) if self.full else REDUCED

    def host(self, name: str) -> hosts.Host:
        return hosts.Host(name, f"{self.subnet}.{LAST_OCTETS[name]}", f"{self.prefix}-{name}")

    def all_hosts(self) -> list[hosts.Host]:
        return [self.host(name) for name in self.names]

    @property
    def network(self) -> str:
        return f"{self.subnet}.0/24"

    @property
    def url(self) -> str:
        return f"http://{self.host('lb').address}:{LB_PORT}"

    def database_url(self, direct: bool = False) -> str:
        if self.full and not direct:
            return f"postgres://postgres@{self.host('pgb').address}:{PGB_PORT}/zeromemory"
        return f"postgres://postgres@{self.host('db1').address}:{PG_PORT}/zeromemory"

    def dir(self, name: str) -> Path:
        path = self.state_dir / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def app_env(self, name: str) -> dict[str, str]:
        """The environment of a web or worker host: every host shares the secret key."""
        keep = ("PATH", "HOME", "LANG", "TZ")
        env = {k: v for k, v in os.environ.items() if k in keep}
        lb, webs = self.host("lb").address, [self.host(w).address for w in ("web1", "web2")]
        env.update(
            DATABASE_URL=self.database_url(),
            ZM_DATA_DIR=str(self.dir(name) / "var"),
            ZM_SECRET_KEY=(self.state_dir / "secret_key").read_text(),
            ZM_ALLOWED_HOSTS=",".join([lb, *webs, "localhost", "127.0.0.1"]),
            ZM_REDIS_URL=f"redis://{self.host('redis').address}:{REDIS_PORT}/0",
            ZM_WEB_PROCESSES="1",
            ZM_Q_WORKERS="2",
            ZM_LOG_LEVEL="WARNING",
            ANTHROPIC_API_KEY="drill-key",
            HF_HUB_OFFLINE="1",
            NO_PROXY="*",
            no_proxy="*",
            PYTHONUNBUFFERED="1",
            **JOB_ENV,
        )
        if self.full:
            env["ZM_DB_TRANSACTION_POOLING"] = "true"
            replica = self.host("db2").address
            env["ZM_DATABASE_REPLICA_URLS"] = f"postgres://postgres@{replica}:{PG_PORT}/zeromemory"
        return env

    def save(self) -> None:
        state = {"prefix": self.prefix, "subnet": self.subnet, "full": self.full}
        (self.state_dir / "cluster.json").write_text(json.dumps(state))


def load(prefix: str) -> Cluster | None:
    state = Path(tempfile.gettempdir()) / f"zmcluster-{prefix}" / "cluster.json"
    return Cluster(**json.loads(state.read_text())) if state.exists() else None


def preflight(cluster: Cluster) -> None:
    """Root, the Debian packages, no cluster of this name already up."""
    if os.geteuid() != 0:
        raise SystemExit(
            "scripts/cluster needs root: it creates network namespaces, a bridge and veth pairs."
            " Run it as root (sudo scripts/cluster ...)."
        )
    missing = services.missing_packages("redis-server", "haproxy", "pgbouncer")
    if missing:
        raise SystemExit(
            f"scripts/cluster needs {', '.join(missing)}; run: sh scripts/cluster-deps.sh"
        )
    if hosts.namespaces(cluster.prefix) or hosts.links(cluster.prefix):
        raise SystemExit(f"a cluster {cluster.prefix!r} is up; run: scripts/cluster down")
    if cluster.state_dir.exists():
        # Files without hosts: a run killed before its `down`, or a machine restarted (the
        # namespaces and links do not outlive it). Nothing runs there: they go.
        shutil.rmtree(cluster.state_dir)


@contextmanager
def claimed(cluster: Cluster) -> Iterator[None]:
    """Held from the preflight until the cluster's namespaces exist: another `up` of the same
    cluster waits, then finds them, and never takes this one's new files for stale ones."""
    lock = Path(tempfile.gettempdir()) / f"zmcluster-{cluster.prefix}.lock"
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def up(cluster: Cluster, log=print) -> None:
    with claimed(cluster):
        preflight(cluster)
        _network(cluster)
    _services(cluster, log)


def _network(cluster: Cluster) -> None:
    cluster.state_dir.mkdir(mode=0o755)
    cluster.state_dir.chmod(0o755)  # PostgreSQL's and PgBouncer's user must reach their files
    (cluster.state_dir / "secret_key").write_text(secrets.token_urlsafe(50))
    cluster.save()
    hosts.ensure_pg_user()
    hosts.create_network(cluster.prefix, f"{cluster.subnet}.1", 24)
    for host in cluster.all_hosts():
        hosts.create_host(cluster.prefix, host, 24)


def _services(cluster: Cluster, log) -> None:
    from scripts.zmcluster import apps, postgres

    log(f"network: {len(cluster.names)} namespaces on {cluster.network}")
    primary = postgres.primary(
        cluster.host("db1"), cluster.dir("db1"), port=PG_PORT, network=cluster.network
    )
    if cluster.full:
        postgres.replica(cluster.host("db2"), cluster.dir("db2"), primary, port=PG_PORT)
        services.pgbouncer(
            cluster.host("pgb"), cluster.dir("pgb"), db_host=primary.host.address, db_port=PG_PORT
        )
    services.redis(cluster.host("redis"), cluster.dir("redis"), port=REDIS_PORT)
    log("databases: primary" + (", replica, pgbouncer" if cluster.full else "") + "; redis")
    apps.migrate(cluster)
    for name in ("wk1", "wk2") if cluster.full else ("wk1",):
        apps.start_worker(cluster, name)
    for name in ("web1", "web2"):
        apps.start_web(cluster, name)
    backends = [(w, cluster.host(w).address, WEB_PORT) for w in ("web1", "web2")]
    services.haproxy(cluster.host("lb"), cluster.dir("lb"), backends, port=LB_PORT)
    apps.wait_ready(cluster)
    log(f"up: {cluster.url} (HAProxy) in front of web1 and web2")


def down(cluster: Cluster) -> list[str]:
    """Stop everything, delete the network and the files; what is still there (nothing)."""
    every = [cluster.host(name) for name in LAST_OCTETS]
    hosts.destroy_network(cluster.prefix, every)
    shutil.rmtree(cluster.state_dir, ignore_errors=True)
    return hosts.left_behind(cluster.prefix, every, cluster.state_dir)


def status(cluster: Cluster) -> dict[str, object]:
    found: dict[str, object] = {}
    for host in cluster.all_hosts():
        found[host.name] = {"address": host.address, "processes": len(host.pids())}
    return found
