"""What the erasure tests share: the scan of every table and column, clients, what callers see."""

from __future__ import annotations

from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from memories.taskrows import task_rows
from scopes.models import ApiToken
from scopes.services import token_create
from tests.factories import UserFactory
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
                if column.type_code == 1016 and keys.get("memories_memory"):  # bigint[]
                    cursor.execute(
                        f'SELECT count(*) FROM "{table}" WHERE "{name}" && %s::bigint[]',  # noqa: S608
                        [sorted(keys["memories_memory"])],
                    )
                    if cursor.fetchone()[0]:
                        found.append(f"{table}.{name} holds a deleted memory's key")
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
