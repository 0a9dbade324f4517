from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ScopesConfig(AppConfig):
    name = "scopes"
    verbose_name = _("Scopes and access")

    def ready(self) -> None:
        from scopes import schema, signals  # noqa: F401 - registers the signal and schema extension
