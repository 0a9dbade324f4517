from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class OAuthConfig(AppConfig):
    name = "scopes.oauth"
    label = "oauth"
    verbose_name = _("OAuth sign-in of MCP clients")

    def ready(self) -> None:
        from scopes.oauth import checks  # noqa: F401 - registers the deployment check
