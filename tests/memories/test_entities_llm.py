"""Entities from the LLM calls that already run: the extractor's and the translator's forced
tools name the memory's entities in the same call (the real SDK against the fake Messages API)."""

from __future__ import annotations

from memories.models import EntityMention, Memory, TranslationStatus
from tests.fakes.anthropic_api import malformed_tool_input
from tests.memories.canonical_support import ENGLISH, GERMAN, remember


def _mentions(memory: Memory) -> dict[str, tuple[str, str]]:
    return {
        (mention.entity.name, mention.source): mention.entity.kind
        for mention in EntityMention.objects.filter(memory=memory).select_related("entity")
    }


def test_the_translator_names_the_entities_in_its_one_call(
    tenancy, owner, fake_anthropic, sync_tasks, django_capture_on_commit_callbacks
):
    fake_anthropic.script(
        malformed_tool_input(
            {
                "english": ENGLISH,
                "entities": [
                    {"name": "remember service", "kind": "service", "aliases": ["remember()"]},
                    {"name": "", "kind": "service"},  # dropped, not a failure
                    {"name": "x", "kind": "planet"},
                ],
            }
        )
    )
    with django_capture_on_commit_callbacks(execute=True):
        body = remember(owner, GERMAN, tenancy.team).json()
    memory = Memory.objects.get(public_id=body["id"])
    assert memory.translation_status == TranslationStatus.DONE and memory.content == ENGLISH
    [request] = fake_anthropic.requests
    [tool] = request.json["tools"]
    assert tool["input_schema"]["properties"]["entities"]["type"] == "array"
    found = _mentions(memory)
    assert found[("remember service", "translator")] == "service"
    # The German's capitalized nouns are no evidence of names: only the English is read for them.
    assert not [key for key in found if key[1] == "detected"]
    assert len([key for key in found if key[1] == "translator"]) == 1
