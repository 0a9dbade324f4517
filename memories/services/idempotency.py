"""Idempotency keys of remember: a retried request answers what the first one answered.

Records are per user and bound to who may read the answer: a replay answers only a memory the
caller may read now; when it cannot (a token restricted to other scopes, a member removed since),
the key counts as unknown, the request is a new write, and its answer replaces the record. The
same key with a different request (every field but the key, hashed) is a conflict.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext as _

from memories.models import IdempotencyRecord, Memory
from scopes import access
from zeromemory.core.actor import Actor
from zeromemory.core.errors import ConflictError

if TYPE_CHECKING:
    from memories.services.remember import RememberInput


def fingerprint(request: RememberInput) -> str:
    """What a retry must repeat to be a retry: every field but the key itself."""
    fields = asdict(request)
    fields.pop("idempotency_key")
    if fields["entities"] is None:  # as before `entities` existed: stored records still match
        del fields["entities"]
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode("utf-8")).hexdigest()


def key_conflict() -> ConflictError:
    message = _("This idempotency key was already used for another request.")
    return ConflictError(message, details={"idempotency_key": [message]})


def new_record(*, actor: Actor, request: RememberInput, answer: dict) -> IdempotencyRecord:
    return IdempotencyRecord(
        user=actor.user,
        key=request.idempotency_key,
        fingerprint=fingerprint(request),
        status=201,
        answer=answer,
    )


@dataclass
class Replays:
    """The caller's earlier answers under the keys of a batch, and which of them it may replay."""

    records: dict[str, IdempotencyRecord]
    readable: set[str]

    @classmethod
    def load(cls, actor: Actor, keys: list[str]) -> Replays:
        if not keys:
            return cls({}, set())
        records = {
            r.key: r for r in IdempotencyRecord.objects.filter(user=actor.user, key__in=keys)
        }
        ids = [record.answer.get("id") for record in records.values()]
        readable = set(
            Memory.objects.filter(
                scope__in=access.readable_scopes(actor), public_id__in=ids
            ).values_list("public_id", flat=True)
        )
        return cls(records, readable)

    def answer(self, request: RememberInput) -> dict[str, Any] | None:
        """The earlier answer, None when the key is new (or names what the caller cannot read)."""
        key = request.idempotency_key or ""
        if not self.replayable(key):
            return None
        record = self.records[key]
        if record.fingerprint and record.fingerprint != fingerprint(request):
            raise key_conflict()
        return record.answer

    def replayable(self, key: str) -> bool:
        """Whether a request under `key` would replay an answer (a dry run asks)."""
        record = self.records.get(key)
        return record is not None and record.answer.get("id") in self.readable

    def stale_ids(self, keys: set[str]) -> list[int]:
        """Records under these keys whose memory the caller can no longer read (to replace)."""
        return [record.id for key, record in self.records.items() if key in keys]
