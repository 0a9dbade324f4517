"""django-oauth-toolkit's request validator, with this server's rules added.

- Only the authorization code grant (and refreshing its tokens); only the `code` response type.
- A redirect URI must be safe (`clients.redirect_uri_refusal`) besides matching a registered one
  exactly (the toolkit matches it, loopback ports aside, RFC 8252).
- Saving an authorization code records the person's consent as a grant; exchanging it ties the
  refresh-token family to that grant; a refresh of a revoked grant is refused.
"""

from __future__ import annotations

from oauth2_provider.oauth2_validators import OAuth2Validator

from scopes.oauth import selectors, services
from scopes.oauth.clients import redirect_uri_refusal

GRANT_TYPES = ("authorization_code", "refresh_token")


class Validator(OAuth2Validator):
    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        return grant_type in GRANT_TYPES and super().validate_grant_type(
            client_id, grant_type, client, request, *args, **kwargs
        )

    def validate_response_type(self, client_id, response_type, client, request, *args, **kwargs):
        return response_type == "code" and super().validate_response_type(
            client_id, response_type, client, request, *args, **kwargs
        )

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        return redirect_uri_refusal(redirect_uri) is None and super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )

    def save_authorization_code(self, client_id, code, request, *args, **kwargs):
        # `zm_scopes` and `zm_read_only` are the consent's choices (see views.ConsentView).
        grant = self._create_authorization_code(request, code)
        services.grant_create(
            user=request.user,
            application=request.client,
            code=grant,
            scopes=request.zm_scopes,
            read_only=request.zm_read_only,
        )

    def save_bearer_token(self, token, request, *args, **kwargs):
        super().save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "authorization_code" and token.get("refresh_token"):
            services.grant_start_family(code=request.code, refresh_token=token["refresh_token"])

    def validate_refresh_token(self, refresh_token, client, request, *args, **kwargs):
        valid = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        instance = getattr(request, "refresh_token_instance", None)
        return (
            valid
            and instance is not None
            and selectors.active_grant(instance.token_family) is not None
        )
