"""Fixtures for the dashboard's server-side tests: memories in the tenancy's team scope."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from memories.models import Memory, Provenance, SourceKind, TranslationStatus
from memories.services.remember import RememberInput, memory_remember, memory_remember_many
from zeromemory.core.actor import Actor


def remember(user, content: str, *, scope=None, kind: str = "fact", verbatim=None) -> Memory:
    result = memory_remember(
        actor=Actor(user=user, surface="dashboard"),
        request=RememberInput(
            content=content,
            kind=kind,
            scope=scope.public_id if scope is not None else None,
            verbatim=verbatim,
            source_kind=SourceKind.DASHBOARD,
        ),
    )
    return result.memory


def canonicalized(user, scope, *, english: str, original: str, lang: str) -> Memory:
    """A memory as the canonicalization pass leaves it: English content, the original beside it."""
    memory = remember(user, english, scope=scope, kind="decision")
    Memory.objects.filter(pk=memory.pk).update(
        content_original=original, content_lang=lang, translation_status=TranslationStatus.DONE
    )
    memory.refresh_from_db()
    return memory


@dataclass
class Memories:
    team: Memory
    translated: Memory
    personal: Memory


@pytest.fixture
def memories(tenancy) -> Memories:
    # One batch: the three memories are embedded together.
    def request(content: str, kind: str, scope=None) -> RememberInput:
        return RememberInput(
            content=content,
            kind=kind,
            scope=scope.public_id if scope is not None else None,
            source_kind=SourceKind.DASHBOARD,
        )

    team, translated, personal = (
        item.result.memory
        for item in memory_remember_many(
            actor=Actor(user=tenancy.owner, surface="dashboard"),
            requests=[
                request("Releases are cut on Tuesdays.", "fact", tenancy.team),
                request(
                    "Database migrations run before the deploy, never after it.",
                    "decision",
                    tenancy.team,
                ),
                request("I prefer small pull requests.", "preference"),
            ],
        )
    )
    Memory.objects.filter(pk=translated.pk).update(
        content_original="Datenbankmigrationen laufen vor dem Deployment, niemals danach.",
        content_lang="de",
        translation_status=TranslationStatus.DONE,
    )
    translated.refresh_from_db()
    return Memories(team=team, translated=translated, personal=personal)


@pytest.fixture
def login():
    """login(user, lang=None) -> a test client signed in as user, asking for that language."""

    def make(user, lang: str | None = None, **kwargs) -> Client:
        headers = {"Accept-Language": lang} if lang else {}
        client = Client(headers=headers, **kwargs)
        client.force_login(user)
        return client

    return make


HTMX = {"HX-Request": "true"}


def verbatim_of(memory: Memory) -> list[str]:
    return list(
        Provenance.objects.filter(memory=memory)
        .exclude(verbatim="")
        .values_list("verbatim", flat=True)
    )
