"""Helpers of the recall and build_context tests: remember many at once, age a memory, hit ids."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from memories.models import Memory
from memories.services.remember import RememberInput, memory_remember_many
from zeromemory.core.actor import Actor


def remember_all(user, items, *, scope=None):
    """Remember (content, kind) pairs as `user` in `scope`; returns the memories in order."""
    requests = [RememberInput(content=c, kind=k, scope=scope) for c, k in items]
    results = memory_remember_many(actor=Actor(user=user), requests=requests)
    for item in results:
        assert item.error is None, item.error
    return [item.result.memory for item in results]


def age(memory, days):
    Memory.objects.filter(pk=memory.pk).update(created_at=timezone.now() - timedelta(days=days))


def ids(hits):
    return [hit.id for hit in hits]
