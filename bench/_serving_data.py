"""The data of the serving benchmarks: a data directory per size under bench/.cache/, chat turns
written through the batch endpoint of the real server, and the users and tokens that read them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from _chat import conversations
from _django import ROOT
from _server import Api

CACHE = ROOT / "bench" / ".cache"
BATCH = 100


def data_dir_for(memories: int, scopes: int, fresh: bool) -> tuple[Path, dict | None]:
    """The data directory for this size, and what an earlier run loaded into it (or None)."""
    if fresh:
        return Path(tempfile.mkdtemp(prefix="zm-serving-")), None
    folder = CACHE / f"serving-{memories}-{scopes}"
    state = folder / "loaded.json"
    if state.exists():
        return folder, json.loads(state.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder, None


def user_with_token(username: str) -> str:
    from django.contrib.auth import get_user_model

    from scopes.services import token_create
    from zeromemory.core.actor import Actor

    users = get_user_model()
    user = users.objects.filter(username=username).first()
    if user is None:
        user = users.objects.create_user(username, password="bench-password-1")
    return token_create(actor=Actor(user=user), name=f"bench-{username}").secret


def create_scope(api: Api, name: str) -> str:
    status, scope = api.call(
        "POST", "/api/v1/scopes", {"name": name, "slug": name.lower(), "kind": "project"}
    )
    assert status == 201, scope
    return scope["id"]


def write_batches(api: Api, scope: str, contents: list[str]) -> list[str]:
    ids = []
    for start in range(0, len(contents), BATCH):
        items = [
            {"content": text, "kind": "episode", "scope": scope}
            for text in contents[start : start + BATCH]
        ]
        status, answer = api.call("POST", "/api/v1/memories/batch", {"items": items})
        assert status == 200, answer
        ids += [result["memory"]["id"] for result in answer["results"]]
    return ids


def load(port: int, memories: int, scopes: int) -> dict:
    """Write the chat turns (one conversation per scope) and a scope for the write benchmarks."""
    token = user_with_token("bench")
    api = Api(port, token)
    turns, questions = conversations(memories, scopes)
    scope_ids = []
    started, written = time.perf_counter(), 0
    for number, conversation in enumerate(turns):
        scope = create_scope(api, f"chat-{number:02d}")
        scope_ids.append(scope)
        write_batches(api, scope, [turn.content for turn in conversation])
        written += len(conversation)
        rate = written / (time.perf_counter() - started)
        print(f"  {written}/{memories} turns written ({rate:.0f}/s)", flush=True)
    seconds = time.perf_counter() - started
    analyze()
    return {
        "token": token,
        "scopes": scope_ids,
        "questions": questions,
        "writes": create_scope(api, "writes"),
        "load_rate": memories / seconds,
    }


def analyze() -> None:
    """Planner statistics now rather than whenever autovacuum runs (the figures would otherwise
    depend on how soon the bench follows the load)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def prepared(port: int, data_dir: Path, state: dict | None, memories: int, scopes: int) -> dict:
    if state is not None:
        print("  data already loaded (cached data directory)")
        return state
    print(f"  writing {memories} chat turns in {scopes} scopes through /api/v1/memories/batch")
    state = load(port, memories, scopes)
    (data_dir / "loaded.json").write_text(json.dumps(state))
    return state
