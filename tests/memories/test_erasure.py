"""Account deletion and scope deletion leave nothing behind: every table and every column of the
database is scanned (found by introspection, not listed here) for the deleted rows' keys, their
public ids and a marker only they wrote, and django-q2's rows are read back decoded (they keep
a task's arguments and result pickled). The victim's writes queue real tasks (the ORM broker's
queue holds them) and some run inline, so queued and finished task rows exist before the
deletion. Then recall, context, activity and the admin are asked.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone
from django_q.conf import Conf
from django_q.models import OrmQ, Task
from oauth2_provider.models import AccessToken

from memories.models import (
    Chunk,
    ExportJob,
    Memory,
    Provenance,
    PurgeRecord,
)
from memories.portability.erasure import memory_purge
from memories.taskrows import task_rows
from scopes.models import Role, Scope
from tests.factories import UserFactory, add_member
from tests.fakes.anthropic_api import tool_answer
from tests.memories.canonical_support import ENGLISH, GERMAN
from tests.memories.erasure_support import (
    admin_shows,
    leave_traces_in_team,
    ok,
    scan,
    scan_tasks,
    session_client,
    team_counts,
    token_client,
    traces_in_team,
    visible_to,
)

PASSWORD = "correct horse battery staple"  # noqa: S105 - a test account's password
MARKER = "ultramarine-7731"  # written only by the deleted account
TEAM_MARKER = "vermilion-2290"  # written only in the deleted scope


@pytest.fixture
def queued(fake_anthropic, django_capture_on_commit_callbacks, monkeypatch, settings, tmp_path):
    """queued(sync=False): a block whose on-commit work runs, its tasks queued in django-q2's
    ORM queue (or, sync, run inline with their results saved)."""
    settings.DATA_DIR = tmp_path  # dashboard export files

    def block(*, sync: bool = False):
        monkeypatch.setattr(Conf, "SYNC", sync)
        return django_capture_on_commit_callbacks(execute=True)

    return block


@pytest.fixture
def victim(tenancy, kinds_seeded, queued, fake_anthropic):
    """A writer of the team with a personal scope full of things, tokens, an OAuth token, a
    session, a failed sign-in, rate-limit counts, activity and idempotency records, django-q2
    rows of tasks about them (a translation and a dashboard export that ran, an extraction, a
    translation and an export queued), and traces in the team (`leave_traces_in_team`). The
    team's owner has a translation queued too (it must stay)."""
    user = UserFactory(username="zqvictim", password=PASSWORD)
    add_member(tenancy.team, user, Role.WRITER)
    client, token = token_client(user)
    personal = Scope.objects.get(owner=user, kind="personal").public_id
    fake_anthropic.script(tool_answer(ENGLISH))
    body = {"content": GERMAN, "kind": "decision", "scope": personal}
    with queued(sync=True):
        ok(client.post("/api/v1/memories", body, format="json"))
    with queued():
        ok(client.post("/api/v1/memories", dict(body, content=GERMAN + " Immer."), format="json"))
    owner, _ = token_client(tenancy.owner)
    with queued():
        team_body = dict(body, content=GERMAN + " Im Team.", scope=tenancy.team.public_id)
        owner_memory = ok(owner.post("/api/v1/memories", team_body, format="json"))["id"]
    browser = session_client(user)
    with queued(sync=True):
        assert browser.post(f"/scopes/{personal}/exports/").status_code == 302
    with queued():
        assert browser.post(f"/scopes/{personal}/exports/").status_code == 302
    mine = ok(
        client.post(
            "/api/v1/memories",
            {
                "content": f"My locker code is {MARKER}.",
                "kind": "fact",
                "scope": personal,
                "verbatim": f"code {MARKER}",
                "idempotency_key": f"key-{MARKER}",
            },
            format="json",
        )
    )
    with queued():
        ok(
            client.post(
                "/api/v1/ingest",
                {"content": f"user: my locker is {MARKER}.", "source_kind": "transcript"},
                format="json",
            )
        )
    ok(client.post("/api/v1/recall", {"query": f"where is {MARKER}"}, format="json"))
    shared = leave_traces_in_team(user, client, owner, tenancy.team, owner_memory)
    AccessToken.objects.create(
        user=user, token=f"oauth-{MARKER}", expires=timezone.now() + timedelta(hours=1)
    )
    Client().post("/login/", {"username": "zqvictim", "password": "wrong"})
    session_client(user).get("/api/v1/me")
    return user, token, mine["id"], shared


