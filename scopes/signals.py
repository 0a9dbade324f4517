"""Every user gets a personal scope when the account is created, whatever created it."""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="scopes_personal_scope")
def create_personal_scope(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        from scopes.services import scope_create_personal

        scope_create_personal(user=instance)
