"""Delivery: send the spool's chunks to POST /api/v1/ingest, oldest first, and move a
transcript's offset only once the server has acknowledged the chunk (202 stored, or 200: the
server's hash ledger already had it, so a resend after a crash is harmless).

A failure (no answer, 5xx, 429, a token or scope the user must fix) keeps the chunk and backs
off 2 s to 60 s; a chunk the server refuses for good (400, 413) is set aside so the rest flows.
Consent is asked again before each send: a project ignored meanwhile sends nothing more.
"""

from __future__ import annotations

import logging
from pathlib import Path

from zmwatch import consent
from zmwatch.adapters.common import clean
from zmwatch.api import Client, Refused, Unreachable
from zmwatch.config import Config
from zmwatch.spool import Entry, Spool
from zmwatch.state import State

log = logging.getLogger("zm-watch")


class _Later(Exception):
    """The send failed: the chunk stays, and is tried again after the backoff."""


class Deliverer:
    def __init__(self, *, client: Client, config: Config, state: State, spool: Spool) -> None:
        self.client = client
        self.config = config
        self.state = state
        self.spool = spool

    def deliver(self, *, backoff: bool = True) -> bool:
        """Send what waits, until the spool is empty (True) or a send fails (False); unless
        told otherwise, not before the backoff after a failure is over."""
        if backoff and not self.state.may_send():
            return False
        for entry in self.spool.entries():
            current: Entry | None = entry
            while current is not None:
                try:
                    refusal = self._send(current)
                except _Later:
                    return False
                current = self._settle(current, refusal)
        return True

    def _body(self, entry: Entry) -> dict:
        chunk = entry.chunks[0]
        return {
            "content": chunk["content"],
            "source_kind": "transcript",
            "client": entry.data["client"],
            # a file name that is not UTF-8 must not make every send fail
            "conversation_id": clean(entry.data["conversation_id"][:200]),
            "source_path": clean(entry.data["transcript"][:1000]),
            "chunk_hash": chunk["hash"],
            "scope": consent.scope_for(Path(entry.data["project"]), self.config),
        }

    def _send(self, entry: Entry) -> str | None:
        """Send the entry's first chunk: None when it is done with (acknowledged, or dropped
        for want of consent) or the server's refusal; _Later to try again later."""
        transcript = entry.data["transcript"]
        if not consent.allowed(Path(entry.data["project"]), self.config):
            log.info("%s: not to be captured any more, a chunk is dropped", transcript)
            return None
        try:
            answer = self.client.ingest(self._body(entry))
        except Unreachable as exc:
            wait = self.state.failed(str(exc))
            log.warning("%s; next attempt in %.0f s", exc, wait)
            raise _Later from exc
        except Refused as exc:
            if exc.retryable:
                wait = self.state.failed(str(exc), retry_after=exc.retry_after)
                log.warning("the server answered %s; next attempt in %.0f s", exc, wait)
                raise _Later from exc
            self.state.note_error(f"{transcript}: refused {exc}")
            log.error("the server refused a chunk of %s: %s", transcript, exc)
            return str(exc)
        chunk = (answer.body or {}).get("chunk") or {}
        done = "was already stored" if chunk.get("duplicate") else "stored"
        log.info("%s: chunk %s %s", transcript, chunk.get("id"), done)
        return None

    def _settle(self, entry: Entry, refusal: str | None) -> Entry | None:
        """The first chunk is done with: the transcript's offset moves past it, then it leaves
        the spool (set aside when the server refused it)."""
        chunk = entry.chunks[0]
        self.state.acknowledged(
            entry.data["transcript"],
            generation=entry.data["generation"],
            end=chunk["end"],
            tail=chunk["tail"],
        )
        return self.spool.reject(entry, refusal) if refusal else self.spool.shift(entry)
