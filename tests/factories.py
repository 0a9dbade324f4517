from __future__ import annotations

import math
import random
from typing import Any

import factory
from django.contrib.auth import get_user_model

from memories.canonical.content import content_set, derived_text
from memories.embeddings import Embedded
from memories.models import EMBEDDING_DIMENSIONS, Memory
from scopes.models import Membership, Role, Scope, ScopeKind
from scopes.services import scope_create, token_create
from zeromemory.core.actor import Actor


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery")

    @factory.post_generation
    def saved(obj, create, extracted, **kwargs):
        if create:
            obj.save()


def make_scope(*, owner, slug: str = "team", kind: str = ScopeKind.TEAM) -> Scope:
    return scope_create(actor=Actor(user=owner), name=slug.title(), slug=slug, kind=kind)


def add_member(scope: Scope, user, role: Role) -> Membership:
    return Membership.objects.create(scope=scope, user=user, role=role)


def make_token(user, **kwargs) -> str:
    return token_create(actor=Actor(user=user), name=kwargs.pop("name", "test"), **kwargs).secret


def fixed_vector(text: str) -> list[float]:
    """A unit vector fixed by the text (the same text, the same vector; two texts nearly
    orthogonal), for tests that are not about embeddings and need no model pass."""
    rng = random.Random(text)
    values = [rng.gauss(0.0, 1.0) for _ in range(EMBEDDING_DIMENSIONS)]
    norm = math.sqrt(sum(value * value for value in values))
    return [value / norm for value in values]


def stored_memory(
    scope: Scope,
    content: str,
    *,
    kind: str = "fact",
    author: str = "human",
    vector: list[float] | None = None,
    **fields: Any,
) -> Memory:
    """A memory row as the write path derives it from its text (hash, language, translation
    status and claim, through the one owner) but with a fixed vector instead of the model's, and
    no provenance: for tests of what happens to stored memories, not of how they are written.
    `fields` are set last (an age, a state)."""
    derived = derived_text(content)
    derived.embedded = Embedded(vector=vector or fixed_vector(content), windows=[])
    memory = Memory(scope=scope, kind_id=kind, author_kind=author)
    content_set(memory, derived)
    for name, value in fields.items():
        setattr(memory, name, value)
    memory.save()
    return memory
