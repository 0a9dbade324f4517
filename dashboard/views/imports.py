"""Import from another system on the dashboard: a scope's writer picks the system and the file,
runs a dry run or the import, and reads its report (what each record became)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from dashboard.common import actor_for, domain_errors
from dashboard.forms import ImportFromForm
from memories.portability.sources.registry import READERS
from memories.portability.sources.service import source_import
from scopes import access
from zeromemory.core.errors import DomainError

INVALID = 400


@login_required
@require_http_methods(["GET", "POST"])
@domain_errors
def import_from(request: HttpRequest, scope_id: str) -> HttpResponse:
    actor = actor_for(request)
    scope = access.writable_scope(actor, scope_id)
    systems = sorted(READERS)
    if request.method == "GET":
        form = ImportFromForm(systems=systems)
        return render(request, "dashboard/import_from.html", {"scope": scope, "form": form})
    form = ImportFromForm(request.POST, request.FILES, systems=systems)
    report = None
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            if upload.size > settings.IMPORT_MAX_BYTES:
                form.add_error(
                    "file",
                    _("The file is larger than %(n)d bytes.") % {"n": settings.IMPORT_MAX_BYTES},
                )
            else:
                report = source_import(
                    actor=actor,
                    scope=scope,
                    system=form.cleaned_data["system"],
                    source=upload,
                    dry_run=form.cleaned_data["dry_run"],
                    budget=settings.IMPORT_MAX_EMBED_CHARS,
                    max_total=settings.IMPORT_MAX_REQUEST_BYTES,
                )
        except DomainError as exc:
            form.add_error("file", exc.message)
    context = {"scope": scope, "form": form, "report": report}
    return render(request, "dashboard/import_from.html", context, status=200 if report else INVALID)
