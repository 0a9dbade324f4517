from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

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
