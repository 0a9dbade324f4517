"""django-q2's own rows of our tasks: which rows of ours a task names, read back from the queue
(django_q_ormq), the results (django_q_task) and the schedules (django_q_schedule), and the
removal of tasks whose rows are gone.

django-q2 keeps a task's arguments and result pickled (signed in the queue, base64 in the
results), so no text search of the database sees them. Every task whose arguments name rows of
ours is known to `row_tasks` with the model of those rows: a background job's tasks from its
declaration (`memories.jobs`), the others declared here; a test holds them to the task
functions of the code. An erasure deletes its rows first, then asks `task_rows_forget`
to remove every django-q2 row of a task whose rows no longer exist: a queued one would find
nothing to do, a finished or failed one keeps the ids (and, failed, an error text) of what was
erased. With the Redis broker the queue itself lives in Redis; its tasks find their rows gone.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import models
from django_q.models import OrmQ, Schedule, Task

from memories.jobs import jobs_registered
from memories.models import ExportJob


def _first(args: tuple, kwargs: dict) -> list[int]:
    return [args[0]] if args else []


def _claims(args: tuple, kwargs: dict) -> list[int]:
    """A job's many_task: judge_many([(conflict id, claim), ...])."""
    return [row_id for row_id, _claim in args[0]] if args else []


# Tasks that are no background job's: func (the dotted path the task is queued by) -> the model
# of its rows, and the ids in (args, kwargs).
OTHER_ROW_TASKS: dict[str, tuple[type[models.Model], Callable[[tuple, dict], list[int]]]] = {
    "memories.portability.tasks.export_prepare": (ExportJob, _first),
}


def row_tasks() -> dict[str, tuple[type[models.Model], Callable[[tuple, dict], list[int]]]]:
    """Every task whose arguments name rows of ours: each registered job's (its task with
    (row id, claim), its many_task with [(row id, claim), ...]) and the others."""
    declared = dict(OTHER_ROW_TASKS)
    for job in jobs_registered():
        declared[job.task] = (job.model, _first)
        if job.many_task:
            declared[job.many_task] = (job.model, _claims)
    return declared


@dataclass(frozen=True)
class TaskRow:
    """One django-q2 row, decoded: its model and key, what it calls and with what."""

    model: type[models.Model]
    pk: Any
    func: str
    name: str
    args: tuple
    kwargs: dict
    result: Any = None

    def names(
        self, declared: dict[str, tuple[type[models.Model], Callable]] | None = None
    ) -> tuple[type[models.Model], list[int]] | None:
        """The model and ids of the rows this task names, if it is declared (in `declared`, by
        default `row_tasks()`)."""
        declared = (declared if declared is not None else row_tasks()).get(self.func)
        if declared is None:
            return None
        model, ids = declared
        try:
            return model, [int(row_id) for row_id in ids(self.args, self.kwargs)]
        except (TypeError, ValueError, IndexError):
            return model, []


def _literal(text: str | None, empty: Any) -> Any:
    if not text:
        return empty
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return empty


def task_rows() -> Iterator[TaskRow]:
    """Every row of django-q2's three tables, decoded with django-q2's own helpers."""
    for queued in OrmQ.objects.iterator(chunk_size=500):
        task = queued.task  # SignedPackage.loads of the payload
        yield TaskRow(
            model=OrmQ,
            pk=queued.pk,
            func=str(task.get("func") or ""),
            name=str(task.get("name") or ""),
            args=tuple(task.get("args") or ()),
            kwargs=dict(task.get("kwargs") or {}),
        )
    for done in Task.objects.iterator(chunk_size=500):
        yield TaskRow(
            model=Task,
            pk=done.pk,
            func=done.func,
            name=done.name,
            args=tuple(done.args or ()),
            kwargs=dict(done.kwargs or {}),
            result=done.result,
        )
    for schedule in Schedule.objects.iterator(chunk_size=500):
        args = _literal(schedule.args, ())
        kwargs = _literal(schedule.kwargs, {})
        yield TaskRow(
            model=Schedule,
            pk=schedule.pk,
            func=schedule.func,
            name=schedule.name or "",
            args=args if isinstance(args, tuple) else (args,),
            kwargs=kwargs if isinstance(kwargs, dict) else {},
        )


def task_rows_forget() -> int:
    """Delete django-q2's rows of tasks that name a row of ours that no longer exists; how many
    went."""
    named: list[tuple[TaskRow, type[models.Model], list[int]]] = []
    wanted: dict[type[models.Model], set[int]] = defaultdict(set)
    declared = row_tasks()
    for row in task_rows():
        found = row.names(declared)
        if found is not None and found[1]:
            named.append((row, *found))
            wanted[found[0]].update(found[1])
    existing = {
        model: set(model.objects.filter(pk__in=ids).values_list("pk", flat=True))
        for model, ids in wanted.items()
    }
    stale: dict[type[models.Model], list[Any]] = defaultdict(list)
    for row, model, ids in named:
        if not set(ids) <= existing[model]:
            stale[row.model].append(row.pk)
    return sum(model.objects.filter(pk__in=pks).delete()[0] for model, pks in stale.items())
