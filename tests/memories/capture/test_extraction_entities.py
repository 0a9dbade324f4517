"""The extractor's forced tool names each memory's entities in the same call (the real SDK
against the fake Messages API)."""

from __future__ import annotations

from memories.models import ChunkStatus, EntityMention, Memory
from tests.fakes.anthropic_api import memories_answer
from tests.memories.capture.support import DECISION


def _mentions(memory: Memory) -> dict[tuple[str, str], str]:
    return {
        (mention.entity.name, mention.source): mention.entity.kind
        for mention in EntityMention.objects.filter(memory=memory).select_related("entity")
    }


def test_the_extractor_names_each_memorys_entities_in_its_one_call(
    tenancy, fake_anthropic, extract
):
    proposed = dict(
        DECISION,
        entities=[
            {"name": "Stripe", "kind": "organisation"},
            5,
            {"name": "shop", "kind": "product"},
        ],
    )
    fake_anthropic.script(memories_answer([proposed]))
    chunk = extract()
    chunk.refresh_from_db()
    assert chunk.status == ChunkStatus.EXTRACTED and chunk.kept == 1
    [memory] = Memory.objects.all()
    found = _mentions(memory)
    assert found[("Stripe", "extractor")] == "organisation"
    assert found[("shop", "extractor")] == "product"
    assert found[("billing_events", "detected")] == "identifier"
    [request] = fake_anthropic.requests
    [tool] = request.json["tools"]
    item = tool["input_schema"]["properties"]["memories"]["items"]
    assert item["properties"]["entities"]["items"]["properties"]["kind"]["enum"]
