"""The OAuth 2.1 authorization server for MCP clients (django-oauth-toolkit), from the environment.

Star-imported by settings.py; `.env.example` lists each variable. docs/security.md ("Sign-in of
MCP clients") says why each setting has the value it has.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from zeromemory.core.env import env_bool, env_int, env_list, env_str
from zeromemory.settings_serving import SERVE_HOST, SERVE_PORT

# The URL clients reach this server at (behind a proxy: the proxy's https:// origin). The
# resources tokens are bound to, the issuer and every advertised endpoint are built from it.
PUBLIC_URL = env_str("ZM_PUBLIC_URL", f"http://{SERVE_HOST}:{SERVE_PORT}").rstrip("/")
_public = urlsplit(PUBLIC_URL)
if _public.scheme not in ("http", "https") or not _public.hostname or _public.path:
    raise ValueError(
        f"ZM_PUBLIC_URL must be an origin (https://memory.example.com): {PUBLIC_URL!r}"
    )
OAUTH_DCR = env_bool("ZM_OAUTH_DCR", True)
OAUTH_DCR_PER_HOUR = env_int("ZM_OAUTH_DCR_PER_HOUR", 20, minimum=1)
# Client ID metadata documents are fetched only from public addresses. These https origins
# (scheme://host:port, comma-separated) are the operator's exceptions: a document server on a
# private network or a developer's loopback. The server's own address is never a reason.
OAUTH_CIMD_ALLOW_ORIGINS = env_list("ZM_OAUTH_CIMD_ALLOW_ORIGINS", "")
for _origin in OAUTH_CIMD_ALLOW_ORIGINS:
    _parts = urlsplit(_origin)
    if _parts.scheme != "https" or not _parts.hostname or _parts.path or _parts.query:
        raise ValueError(
            f"ZM_OAUTH_CIMD_ALLOW_ORIGINS takes https origins (https://host:port): {_origin!r}"
        )
OAUTH_ACCESS_TTL = env_int("ZM_OAUTH_ACCESS_TTL", 3600, minimum=60)
OAUTH_REFRESH_TTL_DAYS = env_int("ZM_OAUTH_REFRESH_TTL_DAYS", 30, minimum=1)

OAUTH_SCOPE_READ = "memories:read"
OAUTH_SCOPE_WRITE = "memories:write"

# django-oauth-toolkit's own models (named here so migrations can refer to them).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"
OAUTH2_PROVIDER = {
    "SCOPES": {
        OAUTH_SCOPE_READ: "Read memories in the scopes you choose",
        OAUTH_SCOPE_WRITE: "Write memories in the scopes you choose",
    },
    "DEFAULT_SCOPES": [OAUTH_SCOPE_READ, OAUTH_SCOPE_WRITE],
    "OAUTH2_VALIDATOR_CLASS": "scopes.oauth.validator.Validator",
    "OIDC_ISS_ENDPOINT": PUBLIC_URL,
    # OAuth 2.1: the authorization code with PKCE S256, refresh tokens; nothing else.
    "PKCE_REQUIRED": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_basic",
        "client_secret_post",
    ],
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "ALLOW_URI_WILDCARDS": False,
    # Claude Code and others listen on http://localhost:<any port>/callback, like 127.0.0.1.
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # https, plain http only to a loopback address (the validator checks), and the private-use
    # schemes of the desktop clients that register them (RFC 8252 section 7.1).
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http", "cursor", "vscode", "vscode-insiders"],
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ACCESS_TOKEN_EXPIRE_SECONDS": OAUTH_ACCESS_TTL,
    "REFRESH_TOKEN_EXPIRE_SECONDS": OAUTH_REFRESH_TTL_DAYS * 86400,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "REQUEST_APPROVAL_PROMPT": "force",
    "DCR_ENABLED": OAUTH_DCR,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "scopes.oauth.fetcher.Fetcher",
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_MAX_DOCUMENT_SIZE": 5 * 1024,
    "CIMD_MAX_CONCURRENT_FETCHES": 10,
    "OAUTH2_PROTECTED_RESOURCE_BEARER_METHODS_SUPPORTED": ["header"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "zero-memory",
}
# Plain http redirect URIs stay allowed for native clients' loopback callbacks (RFC 8252); the
# validator refuses http to any other host, which is what this deployment check cannot see.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