def test_account_deletion_leaves_no_row_and_the_team_keeps_its_memory(tenancy, victim, settings):
    user, token, mine, shared = victim
    personal = Scope.objects.get(owner=user, kind="personal")
    keys = {
        "auth_user": {user.pk},
        "scopes_scope": {personal.pk},
        "scopes_apitoken": {token.pk},
        "memories_memory": set(Memory.objects.filter(scope=personal).values_list("pk", flat=True)),
        "memories_chunk": set(Chunk.objects.filter(user=user).values_list("pk", flat=True)),
    }
    strings = {MARKER, "zqvictim", personal.public_id, mine, token.public_id, f"user:{user.pk}"}
    strings |= set(Chunk.objects.filter(user=user).values_list("public_id", flat=True))
    keys["memories_exportjob"] = set(
        ExportJob.objects.filter(user=user).values_list("pk", flat=True)
    )
    assert scan(keys=keys, strings=strings), "the scan finds the account before it is deleted"
    assert traces_in_team() == [], "each trace the team keeps is seeded"
    counted = team_counts(tenancy.team, shared)
    # django-q2 holds tasks about the account, queued and finished, that a text scan misses.
    about = scan_tasks(keys=keys, strings=strings)
    for table, func in [
        ("django_q_task", "canonicalize"),
        ("django_q_task", "export_prepare"),
        ("django_q_ormq", "canonicalize"),
        ("django_q_ormq", "extract"),
        ("django_q_ormq", "export_prepare"),
    ]:
        assert [line for line in about if line.startswith(table) and f".{func})" in line], (
            table,
            func,
            about,
        )
    exports = list(settings.DATA_DIR.joinpath("exports").iterdir())
    assert len(exports) == 1, "the export that ran left its file"
    team_memory = Memory.objects.get(scope=tenancy.team, content__endswith="Im Team.")
    team_tasks = {row.pk for row in task_rows() if row.names() == (Memory, [team_memory.pk])}
    assert team_tasks

    # A token never deletes an account; the session must give the password again.
    client, _ = token_client(user)
    assert client.delete("/api/v1/me", {"password": PASSWORD}, format="json").status_code == 403
    browser = session_client(user)
    assert browser.delete("/api/v1/me", {"password": "no"}, format="json").status_code == 400
    assert browser.delete("/api/v1/me", {"password": PASSWORD}, format="json").status_code == 204

    assert scan(keys=keys, strings=strings) == []
    # What the team counts stays counted: the sessions, clients and uses under new names.
    assert team_counts(tenancy.team, shared) == counted
    assert not [
        s for s in Session.objects.all() if s.get_decoded().get("_auth_user_id") == str(user.pk)
    ]
    assert not exports[0].exists()
    # The team's own queued translation was not the account's: it stays.
    assert set(OrmQ.objects.values_list("pk", flat=True)) == team_tasks
    assert not Task.objects.filter(func__startswith="memories.").exists()
    # The team keeps what the person wrote there, anonymized.
    kept = Memory.objects.get(public_id=shared)
    assert kept.created_by_id is None
    assert list(Provenance.objects.filter(memory=kept).values_list("author_name", flat=True)) == [
        "a deleted user"
    ]
    owner, _ = token_client(tenancy.owner)
    assert visible_to(owner, strings) == []
    assert (
        shared in owner.post("/api/v1/recall", {"query": "Bazel"}, format="json").content.decode()
    )
    assert admin_shows(strings, MARKER) == []


def test_an_account_can_take_what_it_wrote_in_shared_scopes_with_it(tenancy, victim):
    user, _, _, shared = victim
    browser = session_client(user)
    body = {"password": PASSWORD, "delete_shared_writes": True}
    assert browser.delete("/api/v1/me", body, format="json").status_code == 204
    assert not Memory.objects.filter(public_id=shared).exists()
    assert scan(keys={"memories_memory": set()}, strings={shared, "Bazel"}) == []


