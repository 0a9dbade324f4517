"""The one background-job engine: rows of a model worked off the request path by django-q2.

A job is declared once (`Job`): its name, its model, the prefix of its queue fields on that
model (`status`, `attempts`, `error`, `claim`, `lease_until`, `next_at`), its settings
(`JobSettings`: the environment variables and their defaults), its task paths, the steps before
the call, the call and the apply step. The declaring module registers it (`job_register`) when the
app loads (`memories.apps`), and everything else comes from the registry: the settings are read
from the environment at start (`jobs_configure`), django-q2's rows of its tasks are known to the
erasure (`memories.taskrows`), and one schedule sweeps every job (`jobs_sweep`). The engine does
the rest, the same for all:

1. a claim is a random token with a lease; a task runs with the claim it was queued with and
   exchanges it for a fresh one, so a redelivered task finds its claim gone and does nothing,
   and two workers never work one row at once;
2. without an API key a claimed row waits (no attempt is spent) and nothing is due;
3. the call runs outside any transaction; the apply step runs in one, on the row locked again,
   and only if the claim is still ours (a late worker whose lease ran out writes nothing);
4. a failed call records the attempt and its error and backs off exponentially (at least as
   long as the server's retry-after), or fails the row at once when another attempt cannot help
   or it was the last one; the admin's retry brings a failed row back with fresh attempts;
5. the sweeper (one django-q2 schedule for every job) claims what is due, including rows whose
   worker died mid-task (their lease ran out), and queues them; by id, or in an order the job
   gives (the judge's is fair across owners and scopes);
6. a job may work several claimed rows with one call (`run_many`, queued by its `many_task`):
   each row is claimed, checked and applied on its own, and a call's result may fail one row and
   not the others; after such a call the next call's worth is queued at once when the queue is
   short (`queue_next`), so a backlog is worked at the worker's pace, not the sweeper's.

Every run's outcome is counted in `zm_job_outcomes_total`, by job.
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.tasks import async_task

from zeromemory.core import foreground
from zeromemory.core.env import env_int, env_str
from zeromemory.core.llm import LLMCallFailed
from zeromemory.core.metrics import observe_job

logger = logging.getLogger(__name__)

PENDING, FAILED = "pending", "failed"


def backoff_seconds(attempts: int, retry_after: float | None) -> float:
    """The wait before the next attempt: doubling from ZM_TRANSLATION_BACKOFF (the one base of
    every job), never shorter than what the server asked for."""
    delay = settings.TRANSLATION_BACKOFF_SECONDS * (2 ** max(0, attempts - 1))
    return max(delay, retry_after or 0)


def _nothing_before(row: Any) -> str | None:
    return None


@dataclass(frozen=True)
class JobSettings:
    """A job's settings, declared with it: the names and defaults of its environment variables.

    `prefix` names the job's own (ZM_<prefix>_MAX_ATTEMPTS, _LEASE, _DAILY_TOKENS), `caller` its
    LLM call's (ZM_<caller>_MODEL, _TIMEOUT); the settings drop the ZM_ and say their unit
    (TRANSLATION_LEASE_SECONDS). The backoff's base, ZM_TRANSLATION_BACKOFF, is every job's.
    """

    prefix: str  # "TRANSLATION"
    caller: str  # "TRANSLATOR"
    timeout: int  # seconds one call may take, the default of ZM_<caller>_TIMEOUT
    daily_tokens: int  # the default of ZM_<prefix>_DAILY_TOKENS (per scope or per user); 0: none
    model: str = "claude-haiku-4-5"
    max_attempts: int = 6
    # Whose day the daily tokens are: each scope's ("scope"), or each user's over all their
    # scopes ("user"); either counts the job's spend rows (`memories.spend`).
    budget_per: str = "scope"

    def variables(self) -> dict[str, str]:
        """The environment variable of each setting: {setting: variable}."""
        return {
            f"{self.caller}_MODEL": f"ZM_{self.caller}_MODEL",
            f"{self.caller}_TIMEOUT_SECONDS": f"ZM_{self.caller}_TIMEOUT",
            f"{self.prefix}_MAX_ATTEMPTS": f"ZM_{self.prefix}_MAX_ATTEMPTS",
            f"{self.prefix}_LEASE_SECONDS": f"ZM_{self.prefix}_LEASE",
            f"{self.prefix}_DAILY_TOKENS": f"ZM_{self.prefix}_DAILY_TOKENS",
        }

    def read(self) -> dict[str, Any]:
        """The settings' values from the environment (the defaults where a variable is unset)."""
        names = self.variables()
        timeout = env_int(names[f"{self.caller}_TIMEOUT_SECONDS"], self.timeout, minimum=1)
        return {
            f"{self.caller}_MODEL": env_str(names[f"{self.caller}_MODEL"], self.model),
            f"{self.caller}_TIMEOUT_SECONDS": timeout,
            f"{self.prefix}_MAX_ATTEMPTS": env_int(
                names[f"{self.prefix}_MAX_ATTEMPTS"], self.max_attempts, minimum=1
            ),
            # How long a worker may hold a row before the sweeper takes it back: longer than a
            # call may take.
            f"{self.prefix}_LEASE_SECONDS": env_int(
                names[f"{self.prefix}_LEASE_SECONDS"], timeout + 60, minimum=1
            ),
            f"{self.prefix}_DAILY_TOKENS": env_int(
                names[f"{self.prefix}_DAILY_TOKENS"], self.daily_tokens
            ),
        }


