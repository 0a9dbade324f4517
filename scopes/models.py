"""Tenancy: scopes, memberships with roles, and API tokens.

Code never filters tenant data with these models directly; it asks `scopes.access`.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from zeromemory.core.ids import new_public_id

SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
slug_validator = RegexValidator(
    SLUG_PATTERN,
    _("Use lowercase letters, digits and single hyphens; start and end with a letter or digit."),
    code="invalid_slug",
)


class ScopeKind(models.TextChoices):
    PERSONAL = "personal", _("Personal")
    TEAM = "team", _("Team")
    PROJECT = "project", _("Project")


class Role(models.IntegerChoices):
    """Ordered: a higher role may do everything a lower one may."""

    READER = 10, _("Reader")
    WRITER = 20, _("Writer")
    ADMIN = 30, _("Admin")

    @classmethod
    def from_name(cls, name: str) -> Role:
        return cls[name.upper()]

    @property
    def slug(self) -> str:
        return self.name.lower()


class Scope(models.Model):
    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "scp")
    )
    kind = models.CharField(_("kind"), max_length=16, choices=ScopeKind.choices)
    name = models.CharField(_("name"), max_length=120)
    slug = models.CharField(_("slug"), max_length=50, validators=[slug_validator])
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="owned_scopes",
        verbose_name=_("owner"),
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="scopes"
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        verbose_name = _("scope")
        verbose_name_plural = _("scopes")
        ordering = ["kind", "name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "slug"], name="scope_slug_unique_per_owner"),
            models.UniqueConstraint(
                fields=["owner"],
                condition=Q(kind="personal"),
                name="scope_one_personal_per_user",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"

    @property
    def is_personal(self) -> bool:
        return self.kind == ScopeKind.PERSONAL


class Membership(models.Model):
    scope = models.ForeignKey(
        Scope, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("scope")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=_("user"),
    )
    role = models.PositiveSmallIntegerField(_("role"), choices=Role.choices)
    created_at = models.DateTimeField(_("joined"), default=timezone.now)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        ordering = ["scope_id", "-role", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["scope", "user"], name="membership_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.scope} as {Role(self.role).slug}"


class ApiToken(models.Model):
    """A bearer token. Only a hash of the secret is stored; the secret is shown once."""

    public_id = models.CharField(
        _("id"), max_length=40, unique=True, editable=False, default=partial(new_public_id, "tok")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="api_tokens",
        verbose_name=_("user"),
    )
    name = models.CharField(_("name"), max_length=120)
    prefix = models.CharField(_("prefix"), max_length=16, editable=False)
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    read_only = models.BooleanField(_("read-only"), default=False)
    # True when the token may touch only `restricted_scopes` (an empty list then means none).
    scope_restricted = models.BooleanField(_("restricted to listed scopes"), default=False)
    restricted_scopes = models.ManyToManyField(
        Scope, blank=True, related_name="+", verbose_name=_("restricted to scopes")
    )
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def is_active(self, *, now=None) -> bool:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > now
