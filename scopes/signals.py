"""Every user gets a personal scope when the account is created, whatever created it; a sign-in
notes the password check in the session."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save
from django.dispatch import Signal, receiver

from zeromemory.core.actor import note_password_checked


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="scopes_personal_scope")
def create_personal_scope(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        from scopes.services import scope_create_personal

        scope_create_personal(user=instance)


@receiver(user_logged_in, dispatch_uid="scopes_password_checked")
def note_sign_in(sender, request, user, **kwargs) -> None:
    """Signing in is a password check: what needs a recent one (deciding on rules) may follow."""
    if request is not None and hasattr(request, "session"):
        note_password_checked(request.session)


# Erasure. The rows of tenant data below tenancy (memories, chunks, activity…) belong to apps
# that import this one, never the other way round, so tenancy announces an erasure and each app
# removes its own rows. Both are sent inside the erasure's transaction, before the scope's or
# the user's row goes: a receiver that fails undoes the whole erasure.
# `scope_erasing(scope=…)`: every row of the scope is to go.
scope_erasing = Signal()
# `account_erasing(user=…, delete_shared_writes=…)`: the user's rows are to go; what they wrote
# in shared scopes stays anonymized, or goes too when `delete_shared_writes`.
account_erasing = Signal()
