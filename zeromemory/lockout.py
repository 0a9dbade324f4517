"""The sign-in lockout's handler: django-axes' database handler, except for what a successful
sign-in clears.

Failures count per username and per address, each on its own (AXES_LOCKOUT_PARAMETERS lists them
apart). On success axes itself deletes every attempt that matches either one: all of the
username's, and all of the address's, whoever they were for. So anyone with an account could
sign in from the address they guess from and wipe the failures they ran up against another
person's account. Here a success clears only the failures of the same username from the same
address (the person's own mistakes there): failures for other usernames stay, and so do the
username's failures from other addresses, where someone else may be guessing.
"""

from __future__ import annotations

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.http import HttpRequest


class SignInLockout(AxesDatabaseHandler):
    def reset_user_attempts(self, request: HttpRequest, credentials: dict | None = None) -> int:
        deleted, _ = AccessAttempt.objects.filter(
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,
        ).delete()
        return deleted
