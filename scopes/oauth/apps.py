from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OAuthConfig(AppConfig):
    name = "scopes.oauth"
    label = "oauth"
    verbose_name = _("OAuth sign-in of MCP clients")

    def ready(self) -> None:
        # The deployment check registers itself; the services receive the account erasure.
        from scopes.oauth import checks, services  # noqa: F401
