"""Concurrent requests on the same rows wait for each other: no duplicate queue item, no
deadlock (a 500). Each test holds the first request's locks open in a transaction, lets the
second request run in a thread until it waits on a lock (or ends), then finishes the first;
a request that waits never times out, so nothing here depends on timing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.db import connections, transaction

from memories.entities.links import link_create
from memories.hygiene import review
from memories.models import Conflict, Memory, MemoryLink
from memories.services.lifecycle import memory_forget, memory_supersede
from scopes.models import Membership, Role
from scopes.services import membership_add, membership_remove
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_on_a_lock() -> bool:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # fresh inside the open transaction
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def in_thread_until_it_waits(request: Callable[[], int], answers: list[int]) -> threading.Thread:
    """Start `request` (an HTTP call answering a status) in a thread, and return once it waits
    on a lock or has ended."""

    def run():
        try:
            answers.append(request())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 30
    while thread.is_alive() and not _waiting_on_a_lock() and time.monotonic() < deadline:
        time.sleep(0.05)
    return thread


def write(api, user, content: str, scope: str) -> Memory:
    answer = api(user).post(
        "/api/v1/memories", {"content": content, "kind": "fact", "scope": scope}, format="json"
    )
    return Memory.objects.get(public_id=answer.json()["id"])


def test_a_challenge_waits_for_one_in_flight_and_joins_it(tenancy, api, kinds_seeded):
    """The second challenge waits on the memory's row until the first commits, then adds its
    reason to that item (without the lock it made a second item)."""
    memory = write(
        api, tenancy.owner, "The release branch is cut on Fridays.", tenancy.team.public_id
    )
    writer, answers = api(tenancy.writer), []
    url = f"/api/v1/memories/{memory.public_id}/challenge"
    with transaction.atomic():  # the first challenge, not yet committed
        review.memory_challenge(actor=Actor(user=tenancy.owner), memory=memory, reason="Mondays.")
        thread = in_thread_until_it_waits(
            lambda: writer.post(url, {"reason": "Thursdays."}, format="json").status_code, answers
        )
    thread.join(timeout=30)
    assert answers == [200]
    challenges = Conflict.objects.filter(memory_a=memory)
    assert [c.rationale for c in challenges] == ["Mondays.\n\nwriter: Thursdays."]


def test_supersede_both_ways_at_once_answers_without_a_deadlock(tenancy, api, kinds_seeded):
    """One request supersedes A by B while another supersedes B by A: the rows are locked in
    one order, so the second waits and then finds A superseded (400), never a deadlock (500)."""
    team = tenancy.team.public_id
    a = write(api, tenancy.owner, "Backups run at 02:00 UTC.", team)
    b = write(api, tenancy.owner, "Backups run at 03:00 UTC since the move.", team)
    owner, answers = api(tenancy.owner), []
    with transaction.atomic():
        Memory.objects.select_for_update().get(pk=a.pk)  # the first request has locked A
        thread = in_thread_until_it_waits(
            lambda: (
                owner.post(
                    f"/api/v1/memories/{b.public_id}/supersede", {"by": a.public_id}, format="json"
                ).status_code
            ),
            answers,
        )
        memory_supersede(actor=Actor(user=tenancy.owner), memory=a, by=b)  # ...and goes on
    thread.join(timeout=30)
    assert answers == [400]
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.valid, a.superseded_by_id, b.valid) == (False, b.pk, True)


def test_two_admins_removing_each_other_leave_one_admin_without_a_deadlock(tenancy, api):
    """The owner removes admin2 while admin2 removes the owner: membership changes of a scope
    run one after the other, so one succeeds and the other is refused as the last admin."""
    scope = tenancy.team
    admin2 = type(tenancy.owner).objects.create_user("admin2", password="x")
    membership_add(scope=scope, username="admin2", role=Role.ADMIN)
    second, answers = api(admin2), []
    with transaction.atomic():
        Membership.objects.select_for_update().get(scope=scope, user=admin2)  # the first request
        thread = in_thread_until_it_waits(
            lambda: (
                second.delete(
                    f"/api/v1/scopes/{scope.public_id}/members/{tenancy.owner.username}"
                ).status_code
            ),
            answers,
        )
        refused = None
        try:
            membership_remove(scope=scope, username="admin2")
        except Exception as exc:  # noqa: BLE001 - the assertion below says what it was
            refused = exc
    thread.join(timeout=30)
    admins = list(
        Membership.objects.filter(scope=scope, role=Role.ADMIN).values_list(
            "user__username", flat=True
        )
    )
    assert len(admins) == 1, (admins, answers, refused)
    if admins == ["admin2"]:  # the second request went first: the first is refused
        assert answers == [204] and type(refused).__name__ == "ConflictError", refused
    else:
        assert refused is None and answers == [409], (answers, refused)


def test_the_same_link_twice_at_once_is_one_link(tenancy, api, kinds_seeded):
    """Two writers link the same memories with the same type at once: the second waits on the
    memories' rows, then finds the first's link and answers it (200), one row in all."""
    team = tenancy.team.public_id
    source = write(api, tenancy.owner, "The billing API retries three times.", team)
    target = write(api, tenancy.owner, "Payment webhooks arrive at most once a minute.", team)
    writer, answers = api(tenancy.writer), []
    url = f"/api/v1/memories/{source.public_id}/links"
    body = {"to": target.public_id, "type": "depends_on"}
    with transaction.atomic():  # the first link, not yet committed
        first = link_create(
            actor=Actor(user=tenancy.owner), source=source, target=target, link_type="depends_on"
        ).link
        thread = in_thread_until_it_waits(
            lambda: writer.post(url, body, format="json").status_code, answers
        )
    thread.join(timeout=30)
    assert answers == [200]
    assert list(MemoryLink.objects.values_list("public_id", flat=True)) == [first.public_id]


def test_a_link_to_a_memory_being_forgotten_waits_and_is_refused(tenancy, api, kinds_seeded):
    """A link waits for a forget of its target in flight, then sees it forgotten (409): no live
    link to a forgotten memory is written."""
    team = tenancy.team.public_id
    source = write(api, tenancy.owner, "Deploys freeze on Fridays.", team)
    target = write(api, tenancy.owner, "A Friday deploy took billing down.", team)
    owner, answers = api(tenancy.owner), []
    url = f"/api/v1/memories/{source.public_id}/links"
    with transaction.atomic():
        memory_forget(actor=Actor(user=tenancy.owner), memory=target, reason="It was Thursday.")
        thread = in_thread_until_it_waits(
            lambda: (
                owner.post(
                    url, {"to": target.public_id, "type": "caused_by"}, format="json"
                ).status_code
            ),
            answers,
        )
    thread.join(timeout=30)
    assert answers == [409]
    assert not MemoryLink.objects.exists()
