"""`Authorization: Bearer <token>` for the REST API (the MCP endpoint uses the same lookup).

A bearer is an API token (`zm_…`) or an OAuth access token; the latter acts as its grant's API
token (`scopes.oauth`), only on the resource it was issued for.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.db import connections, router
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
    token = _token_with_user(hash_token_secret(secret))
    if token is None or not token.is_active() or not token.user.is_active:
        return None
    token_touch(token=token)
    return token


@cache
def _token_statement() -> str:
    """The token with its user by the secret's hash: what `select_related("user")` reads, as
    one statement written once. Every API and MCP call runs it first, and the ORM compiling
    the query on each call cost more than its round trip. The columns are the models' own."""
    user_model = get_user_model()
    token_columns = [f't."{f.column}"' for f in ApiToken._meta.concrete_fields]
    user_columns = [f'u."{f.column}"' for f in user_model._meta.concrete_fields]
    return (
        f"SELECT {', '.join(token_columns + user_columns)}"  # noqa: S608 (the models' names)
        f' FROM "{ApiToken._meta.db_table}" t'
        f' JOIN "{user_model._meta.db_table}" u ON u."{user_model._meta.pk.column}" = t."user_id"'
        ' WHERE t."secret_hash" = %s'
    )


def _token_with_user(secret_hash: str) -> ApiToken | None:
    """The token whose secret has this hash (unique), its user loaded beside it, or None."""
    alias = router.db_for_read(ApiToken)
    with connections[alias].cursor() as cursor:
        cursor.execute(_token_statement(), [secret_hash])
        row = cursor.fetchone()
    if row is None:
        return None
    token_fields = ApiToken._meta.concrete_fields
    user_model = get_user_model()
    split = len(token_fields)
    token = ApiToken.from_db(alias, [f.attname for f in token_fields], row[:split])
    token.user = user_model.from_db(
        alias, [f.attname for f in user_model._meta.concrete_fields], row[split:]
    )
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
