"""What the erasure tests share: the scan of every table and column, clients, what callers see."""

from __future__ import annotations

from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from memories.insights.fold import insights_fold
from memories.models import (
    DailyVisitor,
    LastVisit,
    ReportedUse,
)
from memories.taskrows import task_rows
from scopes.models import ApiToken
from scopes.services import token_create
from tests.factories import UserFactory, make_token
from tests.mcp_inproc import call_tool
from tests.memories import archive_support as archives
from tests.oauth.flow import access_token, register
from zeromemory.core.actor import Actor


def scan_tasks(*, keys: dict[str, set[int]], strings: set[str]) -> list[str]:
    """django-q2's rows (queue, results, schedules), decoded with django-q2's own helpers: they
    keep arguments and results pickled, which no text search sees. A row is found when its
    decoded function, name, arguments or result hold one of `strings`, or when it names one of
    `keys` (the model of a task's ids is declared in `memories.taskrows`; a task that takes
    arguments and is not declared is found too)."""
    found = []
    for row in task_rows():
        where = f"{row.model._meta.db_table} row {row.pk} ({row.func})"
        decoded = repr((row.func, row.name, row.args, row.kwargs, row.result))
        if any(text in decoded for text in strings):
            found.append(f"{where} holds a deleted text or id")
        named = row.names()
        if named is None:
            if row.args or row.kwargs:
                found.append(f"{where} takes arguments but is not declared in memories.taskrows")
            continue
        model, ids = named
        if set(ids) & keys.get(model._meta.db_table, set()):
            found.append(f"{where} names a deleted {model._meta.db_table} row")
    return found


# The integer arrays of keys, and the table whose keys each holds (a scope's key that happens to
# equal a deleted memory's is no leak).
ARRAY_KEYS = {
    ("memories_activitylog", "searched_scopes"): "scopes_scope",
    ("memories_activitylog", "pending_recalls"): "memories_memory",
}


def scan(*, keys: dict[str, set[int]], strings: set[str]) -> list[str]:
    """Every row of every table that holds one of `keys` (table → primary keys) in a foreign
    key or an integer array, or one of `strings` in any column (as text); and django-q2's rows
    decoded (`scan_tasks`)."""
    found = scan_tasks(keys=keys, strings=strings)
    patterns = [f"%{text}%" for text in strings]
    introspection = connection.introspection
    with connection.cursor() as cursor:
        for table in introspection.table_names(cursor):
            relations = introspection.get_relations(cursor, table)
            for column, (_, target) in relations.items():
                if keys.get(target):
                    cursor.execute(
                        f'SELECT count(*) FROM "{table}" WHERE "{column}" = ANY(%s)',  # noqa: S608
                        [sorted(keys[target])],
                    )
                    if cursor.fetchone()[0]:
                        found.append(f"{table}.{column} refers to a deleted {target} row")
            for column in introspection.get_table_description(cursor, table):
                name = column.name
                cursor.execute(
                    f'SELECT count(*) FROM "{table}" WHERE "{name}"::text LIKE ANY(%s)',  # noqa: S608
                    [patterns],
                )
                if cursor.fetchone()[0]:
                    found.append(f"{table}.{name} holds a deleted text or id")
                if column.type_code == 1016:  # bigint[]: keys of the table it holds
                    target = ARRAY_KEYS.get((table, name))
                    if target is None:
                        found.append(f"{table}.{name}: an array of keys not in ARRAY_KEYS")
                    elif keys.get(target):
                        cursor.execute(
                            f'SELECT count(*) FROM "{table}" WHERE "{name}" && %s::bigint[]',  # noqa: S608
                            [sorted(keys[target])],
                        )
                        if cursor.fetchone()[0]:
                            found.append(f"{table}.{name} holds a deleted {target} key")
    return found


def session_client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def token_client(user) -> tuple[APIClient, ApiToken]:
    issued = token_create(actor=Actor(user=user), name="laptop")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.secret}")
    return client, issued.token


def ok(response) -> dict:
    assert response.status_code < 300, response.content
    return response.json()


def leaks(text: str, strings: set[str]) -> list[str]:
    return [s for s in strings if s in text]


def visible_to(client, strings: set[str]) -> list[str]:
    """What recall, context and activity show this caller of the deleted things."""
    answers = [
        client.post("/api/v1/recall", {"query": "locker code deploy key"}, format="json"),
        client.post("/api/v1/context", {"topic": "locker code deploy key"}, format="json"),
        client.get("/api/v1/activity"),
    ]
    assert all(answer.status_code == 200 for answer in answers)
    return [hit for answer in answers for hit in leaks(answer.content.decode(), strings)]


