"""Hosts of the cluster: Linux network namespaces on a bridge of the cluster's own.

Each host is a namespace `<prefix>-<name>` with loopback and one veth end, the other end on the
bridge `<prefix>-br` in the root namespace; the bridge holds the network's first address, so the
harness (in the root namespace) reaches every host. Namespaces get no default route: from a host,
only the cluster's addresses and its own loopback are reachable. A host without a namespace
(`ns=None`) is this machine's loopback, for tests that need no network.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

PG_USER = "pgserver"  # PostgreSQL refuses to run as root; the embedded database uses this user


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    ns: str | None = None

    def argv(self, command: list[str], *, user: str | None = None) -> list[str]:
        if user is not None and os.geteuid() == 0:
            command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", *command]
        return ["ip", "netns", "exec", self.ns, *command] if self.ns else command

    def run(self, command: list[str], *, user: str | None = None, **kwargs) -> str:
        kwargs.setdefault("timeout", 120)
        done = subprocess.run(
            self.argv(command, user=user), capture_output=True, text=True, check=False, **kwargs
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} on {self.name}: {done.stderr or done.stdout}")
        return done.stdout

    def start(
        self, command: list[str], *, log: Path, user: str | None = None, **kwargs
    ) -> subprocess.Popen:
        """A long-running process on this host, in a session of its own, output to `log`."""
        with log.open("ab") as out:
            return subprocess.Popen(
                self.argv(command, user=user),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                **kwargs,
            )

    def pids(self) -> list[int]:
        if self.ns is None:
            return []
        done = subprocess.run(["ip", "netns", "pids", self.ns], capture_output=True, text=True)
        return [int(pid) for pid in done.stdout.split()]

    def kill_all(self, sig: int = signal.SIGKILL) -> int:
        """Signal every process of this host (kill -9 a host); returns how many there were."""
        pids = self.pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        return len(pids)


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def bridge_name(prefix: str) -> str:
    return f"{prefix}-br"[:15]


def create_network(prefix: str, gateway: str, prefix_len: int) -> None:
    bridge = bridge_name(prefix)
    ip("link", "add", bridge, "type", "bridge")
    ip("addr", "add", f"{gateway}/{prefix_len}", "dev", bridge)
    ip("link", "set", bridge, "up")


def create_host(prefix: str, host: Host, prefix_len: int) -> None:
    assert host.ns is not None
    outside = f"{prefix}-{host.name}"[:15]
    inside = "eth0"
    ip("netns", "add", host.ns)
    ip("link", "add", outside, "type", "veth", "peer", "name", f"{outside[:13]}-p")
    ip("link", "set", f"{outside[:13]}-p", "netns", host.ns)
    ip("link", "set", outside, "master", bridge_name(prefix), "up")
    ip("-n", host.ns, "link", "set", f"{outside[:13]}-p", "name", inside)
    ip("-n", host.ns, "addr", "add", f"{host.address}/{prefix_len}", "dev", inside)
    ip("-n", host.ns, "link", "set", inside, "up")
    ip("-n", host.ns, "link", "set", "lo", "up")


def namespaces(prefix: str) -> list[str]:
    listed = ip("netns", "list", check=False).stdout.split("\n")
    return [line.split()[0] for line in listed if line.startswith(f"{prefix}-")]


def links(prefix: str) -> list[str]:
    """The cluster's interfaces in the root namespace: the bridge and the veths' root ends."""
    listed = ip("-br", "link", "show", check=False).stdout.splitlines()
    return [line.split()[0].split("@")[0] for line in listed if line.startswith(f"{prefix}-")]


def destroy_network(prefix: str, hosts: list[Host]) -> None:
    """Kill every process of every host, delete the namespaces (their veths go with them) and
    the bridge."""
    for host in hosts:
        host.kill_all()
    deadline = time.monotonic() + 10
    while any(h.pids() for h in hosts) and time.monotonic() < deadline:
        time.sleep(0.1)
    # Each veth pair goes with its root end: a namespace the kernel frees late keeps none.
    for link in links(prefix):
        ip("link", "delete", link, check=False)
    for ns in namespaces(prefix):
        ip("netns", "delete", ns, check=False)


def left_behind(prefix: str, hosts: list[Host], state_dir: Path) -> list[str]:
    """What a clean `down` must not leave: namespaces, their processes, the bridge, files."""
    found = [f"namespace {ns}" for ns in namespaces(prefix)]
    found += [f"process {pid} on {h.name}" for h in hosts for pid in h.pids()]
    found += [f"interface {link}" for link in links(prefix)]
    if state_dir.exists():
        found.append(f"directory {state_dir}")
    return found


def ensure_pg_user() -> None:
    """The unprivileged user PostgreSQL runs as when this runs as root (created if missing)."""
    if os.geteuid() != 0:
        return
    import pwd

    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "-s", "/bin/bash", PG_USER], check=True, capture_output=True)


def wait_for_port(host: Host, port: int, *, timeout: float, what: str, process=None) -> None:
    """Until something on `host` accepts TCP connections on `port`."""
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((host.address, port), 1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not listen on {host.address}:{port} in {timeout:.0f} s")
