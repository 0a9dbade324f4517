"""The dashboard and the admin: paths, the sign-in lockout nobody can reset for someone else, and
the admin's bulk actions under a race."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import Client, override_settings

from memories.hygiene import review
from memories.models import Conflict, ConflictStatus, Relation
from memories.services.remember import RememberInput, memory_remember
from tests.factories import UserFactory
from tests.security.test_races import in_thread_until_it_waits
from zeromemory.core.actor import Actor


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/memories/%00/"),
        ("get", "/scopes/%00/"),
        ("post", "/scopes/{team}/members/%00/role/"),
        ("post", "/tokens/%00/revoke/"),
    ],
)
def test_nul_in_dashboard_path_is_a_404(tenancy, client, method, path):
    client.force_login(tenancy.owner)
    response = getattr(client, method)(path.format(team=tenancy.team.public_id))
    assert response.status_code == 404


@override_settings(AXES_FAILURE_LIMIT=5)
def test_login_locks_out_after_repeated_failures(tenancy, client):
    for _ in range(5):
        client.post("/login/", {"username": "owner", "password": "wrong"})
    locked = client.post("/login/", {"username": "owner", "password": "correct horse battery"})
    assert locked.status_code == 429
    assert "locked" in locked.content.decode().lower()
    assert "_auth_user_id" not in client.session


PASSWORD = "correct horse battery"


def sign_in(username: str, password: str, ip: str) -> int:
    answer = Client().post("/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)
    return answer.status_code


@override_settings(AXES_FAILURE_LIMIT=5)
def test_an_attackers_own_sign_ins_do_not_reset_the_victims_failures(db):
    """10 wrong passwords for the victim from one address, with the attacker's own successful
    sign-in from there after the 4th and the 8th: the victim's account is locked all the same."""
    UserFactory(username="victim")
    UserFactory(username="mallory")
    answers = []
    for guess in range(10):
        answers.append(sign_in("victim", f"guess {guess}", ip="10.6.6.6"))
        if guess in (3, 7):
            answers.append(sign_in("mallory", PASSWORD, ip="10.6.6.6"))
    # Mallory's first sign-in comes before the limit; the 5th failure locks the victim's account
    # and the address (Mallory's second sign-in included).
    assert answers == [200] * 4 + [302] + [429] * 7, answers
    assert sign_in("victim", PASSWORD, ip="10.7.7.7") == 429  # the account, from anywhere


@override_settings(AXES_FAILURE_LIMIT=5)
def test_a_persons_success_clears_their_own_failures_from_that_address_only(db):
    UserFactory(username="alice")
    for _ in range(4):
        assert sign_in("alice", "wrong", ip="10.1.1.1") == 200
    assert sign_in("alice", PASSWORD, ip="10.1.1.1") == 302
    for _ in range(4):  # counted from zero again
        assert sign_in("alice", "wrong", ip="10.1.1.1") == 200
    assert sign_in("alice", PASSWORD, ip="10.1.1.1") == 302
    # Failures from another address (someone else may be guessing there) are not cleared.
    for _ in range(4):
        assert sign_in("alice", "wrong", ip="10.2.2.2") == 200
    assert sign_in("alice", PASSWORD, ip="10.1.1.1") == 302
    assert sign_in("alice", "wrong", ip="10.2.2.2") == 429


@pytest.mark.django_db(transaction=True)
def test_bulk_keep_both_skips_an_item_resolved_meanwhile_with_a_message(tenancy, kinds_seeded):
    owner = Actor(user=tenancy.owner)
    a, b = (
        memory_remember(
            actor=owner,
            request=RememberInput(content=text, kind="fact", scope=tenancy.team.public_id),
        ).memory
        for text in ("Staging is reset on Mondays.", "Staging is wiped every Monday.")
    )
    conflict = Conflict.objects.create(
        scope=tenancy.team,
        memory_a=a,
        memory_b=b,
        status=ConflictStatus.OPEN,
        verdict=Relation.DUPLICATE,
        confidence=0.8,
    )
    staff = type(tenancy.owner).objects.create_superuser("staff", "s@example.com", "pw-staff-1")
    admin = Client(raise_request_exception=False)
    admin.force_login(staff)
    answers: list[int] = []
    selection = {"action": "keep_both", "_selected_action": [conflict.pk]}
    with transaction.atomic():  # someone resolves it, and has not committed yet
        review.conflict_resolve(actor=owner, conflict=conflict, action="dismiss")
        thread = in_thread_until_it_waits(
            lambda: admin.post("/admin/memories/conflict/", selection).status_code, answers
        )
    thread.join(timeout=30)
    assert answers == [302]
    page = admin.get("/admin/memories/conflict/").content.decode()
    assert "0 conflicts kept both." in page
    assert f"Skipped {conflict.public_id}: This conflict is not open" in page
    conflict.refresh_from_db()
    assert conflict.resolution == "dismiss" and conflict.resolved_by == tenancy.owner
