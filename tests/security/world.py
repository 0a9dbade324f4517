"""The people, scopes, memories and tokens the tenancy and bad-input matrices run against.

The world is built once per test module (`world_fixtures`): inside one transaction that stays
open for the module, each test runs in a savepoint rolled back after it, so a test that deletes
or changes the world leaves the next one the world as built.
"""

from __future__ import annotations

import importlib
import io
import json
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.db import transaction
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from memories import kinds
from memories.capture.ingest import IngestInput, chunk_ingest
from memories.entities.links import link_create
from memories.entities.services import entity_alias_add, entity_merge, entity_split
from memories.models import (
    Conflict,
    ConflictStatus,
    Entity,
    EntityMention,
    ExportJob,
    Memory,
    Relation,
    Rule,
    RuleStatus,
)
from memories.portability.prepared import export_job_run, export_job_start, export_path
from memories.recall import recall as search
from memories.services.lifecycle import memory_forget
from memories.services.remember import RememberInput, memory_remember
from scopes.models import Role, Scope
from scopes.services import membership_remove, token_create, token_revoke
from tests.factories import UserFactory, add_member, make_scope
from zeromemory.core.actor import Actor


def empty_export() -> bytes:
    """A valid export archive with nothing in it (the body of an import row)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        manifest = {"format": "zero-memory-export", "format_version": 1, "files": {}}
        archive.writestr("manifest.json", json.dumps(manifest))
    return buffer.getvalue()


def answer_text(response) -> str:
    """An answer as text; a zip (an export) as the text of its files."""
    if not getattr(response, "streaming", False):
        return response.content.decode()
    data = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return "\n".join(archive.read(info).decode() for info in archive.infolist())


# The team's own words: no answer to a caller outside the team may contain them.
MARKER = "heliotrope-4417"
# A person the team's memories name beside its vault: never named to anyone outside the team,
# not even as a neighbour of an entity they can read.
NEIGHBOUR_NAME = "Orsolya Quillfeather"


@dataclass
class World:
    users: dict[str, Any]
    team: Scope
    ids: dict[str, str]
    secrets: dict[str, str]
    # The dashboard export's file as `ready_export` wrote it (a test may delete the file).
    export_file: tuple[Path, bytes] | None = field(default=None, repr=False)

    def fill(self, value: Any) -> Any:
        """The row's path or body with {team}, {memory}, … replaced by this world's ids."""
        text = json.dumps(value)
        for name, public_id in self.ids.items():
            text = text.replace("{" + name + "}", public_id)
        return json.loads(text)

    def leaks(self, text: str, sent: str = "") -> list[str]:
        """Which of the team's ids or words appear in an answer (beyond what the caller sent)."""
        secrets = [
            self.team.public_id,
            self.ids["memory"],
            self.ids["other"],
            self.ids["conflict"],
            self.ids["rule"],
            self.ids["link"],
            self.ids["entity"],
            self.ids["neighbour"],
            self.ids["merged"],
            self.ids["split"],
            NEIGHBOUR_NAME,
            MARKER,
        ]
        return [secret for secret in secrets if secret in text and secret not in sent]

    def api(self, actor: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {self.secrets[actor]}")
        return client

    def browser(self, actor: str) -> Client:
        client = Client()
        if actor in self.users:
            client.force_login(self.users[actor])
        else:
            client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {self.secrets[actor]}"
        return client


def _remember(user, content: str, scope: Scope) -> str:
    request = RememberInput(content=content, kind="fact", scope=scope.public_id)
    return memory_remember(actor=Actor(user=user), request=request).memory.public_id


def _team_entities(actor: Actor, team: Scope, memory_ids: list[str]) -> dict[str, str]:
    def entity(name: str, kind: str) -> Entity:
        made = Entity.objects.create(scope=team, kind=kind, name=f"{name} {MARKER}")
        entity_alias_add(actor=actor, entity=made, alias=made.name)
        return made

    crew = entity("vault crew", "team")
    entity_alias_add(actor=actor, entity=crew, alias=f"vault squad {MARKER}")
    entity_alias_add(actor=actor, entity=crew, alias=f"vault annex {MARKER}")
    neighbour = Entity.objects.create(scope=team, kind="person", name=NEIGHBOUR_NAME)
    entity_alias_add(actor=actor, entity=neighbour, alias=NEIGHBOUR_NAME)
    folded = entity("vault keepers", "team")
    for memory in Memory.objects.filter(public_id__in=memory_ids):
        for about in (crew, neighbour, folded):
            EntityMention.objects.create(memory=memory, entity=about, source="agent")
    entity_merge(actor=actor, merged=folded, survivor=crew)
    split = entity_split(
        actor=actor, entity=crew, aliases=[f"vault annex {MARKER}"], name=f"vault annex {MARKER}"
    )
    return {
        "entity": crew.public_id,
        "neighbour": neighbour.public_id,
        "merged": folded.public_id,
        "split": split.created.public_id,
    }


def build_world() -> World:
    owner = UserFactory(username="owner")
    users = {
        "owner": owner,
        "outsider": UserFactory(username="outsider"),
        "reader": UserFactory(username="reader"),
        "removed": UserFactory(username="removed"),
    }
    UserFactory(username="stranger")
    member = UserFactory(username="member")
    team = make_scope(owner=owner, slug="team")
    add_member(team, users["reader"], Role.READER)
    add_member(team, users["removed"], Role.WRITER)
    add_member(team, member, Role.WRITER)
    owner_actor = Actor(user=owner)
    removed_secret = token_create(actor=Actor(user=users["removed"]), name="old").secret
    memory = _remember(users["removed"], f"The vault word is {MARKER}.", team)
    membership_remove(scope=team, username="removed")
    other = _remember(owner, "The team vault moved to the second floor.", team)
    gone = memory_remember(
        actor=owner_actor,
        request=RememberInput(
            content="The old vault was in the basement.", kind="fact", scope=team.public_id
        ),
    ).memory
    memory_forget(actor=owner_actor, memory=gone, reason="Moved.")
    personal = owner.owned_scopes.get(kind="personal")
    full = token_create(actor=owner_actor, name="full")
    revoked = token_create(actor=owner_actor, name="revoked")
    token_revoke(actor=owner_actor, token=revoked.token)
    secrets = {
        "owner": full.secret,
        "outsider": token_create(actor=Actor(user=users["outsider"]), name="t").secret,
        "reader": token_create(actor=Actor(user=users["reader"]), name="t").secret,
        "read_only": token_create(actor=owner_actor, name="ro", read_only=True).secret,
        "restricted": token_create(actor=owner_actor, name="r", scopes=[personal]).secret,
        "revoked": revoked.secret,
        "removed": removed_secret,
    }
    # An activity row that names the team: only the owner's full credentials may list it.
    search.recall(
        actor=Actor(user=owner, token=full.token),
        query=f"what is {MARKER}",
        scopes=[team.public_id],
    )
    chunk = chunk_ingest(
        actor=Actor(user=owner, token=full.token),
        request=IngestInput(
            content=f"user: the vault word is {MARKER}.",
            source_kind="transcript",
            scope=team.public_id,
        ),
    ).chunk
    # A pair in the team's review queue, as the scan and the judge leave it.
    conflict = Conflict.objects.create(
        scope=team,
        memory_a=Memory.objects.get(public_id=memory),
        memory_b=Memory.objects.get(public_id=other),
        status=ConflictStatus.OPEN,
        verdict=Relation.CONTRADICTION,
        confidence=0.8,
        rationale=f"They disagree about {MARKER}.",
    )
    # An approved rule of the team, as an admin's approval leaves it.
    rule = Rule.objects.create(
        scope=team,
        memory=Memory.objects.get(public_id=memory),
        status=RuleStatus.APPROVED,
        text=f"Say {MARKER} at the vault door.",
        position=1,
    )
    # A typed link between the team's two memories, as the owner's agent leaves it.
    link = link_create(
        actor=Actor(user=owner, token=full.token),
        source=Memory.objects.get(public_id=memory),
        target=Memory.objects.get(public_id=other),
        link_type="depends_on",
    ).link
    # What the team's memories are about, as writes and an admin leave it: the vault crew,
    # named with a person by both memories; a crew name merged into it; a name split off it.
    entities = _team_entities(owner_actor, team, [memory, other])
    # The owner's export of the team on the dashboard (`ready_export` writes its file).
    export = export_job_start(actor=owner_actor, scope=team)
    ids = {
        "export": export.public_id,
        "chunk": chunk.public_id,
        "rule": rule.public_id,
        "conflict": conflict.public_id,
        "link": link.public_id,
        **entities,
        "team": team.public_id,
        "memory": memory,
        "other": other,
        "forgotten": gone.public_id,
        "token": full.token.public_id,
        "member": "member",
        "personal": personal.public_id,  # the owner's own scope, where a move or share may go
        # An instant after the world was written, for the `as_of` rows (URL-safe: no "+").
        "as_of": timezone.now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }
    return World(users=users, team=team, ids=ids, secrets=secrets)


def ready_export(world: World) -> None:
    """Write the world's dashboard export to its file under ZM_DATA_DIR (set it to a temporary
    directory first), as the worker would."""
    job = ExportJob.objects.get(public_id=world.ids["export"])
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    world.export_file = (export_path(job), export_path(job).read_bytes())


def world_fixtures(*, export: bool = False) -> tuple[Callable, Callable]:
    """The module's `shared_world` (built once, in a transaction rolled back at the module's
    end) and the `world` each test gets: the same world, its objects read again, its export
    file (with `export`) written under a data directory of the module's own."""

    @pytest.fixture(scope="module", name="shared_world")
    def shared_world(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[World]:
        data_dir = tmp_path_factory.mktemp("world")
        blocker, data = django_db_blocker.unblock(), override_settings(DATA_DIR=data_dir)
        with blocker, data, transaction.atomic():
            # The kind catalogue, as the migration seeds it (a transactional test's flush may
            # have emptied it).
            importlib.import_module("memories.migrations.0002_seed_kinds").seed(apps, None)
            kinds._loaded_at = 0.0
            world = build_world()
            if export:
                ready_export(world)
            yield world
            transaction.set_rollback(True)
        kinds._loaded_at = 0.0

    @pytest.fixture(name="world")
    def world(shared_world: World, db, settings) -> World:
        if shared_world.export_file is not None:
            path, content = shared_world.export_file
            settings.DATA_DIR = path.parent.parent  # <DATA_DIR>/exports/<id>.zip
            if not path.exists():  # a test before this one deleted the export
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
        shared_world.team.refresh_from_db()
        for user in shared_world.users.values():
            user.refresh_from_db()
        return shared_world

    return shared_world, world
