"""Erasure: the rows of memories' tables that belong to a deleted scope or account, and the
purge of one memory.

Tenancy announces a scope's or an account's erasure (`scopes.signals`); the receivers here
remove what the memories app holds of it, in the same transaction. Rows are deleted by
statements over the ids (no row is loaded), dependents first; references that are not foreign
keys (memory ids in activity answers and chunk results, idempotency answers, the admin's
history) are cleaned the same way. Dashboard export files go with their jobs, and django-q2's
own rows of tasks that named an erased row (`memories.taskrows`) last.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import CharField, F, Func, Q, QuerySet, Value
from django.db.models.functions import Cast
from django.dispatch import receiver
from django.utils.translation import gettext as _

from memories.models import (
    ActivityLog,
    Chunk,
    Conflict,
    ConflictAction,
    DailyVisitor,
    Entity,
    EntityMention,
    EntityMerge,
    EntitySplit,
    ExportJob,
    ExportTicket,
    IdempotencyRecord,
    LastVisit,
    Memory,
    MemoryLink,
    Provenance,
    PurgeRecord,
    ReportedUse,
)
from memories.portability.prepared import export_files_forget
from memories.taskrows import task_rows_forget
from scopes.models import Scope, ScopeKind
from scopes.signals import account_erasing, scope_erasing
from zeromemory.core.errors import ValidationFailed

DELETED_USER = "a deleted user"
# The prefix of the random names a deleted person's sessions and clients take in what is counted.
ERASED_PREFIX = "erased-"

_SCRUB_ACTIVITY = """
UPDATE memories_activitylog SET
    results = COALESCE((
        SELECT jsonb_agg(e ORDER BY n) FROM jsonb_array_elements(results) WITH ORDINALITY AS r(e, n)
        WHERE NOT (e ->> 'id' IN ({public}))
    ), '[]'::jsonb),
    pending_recalls = ARRAY(SELECT x FROM unnest(pending_recalls) AS x WHERE x NOT IN ({ids}))
