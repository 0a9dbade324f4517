"""The suite's fake Anthropic Messages API (tests/fakes/) answering every background job: the
translator (an English text), the extractor (one decision per chunk, its evidence copied from
the chunk) and the judge (complementary: nothing merged). Each answer may wait `delay` seconds,
so a worker can be killed while its call is in flight.

    python -m scripts.zmcluster.llm --delay 1 --url-file llm.url   (serves until killed)
"""

from __future__ import annotations

import argparse
import re
import signal
import time
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_api import FakeAnthropicAPI, Step
from tests.fakes.anthropic_steps import malformed_tool_input, memories_answer_from, tool_answer

DECISION = re.compile(r"service-(\d+) deploys only after the smoke tests pass")
GERMAN = re.compile(r"Dienst (\d+)")


def chunk_text(number: int) -> str:
    """A transcript chunk holding one decision the fake extractor finds."""
    return (
        f"user: From now on service-{number} deploys only after the smoke tests pass.\n\n"
        "assistant: Understood. I will wait for the smoke tests before every deploy of it, "
        "and I will say so in the pull request description so reviewers know why."
    )


def german_text(number: int) -> str:
    return f"Wir deployen den Dienst {number} jeden Freitag nach dem Mittagessen auf Produktion."


def english_of(number: str) -> str:
    return f"We deploy service {number} to production every Friday after lunch."


def _candidates(request_json: Any) -> list[dict[str, Any]]:
    match = DECISION.search(request_json["messages"][0]["content"])
    if match is None:
        return []
    return [
        {
            "content": f"Service-{match.group(1)} deploys only after the smoke tests pass.",
            "kind": "decision",
            "confidence": 0.95,
            "evidence": match.group(0),
        }
    ]


def _tool(request_json: Any) -> str:
    choice = request_json.get("tool_choice") or {}
    return choice.get("name") or (request_json.get("tools") or [{}])[0].get("name", "")


def every_job(delay: float = 0.0) -> Step:
    """One step for any request: the answer its tool asks for, after `delay` seconds."""

    def answer(request, stopping):
        if delay:
            stopping.wait(delay)
        tool = _tool(request.json)
        if tool == "record_memories":
            return memories_answer_from(_candidates).answer(request, stopping)
        if tool == "record_relations":
            pairs = request.json["messages"][0]["content"].count("<pair number=")
            verdict = {"relation": "complementary", "confidence": 0.99, "rationale": "Both hold."}
            verdicts = [{"pair": number, **verdict} for number in range(1, pairs + 1)]
            return malformed_tool_input({"relations": verdicts}).answer(request, stopping)
        found = GERMAN.search(request.json["messages"][0]["content"])
        return tool_answer(english_of(found.group(1) if found else "0")).answer(request, stopping)

    return Step(f"every job (after {delay} s)", answer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--url-file", type=Path, required=True)
    args = parser.parse_args()
    fake = FakeAnthropicAPI(default=every_job(args.delay)).start()
    args.url_file.write_text(fake.url)
    signal.signal(signal.SIGTERM, lambda *_: fake.stop() or exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
