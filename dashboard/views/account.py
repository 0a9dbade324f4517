"""Sign in, sign up, sign out, the account page (password change, deleting the account), and
the password confirmation that what needs a recent password check asks for: Django's auth views
with our templates, and tenancy's erasure service."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import authenticate, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from dashboard.common import INVALID, actor_for, add_domain_error
from dashboard.forms import AccountDeleteForm, PasswordConfirmForm, SignupForm
from scopes import erasure
from zeromemory.core.actor import note_password_checked
from zeromemory.core.errors import ConflictError, DomainError


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(signup_enabled=settings.SIGNUP_ENABLED, **kwargs)


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "registration/password_change_form.html"
    success_url = reverse_lazy("dashboard:password_change_done")

    def form_valid(self, form):
        messages.success(self.request, _("Your password was changed."))
        return super().form_valid(form)


class PasswordChangeDoneView(auth_views.PasswordChangeDoneView):
    template_name = "registration/password_change_done.html"


def _safe_next(request: HttpRequest, url: str) -> str:
    """A path of this site to go back to (never another site, nor anything but a plain path)."""
    allowed = (
        url.startswith("/")
        and not url.startswith(("//", "/\\"))
        and url.isprintable()
        and " " not in url
        and url_has_allowed_host_and_scheme(
            url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    )
    return url if allowed else reverse("dashboard:rules")


@login_required
def password_confirm(request: HttpRequest) -> HttpResponse:
    """Give the password again: what needs a recent check (deciding on rules) may follow for
    `REAUTH_MINUTES`. Checked through `authenticate`, so sign-in throttling counts failures."""
    if request.method != "POST":
        form = PasswordConfirmForm(initial={"next": request.GET.get("next", "")})
        return render(request, "registration/password_confirm.html", {"form": form})
    form = PasswordConfirmForm(request.POST)
    if form.is_valid():
        user = authenticate(
            request, username=request.user.get_username(), password=form.cleaned_data["password"]
        )
        if user is not None and user.pk == request.user.pk:
            note_password_checked(request.session)
            return HttpResponseRedirect(_safe_next(request, form.cleaned_data["next"]))
        form.add_error("password", _("This is not the account's password."))
    return render(request, "registration/password_confirm.html", {"form": form}, status=INVALID)


@login_required
def account_page(request: HttpRequest) -> HttpResponse:
    return render(request, "registration/account.html", {"form": AccountDeleteForm()})


@login_required
@require_POST
def account_delete(request: HttpRequest) -> HttpResponse:
    """Delete the signed-in person's account (the service DELETE /api/v1/me calls), end the
    session and land on the sign-in page."""
    form = AccountDeleteForm(request.POST)
    status = INVALID
    if form.is_valid():
        try:
            erasure.account_delete(
                actor=actor_for(request),
                password=form.cleaned_data["password"],
                delete_shared_writes=form.cleaned_data["delete_shared_writes"],
            )
        except ConflictError as exc:  # the sole admin of shared scopes: hand them over first
            form.add_error(None, exc.message)
            status = exc.status
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            # The service ended every session of the account; this one goes from the request
            # too (without `logout`: its signal would be about a user that is gone).
            request.session.flush()
            request.user = AnonymousUser()
            messages.success(request, _("Your account was deleted. Goodbye."))
            return redirect("dashboard:login")
    return render(request, "registration/account.html", {"form": form}, status=status)


def signup(request: HttpRequest) -> HttpResponse:
    if not settings.SIGNUP_ENABLED:
        raise Http404(_("Sign-up is turned off."))
    if request.user.is_authenticated:
        return redirect("dashboard:home")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, _("Welcome! Your personal scope is ready."))
            return redirect("dashboard:home")
        return render(request, "registration/signup.html", {"form": form}, status=INVALID)
    return render(request, "registration/signup.html", {"form": form})


def locked_out(request: HttpRequest, credentials: dict | None = None, *args, **kwargs):
    """django-axes' answer to a sign-in while the username or address is locked out."""
    username = (credentials or {}).get("username") or ""
    context = {
        "form": AuthenticationForm(request, initial={"username": username}),
        "signup_enabled": settings.SIGNUP_ENABLED,
        "locked_message": _(
            "Too many failed sign-ins: this account or address is locked for %(minutes)d "
            "minutes. An administrator can unlock it sooner."
        )
        % {"minutes": settings.LOGIN_LOCKOUT_MINUTES},
    }
    return render(request, "registration/login.html", context, status=429)
