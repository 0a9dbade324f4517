"""The answers of usage feedback and rules."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from memories.models import Rule
from memories.rules.usage import UseReport


class RuleVersionOut(BaseModel):
    number: int
    text: str
    created_at: datetime


class RuleOut(BaseModel):
    id: str
    scope: str
    status: str  # candidate, approved or rejected
    text: str  # the wording the rule is delivered in
    position: int  # order among the scope's approved rules (0 when not approved)
    memory_id: str
    kind: str
    memory_content: str
    conversations: int  # distinct conversations the memory was used in when proposed
    decided_by: str | None
    decided_at: datetime | None
    created_at: datetime
    versions: list[RuleVersionOut]

    @classmethod
    def of(cls, rule: Rule) -> RuleOut:
        return cls(
            id=rule.public_id,
            scope=rule.scope.public_id,
            status=rule.status,
            text=rule.text,
            position=rule.position,
            memory_id=rule.memory.public_id,
            kind=rule.memory.kind_id,
            memory_content=rule.memory.content,
            conversations=rule.conversations,
            decided_by=rule.decided_by.get_username() if rule.decided_by else None,
            decided_at=rule.decided_at,
            created_at=rule.created_at,
            versions=[
                RuleVersionOut(number=v.number, text=v.text, created_at=v.created_at)
                for v in rule.versions.all()
            ],
        )


class RulesOut(BaseModel):
    results: list[RuleOut]


class ChallengedOut(BaseModel):
    memory_id: str
    conflict_id: str
    new: bool


class UsedOut(BaseModel):
    conversation_id: str
    counted: list[str]  # memories counted now (first use in this conversation)
    repeated: list[str]  # already counted in this conversation
    # Not served to this caller in this conversation by a recall, build_context or briefing:
    # ignored.
    not_counted: list[str]
    wrong: list[ChallengedOut]  # found wrong: their boost is lost and a challenge is open

    @classmethod
    def of(
        cls, report: UseReport, *, conversation_id: str, challenged: list[ChallengedOut]
    ) -> UsedOut:
        return cls(
            conversation_id=conversation_id,
            counted=[m.public_id for m in report.counted],
            repeated=[m.public_id for m in report.repeated],
            not_counted=report.not_counted,
            wrong=challenged,
        )
