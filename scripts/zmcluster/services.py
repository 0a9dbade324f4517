"""Debian's Redis, PgBouncer and HAProxy, each configured for the cluster and started on a host.

Debian starts none of them here (no init system); each runs in the foreground as a child of the
harness, with its files under the cluster's state directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from scripts.zmcluster.hosts import PG_USER, Host, wait_for_port

PACKAGES = {"redis-server": "redis-server", "pgbouncer": "pgbouncer", "haproxy": "haproxy"}


def missing_packages(*commands: str) -> list[str]:
    return [PACKAGES[c] for c in commands if shutil.which(c) is None and not _sbin(c).exists()]


def _sbin(command: str) -> Path:
    return Path("/usr/sbin") / command


def _binary(command: str) -> str:
    return shutil.which(command) or str(_sbin(command))


def redis(host: Host, root: Path, *, port: int = 6379) -> subprocess.Popen:
    """redis-server without persistence (no RDB, no AOF): a restart empties its queues, which is
    what the sweepers must survive."""
    root.mkdir(parents=True, exist_ok=True)
    command = [
        _binary("redis-server"),
        *("--bind", host.address, "--port", str(port), "--dir", str(root)),
        *("--save", "", "--appendonly", "no", "--protected-mode", "no"),
    ]
    process = host.start(command, log=root / "redis.log")
    wait_for_port(host, port, timeout=20, what="redis-server", process=process)
    return process


PGBOUNCER = """
[databases]
zeromemory = host={db_host} port={db_port} dbname=zeromemory
[pgbouncer]
listen_addr = {address}
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {root}/users.txt
pool_mode = transaction
default_pool_size = {pool}
max_client_conn = 400
server_reset_query =
server_check_delay = 5
server_connect_timeout = 3
server_login_retry = 1
query_wait_timeout = 10
ignore_startup_parameters = extra_float_digits,options
logfile = {root}/pgbouncer.log
pidfile = {root}/pgbouncer.pid
"""


def pgbouncer(
    host: Host, root: Path, *, db_host: str, db_port: int, port: int = 6432, pool: int = 20
) -> subprocess.Popen:
    """PgBouncer in transaction pooling in front of the primary (docs/scaling.md: why this mode)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "users.txt").write_text('"postgres" ""\n')
    config = root / "pgbouncer.ini"
    config.write_text(
        PGBOUNCER.format(
            db_host=db_host, db_port=db_port, address=host.address, port=port, root=root, pool=pool
        )
    )
    user = PG_USER if os.geteuid() == 0 else None  # PgBouncer refuses to run as root
    if user:
        shutil.chown(root, user)
        for path in root.iterdir():
            shutil.chown(path, user)
    process = host.start([_binary("pgbouncer"), str(config)], log=root / "stdout.log", user=user)
    wait_for_port(host, port, timeout=20, what="pgbouncer", process=process)
    return process


HAPROXY = """
global
    maxconn 2000
defaults
    mode http
    log global
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    timeout queue 60s
    timeout check 5s
    retries 3
    # A refused connection is retried on another web host at once, and a host that refuses one
    # is taken out at once, before its checks fail.
    option redispatch 1
    log stdout format raw local0
    option httplog
    option dontlog-normal
    errorfile 503 {root}/503.http
frontend web
    bind {address}:{port}
    default_backend app
backend app
    balance roundrobin
    option httpchk GET /readyz
    http-check send hdr Host {check_host}
    # At most as many requests per web host as its threads; the rest wait here, so a check
    # is never queued behind a crowd inside a busy host and mistaken for a dead one.
    default-server inter 1s fall 3 rise 2 maxconn {maxconn} {observe}
{servers}
"""
# HAProxy's own answer when no web host is ready: the API's envelope, with Retry-After.
UNAVAILABLE = (
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: application/json\r\n"
    "Retry-After: 5\r\n"
    "Cache-Control: no-store\r\n"
    "Connection: close\r\n\r\n"
    '{"error": {"code": "unavailable", "message": "No web host is ready; try again in a few '
    'seconds.", "details": {"retry_after": 5}}}\n'
)


def haproxy(
    host: Host,
    root: Path,
    backends: list[tuple[str, str, int]],
    *,
    port: int = 80,
    maxconn: int = 8,
) -> subprocess.Popen:
    """HAProxy in front of the web hosts, each checked on /readyz every second."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "503.http").write_text(UNAVAILABLE)
    servers = "\n".join(f"    server {name} {addr}:{p} check" for name, addr, p in backends)
    config = root / "haproxy.cfg"
    config.write_text(
        HAPROXY.format(
            root=root,
            address=host.address,
            port=port,
            check_host=host.address,
            servers=servers,
            maxconn=maxconn,
            observe="observe layer4 error-limit 1 on-error mark-down",
        )
    )
    process = host.start([_binary("haproxy"), "-db", "-f", str(config)], log=root / "haproxy.log")
    wait_for_port(host, port, timeout=20, what="haproxy", process=process)
    return process
