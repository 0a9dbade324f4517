"""The watcher's only link to the server: JSON over HTTP to the REST API (urllib)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from zmwatch import __version__

TIMEOUT = 30.0
# Statuses a later attempt can change: the server or the network is down, busy, or the token or
# scope is wrong until the user fixes the configuration. Any other 4xx refuses this chunk.
RETRYABLE = {401, 403, 404, 408, 409, 425, 429}


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any


class Unreachable(Exception):
    """No answer from the server (refused, reset, timed out)."""


class Refused(Exception):
    """An answer that is not a success."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.status in RETRYABLE or self.status >= 500


def _message(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return body[:200].decode("utf-8", "replace")


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


class Client:
    def __init__(self, *, url: str, token: str, timeout: float = TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def call(self, method: str, path: str, body: Any = None) -> Answer:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(  # noqa: S310 - the configured server's URL
            self.url + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/json",
                "User-Agent": f"zm-watch/{__version__}",
                **({"Content-Type": "application/json"} if data is not None else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                raw = response.read()
                return Answer(response.status, json.loads(raw) if raw else None)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            raise Refused(
                exc.code, _message(raw), _retry_after(exc.headers.get("Retry-After"))
            ) from None
        except (OSError, ValueError) as exc:  # URLError, timeouts, resets, a torn answer
            raise Unreachable(f"{self.url} did not answer: {exc}") from None

    def me(self) -> Answer:
        return self.call("GET", "/api/v1/me")

    def ingest(self, body: dict[str, Any]) -> Answer:
        return self.call("POST", "/api/v1/ingest", body)

    def import_file(self, body: dict[str, Any]) -> Answer:
        return self.call("POST", "/api/v1/import", body)
