"""One module per agent: where its transcripts are, the working directory and conversation of a
transcript, and the user and assistant text of each JSONL entry.

Each adapter module has NAME (the `client` sent with each chunk), `transcripts(home)`,
`owns(path, home)`, `context(path)` (None until the transcript says where it runs) and
`reader(path)`: an object whose `turns(entry)`, given the transcript's entries in order, answers
the turns each one holds ([] for nothing to send, None for an entry of a kind it does not know).
"""

from __future__ import annotations

from pathlib import Path

from zmwatch.adapters import claude_code, codex, cursor

ADAPTERS = (claude_code, codex, cursor)


def adapter_for(path: Path, home: Path):
    """The adapter whose transcripts include this path (None: no agent's transcript)."""
    for adapter in ADAPTERS:
        if adapter.owns(path, home):
            return adapter
    return None
