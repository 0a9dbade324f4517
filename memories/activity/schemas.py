"""The activity log's answers: a row as REST shows it, a page of rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from memories.activity.models import ActivityLog


class ActivityOut(BaseModel):
    id: str
    operation: str
    surface: str
    token: str | None
    client_name: str
    scopes: list[str]
    query: str
    options: dict[str, Any]
    results: list[dict[str, Any]]
    steps: dict[str, Any]  # the read path's steps that shaped the answer (floor, session lift)
    latency_ms: float
    outcome: str
    error_code: str
    created_at: datetime

    @classmethod
    def of(cls, row: ActivityLog) -> ActivityOut:
        return cls(
            id=row.public_id,
            operation=row.operation,
            surface=row.surface,
            token=row.token.public_id if row.token is not None else None,
            client_name=row.client_name,
            scopes=row.scopes,
            query=row.query,
            options=row.options,
            results=row.results,
            steps=row.steps,
            latency_ms=row.latency_ms,
            outcome=row.outcome,
            error_code=row.error_code,
            created_at=row.created_at,
        )


class ActivityPageOut(BaseModel):
    results: list[ActivityOut]
    next_cursor: str | None
