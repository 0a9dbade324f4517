"""What the canonicalization tests share: texts, fixtures, helpers for threads and waits."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

from django.conf import settings as django_settings
from django.db import connection, connections
from django.utils import timezone

from memories.models import Memory
from tests.fakes.anthropic_api import (
    Step,
    tool_answer,
)

GERMAN = "Wir deployen jeden Freitag nach dem Mittagessen auf die Produktionsumgebung."
ENGLISH = "We deploy to production every Friday after lunch."

GERMAN_CODE = (
    "Benutze `select_for_update(skip_locked=True)` in memories/canonical.py, wenn zwei Worker "
    "dieselbe Zeile bearbeiten."
)
ENGLISH_CODE = (
    "Use `select_for_update(skip_locked=True)` in memories/canonical.py when two workers edit "
    "the same row."
)

VERBATIM = "Freitags nach dem Mittagessen, nie vorher."


# --- helpers --------------------------------------------------------------------------------


def remember(client, content, scope, **extra):
    body = {"content": content, "kind": "decision", "scope": scope.public_id, **extra}
    return client.post("/api/v1/memories", body, format="json")


def write(client, content, scope, capture, **extra) -> Memory:
    """Remember through REST and run what was queued on commit (the translation, when sync)."""
    with capture(execute=True):
        response = remember(client, content, scope, **extra)
    assert response.status_code in (200, 201), response.json()
    return Memory.objects.get(public_id=response.json()["id"])


def detail(client, memory: Memory) -> dict:
    response = client.get(f"/api/v1/memories/{memory.public_id}")
    assert response.status_code == 200, response.json()
    return response.json()


def make_due(memory: Memory) -> None:
    """Time passes: the backoff is over and any lease has run out."""
    past = timezone.now() - timedelta(seconds=1)
    Memory.objects.filter(pk=memory.pk).update(
        translation_next_at=past, translation_lease_until=past
    )


def assert_pending_and_readable(client, memory: Memory, original: str) -> dict:
    """Nothing lost: the memory reads with its text as written, pending."""
    body = detail(client, memory)
    assert body["content"] == original
    assert body["translation_status"] == "pending"
    assert body["state"] == "valid"
    listed = client.get("/api/v1/memories", {"translation_status": "pending"}).json()["results"]
    assert memory.public_id in [item["id"] for item in listed]
    return body


def assert_retry_at(memory: Memory, before, after, seconds: float) -> None:
    assert memory.translation_next_at is not None
    earliest = before + timedelta(seconds=seconds) - timedelta(seconds=1)
    latest = after + timedelta(seconds=seconds) + timedelta(seconds=1)
    assert earliest <= memory.translation_next_at <= latest, (
        memory.translation_next_at - before
    ).total_seconds()


def prompts(fake) -> list[str]:
    return [request.json["messages"][0]["content"] for request in fake.requests]


def blocking_step(release: threading.Event, english: str) -> Step:
    """A tool answer held back until the test sets `release` (a translation in flight)."""

    def answer(request, stopping):
        release.wait(20)
        return tool_answer(english).answer(request, stopping)

    return Step(f"blocked, then {english!r}", answer)


class InThread:
    """Run a task function in its own thread (with its own database connection)."""

    def __init__(self, fn, *args) -> None:
        self.result: object = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, *args), daemon=True)
        self._thread.start()

    def _run(self, fn, *args) -> None:
        try:
            self.result = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in join()
            self.error = exc
        finally:
            connections.close_all()

    def join(self, timeout: float = 20) -> object:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the task did not finish"
        if self.error is not None:
            raise self.error
        return self.result


# --- the happy path -------------------------------------------------------------------------


def database_url(settings_dict: dict) -> str:
    """The test database as a DATABASE_URL; the host may be a socket directory (a path)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password, safe='')}" if password else user
    host = quote(settings_dict.get("HOST") or "localhost", safe="")
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{quote(settings_dict['NAME'], safe='')}"


def worker_env(fake_anthropic, **extra: str) -> dict[str, str]:
    """The environment of a real worker: the test database, the fake Messages API, one process."""
    return {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ZM_Q_WORKERS": "1",
        "ZM_TESTING": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        **extra,
    }


class Worker:
    """`manage.py qcluster` in its own process group, against the test database."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, str(Path(django_settings.BASE_DIR) / "manage.py"), "qcluster"],
            cwd=django_settings.BASE_DIR,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)
        with contextlib.suppress(ProcessLookupError):  # processes a graceful stop left behind
            os.killpg(self.process.pid, signal.SIGKILL)
        self._log.close()
