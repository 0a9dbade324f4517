"""The translation budget: a scope that spent ZM_TRANSLATION_DAILY_TOKENS today keeps its
pending memories stored and readable, their translation deferred to the next UTC day; a call's
tokens are the scope's spend."""

from __future__ import annotations

from memories import spend
from memories.canonical import service
from memories.models import LlmPath, LlmSpend, Memory, TranslationStatus
from tests.factories import stored_memory
from tests.fakes.anthropic_api import tool_answer


def pending(scope) -> tuple[Memory, str]:
    text = "Die Tests laufen jede Nacht gegen PostgreSQL."
    memory = stored_memory(scope, text)  # German: pending, with a translation claim
    assert memory.translation_status == TranslationStatus.PENDING and memory.content_lang == "de"
    return memory, memory.translation_claim


def test_over_the_budget_the_translation_waits_for_the_next_day(
    tenancy, kinds_seeded, fake_anthropic, settings
):
    settings.TRANSLATION_DAILY_TOKENS = 500
    LlmSpend.objects.create(scope=tenancy.team, path=LlmPath.TRANSLATION, day=spend.today(),
                            tokens=500, calls=2)  # fmt: skip
    memory, claim = pending(tenancy.team)
    assert service.canonicalize_memory(memory_id=memory.pk, claim=claim) == "deferred"
    assert fake_anthropic.requests == []
    memory.refresh_from_db()
    assert memory.translation_status == TranslationStatus.PENDING and memory.valid
    assert memory.translation_next_at == spend.next_utc_day()
    assert "budget" in memory.translation_error and memory.translation_attempts == 0


def test_a_translation_records_its_tokens_as_the_scopes_spend(
    tenancy, kinds_seeded, fake_anthropic
):
    memory, claim = pending(tenancy.team)
    fake_anthropic.script(tool_answer("The tests run every night against PostgreSQL."))
    service.canonicalize_memory(memory_id=memory.pk, claim=claim)
    [row] = LlmSpend.objects.filter(scope=tenancy.team, path=LlmPath.TRANSLATION)
    assert row.calls == 1 and row.tokens > 0
