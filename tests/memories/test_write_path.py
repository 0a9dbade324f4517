"""The write path's harder corners: racing writers, long memories, re-embedding, the model check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.test import override_settings

from memories.embeddings import embed_query, get_model
from memories.models import Memory, MemoryWindow, Provenance
from memories.services.remember import RememberInput, memory_remember
from tests.helpers import child_env
from zeromemory.core.actor import Actor

WRITER = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from memories.embeddings import get_model
from memories.services.remember import RememberInput, memory_remember
from zeromemory.core.actor import Actor
get_model()
user = get_user_model().objects.get(username=sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()  # the go: both writers are ready
result = memory_remember(
    actor=Actor(user=user),
    request=RememberInput(content=sys.argv[2], kind="fact", scope=sys.argv[3]),
)
print(json.dumps({"id": result.memory.public_id, "deduplicated": result.deduplicated}))
"""


@pytest.mark.django_db(transaction=True)
def test_two_processes_writing_the_same_text_make_one_memory(tenancy, kinds_seeded):
    text = "The nightly export job writes to s3://exports/nightly and takes 40 minutes."
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, user, text, tenancy.team.public_id],
            cwd=settings.BASE_DIR,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for user in ("owner", "writer")
    ]
    # Both have loaded the model and found their user: let them write at once.
    for child in children:
        assert child.stdout.readline() == "ready\n", child.communicate(timeout=60)[1]
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    answers = []
    for child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        answers.append(json.loads(out.strip().splitlines()[-1]))
    assert answers[0]["id"] == answers[1]["id"]
    assert sorted(a["deduplicated"] for a in answers) == [False, True]
    assert Memory.objects.filter(scope=tenancy.team, valid=True).count() == 1
    rows = Provenance.objects.filter(memory__public_id=answers[0]["id"])
    assert sorted(rows.values_list("created_by__username", flat=True)) == ["owner", "writer"]


def test_the_tail_of_a_long_memory_matches_its_window(tenancy):
    filler = " ".join(
        f"Section {i} of the runbook covers routine log rotation and disk checks."
        for i in range(60)
    )
    tail = (
        "Finally, the payment webhook signature is verified with HMAC SHA-256 in billing/hooks.py."
    )
    memory = memory_remember(
        actor=Actor(user=tenancy.owner),
        request=RememberInput(content=f"{filler} {tail}", kind="reference"),
    ).memory
    windows = list(MemoryWindow.objects.filter(memory=memory).order_by("position"))
    assert len(windows) >= 2
    assert windows[-1].end_char == len(memory.content)
    assert tail in memory.content[windows[-1].start_char : windows[-1].end_char]
    query = embed_query("How do we verify payment webhook signatures?")

    def cosine(vector) -> float:
        return sum(a * b for a, b in zip(vector, query, strict=True))

    best_window = max(cosine(w.embedding) for w in windows)
    # The memory's own embedding never saw the tail (the model reads 256 tokens); a window did.
    assert best_window > cosine(memory.embedding) + 0.3
    assert best_window > 0.4


def test_embeddings_stay_in_the_row(tenancy):
    """Exact distances read the embedding from the row, not from the TOAST table: a memory with
    a long text and its windows keep theirs inline."""
    text = " ".join(
        f"Step {i}: the nightly backup job rotates the logs and checks disks." for i in range(40)
    )
    memory = memory_remember(
        actor=Actor(user=tenancy.owner), request=RememberInput(content=text, kind="reference")
    ).memory
    assert MemoryWindow.objects.filter(memory=memory).count() >= 2
    with connection.cursor() as cursor:
        for table, column in (("memories_memory", "id"), ("memories_memorywindow", "memory_id")):
            cursor.execute(
                f"SELECT count(*), count(pg_column_toast_chunk_id(embedding)) FROM {table} "  # noqa: S608
                f"WHERE {column} = %s",
                [memory.pk],
            )
            rows, toasted = cursor.fetchone()
            assert rows >= 1 and toasted == 0, table


def test_short_memories_have_no_windows(tenancy):
    memory = memory_remember(
        actor=Actor(user=tenancy.owner), request=RememberInput(content="Short note.", kind="fact")
    ).memory
    assert not MemoryWindow.objects.filter(memory=memory).exists()


def test_reembed_recomputes_every_embedding(tenancy, capsys):
    actor = Actor(user=tenancy.owner)
    ids = [
        memory_remember(
            actor=actor, request=RememberInput(content=f"Queue {i} is drained hourly.", kind="fact")
        ).memory.id
        for i in range(3)
    ]
    Memory.objects.filter(id__in=ids).update(embedding=[0.0] * 383 + [1.0])
    call_command("reembed", batch_size=2, verbosity=0)
    for memory in Memory.objects.filter(id__in=ids):
        expected = embed_query(memory.content)
        assert sum(a * b for a, b in zip(memory.embedding, expected, strict=True)) > 0.999


def test_a_model_of_the_wrong_dimension_stops_the_start(tmp_path: Path):
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 768}')
    with (
        override_settings(EMBEDDING_MODEL=str(tmp_path)),
        pytest.raises(SystemCheckError) as raised,
    ):
        call_command("check")
    message = str(raised.value)
    assert "ZM_EMBEDDING_MODEL" in message and "reembed" in message and "768" in message


def test_the_bundled_model_is_loaded_once_and_offline():
    assert get_model() is get_model()
    assert get_model().get_embedding_dimension() == 384
