"""The application's hosts: migrations, web hosts (`manage.py serve --no-worker` on 0.0.0.0) and
worker hosts (`manage.py qcluster`, each with the fake Messages API on its own loopback)."""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from scripts.zmcluster.hosts import wait_for_port

if TYPE_CHECKING:
    from scripts.zmcluster.cluster import Cluster

MANAGE = ["manage.py"]
LLM_DELAY = "1"  # seconds each fake extraction takes: a worker can be killed mid-call


def _root() -> str:
    from scripts.zmcluster.cluster import ROOT

    return str(ROOT)


def migrate(cluster: Cluster) -> None:
    """Once, straight on the primary (not through PgBouncer), before any app host starts."""
    env = {**cluster.app_env("migrate"), "DATABASE_URL": cluster.database_url(direct=True)}
    env.pop("ZM_DATABASE_REPLICA_URLS", None)
    subprocess.run(
        [sys.executable, *MANAGE, "migrate", "--no-input", "-v", "0"],
        cwd=_root(),
        env=env,
        check=True,
        timeout=300,
    )


def start_worker(cluster: Cluster, name: str) -> subprocess.Popen:
    host, root = cluster.host(name), cluster.dir(name)
    url_file = root / "llm.url"
    url_file.unlink(missing_ok=True)
    env = cluster.app_env(name)
    llm = [sys.executable, "-m", "scripts.zmcluster.llm", "--delay", LLM_DELAY]
    host.start([*llm, "--url-file", str(url_file)], log=root / "llm.log", cwd=_root(), env=env)
    deadline = time.monotonic() + 30
    while not url_file.exists() or not url_file.read_text():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the fake Messages API on {name} did not start")
        time.sleep(0.1)
    env["ANTHROPIC_BASE_URL"] = url_file.read_text()
    command = [sys.executable, *MANAGE, "qcluster"]
    return host.start(command, log=root / "qcluster.log", cwd=_root(), env=env)


def start_web(cluster: Cluster, name: str) -> subprocess.Popen:
    from scripts.zmcluster.cluster import WEB_PORT

    host, root = cluster.host(name), cluster.dir(name)
    # 0.0.0.0 inside the host's namespace: its loopback and its one cluster address.
    command = [sys.executable, *MANAGE, "serve", "--no-worker", "--host", "0.0.0.0"]  # noqa: S104
    command += ["--port", str(WEB_PORT)]
    env = cluster.app_env(name)
    process = host.start(command, log=root / "serve.log", cwd=_root(), env=env)
    wait_for_port(host, WEB_PORT, timeout=180, what=f"serve on {name}", process=process)
    return process


def ready(address: str, port: int) -> bool:
    try:
        probe = http.client.HTTPConnection(address, port, timeout=5)
        probe.request("GET", "/readyz", headers={"Host": address})
        return probe.getresponse().status == 200
    except OSError:
        return False


def wait_ready(cluster: Cluster, timeout: float = 180) -> None:
    """Until both web hosts answer /readyz (a worker heartbeat included) and HAProxy does."""
    from scripts.zmcluster.cluster import LB_PORT, WEB_PORT

    targets = [(cluster.host(w).address, WEB_PORT) for w in ("web1", "web2")]
    targets.append((cluster.host("lb").address, LB_PORT))
    deadline = time.monotonic() + timeout
    while not all(ready(*target) for target in targets):
        if time.monotonic() > deadline:
            raise RuntimeError(f"not ready in {timeout:.0f} s: see {cluster.state_dir}/*/*.log")
        time.sleep(1)


def django_setup(cluster: Cluster) -> None:
    """Django in the harness, on the primary itself, for fixtures and the drills' checks."""
    env = cluster.app_env("harness")
    env["DATABASE_URL"] = cluster.database_url(direct=True)
    env.pop("ZM_DATABASE_REPLICA_URLS", None)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")
    sys.path.insert(0, _root())
    import django

    django.setup()
