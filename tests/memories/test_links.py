"""Typed links between memories through REST, MCP, the dashboard and the services: who may
write them, what they refuse, add-only removal, both directions, history, export and import,
erasure. Memories are stored rows with fixed vectors (no model pass)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.test import Client

from memories.entities.links import link_create
from memories.models import Conflict, ConflictStatus, Memory, MemoryLink, Relation
from memories.portability import format as fmt
from memories.portability.erasure import memory_purge
from scopes.models import Role
from tests.factories import UserFactory, add_member, make_scope, make_token, stored_memory
from tests.mcp_inproc import call_tool, structured
from tests.memories.archive_support import entries
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.usefixtures("kinds_seeded")


@pytest.fixture
def pair(tenancy):
    """Two memories of the team: a decision and the incident that caused it."""
    decision = stored_memory(tenancy.team, "Deploys freeze on Fridays.", kind="decision")
    incident = stored_memory(tenancy.team, "A Friday deploy took the billing API down.")
    return decision, incident


def links_path(memory: Memory | str) -> str:
    public_id = memory if isinstance(memory, str) else memory.public_id
    return f"/api/v1/memories/{public_id}/links"


def link(client, source: Memory, target: Memory | str, link_type: str = "caused_by"):
    to = target if isinstance(target, str) else target.public_id
    return client.post(links_path(source), {"to": to, "type": link_type}, format="json")


def error(response, status: int) -> dict:
    assert response.status_code == status, response.content
    return response.json()["error"]


# -- writing and reading through REST ---------------------------------------------------------


def test_a_link_is_written_once_and_shown_both_ways(tenancy, api, pair):
    decision, incident = pair
    writer = api(tenancy.writer)

    first = link(writer, decision, incident)
    again = link(writer, decision, incident)

    assert first.status_code == 201 and again.status_code == 200, first.content
    made = first.json()
    assert again.json()["id"] == made["id"]
    assert (made["source"], made["type"], made["target"]) == (
        decision.public_id,
        "caused_by",
        incident.public_id,
    )
    # Who wrote it comes from the credential: a token is an agent, acting as its user.
    assert (made["author_kind"], made["created_by"]) == ("agent", "writer")
    assert made["removed_at"] is None
    assert MemoryLink.objects.count() == 1
    row = MemoryLink.objects.get()
    assert row.created_by_token is not None and row.scope_id == tenancy.team.pk

    reader = api(tenancy.reader)
    outgoing = reader.get(links_path(decision)).json()
    incoming = reader.get(links_path(incident)).json()
    assert [item["id"] for item in outgoing["outgoing"]] == [made["id"]]
    assert outgoing["incoming"] == [] and incoming["outgoing"] == []
    assert [item["source"] for item in incoming["incoming"]] == [decision.public_id]
    # The memory's detail carries the same, beside what hygiene records.
    detail = reader.get(f"/api/v1/memories/{incident.public_id}").json()
    assert detail["links"]["incoming"][0]["id"] == made["id"]
    assert detail["links"]["supersedes"] == [] and detail["links"]["superseded_by"] is None


def test_each_type_is_its_own_link_and_unknown_types_are_refused(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    for link_type in ("relates_to", "depends_on", "caused_by", "example_of"):
        assert link(owner, decision, incident, link_type).status_code == 201
    assert link(owner, incident, decision, "relates_to").status_code == 201  # the other way
    assert "type" in error(link(owner, decision, incident, "supersedes"), 400)["details"]
    assert "type" in error(link(owner, decision, incident, "contradicts"), 400)["details"]
    assert MemoryLink.objects.count() == 5


def test_refusals_self_links_other_scopes_forgotten_memories(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    assert "to" in error(link(owner, decision, decision), 400)["details"]
    # A memory of another scope the caller can read: refused (both ends live in one scope).
    personal = tenancy.owner.owned_scopes.get(kind="personal")
    mine = stored_memory(personal, "I deploy from the release branch.")
    assert "to" in error(link(owner, decision, mine), 400)["details"]
    assert "to" in error(link(owner, mine, decision), 400)["details"]
    # Forgotten (or superseded) at either end: restore it first.
    forgotten = owner.post(
        f"/api/v1/memories/{incident.public_id}/forget", {"reason": "Wrong."}, format="json"
    )
    assert forgotten.status_code == 200, forgotten.content
    assert error(link(owner, decision, incident), 409)["code"] == "conflict"
    assert error(link(owner, incident, decision), 409)["code"] == "conflict"
    assert not MemoryLink.objects.exists()


def test_authority_write_the_source_read_the_target_and_name_nothing_unreadable(tenancy, api, pair):
    decision, incident = pair
    # A reader reads both but writes neither; a read-only token writes nothing.
    assert error(link(api(tenancy.reader), decision, incident), 403)["code"] == "forbidden"
    read_only = api(tenancy.owner, read_only=True)
    assert error(link(read_only, decision, incident), 403)["code"] == "forbidden"
    # An outsider: the memory is missing, like one that does not exist.
    outsider = api(tenancy.outsider)
    foreign = link(outsider, decision, incident)
    missing = link(outsider, "mem_nope", incident)
    foreign_error, missing_error = error(foreign, 404), error(missing, 404)
    assert foreign_error["message"] == missing_error["message"].replace(
        "mem_nope", decision.public_id
    )
    assert error(outsider.get(links_path(decision)), 404)["code"] == "not_found"
    # A target the caller cannot read is not found, named as the field, its id not echoed back.
    theirs = make_scope(owner=tenancy.outsider, slug="theirs")
    hidden = stored_memory(theirs, "The outsider's secret plan.")
    refused = error(link(api(tenancy.owner), decision, hidden.public_id), 404)
    assert "to" in refused["details"]
    assert (
        error(link(api(tenancy.owner), decision, "mem_nope"), 404)["message"].replace(
            "mem_nope", hidden.public_id
        )
        == refused["message"]
    )
    assert not MemoryLink.objects.exists()


def test_a_member_removed_from_the_scope_no_longer_sees_its_links(tenancy, api, pair):
    decision, incident = pair
    made = link(api(tenancy.writer), decision, incident).json()
    former = UserFactory(username="former")
    add_member(tenancy.team, former, Role.READER)
    client = api(former)
    assert client.get(links_path(incident)).status_code == 200
    tenancy.team.memberships.filter(user=former).delete()
    assert error(client.get(links_path(incident)), 404)["code"] == "not_found"
    assert made["id"] not in client.get("/api/v1/memories?state=all").content.decode()


# -- removal: add-only ------------------------------------------------------------------------


def test_removal_keeps_the_row_and_history_shows_both_events_from_both_ends(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    made = link(owner, decision, incident).json()
    # Either end's page may take it back (one scope: writing one end is writing the other).
    removed = owner.delete(f"{links_path(incident)}/{made['id']}")
    assert removed.status_code == 200, removed.content
    assert removed.json()["removed_by"] == "owner" and removed.json()["removed_at"]
    # Again: the same answer, nothing changes.
    again = owner.delete(f"{links_path(decision)}/{made['id']}")
    assert again.json()["removed_at"] == removed.json()["removed_at"]
    assert owner.get(links_path(decision)).json()["outgoing"] == []
    row = MemoryLink.objects.get(public_id=made["id"])
    assert row.removed_at is not None and row.removed_by == tenancy.owner

    history = owner.get(f"/api/v1/memories/{decision.public_id}/history").json()
    events = [(e["event"], e["memory"], e["detail"]) for e in history["events"]]
    assert ("link_added", incident.public_id, "caused_by") in events
    assert ("link_removed", incident.public_id, "caused_by") in events
    assert [item["id"] for item in history["links"]] == [made["id"]]
    other_side = owner.get(f"/api/v1/memories/{incident.public_id}/history").json()
    names = [e["event"] for e in other_side["events"]]
    assert names.index("linked_here") < names.index("unlinked_here")

    # Written again after a removal: a new link; the old row stays removed.
    second = link(owner, decision, incident)
    assert second.status_code == 201 and second.json()["id"] != made["id"]
    assert MemoryLink.objects.count() == 2


def test_removal_refusals(tenancy, api, pair):
    decision, incident = pair
    third = stored_memory(tenancy.team, "Billing alerts page the on-call engineer.")
    made = link(api(tenancy.owner), decision, incident).json()
    path = f"{links_path(decision)}/{made['id']}"
    assert error(api(tenancy.reader).delete(path), 403)["code"] == "forbidden"
    assert error(api(tenancy.outsider).delete(path), 404)["code"] == "not_found"
    # A link of other memories is not this memory's.
    assert error(api(tenancy.owner).delete(f"{links_path(third)}/{made['id']}"), 404)
    assert MemoryLink.objects.get().removed_at is None


# -- beside hygiene's relations ---------------------------------------------------------------


def test_supersession_and_judged_contradictions_stand_beside_the_links(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    newer = stored_memory(tenancy.team, "Deploys freeze from Thursday noon.", kind="decision")
    answer = owner.post(
        f"/api/v1/memories/{decision.public_id}/supersede", {"by": newer.public_id}, format="json"
    )
    assert answer.status_code == 200, answer.content
    rival = stored_memory(tenancy.team, "The billing API never went down on a Friday.")
    a, b = sorted([incident, rival], key=lambda memory: memory.pk)
    Conflict.objects.create(
        scope=tenancy.team,
        memory_a=a,
        memory_b=b,
        status=ConflictStatus.OPEN,
        verdict=Relation.CONTRADICTION,
    )
    reader = api(tenancy.reader)
    assert reader.get(links_path(decision)).json()["superseded_by"] == newer.public_id
    assert reader.get(links_path(newer)).json()["supersedes"] == [decision.public_id]
    assert reader.get(links_path(incident)).json()["contradicts"] == [rival.public_id]
    assert reader.get(links_path(rival)).json()["contradicts"] == [incident.public_id]
    # A superseded memory takes no new link.
    assert error(link(owner, decision, incident), 409)["code"] == "conflict"


# -- MCP ----------------------------------------------------------------------------------------


def tool(secret: str, **arguments) -> tuple[bool, dict]:
    result = call_tool(secret, "link", arguments)
    return result.is_error, structured(result)


def test_the_mcp_tool_links_and_takes_back(tenancy, pair):
    decision, incident = pair
    secret = make_token(tenancy.writer)
    ids = {"memory_id": decision.public_id, "to": incident.public_id}

    failed, made = tool(secret, **ids, type="depends_on")
    assert not failed and made["type"] == "depends_on" and made["author_kind"] == "agent"
    failed, same = tool(secret, **ids, type="depends_on")
    assert not failed and same["id"] == made["id"]
    failed, default = tool(secret, **ids)
    assert not failed and default["type"] == "relates_to" and default["id"] != made["id"]

    failed, removed = tool(secret, **ids, type="depends_on", remove=True)
    assert not failed and removed["id"] == made["id"] and removed["removed_at"]
    failed, answer = tool(secret, **ids, type="depends_on", remove=True)
    assert failed and answer["error"]["code"] == "not_found" and "to" in answer["error"]["details"]

    history = structured(call_tool(secret, "history", {"memory_id": decision.public_id}))
    assert [e["event"] for e in history["events"] if "link" in e["event"]] == [
        "link_added",
        "link_added",
        "link_removed",
    ]


def test_the_mcp_tool_refuses_as_rest_does(tenancy, pair):
    decision, incident = pair
    ids = {"memory_id": decision.public_id, "to": incident.public_id}
    failed, answer = tool(make_token(tenancy.reader), **ids)
    assert failed and answer["error"]["code"] == "forbidden"
    failed, answer = tool(make_token(tenancy.outsider), **ids)
    assert failed and answer["error"]["code"] == "not_found"
    owner = make_token(tenancy.owner)
    failed, answer = tool(owner, memory_id=decision.public_id, to=decision.public_id)
    assert failed and "to" in answer["error"]["details"]
    failed, answer = tool(owner, **ids, type="supersedes")
    assert failed and "type" in answer["error"]["details"]
    assert not MemoryLink.objects.exists()


# -- the dashboard ------------------------------------------------------------------------------


def test_the_memory_page_shows_links_both_ways_and_a_writer_links_and_unlinks(tenancy, pair):
    decision, incident = pair
    made = link_create(
        actor=Actor(user=tenancy.owner), source=decision, target=incident, link_type="caused_by"
    ).link
    reader = Client()
    reader.force_login(tenancy.reader)
    page = reader.get(f"/memories/{incident.public_id}/").content.decode()
    assert decision.public_id in page and "caused by" in page
    assert "Linked from another memory" in page  # the timeline
    assert f"/links/{made.public_id}/remove/" not in page  # a reader has no remove button

    writer = Client()
    writer.force_login(tenancy.writer)
    page = writer.get(f"/memories/{decision.public_id}/").content.decode()
    assert incident.public_id in page and f"/links/{made.public_id}/remove/" in page
    third = stored_memory(tenancy.team, "Billing alerts page the on-call engineer.")
    answer = writer.post(
        f"/memories/{third.public_id}/links/", {"type": "example_of", "to": decision.public_id}
    )
    assert answer.status_code == 302
    added = MemoryLink.objects.get(source=third)
    # A person in a session writes as a person.
    assert (added.link_type, added.author_kind, added.created_by) == (
        "example_of",
        "human",
        tenancy.writer,
    )
    refused = writer.post(
        f"/memories/{third.public_id}/links/", {"type": "example_of", "to": third.public_id}
    )
    assert refused.status_code == 422 and "cannot link to itself" in refused.content.decode()
    answer = writer.post(f"/memories/{decision.public_id}/links/{made.public_id}/remove/")
    assert answer.status_code == 302
    made.refresh_from_db()
    assert made.removed_by == tenancy.writer


# -- export, import and erasure -----------------------------------------------------------------


def export(client, scope_id: str) -> bytes:
    response = client.get(f"/api/v1/scopes/{scope_id}/export")
    assert response.status_code == 200, response
    return b"".join(response.streaming_content)


def test_export_and_import_carry_links_removed_ones_too(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    third = stored_memory(tenancy.team, "Billing alerts page the on-call engineer.")
    kept = link(owner, decision, incident).json()
    gone = link(owner, third, incident, "relates_to").json()
    owner.delete(f"{links_path(third)}/{gone['id']}")
    first = export(owner, tenancy.team.public_id)
    fields, _ = fmt.split_memory_file(
        entries(first)[f"memories/team/decision/{decision.public_id}.md"]
    )
    [written] = fields["links"]
    assert (written["type"], written["to"], written["removed"]) == (
        "caused_by",
        incident.public_id,
        None,
    )
    plain, _ = fmt.split_memory_file(entries(first)[f"memories/team/fact/{incident.public_id}.md"])
    assert "links" not in plain  # a memory that makes no link: the file as before links

    fresh = make_scope(owner=tenancy.owner, slug="copy")
    response = owner.post(
        f"/api/v1/scopes/{fresh.public_id}/import-export?keep_times=true",
        first,
        content_type="application/zip",
    )
    assert response.status_code == 200, response.json()
    copied = MemoryLink.objects.filter(scope=fresh)
    assert copied.count() == 2
    live = copied.get(removed_at__isnull=True)
    assert (live.source.content, live.target.content, live.link_type) == (
        decision.content,
        incident.content,
        "caused_by",
    )
    # Made by the importer (a token: an agent), at the archive's times as asked.
    assert (live.created_by, live.author_kind) == (tenancy.owner, "agent")
    assert live.created_at == MemoryLink.objects.get(public_id=kept["id"]).created_at
    assert copied.get(removed_at__isnull=False).source.content == third.content
    # Exported again, the links read as they did, but for what the server assigns.
    second = entries(export(owner, fresh.public_id))
    assigned = set(json.loads(second[fmt.MANIFEST])["server_assigned"])
    assert {"memory.links[].author", "memory.links[].removed_by"} <= assigned
    copy = MemoryLink.objects.get(scope=fresh, removed_at__isnull=True).source.public_id
    again_fields, _ = fmt.split_memory_file(second[f"memories/copy/decision/{copy}.md"])
    [rewritten] = again_fields["links"]
    for key in ("type", "created", "removed"):
        assert rewritten[key] == written[key]
    assert rewritten["to"] == live.target.public_id
    again = owner.post(
        f"/api/v1/scopes/{fresh.public_id}/import-export", first, content_type="application/zip"
    )
    assert again.json()["skipped"] == 3 and copied.count() == 2


def test_an_archive_linking_outside_itself_is_refused(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    link(owner, decision, incident)
    data = export(owner, tenancy.team.public_id)
    # The same archive without the target's file (and its manifest line): the link dangles.
    files = entries(data)
    target = f"memories/team/fact/{incident.public_id}.md"
    del files[target]
    manifest = json.loads(files.pop(fmt.MANIFEST))
    del manifest["files"][target]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, body in files.items():
            archive.writestr(name, body)
        archive.writestr(fmt.MANIFEST, json.dumps(manifest))
    fresh = make_scope(owner=tenancy.owner, slug="copy")
    response = owner.post(
        f"/api/v1/scopes/{fresh.public_id}/import-export",
        buffer.getvalue(),
        content_type="application/zip",
    )
    assert response.status_code == 400
    assert "not in the archive" in response.json()["error"]["message"]
    assert not MemoryLink.objects.filter(scope=fresh).exists()


def test_purge_and_scope_deletion_take_the_links_with_them(tenancy, api, pair):
    decision, incident = pair
    owner = api(tenancy.owner)
    third = stored_memory(tenancy.team, "Billing alerts page the on-call engineer.")
    link(owner, decision, incident)
    link(owner, third, decision, "example_of")
    staff = UserFactory(username="staff", is_staff=True)
    memory_purge(memory=incident, by=staff, reason="A legal request.")
    assert list(MemoryLink.objects.values_list("source", "target")) == [(third.pk, decision.pk)]
    assert owner.get(links_path(decision)).json()["incoming"][0]["source"] == third.public_id
    assert owner.delete(f"/api/v1/scopes/{tenancy.team.public_id}").status_code == 204
    assert not MemoryLink.objects.exists()
