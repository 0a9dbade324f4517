"""The authorization server's routes, in django-oauth-toolkit's namespace (its views reverse
their siblings by these names). The metadata documents live at the origin's root."""

from __future__ import annotations

from django.urls import path
from oauth2_provider import views as toolkit

from scopes.oauth import resources
from scopes.oauth.views import (
    CleanRevokeTokenView,
    CleanTokenView,
    ConsentView,
    RegistrationManagementView,
    RegistrationView,
    ResourceMetadataView,
)

app_name = "oauth2_provider"

WELL_KNOWN = ".well-known/oauth-protected-resource"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        toolkit.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(WELL_KNOWN, ResourceMetadataView.as_view(), name="oauth-resource-metadata"),
    path(f"{WELL_KNOWN}/mcp", ResourceMetadataView.as_view(), name="oauth-resource-metadata-mcp"),
    path(
        f"{WELL_KNOWN}/api/v1",
        ResourceMetadataView.as_view(resource=resources.API),
        name="oauth-resource-metadata-api",
    ),
    path("oauth/authorize/", ConsentView.as_view(), name="authorize"),
    path("oauth/token/", CleanTokenView.as_view(), name="token"),
    path("oauth/revoke/", CleanRevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", RegistrationView.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]
