from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from zeromemory import metrics, views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("scopes.urls")),
    path("api/v1/", include("memories.api.urls")),
    path("", include("scopes.oauth.urls")),
    path("", include("dashboard.urls")),
]

handler400 = "zeromemory.views.bad_request"
handler404 = "zeromemory.views.not_found"
handler500 = "zeromemory.views.internal_error"
