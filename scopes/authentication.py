"""`Authorization: Bearer <token>` for the REST API (the MCP endpoint uses the same lookup).

A bearer is an API token (`zm_…`) or an OAuth access token; the latter acts as its grant's API
token (`scopes.oauth`), only on the resource it was issued for.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import authentication, exceptions

from scopes.models import ApiToken
from scopes.oauth import resources
from scopes.oauth.selectors import InsufficientScope, token_for_access_token
from scopes.services import TOKEN_PREFIX, hash_token_secret, token_touch


def token_for_secret(secret: str, *, resource: str = resources.MCP) -> ApiToken | None:
    """The active token with this secret, or None (unknown, revoked, expired, inactive user).
    An OAuth access token counts only on `resource` (raises InsufficientScope without read)."""
    if not secret.startswith(TOKEN_PREFIX):
        return token_for_access_token(secret, resource=resource)
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
        try:
            token = token_for_secret(secret, resource=resources.API)
        except InsufficientScope:
            raise exceptions.PermissionDenied(
                _("This token's OAuth scope does not allow reading memories.")
            ) from None
        if token is None:
            raise exceptions.AuthenticationFailed(
                _("The token is not valid: unknown, revoked or expired.")
            )
        return (token.user, token)

    def authenticate_header(self, request) -> str:
        return resources.challenge(resources.API)
