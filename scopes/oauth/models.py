"""A person's consent to an OAuth client: the grant behind every token the client holds.

The grant's restrictions live on an API token of the person's (`token`): read-only, the scopes
chosen, revoked, last used. Each request made with one of the client's access tokens acts as
that API token, so `scopes.access` decides for a grant exactly what it decides for a token. The
token's own secret is never shown to anyone: only the OAuth access tokens reach it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import models
from django.utils.translation import gettext_lazy as _
from oauth2_provider.models import Application, Grant

from scopes.models import ApiToken


class OAuthGrant(models.Model):
    token = models.OneToOneField(
        ApiToken, on_delete=models.CASCADE, related_name="oauth_grant", verbose_name=_("token")
    )
    application = models.ForeignKey(
        Application, on_delete=models.CASCADE, related_name="+", verbose_name=_("client")
    )
    # The authorization code the person consented with, until it is exchanged.
    code = models.OneToOneField(
        Grant, null=True, blank=True, on_delete=models.SET_NULL, related_name="oauth_grant"
    )
    # The refresh-token family the code's exchange started; every later token belongs to it.
    token_family = models.UUIDField(null=True, blank=True, unique=True)
    redirect_uri = models.TextField(_("redirect URI"))
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("OAuth grant")
        verbose_name_plural = _("OAuth grants")

    def __str__(self) -> str:
        return f"{self.application.name or self.application.client_id} → {self.token.user}"

    @property
    def redirect_host(self) -> str:
        return urlsplit(self.redirect_uri).netloc or self.redirect_uri