def admin_shows(strings: set[str], marker: str) -> list[str]:
    staff = UserFactory(username="staffer", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    pages = [
        client.get("/admin/memories/memory/", {"q": marker[:8]}),  # not the whole marker: echoed
        client.get("/admin/memories/memory/"),
        client.get("/admin/auth/user/"),
    ]
    return [hit for page in pages for hit in leaks(page.content.decode(), strings)]


# What names the person beside their username in what a team keeps: each one holds it.
SOURCE_PATH = "/home/zqvictim/work/build.py"
AGENT = "zqvictim-agent/1.0"
CONVERSATION = "conv-zqvictim-1"
OAUTH_CLIENT = "zqvictim's laptop agent"
# Where each of them is kept (table.column), so the scan of a deletion must look there.
TRACES = [
    "memories_provenance.source_path",
    "memories_provenance.client_name",
    "memories_provenance.conversation_id",
    "memories_provenance.author_name",
    "memories_provenance.claims",
    "memories_memory.agent_name",
    "memories_memorylink.agent_name",
    "memories_memoryuse.conversation",
    "memories_dailyvisitor.key",
    "memories_lastvisit.key",
    "oauth2_provider_application.name",
    "memories_conflict.rationale",
]


def leave_traces_in_team(user, client, owner, team, owner_memory: str) -> str:
    """What the person `user` (username zqvictim, `client` their token's client) leaves in the
    team: a write naming their agent, file and conversation; reads from that agent and in that
    conversation (REST and MCP); a use reported in it; a challenge joined to the owner's (signed
    with their username); a write an archive import attributed to them; the day folded into the
    insights (visitor and last-visit rows); an OAuth client registered with a name of theirs
    that they signed in with; a typed link from their write to the owner's, made from their agent.
    Returns the shared write's id."""
    shared = ok(
        client.post(
            "/api/v1/memories",
            {
                "content": "The team builds with Bazel.",
                "kind": "fact",
                "scope": team.public_id,
                "source_path": SOURCE_PATH,
                "conversation_id": CONVERSATION,
            },
            format="json",
            HTTP_USER_AGENT=AGENT,
        )
    )["id"]
    link = {"to": owner_memory, "type": "relates_to"}
    ok(client.post(f"/api/v1/memories/{shared}/links", link, format="json", HTTP_USER_AGENT=AGENT))
    read = {"query": "the team's build tool", "scopes": [team.public_id]}
    read["conversation_id"] = CONVERSATION
    ok(client.post("/api/v1/recall", read, format="json", HTTP_USER_AGENT=AGENT))
    assert not call_tool(make_token(user), "recall", read).is_error
    used = {"memory_ids": [shared], "conversation_id": CONVERSATION}
    ok(client.post("/api/v1/memories/used", used, format="json", HTTP_USER_AGENT=AGENT))
    challenged = f"/api/v1/memories/{owner_memory}/challenge"
    ok(owner.post(challenged, {"reason": "It moved to Buck."}, format="json"))
    ok(client.post(challenged, {"reason": "Only the old branch uses it."}, format="json"))
    claimed = {"author": user.get_username(), "client": AGENT, "conversation": CONVERSATION}
    row = {"source": "remember", "path": SOURCE_PATH, "created": archives.CLAIMED, **claimed}
    data = archives.one(
        content="The nightly job rotates the staging keys.",
        author={"kind": "agent", "client": AGENT, "user": user.get_username()},
        provenance=[row],
    )
    imported = archives.post(owner, team.public_id, data)
    assert imported.status_code == 200, imported.content
    insights_fold()
    oauth = register(client_name=OAUTH_CLIENT)["client_id"]
    access_token(session_client(user), oauth, scopes=[team.public_id])
    return shared


def traces_in_team() -> list[str]:
    """The places of `TRACES` the scan does not find the person's traces in."""
    strings = {SOURCE_PATH, AGENT, CONVERSATION, OAUTH_CLIENT, "zqvictim"}
    found = scan(keys={}, strings=strings)
    return [place for place in TRACES if not any(f.startswith(f"{place} ") for f in found)]


def team_counts(team, memory: str) -> tuple[int, int, int]:
    """What the team's insights and usage count: visitor rows, last visits, uses of `memory`."""
    return (
        DailyVisitor.objects.filter(scope=team).count(),
        LastVisit.objects.filter(scope=team).count(),
        ReportedUse.objects.filter(memory__public_id=memory).count(),
    )
