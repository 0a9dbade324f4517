"""Ingest: your captured chunks (transcripts, documents, history), what each produced, and a
retry for failed ones."""

from __future__ import annotations

from functools import partial

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from dashboard.common import actor_for, domain_errors, next_page_url, render_page
from memories.capture import service, tasks
from memories.capture.ingest import chunk_for_read, chunk_list
from memories.models import ChunkStatus
from zeromemory.core.paging import Page

PAGE_SIZE = 50


@login_required
def ingest_list(request: HttpRequest) -> HttpResponse:
    cursor = request.GET.get("cursor") or None
    if cursor is not None and (len(cursor) > 40 or "\x00" in cursor):
        cursor = None
    chunks, next_cursor = chunk_list(actor=actor_for(request), page=Page(cursor, PAGE_SIZE))
    context = {
        "chunks": chunks,
        "failed": ChunkStatus.FAILED,
        "next_url": next_page_url(request, "dashboard:ingest", next_cursor),
    }
    return render_page(request, "dashboard/ingest.html", "dashboard/ingest.html", context)


@login_required
@require_POST
@domain_errors
def ingest_retry(request: HttpRequest, chunk_id: str) -> HttpResponse:
    chunk = chunk_for_read(actor=actor_for(request), public_id=chunk_id)
    if chunk.status == ChunkStatus.FAILED:
        claim = service.chunk_retry(chunk=chunk)
        transaction.on_commit(partial(tasks.enqueue_extraction, chunk_id=chunk.id, claim=claim))
        messages.success(request, _("Extraction queued again."))
    return redirect("dashboard:ingest")
