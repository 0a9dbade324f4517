"""The authorization server's pages and endpoints, on django-oauth-toolkit's views.

What is added to the toolkit: the consent page (the person's scopes and read-only), resources
limited to this server's /mcp and /api/v1, one protected-resource document per resource, and a
registration endpoint that checks what a client asks for and how often an address registers.
"""

from __future__ import annotations

import math
import re
from urllib.parse import urlsplit

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import Application
from oauth2_provider.views import (
    AuthorizationView,
    OAuthProtectedResourceMetadataView,
    RevokeTokenView,
    TokenView,
)
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from oauth2_provider.views.mixins import OAuthLibMixin
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from scopes import access
from scopes.oauth import clients, resources
from scopes.oauth.forms import ConsentForm
from zeromemory.core.actor import Actor, Surface
from zeromemory.core.text import unstorable


class ResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728: the root document and /mcp's describe /mcp; /api/v1 has its own."""

    resource = resources.MCP

    def get_resource(self, request):
        return resources.resource_url(self.resource)


def _oauth_error(error: str, description: str, status: int = 400, **headers) -> JsonResponse:
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def _unreadable(request) -> bool:
    """A NUL or lone surrogate in a parameter: PostgreSQL cannot store it, so it is refused
    before the toolkit would try (a 400, not a 500)."""
    for values in (request.GET, request.POST):
        for value in values.values():
            if unstorable(value):
                return True
    return False


class CleanInputMixin:
    def dispatch(self, request, *args, **kwargs):
        if _unreadable(request):
            return _oauth_error(
                "invalid_request", _("A parameter holds a NUL or invalid character.")
            )
        return super().dispatch(request, *args, **kwargs)


class JsonErrorsMixin(CleanInputMixin):
    def dispatch(self, request, *args, **kwargs):
        response = super().dispatch(request, *args, **kwargs)
        # The toolkit answers some token errors as JSON labelled text/html.
        if response.get("Content-Type", "").startswith("text/html"):
            response["Content-Type"] = "application/json"
        return response


# The toolkit's views are csrf_exempt on their own dispatch; overriding it drops that mark.
@method_decorator(csrf_exempt, name="dispatch")
class CleanTokenView(JsonErrorsMixin, TokenView):
    pass


@method_decorator(csrf_exempt, name="dispatch")
class CleanRevokeTokenView(JsonErrorsMixin, RevokeTokenView):
    pass


def _registration_policy(request):
    """The answer refusing a registration or an update of one (too often from this address, or
    metadata the policy refuses), else None."""
    wait = clients.registrations_wait(request)
    if wait is not None:
        message = _("Too many client registrations from this address; try again later.")
        return _oauth_error("too_many_requests", message, 429, Retry_After=math.ceil(wait))
    refusal = clients.registration_refusal(request.body)
    if refusal is not None:
        return _oauth_error("invalid_client_metadata", refusal)
    return None