def test_the_sole_admin_of_a_shared_scope_hands_it_over_first(tenancy):
    owner = tenancy.owner
    owner.set_password(PASSWORD)
    owner.save()
    answer = session_client(owner).delete("/api/v1/me", {"password": PASSWORD}, format="json")
    assert answer.status_code == 409
    assert answer.json()["error"]["details"]["scopes"] == [tenancy.team.public_id]
    add_member(tenancy.team, UserFactory(username="heir"), Role.ADMIN)
    answer = session_client(owner).delete("/api/v1/me", {"password": PASSWORD}, format="json")
    assert answer.status_code == 204
    team = Scope.objects.get(pk=tenancy.team.pk)
    assert team.owner.username == "heir"


def test_scope_deletion_removes_every_row_of_the_scope(tenancy, victim):
    user, _, _, shared = victim
    team = tenancy.team
    owner, _ = token_client(tenancy.owner)
    writer, _ = token_client(tenancy.writer)
    note = ok(
        writer.post(
            "/api/v1/memories",
            {
                "content": f"The deploy key is {TEAM_MARKER}.",
                "kind": "fact",
                "scope": team.public_id,
            },
            format="json",
        )
    )
    ok(
        writer.post(
            f"/api/v1/memories/{shared}/challenge", {"reason": f"Not {TEAM_MARKER}."}, format="json"
        )
    )
    ok(
        writer.post(
            "/api/v1/ingest",
            {
                "content": f"user: deploy key {TEAM_MARKER}.",
                "source_kind": "transcript",
                "scope": team.public_id,
            },
            format="json",
        )
    )
    ok(
        writer.post(
            "/api/v1/recall", {"query": f"{TEAM_MARKER}", "scopes": [team.public_id]}, format="json"
        )
    )
    # Another member's recall over every scope: its answer names team memories.
    ok(owner.post("/api/v1/recall", {"query": "Bazel build"}, format="json"))
    memories = Memory.objects.filter(scope=team)
    keys = {
        "scopes_scope": {team.pk},
        "memories_memory": set(memories.values_list("pk", flat=True)),
        "memories_chunk": set(Chunk.objects.filter(scope=team).values_list("pk", flat=True)),
    }
    strings = {TEAM_MARKER, team.public_id, note["id"], shared}
    strings |= set(Chunk.objects.filter(scope=team).values_list("public_id", flat=True))
    assert scan(keys=keys, strings=strings)

    assert owner.delete(f"/api/v1/scopes/{team.public_id}").status_code == 204

    assert scan(keys=keys, strings=strings) == []
    for client in (owner, writer):
        assert visible_to(client, strings) == []
    assert admin_shows(strings, TEAM_MARKER) == []


def test_purge_deletes_one_memory_and_keeps_an_audit_without_content(tenancy, victim):
    _, _, _, shared = victim
    memory = Memory.objects.get(public_id=shared)
    staff = UserFactory(username="legal", is_staff=True)
    record = memory_purge(memory=memory, by=staff, reason="Erasure request 2026-117.")
    assert (record.memory_public_id, record.purged_by, record.reason) == (
        shared,
        staff,
        "Erasure request 2026-117.",
    )
    assert scan(keys={"memories_memory": {memory.pk}}, strings={"Bazel"}) == []
    assert PurgeRecord.objects.filter(memory_public_id=shared).exists()


def test_staff_purge_in_the_admin_asks_for_a_reason(tenancy, victim):
    _, _, _, shared = victim
    memory = Memory.objects.get(public_id=shared)
    staff = UserFactory(username="legal2", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    base = {"action": "purge", "_selected_action": [memory.pk]}
    asked = client.post("/admin/memories/memory/", base)
    assert asked.status_code == 200 and b"reason" in asked.content
    assert Memory.objects.filter(pk=memory.pk).exists()
    client.post("/admin/memories/memory/", {**base, "confirm": "yes", "reason": "Court order 7."})
    assert not Memory.objects.filter(pk=memory.pk).exists()
    record = PurgeRecord.objects.get(memory_public_id=shared)
    assert (record.purged_by, record.reason) == (staff, "Court order 7.")
    audit = client.get("/admin/memories/purgerecord/").content.decode()
    assert shared in audit and "Bazel" not in audit
