"""A scope's export on the dashboard: start it, watch its progress, download the zip once."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from dashboard.common import actor_for, domain_errors, render_page
from memories.models import ExportJob
from memories.portability import prepared
from scopes import access


def _progress(request: HttpRequest, job: ExportJob) -> HttpResponse:
    context = {"scope": job.scope, "job": job, "stalled": prepared.export_job_stalled(job)}
    return render_page(
        request, "dashboard/export.html", "dashboard/partials/export_progress.html", context
    )


def _own_job(request: HttpRequest, scope_id: str, job_id: str) -> ExportJob:
    """The caller's own export job of a scope they administer (asked of the access module)."""
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    return prepared.export_job_of(actor=actor, scope=scope, public_id=job_id)


@login_required
@require_POST
@domain_errors
def export_start(request: HttpRequest, scope_id: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.administrable_scope(actor, scope_id)
    job = prepared.export_job_start(actor=actor, scope=scope)
    if request.htmx:
        return _progress(request, job)
    return redirect("dashboard:export", scope_id=scope.public_id, job_id=job.public_id)


@login_required
@require_GET
@domain_errors
def export_progress(request: HttpRequest, scope_id: str, job_id: str) -> HttpResponse:
    return _progress(request, _own_job(request, scope_id, job_id))


@login_required
@require_GET
@domain_errors
def export_download(request: HttpRequest, scope_id: str, job_id: str) -> HttpResponse:
    job = _own_job(request, scope_id, job_id)
    response = FileResponse(
        prepared.export_job_take(job=job),
        as_attachment=True,
        filename=f"zero-memory-{job.scope.slug}.zip",
        content_type="application/zip",
    )
    response["Cache-Control"] = "no-store"
    return response