@dataclass(frozen=True)
class Job:
    """A declaration: what to work on, and how one row is worked."""

    name: str  # for logs and the metric: "translation", "extraction", "judging"
    model: type[models.Model]
    task: str  # the dotted path of the django-q2 task, called with (row id, claim)
    task_name: str  # the task's name prefix in the queue: "<task_name>-<id>"
    settings: JobSettings
    spend_path: str  # its LLM spend rows' path (`memories.spend`): "translation"
    call: Callable[[Any], Any]  # the LLM call (outside any transaction); raises LLMCallFailed
    apply: Callable[[Any, Any], str]  # (the row locked again, the call's result) -> outcome
    before: Callable[[Any], str | None] = _nothing_before  # checks with no call; an outcome stops
    prefix: str = ""  # of the queue fields: "translation_" on Memory
    runnable: tuple[str, ...] = (PENDING,)  # the statuses a row is worked in
    retryable: tuple[str, ...] = (FAILED,)  # the statuses the admin's retry takes back
    waiting_status: str = ""  # the status a row waits for a key in, if it has one
    waiting_error: str = ""  # else the note its error shows while it waits
    related: tuple[str, ...] = ()  # select_related of the claimed row
    batch: int = 100  # rows the sweeper claims at a time
    # The ids of due rows in the order to claim them (statuses, now, limit), when first in,
    # first out (by id) is not fair enough; None: by id.
    order: Callable[[list[str], datetime, int], list[int]] | None = None
    # Several rows worked with one call: the task called with [(row id, claim), ...], the field
    # the rows of one call share ("scope_id") and the setting that holds how many go in a call.
    many_task: str = ""
    call_group: str = ""
    per_call_setting: str = ""

    def f(self, name: str) -> str:
        """The model's name of a queue field."""
        return self.prefix + name

    def _fields(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {self.f(name): value for name, value in values.items()}

    def _setting(self, name: str) -> Any:
        return getattr(settings, f"{self.settings.prefix}_{name}")

    def per_call(self) -> int:
        """Rows one call works (1 without a `many_task`)."""
        return int(getattr(settings, self.per_call_setting)) if self.many_task else 1

    def new_claim(self, row: Any, *, now: datetime | None = None) -> str:
        """Give the row a fresh claim and lease (the caller saves them); returns the claim."""
        claim = uuid.uuid4().hex
        lease = (now or timezone.now()) + timedelta(seconds=self._setting("LEASE_SECONDS"))
        setattr(row, self.f("claim"), claim)
        setattr(row, self.f("lease_until"), lease)
        return claim

    def finish(self, row: Any, *, save: bool = True, **fields: Any) -> None:
        """The row leaves this attempt: `fields` set, claim and lease released."""
        fields = {**fields, self.f("claim"): "", self.f("lease_until"): None}
        for name, value in fields.items():
            setattr(row, name, value)
        if save:
            row.save(update_fields=list(fields))

    def _locked(self, row_id: int, *, skip_locked: bool = False) -> Any:
        rows = self.model.objects.select_for_update(skip_locked=skip_locked, of=("self",))
        return rows.select_related(*self.related).filter(pk=row_id).first()

    def _ours(self, row: Any, claim: str) -> bool:
        # An empty claim is no claim: it must not match a row whose claim was released.
        return (
            row is not None
            and bool(claim)
            and getattr(row, self.f("claim")) == claim
            and getattr(row, self.f("status")) in self.runnable
        )

    def claim(self, row_id: int, claim: str) -> Any:
        """The row for one attempt with a fresh claim, or None when `claim` is not current."""
        with transaction.atomic():
            row = self._locked(row_id, skip_locked=True)
            if not self._ours(row, claim):
                return None
            self.new_claim(row)
            row.save(update_fields=[self.f("claim"), self.f("lease_until")])
            return row

    def run(self, *, row_id: int, claim: str) -> str:
        """Work one queued row; returns what happened (for logs, tests and the metric)."""
        [outcome] = self.run_many(claims=[(row_id, claim)], call_many=None)
        return outcome

    def run_many(
        self,
        *,
        claims: list[tuple[int, str]],
        call_many: Callable[[list[Any]], list[Any]] | None,
    ) -> list[str]:
        """Work several queued rows with one call (`call_many`: the rows that need a call ->
        one result, or an LLMCallFailed, per row, in order), or each with its own `call` when
        `call_many` is None. Outcomes in the order of `claims`."""
        # Background work: the host's requests in flight go first (within a bounded wait).
        foreground.give_way()
        outcomes: dict[int, str] = {}
        working = []
        for index, (row_id, claim) in enumerate(claims):
            row = self.claim(row_id, claim)
            if row is None:
                outcomes[index] = "not-claimed"
            elif not settings.ANTHROPIC_API_KEY:
                self.wait_for_key(row_id=row_id, claim=getattr(row, self.f("claim")))
                outcomes[index] = "no-key"
            elif (stopped := self.before(row)) is not None:
                outcomes[index] = stopped
            else:
                working.append((index, row))
        if working:
            rows = [row for _, row in working]
            try:
                results = call_many(rows) if call_many else [self._call_one(rows[0])]
            except LLMCallFailed as failure:
                results = [failure] * len(rows)
            for (index, row), result in zip(working, results, strict=True):
                if isinstance(result, LLMCallFailed):
                    outcomes[index] = self._failed(row, result)
                else:
                    outcomes[index] = self.settle(row, result)
        ordered = [outcomes[index] for index in range(len(claims))]
        for outcome in ordered:
            observe_job(job=self.name, outcome=outcome)
        return ordered

    def _call_one(self, row: Any) -> Any:
        try:
            return self.call(row)
        except LLMCallFailed as failure:
            return failure

    def settle(self, row: Any, result: Any) -> str:
        """Apply a call's result in one transaction, on the row locked again, if still ours."""
        with transaction.atomic():
            locked = self._locked(row.pk)
            if not self._ours(locked, getattr(row, self.f("claim"))):
                logger.info("dropping a stale %s of %s", self.name, row.pk)
                return "stale"
            return self.apply(locked, result)

    def _failed(self, row: Any, failure: LLMCallFailed) -> str:
        with transaction.atomic():
            locked = self._locked(row.pk)
            if not self._ours(locked, getattr(row, self.f("claim"))):
                return "stale"
            attempts = getattr(locked, self.f("attempts")) + 1
            # A refusal another attempt cannot change (a bad key, a rejected request) fails at
            # once; the admin's retry brings the row back once the cause is fixed.
            final = not failure.retryable or attempts >= self._setting("MAX_ATTEMPTS")
            delay = backoff_seconds(attempts, failure.retry_after)
            self.finish(
                locked,
                **self._fields(
                    {
                        "attempts": attempts,
                        "error": failure.message[:2000],
                        "status": FAILED if final else PENDING,
                        "next_at": None if final else timezone.now() + timedelta(seconds=delay),
                    }
                ),
            )
        outcome = "failed" if final else "retry"
        logger.warning("%s of %s failed (%s): %s", self.name, row.pk, outcome, failure.message)
        return outcome

    def wait_for_key(self, *, row_id: int, claim: str) -> None:
        """No key to call with: the row waits without spending an attempt, its claim released
        (not left to run out) so that the first sweep after a key is configured takes it."""
        waiting = {"claim": "", "lease_until": None, "next_at": None}
        if self.waiting_status:
            waiting["status"] = self.waiting_status
        else:
            waiting["error"] = self.waiting_error
        self.model.objects.filter(pk=row_id, **{self.f("claim"): claim}).update(
            **self._fields(waiting)
        )

    def due(self, *, limit: int | None = None) -> list[tuple[int, str]]:
        """Claim the rows that are due (backoff over, no live lease); [(id, claim)]. Nothing is
        due without a key."""
        if not settings.ANTHROPIC_API_KEY:
            return []
        now = timezone.now()
        statuses = [*self.runnable, *([self.waiting_status] if self.waiting_status else [])]
        claimed = []
        limit = limit or self.batch
        with transaction.atomic():
            rows = self.model.objects.select_for_update(skip_locked=True)
            if self.order is not None:
                ids = self.order(statuses, now, limit)
                rank = {row_id: index for index, row_id in enumerate(ids)}
                # Still due once locked: a worker may have claimed one since the ranking read.
                rows = sorted(
                    self._due_rows(rows.filter(pk__in=ids), statuses, now),
                    key=lambda row: rank[row.pk],
                )
            else:
                rows = self._due_rows(rows, statuses, now).order_by("id")[:limit]
            for row in rows:
                if getattr(row, self.f("status")) == self.waiting_status:
                    setattr(row, self.f("status"), PENDING)
                claimed.append((row.id, self.new_claim(row, now=now)))
                row.save(
                    update_fields=[self.f(name) for name in ("status", "claim", "lease_until")]
                )
        return claimed

    def _due_rows(self, rows: Any, statuses: list[str], now: datetime) -> Any:
        return (
            rows.filter(**{f"{self.f('status')}__in": statuses})
            .exclude(**{f"{self.f('next_at')}__gt": now})
            .exclude(**{f"{self.f('lease_until')}__gt": now})
        )

    def enqueue(self, *, row_id: int, claim: str) -> None:
        """Queue a claimed row (called from transaction.on_commit); without a key it waits."""
        if not settings.ANTHROPIC_API_KEY:
            self.wait_for_key(row_id=row_id, claim=claim)
            return
        try:
            async_task(self.task, row_id, claim, task_name=f"{self.task_name}-{row_id}")
        except Exception:  # noqa: BLE001 - the row is stored; the sweeper queues it after the lease
            logger.exception("could not queue the %s of %s", self.name, row_id)

    def calls_of(self, claimed: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
        """Claimed rows grouped into calls: up to `per_call` rows that share `call_group`."""
        per_call = self.per_call()
        if per_call == 1:
            return [[row] for row in claimed]
        groups = {}
        if self.call_group:
            groups = dict(
                self.model.objects.filter(pk__in=[row_id for row_id, _ in claimed]).values_list(
                    "pk", self.call_group
                )
            )
        by_group: dict[Any, list[tuple[int, str]]] = defaultdict(list)
        for row_id, claim in claimed:
            by_group[groups.get(row_id)].append((row_id, claim))
        return [
            rows[start : start + per_call]
            for rows in by_group.values()
            for start in range(0, len(rows), per_call)
        ]

    def queue(self, claimed: list[tuple[int, str]]) -> int:
        """Queue claimed rows, a call's worth per task; how many rows went."""
        for call in self.calls_of(claimed):
            first = call[0][0]
            if self.many_task:
                async_task(self.many_task, call, task_name=f"{self.task_name}-{first}")
            else:
                async_task(self.task, first, call[0][1], task_name=f"{self.task_name}-{first}")
        return len(claimed)

    def sweep(self) -> int:
        """Periodic: queue the rows that are due, including those of dead workers, topping the
        queue up to `batch` tasks rather than piling onto a backlog: a row whose task still
        waits in the queue past its lease would be claimed again, and its first task would run
        only to find its claim gone. A tenth of `batch` goes in even then, so no job starves
        behind another's backlog."""
        queued = get_broker().queue_size()
        return self.queue(self.due(limit=max(self.batch // 10, self.batch - queued, 1)))

    def queue_next(self) -> int:
        """After a call: the next call's worth of due rows, queued when the queue holds fewer
        tasks than the worker has processes. So a backlog is worked at the worker's pace rather
        than at the sweeper's (one batch a minute), and whatever else was queued meanwhile still
        goes first; rows past their budget are not due, so nothing spins."""
        if get_broker().queue_size() >= settings.Q_WORKERS:
            return 0
        return self.queue(self.due(limit=self.per_call()))

    def retry(self, *, row: Any) -> str | None:
        """A failed row back in the queue with fresh attempts (the admin's action). Returns the
        claim for the caller to enqueue on commit, or None when the row is not retryable. The
        claim has no lease: the sweeper may take the row first, and the queued task then finds
        its claim gone."""
        claim = uuid.uuid4().hex
        fields = {"status": PENDING, "attempts": 0, "next_at": None, "error": "", "claim": claim}
        retried = self.model.objects.filter(
            pk=row.pk, **{f"{self.f('status')}__in": self.retryable}
        ).update(**self._fields({**fields, "lease_until": None}))
        return claim if retried else None


# The declared jobs, by name: each declaring module registers its job when it is imported, and
# the app imports those modules when it loads (`memories.apps`).
_REGISTERED: dict[str, Job] = {}


def job_register(job: Job) -> Job:
    """Add a declared job to the registry (once per name); returns it."""
    known = _REGISTERED.setdefault(job.name, job)
    if known is not job:
        raise ValueError(f"a job named {job.name!r} is declared twice")
    return job


def jobs_registered() -> list[Job]:
    return list(_REGISTERED.values())


def jobs_configure() -> None:
    """At start: each registered job's settings, read from the environment, unless the project's
    settings module already defines one (a deployment's own settings win)."""
    for job in _REGISTERED.values():
        for name, value in job.settings.read().items():
            if not hasattr(settings, name):
                setattr(settings, name, value)


def jobs_sweep() -> int:
    """Every minute (the django-q2 schedule "sweep-jobs"): queue every registered job's due rows,
    including those of dead workers; how many rows went."""
    queued = 0
    for job in _REGISTERED.values():
        try:
            queued += job.sweep()
        except Exception:  # noqa: BLE001 - one job's failing sweep must not stop the others'
            logger.exception("could not sweep the %s job", job.name)
    return queued
