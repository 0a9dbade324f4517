"""The MemoryKind catalogue, cached per process; staff edits reach every process within a minute."""

from __future__ import annotations

import time

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.utils.translation import gettext as _

from memories.models import MemoryKind
from zeromemory.core.errors import ValidationFailed

CACHE_SECONDS = 60

# The kinds that say how a team works (what it decided, its conventions, its gotchas, what people
# prefer): hygiene never retires one an agent or a person wrote without a person's word, and a
# used one may become a rule. One set, so what is protected and what may become a rule agree.
GUIDANCE_KINDS = frozenset({"convention", "decision", "gotcha", "preference"})
_cache: dict[str, MemoryKind] = {}
_loaded_at = 0.0


def all_kinds() -> dict[str, MemoryKind]:
    global _cache, _loaded_at
    if not _cache or time.monotonic() - _loaded_at > CACHE_SECONDS:
        _cache = {kind.slug: kind for kind in MemoryKind.objects.all()}
        _loaded_at = time.monotonic()
    return _cache


def kind_slugs() -> list[str]:
    """The catalogue's kinds, in its order (for the tool contract and the extractor's tool)."""
    return list(all_kinds())


def kind_for_slug(slug: str, *, field: str = "kind") -> MemoryKind:
    kind = all_kinds().get(slug) if isinstance(slug, str) else None
    if kind is None:
        known = ", ".join(sorted(all_kinds()))
        raise ValidationFailed(field, _("Unknown kind. Known kinds: %(k)s.") % {"k": known})
    return kind


@receiver(post_save, sender=MemoryKind, dispatch_uid="memorykind_cache_save")
@receiver(post_delete, sender=MemoryKind, dispatch_uid="memorykind_cache_delete")
def _forget_cache(**kwargs) -> None:
    global _loaded_at
    _loaded_at = 0.0