class RegistrationView(DynamicClientRegistrationView):
    """RFC 7591, rate-limited per address, for the authorization code grant with safe URIs."""

    def post(self, request, *args, **kwargs):
        return _registration_policy(request) or super().post(request, *args, **kwargs)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592: an update is held to the same policy and rate as a registration."""

    def put(self, request, *args, **kwargs):
        return _registration_policy(request) or super().put(request, *args, **kwargs)


# RFC 7636 section 4.2: a challenge is 43 to 128 characters of the unreserved alphabet.
CODE_CHALLENGE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


def _challenge_refusal(challenge: str | None):
    if challenge is not None and not CODE_CHALLENGE.fullmatch(challenge):
        return "invalid_request", _(
            "code_challenge must be 43 to 128 characters of letters, digits and -._~ (RFC 7636)."
        )
    return None


class _ConsentFirst(Exception):
    """A code was about to be issued without the consent page."""


@method_decorator(never_cache, name="dispatch")
class ConsentView(CleanInputMixin, AuthorizationView):
    """The toolkit's authorization endpoint with this server's consent page."""

    template_name = "oauth/consent.html"
    form_class = ConsentForm

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        readable = access.readable_scopes(
            Actor(user=self.request.user, surface=Surface.DASHBOARD)
        ).order_by("kind", "name", "id")
        kwargs["scopes"] = list(readable)
        return kwargs

    def _refusal(self, request):
        """invalid_target for a resource not of this server, invalid_request for a PKCE method
        other than S256 (refused here, before the person is asked, not only at the code)."""
        if any(not resources.known_resource(r) for r in request.GET.getlist("resource")):
            return "invalid_target", _(
                "This server issues tokens only for %(mcp)s and %(api)s."
            ) % {
                "mcp": resources.resource_url(resources.MCP),
                "api": resources.resource_url(resources.API),
            }
        if request.GET.get("code_challenge_method", "S256") != "S256":
            return "invalid_request", _("PKCE with code_challenge_method S256 is required.")
        return _challenge_refusal(request.GET.get("code_challenge"))

    def _error(self, error: str, description: str, state, redirect_uri):
        return OAuthToolkitError(
            error=CustomOAuth2Error(error=error, description=description, state=state),
            redirect_uri=redirect_uri,
        )

    def error_response(self, error, application, **kwargs):
        """An error is shown here, on a page, never sent to the client's redirect URI unasked
        (a client registers itself, so its redirect URI may be anyone's site). Where the URI
        was checked, the page links back to it, for the person to follow or not. Only the
        person's own refusal goes straight back to the client."""
        redirect, answer = OAuthLibMixin.error_response(self, error, **kwargs)
        oauth_error = answer["error"]
        if redirect and self.request.method == "POST" and oauth_error.error == "access_denied":
            return self.redirect(answer["url"], application)
        context = {
            "error": oauth_error.error,
            "description": oauth_error.description,
            "return_url": answer["url"] if redirect and oauth_error.redirect_uri else None,
            "return_host": urlsplit(oauth_error.redirect_uri or "").netloc,
        }
        return render(self.request, "oauth/error.html", context, status=400)

    def get(self, request, *args, **kwargs):
        refusal = self._refusal(request)
        if refusal is None:
            try:
                return super().get(request, *args, **kwargs)
            except _ConsentFirst:  # the toolkit would have skipped the page: show it
                return self.render_to_response(self.get_context_data(**self.oauth2_data))
        try:
            _scopes, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            return self.error_response(error, application=None)
        error = self._error(*refusal, credentials.get("state"), credentials["redirect_uri"])
        return self.error_response(error, application=None)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        application = kwargs.get("application")
        if application is not None:
            redirect_uri = kwargs.get("redirect_uri") or ""
            context["client_name"] = application.name or application.client_id
            context["redirect_host"] = urlsplit(redirect_uri).netloc or redirect_uri
            context["asks_write"] = settings.OAUTH_SCOPE_WRITE in kwargs.get("scopes", [])
        return context

    def form_valid(self, form):
        data = form.cleaned_data
        requested = (data.get("resource") or "").split()
        if any(not resources.known_resource(r) for r in requested):  # a tampered hidden field
            application = Application.objects.filter(client_id=data["client_id"]).first()
            message = _("This server issues tokens only for its own resources.")
            error = self._error("invalid_target", message, data.get("state"), data["redirect_uri"])
            return self.error_response(error, application)
        refusal = _challenge_refusal(data.get("code_challenge") or None)
        if refusal is not None:  # a tampered hidden field
            application = Application.objects.filter(client_id=data["client_id"]).first()
            error = self._error(*refusal, data.get("state"), data["redirect_uri"])
            return self.error_response(error, application)
        if not requested:  # a client that names no resource gets a token for /mcp
            data["resource"] = resources.resource_url(resources.MCP)
        granted = [s for s in data["scope"].split() if s in settings.OAUTH2_PROVIDER["SCOPES"]]
        if data["read_only"]:
            granted = [s for s in granted if s != settings.OAUTH_SCOPE_WRITE]
        data["scope"] = " ".join(granted) or settings.OAUTH_SCOPE_READ
        self._choices = {
            "zm_scopes": form.chosen_scopes(),
            "zm_read_only": settings.OAUTH_SCOPE_WRITE not in data["scope"].split(),
        }
        return super().form_valid(form)

    def create_authorization_response(self, request, scopes, credentials, allow):
        choices = getattr(self, "_choices", None)
        if choices is None:
            # Only the consent form makes the choices, so no path skips it: not a client's
            # `approval_prompt=auto` while it holds a live token, not `skip_authorization`.
            raise _ConsentFirst
        credentials.update(choices)
        return super().create_authorization_response(request, scopes, credentials, allow)
