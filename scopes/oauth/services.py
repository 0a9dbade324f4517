"""Writes of the authorization server: a person's consent becomes a grant."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q
from django.dispatch import receiver
from django.utils.translation import gettext as _
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from scopes.models import Scope
from scopes.oauth.models import OAuthGrant
from scopes.services import token_create
from scopes.signals import account_erasing
from zeromemory.core.actor import Actor
from zeromemory.core.errors import DomainError

SOURCE = Application.RegistrationSource


def client_label(application: Application, redirect_uri: str) -> str:
    """The client's own name, else the host it redirects to: what the person sees."""
    return (application.name or urlsplit(redirect_uri).hostname or _("OAuth client"))[:100]


def grant_create(
    *,
    user: AbstractBaseUser,
    application: Application,
    code: Grant,
    scopes: Iterable[Scope],
    read_only: bool,
) -> OAuthGrant:
    """The grant behind a consent: an API token of the person's restricted to the chosen scopes
    (and read-only if chosen). Its secret is dropped here; only OAuth tokens ever reach it."""
    name = client_label(application, code.redirect_uri)
    actor, scopes = Actor(user=user), list(scopes)
    try:
        issued = token_create(actor=actor, name=name, read_only=read_only, scopes=scopes)
    except DomainError:  # a client name the secret scanner refuses
        issued = token_create(
            actor=actor, name=_("OAuth client"), read_only=read_only, scopes=scopes
        )
    return OAuthGrant.objects.create(
        token=issued.token, application=application, code=code, redirect_uri=code.redirect_uri
    )


def grant_start_family(*, code: str, refresh_token: str) -> None:
    """Tie the refresh-token family the exchange of `code` started to the code's grant."""
    checksum = hashlib.sha256(refresh_token.encode("utf-8")).hexdigest()
    family = (
        RefreshToken.objects.filter(token_checksum=checksum, revoked__isnull=True)
        .values_list("token_family", flat=True)
        .first()
    )
    OAuthGrant.objects.filter(code__code=code, token_family__isnull=True).update(
        token_family=family, code=None
    )


@receiver(account_erasing, dispatch_uid="oauth_account_erasing")
def clients_of_account_erase(sender, user: AbstractBaseUser, **kwargs) -> None:
    """The OAuth clients only this person used go with their account: a client registers
    itself anonymously, but the name, redirect URIs and metadata it gave are what the person's
    agent chose (often their name or their machine's). A client someone else still holds a
    grant or a token of stays, and so does one staff registered in the admin (of another
    user's, or of none)."""
    theirs = set(
        OAuthGrant.objects.filter(token__user=user).values_list("application_id", flat=True)
    )
    for model in (Grant, AccessToken, RefreshToken):
        theirs |= set(model.objects.filter(user=user).values_list("application_id", flat=True))
    theirs |= set(Application.objects.filter(user=user).values_list("id", flat=True))
    theirs.discard(None)
    shared = set(
        OAuthGrant.objects.filter(application_id__in=theirs)
        .exclude(token__user=user)
        .values_list("application_id", flat=True)
    )
    for model in (Grant, AccessToken, RefreshToken):
        shared |= set(
            model.objects.filter(application_id__in=theirs, user__isnull=False)
            .exclude(user=user)
            .values_list("application_id", flat=True)
        )
    self_registered = Q(registration_source__in=[SOURCE.DCR, SOURCE.CIMD]) | Q(user=user)
    Application.objects.filter(self_registered, id__in=theirs - shared).delete()
