"""REST answers from the pydantic schemas: one model per answer, dumped as JSON."""

from __future__ import annotations

from pydantic import BaseModel
from rest_framework.response import Response


def render(answer: BaseModel, *, status: int = 200, exclude_none: bool = False) -> Response:
    return Response(answer.model_dump(mode="json", exclude_none=exclude_none), status=status)