WHERE EXISTS (
    SELECT 1 FROM jsonb_array_elements(results) AS e WHERE e ->> 'id' IN ({public})
) OR pending_recalls && ARRAY({ids})::bigint[]
"""
# The memory ids recall's steps name (`{"session": {"lifted": [...]}, "expansion": {"added":
# [...]}, ...}`): each list inside each step loses the erased ones.
_SCRUB_STEPS = """
UPDATE memories_activitylog SET steps = (
    SELECT jsonb_object_agg(o.step, CASE WHEN jsonb_typeof(o.detail) <> 'object' THEN o.detail
        ELSE (SELECT jsonb_object_agg(i.name, CASE WHEN jsonb_typeof(i.ids) <> 'array' THEN i.ids
            ELSE COALESCE((
                SELECT jsonb_agg(e ORDER BY n)
                FROM jsonb_array_elements(i.ids) WITH ORDINALITY AS r(e, n)
                WHERE NOT (e #>> '{{}}' IN ({public}))
            ), '[]'::jsonb) END)
            FROM jsonb_each(o.detail) AS i(name, ids)) END)
    FROM jsonb_each(steps) AS o(step, detail)
)
WHERE jsonb_typeof(steps) = 'object' AND steps <> '{{}}'::jsonb AND EXISTS (
    SELECT 1 FROM jsonb_each(steps) AS o(step, detail)
    CROSS JOIN LATERAL jsonb_each(
        CASE WHEN jsonb_typeof(o.detail) = 'object' THEN o.detail ELSE '{{}}'::jsonb END
    ) AS i(name, ids)
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(i.ids) = 'array' THEN i.ids ELSE '[]'::jsonb END
    ) AS e WHERE e #>> '{{}}' IN ({public})
)
"""
_SCRUB_CHUNKS = """
UPDATE memories_chunk SET memory_ids = COALESCE((
    SELECT jsonb_agg(e ORDER BY n) FROM jsonb_array_elements(memory_ids) WITH ORDINALITY AS r(e, n)
    WHERE NOT (e #>> '{{}}' IN ({public}))
), '[]'::jsonb)
WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(memory_ids) AS e WHERE e #>> '{{}}' IN ({public}))
"""
_FORGET_REPLAYS = """
DELETE FROM memories_idempotencyrecord WHERE answer ->> 'id' IN ({public}) OR EXISTS (
    SELECT 1 FROM jsonb_array_elements(
        CASE WHEN jsonb_typeof(answer -> 'similar_existing') = 'array'
        THEN answer -> 'similar_existing' ELSE '[]'::jsonb END
    ) AS e WHERE e ->> 'id' IN ({public})
)
"""


def _sql(queryset: QuerySet) -> tuple[str, tuple]:
    query, params = queryset.query.sql_with_params()
    return query, tuple(params)


def erase_memories(memories: QuerySet[Memory]) -> None:
    """Delete these memories and every row that refers to them. A memory outside the set that
    one of them superseded stays forgotten (the memory that replaced it is gone)."""
    ids = memories.values("id")
    public = memories.values("public_id")
    ids_sql, ids_params = _sql(ids)
    public_sql, public_params = _sql(public)
    with connection.cursor() as cursor:
        cursor.execute(
            _SCRUB_ACTIVITY.format(public=public_sql, ids=ids_sql),
            public_params + ids_params + public_params + ids_params,
        )
        cursor.execute(_SCRUB_STEPS.format(public=public_sql), public_params * 2)
        cursor.execute(_SCRUB_CHUNKS.format(public=public_sql), public_params * 2)
        cursor.execute(_FORGET_REPLAYS.format(public=public_sql), public_params * 2)
    LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Memory),
        object_id__in=memories.annotate(key=Cast("id", CharField())).values("key"),
    ).delete()
    Memory.objects.filter(superseded_by__in=ids).exclude(id__in=ids).update(superseded_by=None)
    named = list(
        EntityMention.objects.filter(memory__in=ids).values_list("entity_id", flat=True).distinct()
    )
    ConflictAction.objects.filter(Q(retired__in=ids) | Q(kept__in=ids)).delete()
    Conflict.objects.filter(Q(memory_a__in=ids) | Q(memory_b__in=ids)).delete()
    # Every table with a foreign key to a memory, found from the models rather than listed here:
    # rows that belong to a memory go with it, an optional reference from elsewhere is cleared.
    for relation in Memory._meta.get_fields(include_hidden=True):
        if relation.concrete or not relation.is_relation or relation.many_to_many:
            continue
        if relation.related_model is Memory:
            continue
        name = relation.field.name
        referring = relation.related_model.objects.filter(**{f"{name}__in": ids})
        if relation.field.null:
            referring.update(**{name: None})
        else:
            referring.delete()
    memories.update(superseded_by=None)
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM memories_memory WHERE id IN ({ids_sql})", ids_params)  # noqa: S608 - the ORM's own SQL
    _orphans_erase(named)


def _orphans_erase(entity_ids: list[int]) -> None:
    """The entities only erased memories named: their names go too (a name is what a memory
    said), with the merges and splits that involved them. One another entity is still merged
    into stays: that one's memories name it."""
    orphans = Entity.objects.filter(id__in=entity_ids, mentions__isnull=True, merged__isnull=True)
    orphan_ids = list(orphans.values_list("id", flat=True))
    if not orphan_ids:
        return
    EntityMerge.objects.filter(Q(merged__in=orphan_ids) | Q(survivor__in=orphan_ids)).delete()
    EntitySplit.objects.filter(Q(source__in=orphan_ids) | Q(created__in=orphan_ids)).delete()
    Entity.objects.filter(id__in=orphan_ids).update(merged_into=None)
    Entity.objects.filter(id__in=orphan_ids).delete()


@receiver(scope_erasing, dispatch_uid="memories_scope_erasing")
def scope_rows_erase(sender, scope: Scope, **kwargs) -> None:
    erase_memories(Memory.objects.filter(scope=scope))  # their mentions go with them
    # The scope's entities, their aliases and the merges and splits that reshaped them.
    EntityMerge.objects.filter(scope=scope).delete()
    EntitySplit.objects.filter(scope=scope).delete()
    Entity.objects.filter(scope=scope).update(merged_into=None)
    Entity.objects.filter(scope=scope).delete()
    Conflict.objects.filter(scope=scope).delete()
    Chunk.objects.filter(scope=scope).delete()
    ActivityLog.objects.filter(scopes__contains=[scope.public_id]).delete()
    # A read across all of a person's scopes searched this one too: its key leaves those rows
    # (the insights would attribute them to a scope that is gone).
    ActivityLog.objects.filter(searched_scopes__contains=[scope.pk]).update(
        searched_scopes=Func(F("searched_scopes"), Value(scope.pk), function="array_remove")
    )
    IdempotencyRecord.objects.filter(answer__scope=scope.public_id).delete()
    ExportTicket.objects.filter(scopes__contains=[scope.public_id]).delete()
    export_files_forget(ExportJob.objects.filter(scope=scope))
    task_rows_forget()


def _rename(model, column: str, keys: set[str], salt: str, **where: Any) -> None:
    """One UPDATE: each of `keys` in `column` (and `where`) becomes the erased prefix and a
    name drawn from the key and this erasure's random salt, the same name in every table."""
    keys = {key for key in keys if key}
    if not keys:
        return
    table = model._meta.db_table
    column = model._meta.get_field(column).column
    conditions = "".join(f' AND "{model._meta.get_field(f).column}" = %s' for f in where)
    with connection.cursor() as cursor:
        cursor.execute(
            f'UPDATE "{table}" SET "{column}" = %s || left(md5("{column}" || %s), 16) '  # noqa: S608
            f'WHERE "{column}" = ANY(%s){conditions}',
            [ERASED_PREFIX, salt, sorted(keys), *where.values()],
        )


def _rename_visitors(user: AbstractBaseUser) -> None:
    """The person's conversation ids and client names, where the team keeps them to count
    (reported uses, the insights' daily visitor and last-visit rows), take random names: each
    still counts once, and nothing leads back to the person. A client name someone else's
    reads still carry (a product's name, not theirs) stays."""
    activity = ActivityLog.objects.filter(user=user)
    sessions = {
        *activity.values_list("conversation_id", flat=True),
        *Provenance.objects.filter(created_by=user).values_list("conversation_id", flat=True),
        *ReportedUse.objects.filter(used_by=user).values_list("conversation", flat=True),
        *Chunk.objects.filter(user=user).values_list("conversation_id", flat=True),
    }
    clients = {
        *activity.values_list("client_name", flat=True),
        *Provenance.objects.filter(created_by=user).values_list("client_name", flat=True),
        *Memory.objects.filter(created_by=user).values_list("agent_name", flat=True),
        *Chunk.objects.filter(user=user).values_list("client", flat=True),
    }
    others = ActivityLog.objects.exclude(user=user)
    clients -= set(others.filter(client_name__in=clients).values_list("client_name", flat=True))
    sessions -= set(
        others.filter(conversation_id__in=sessions).values_list("conversation_id", flat=True)
    )
    salt = secrets.token_hex(16)
    for model in (DailyVisitor, LastVisit):
        _rename(model, "key", sessions, salt, kind=DailyVisitor.SESSION)
        _rename(model, "key", clients, salt, kind=DailyVisitor.CLIENT)
    _rename(ReportedUse, "conversation", sessions, salt, used_by=user.pk)


def _unsign_challenges(user: AbstractBaseUser) -> None:
    """A challenge joined to an open one is kept as "username: reason" in its text
    (`memories.hygiene.review`): the reason stays, signed by a deleted user."""
    signed = f"{user.get_username()}: "
    for conflict in Conflict.objects.filter(rationale__contains=signed):
        said = conflict.rationale.split("\n\n")
        conflict.rationale = "\n\n".join(
            f"{DELETED_USER}: {part.removeprefix(signed)}" if part.startswith(signed) else part
            for part in said
        )
        conflict.save(update_fields=["rationale"])


def _unsign_claims(user: AbstractBaseUser) -> None:
    """An archive's claim that the person wrote a memory (kept on the import's provenance row)
    names the deleted user instead; the rest of the claim stays."""
    for row in Provenance.objects.filter(claims__author__user=user.get_username()):
        author = {**row.claims["author"], "user": DELETED_USER, "client": ""}
        row.claims = {**row.claims, "author": author}
        row.save(update_fields=["claims"])


@receiver(account_erasing, dispatch_uid="memories_account_erasing")
def account_rows_erase(
    sender, user: AbstractBaseUser, delete_shared_writes: bool = False, **kwargs
) -> None:
    """Activity, idempotency records and tickets go with the user row (they cascade); the
    personal scope goes with `scope_erasing`. Here: what the user wrote in shared scopes, the
    chunks they sent there and their export jobs (before the tasks that name them)."""
    writes = Provenance.objects.filter(created_by=user).exclude(
        memory__scope__kind=ScopeKind.PERSONAL
    )
    memories = Memory.objects.filter(created_by=user).exclude(scope__kind=ScopeKind.PERSONAL)
    if delete_shared_writes:
        erase_memories(memories)
        writes.delete()
    _rename_visitors(user)
    # Their writes, and writes an archive import attributed to them by name.
    (writes | Provenance.objects.filter(author_name=user.get_username())).update(
        author_name=DELETED_USER, client_name="", conversation_id="", source_path="", chunk_hash=""
    )
    _unsign_claims(user)
    memories.update(agent_name="")
    # The typed links they made stay (the scope's, like their shared memories), without the
    # client they made them from; the user column empties with the user row.
    MemoryLink.objects.filter(created_by=user).update(agent_name="")
    _unsign_challenges(user)
    export_files_forget(ExportJob.objects.filter(user=user))
    Chunk.objects.filter(user=user).delete()
    task_rows_forget()


def memory_purge(*, memory: Memory, by: AbstractBaseUser, reason: str) -> PurgeRecord:
    """Delete one memory for a legal request (staff, in the admin): the memory, its versions,
    windows, provenance, conflicts and activity references. The audit keeps who, when, why and
    the memory's id, never its content. Everyday removal is `forget`, which deletes nothing."""
    reason = reason.strip()
    if not reason:
        raise ValidationFailed("reason", _("A purge needs a reason."))
    with transaction.atomic():
        record = PurgeRecord.objects.create(
            memory_public_id=memory.public_id,
            scope_public_id=memory.scope.public_id,
            purged_by=by,
            reason=reason,
        )
        erase_memories(Memory.objects.filter(pk=memory.pk))
    return record
