"""`Authorization: Bearer <token>` for the REST API (the MCP endpoint uses the same lookup).

A bearer is an API token (`zm_…`) or an OAuth access token; the latter acts as its grant's API
token (`scopes.oauth`), only on the resource it was issued for.
"""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.utils.translation import gettext as _
from rest_framework import authentication, exceptions

from scopes.models import ApiToken
from scopes.oauth import resources
from scopes.oauth.selectors import InsufficientScope, token_for_access_token
from scopes.services import TOKEN_PREFIX, hash_token_secret, token_touch
from zeromemory.core import prepared
from zeromemory.core.throttling import COUNT_ROWS, USER_KEY_PREFIX, api_window


def token_for_secret(
    secret: str, *, resource: str = resources.MCP, count_call: bool = False
) -> ApiToken | None:
    """The active token with this secret, or None (unknown, revoked, expired, inactive user).
    An OAuth access token counts only on `resource` (raises InsufficientScope without read).

    `count_call`: the call is counted in its user's window of the API's rate by the same
    statement, when that statement goes to the primary; the token then carries the count
    (`counted_call`, hits and seconds left), which the rate limit reads instead of counting."""
    if not secret.startswith(TOKEN_PREFIX):
        return token_for_access_token(secret, resource=resource)
    token = _token_with_user(hash_token_secret(secret), count_call=count_call)
    if token is None or not token.is_active() or not token.user.is_active:
        return None
    token_touch(token=token)
    return token


# The token's join, by the secret's hash: the statement's FROM and WHERE.
_BY_HASH = ' FROM "{token}" t JOIN "{user}" u ON u."{pk}" = t."user_id" WHERE t."secret_hash" = %s'
# A call counted with the lookup: a hit in the window of the token's user, only when the token
# and its user are active (what `ApiToken.is_active` and `User.is_active` check again on the
# row), so a revoked or expired token never spends its user's calls.
_COUNTED = (
    "WITH hit AS ("
    + COUNT_ROWS.format(
        rows='SELECT %s::text || t."user_id", %s::bigint, 1'
        + _BY_HASH
        + ' AND t."revoked_at" IS NULL'
        ' AND (t."expires_at" IS NULL OR t."expires_at" > now()) AND u."is_active"'
    )
    + ") "
)


@cache
def _token_statement(*, counted: bool = False) -> str:
    """The token with its user by the secret's hash: what `select_related("user")` reads, as
    one statement written once. Every API and MCP call runs it first, and the ORM compiling
    the query on each call cost more than its round trip. The columns are the models' own.
    `counted`: the call counted too (`_COUNTED`), its count the last column (None when the
    token or its user is not active)."""
    user_model = get_user_model()
    names = {
        "token": ApiToken._meta.db_table,
        "user": user_model._meta.db_table,
        "pk": user_model._meta.pk.column,
    }
    columns = [f't."{f.column}"' for f in ApiToken._meta.concrete_fields]
    columns += [f'u."{f.column}"' for f in user_model._meta.concrete_fields]
    if counted:
        columns.append("(SELECT hits FROM hit)")
    head = _COUNTED.format(**names) if counted else ""
    # The models' names and our fragments only: the secret's hash is a value.
    return f"{head}SELECT {', '.join(columns)}" + _BY_HASH.format(**names)  # noqa: S608


def _token_with_user(secret_hash: str, *, count_call: bool = False) -> ApiToken | None:
    """The token whose secret has this hash (unique), its user loaded beside it, or None;
    with `count_call`, the call counted too where the lookup goes to the primary."""
    alias = router.db_for_read(ApiToken)
    window = api_window() if count_call and alias == DEFAULT_DB_ALIAS else None
    # Prepared on the connection, its plan kept (`zeromemory.core.prepared`): planning the
    # upsert and the join took more of the statement's time than running them.
    with connections[alias].cursor() as cursor:
        if window is None:
            prepared.execute(cursor, _token_statement(), [secret_hash], generic=True)
        else:
            values = [USER_KEY_PREFIX, window.start, secret_hash, secret_hash]
            prepared.execute(cursor, _token_statement(counted=True), values, generic=True)
        row = cursor.fetchone()
    if row is None:
        return None
    counted = None
    if window is not None:
        *row, hits = row
        counted = None if hits is None else (hits, window.left)
    token_fields = ApiToken._meta.concrete_fields
    user_model = get_user_model()
    split = len(token_fields)
    token = ApiToken.from_db(alias, [f.attname for f in token_fields], row[:split])
    token.user = user_model.from_db(
        alias, [f.attname for f in user_model._meta.concrete_fields], row[split:]
    )
    token.counted_call = counted
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
            token = token_for_secret(secret, resource=resources.API, count_call=True)
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
