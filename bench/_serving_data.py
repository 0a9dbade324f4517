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


def data_dir_for(
    memories: int, scopes: int, fresh: bool, copies: int = 0
) -> tuple[Path, dict | None]:
    """The data directory for this size, and what an earlier run loaded into it (or None)."""
    if fresh:
        return Path(tempfile.mkdtemp(prefix="zm-serving-")), None
    folder = CACHE / (f"serving-{memories}-{scopes}" + (f"-copies{copies}" if copies else ""))
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


# Copies of each written turn made in SQL by `--copies`: the turn's text with a number, its
# embedding moved by a little noise, valid from the turn's own creation.
_COPIES = """
INSERT INTO memories_memory (
    public_id, scope_id, kind_id, content, content_original, content_lang, content_hash,
    content_revision, translation_status, translation_attempts, translation_error,
    translation_claim, author_kind, agent_name, created_by_id, embedding,
    forgotten_reason, recall_count, valid_from, validity_gaps, created_at, updated_at)
SELECT 'mem_c' || md5(m.id || '-' || g), m.scope_id, m.kind_id, m.content || ' (' || g || ')',
       '', m.content_lang, md5(m.content || '-' || g), 1, m.translation_status, 0, '', '',
       m.author_kind, m.agent_name, m.created_by_id,
       m.embedding + (SELECT array_agg((random() - 0.5) * 0.04)::vector(384)
                      FROM generate_series(1, 384) WHERE g > 0),
       '', 0, m.created_at, false, m.created_at, m.updated_at
FROM memories_memory m CROSS JOIN generate_series(1, %s) g
WHERE m.scope_id = ANY(%s);
INSERT INTO memories_validityperiod (memory_id, valid_from, started, ended)
SELECT m.id, m.valid_from, 'created', '' FROM memories_memory m
WHERE m.public_id LIKE 'mem_c%%';
"""


def copy_turns(scopes: list[str], copies: int) -> None:
    """Each written turn `copies` more times, in SQL, the HNSW index built again once after."""
    from django.db import connection

    from scopes.models import Scope

    ids = list(Scope.objects.filter(public_id__in=scopes).values_list("id", flat=True))
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX memorysearch_embedding_hnsw")
        cursor.execute(_COPIES, [copies, ids])
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            "CREATE INDEX memorysearch_embedding_hnsw ON memories_memorysearch USING hnsw "
            "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
        )
    print(f"  copied in SQL: {time.perf_counter() - started:.0f} s", flush=True)


def load(port: int, memories: int, scopes: int, copies: int = 0) -> dict:
    """Write the chat turns (one conversation per scope) and a scope for the write benchmarks;
    with `copies`, only 1/(copies + 1) of them over HTTP and the rest copied in SQL."""
    token = user_with_token("bench")
    api = Api(port, token)
    turns, questions = conversations(memories // (copies + 1), scopes)
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
    if copies:
        copy_turns(scope_ids, copies)
    analyze()
    return {
        "token": token,
        "scopes": scope_ids,
        "questions": questions,
        "writes": create_scope(api, "writes"),
        "load_rate": written / seconds,
    }


def analyze() -> None:
    """Planner statistics now rather than whenever autovacuum runs (the figures would otherwise
    depend on how soon the bench follows the load)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def prepared(
    port: int, data_dir: Path, state: dict | None, memories: int, scopes: int, copies: int = 0
) -> dict:
    if state is not None:
        print("  data already loaded (cached data directory)")
        return state
    print(f"  writing {memories} chat turns in {scopes} scopes through /api/v1/memories/batch")
    state = load(port, memories, scopes, copies)
    (data_dir / "loaded.json").write_text(json.dumps(state))
    return state
