"""`Authorization: Bearer <token>` for the REST API (the MCP endpoint uses the same lookup)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import authentication, exceptions

from scopes.models import ApiToken
from scopes.services import hash_token_secret, token_touch


def token_for_secret(secret: str) -> ApiToken | None:
    """The active token with this secret, or None (unknown, revoked, expired, inactive user)."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(secret_hash=hash_token_secret(secret))
        .first()
    )
    if token is None or not token.is_active() or not token.user.is_active:
        return None
    token_touch(token=token)
    return token


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                _("Use the header Authorization: Bearer <token>.")
            )
        try:
            secret = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed(_("The token is not valid.")) from None
        token = token_for_secret(secret)
        if token is None:
            raise exceptions.AuthenticationFailed(
                _("The token is not valid: unknown, revoked or expired.")
            )
        return (token.user, token)

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'
