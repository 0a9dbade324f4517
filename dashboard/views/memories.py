"""Memories: the list with filters and search, one memory, remember, edit, forget, restore, and
a memory's typed links (link, unlink)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from dashboard.common import (
    INVALID,
    actor_for,
    add_domain_error,
    domain_errors,
    next_page_url,
    render_page,
    wants_partial,
    with_entity_chips,
)
from dashboard.forms import ForgetForm, LinkForm, MemoryEditForm, MemoryFilterForm, RememberForm
from dashboard.timeline import timeline_rows
from memories import selectors
from memories.entities import links
from memories.insights.answers import insights_overview
from memories.models import Memory, SourceKind
from memories.recall.recall import Hit, answer_recall
from memories.services import lifecycle
from memories.services.remember import RememberInput, memory_remember
from memories.timeline import HistoryOut
from scopes import access
from zeromemory.core.errors import DomainError, ValidationFailed
from zeromemory.core.paging import Page

PAGE_SIZE = 25
SEARCH_RESULTS = 30


@dataclass(frozen=True)
class Row:
    memory: Memory
    hit: Hit | None = None


def _search_rows(request: HttpRequest, form: MemoryFilterForm) -> tuple[list[Row], bool]:
    """The rows of a search, and whether nothing relevant was found (recall's floor)."""
    actor = actor_for(request)
    data = form.cleaned_data
    # Dashboard search is the same recall as the API's: the query exactly as typed, logged with
    # surface "dashboard".
    answer = answer_recall(
        actor=actor,
        arguments={
            "query": form.query,
            "scopes": [data["scope"]] if data["scope"] else None,
            "kinds": [data["kind"]] if data["kind"] else None,
            "k": SEARCH_RESULTS,
            "as_of": data.get("as_of"),
            "nearest": bool(data.get("nearest")),
        },
    )
    hits = answer.hits
    found = {
        memory.public_id: memory
        for memory in selectors.readable_memories(actor).filter(
            public_id__in=[hit.id for hit in hits]
        )
    }
    rows = [Row(memory=found[hit.id], hit=hit) for hit in hits if hit.id in found]
    selectors.with_verbatim([row.memory for row in rows])
    with_entity_chips(actor, [row.memory for row in rows])
    return rows, answer.nothing_relevant


def _browse_rows(request: HttpRequest, form: MemoryFilterForm) -> tuple[list[Row], str | None]:
    data = form.cleaned_data
    filters = selectors.MemoryFilters(
        scope=data["scope"] or None,
        kind=data["kind"] or None,
        translation_status=data["translation_status"] or None,
        author_kind=data["author_kind"] or None,
        state=data["state"] or "valid",
    )
    found, next_cursor = selectors.memory_list(
        actor=actor_for(request), filters=filters, page=Page(data["cursor"] or None, PAGE_SIZE)
    )
    selectors.with_verbatim(found)
    with_entity_chips(actor_for(request), found)
    return [Row(memory=memory) for memory in found], next_cursor


def _nearest_url(request: HttpRequest) -> str:
    """This search again, asking for the nearest memories anyway."""
    query = request.GET.copy()
    query["nearest"] = "1"
    query.pop("cursor", None)
    return f"{request.path}?{query.urlencode()}"


@login_required
@domain_errors
def memory_list(request: HttpRequest) -> HttpResponse:
    actor = actor_for(request)
    form = MemoryFilterForm(request.GET, scopes=access.readable_scopes(actor))
    rows: list[Row] = []
    next_cursor = None
    status = 200
    searching = nothing_relevant = False
    if form.is_valid():
        searching = bool(form.query)
        try:
            if searching:
                rows, nothing_relevant = _search_rows(request, form)
            else:
                rows, next_cursor = _browse_rows(request, form)
        except ValidationFailed as exc:
            add_domain_error(form, exc)
            status = 400
    else:
        status = 400
    context = {
        "form": form,
        "rows": rows,
        "searching": searching,
        "nothing_relevant": nothing_relevant,
        "nearest_url": _nearest_url(request) if nothing_relevant else None,
        "next_url": next_page_url(request, "dashboard:home", next_cursor),
        "more": bool(form.is_bound and form.cleaned_data.get("cursor")),
        # The home page opens with each scope's insights; a swap of the results does not.
        "overview": None if wants_partial(request) else insights_overview(actor=actor),
    }
    # "Load more" swaps only its own button for the next rows; the filters swap the results.
    partial = (
        "dashboard/partials/memory_page.html"
        if context["more"]
        else "dashboard/partials/memory_results.html"
    )
    return render_page(request, "dashboard/memory_list.html", partial, context, status=status)


def _detail_context(request: HttpRequest, memory: Memory, **forms) -> dict:
    actor = actor_for(request)
    history = selectors.memory_history(actor=actor, public_id=memory.public_id)
    memory = history.memory
    with_entity_chips(actor, [memory])
    can_write = access.can_write(actor, memory.scope)
    return {
        "memory": memory,
        "timeline": timeline_rows(HistoryOut.of(history)),
        "can_write": can_write,
        "edit_form": forms.get("edit_form")
        or MemoryEditForm(initial={"content": memory.content, "kind": memory.kind_id}),
        "forget_form": forms.get("forget_form") or ForgetForm(),
        "link_form": forms.get("link_form") or LinkForm(),
        "open_form": forms.get("open_form", ""),
    }


def _detail(request: HttpRequest, memory: Memory, *, status: int = 200, **forms) -> HttpResponse:
    return render_page(
        request,
        "dashboard/memory_detail.html",
        "dashboard/partials/memory_detail.html",
        _detail_context(request, memory, **forms),
        status=status,
    )


@login_required
@domain_errors
def memory_detail(request: HttpRequest, memory_id: str) -> HttpResponse:
    memory = selectors.memory_for_read(actor=actor_for(request), public_id=memory_id)
    return _detail(request, memory)


def _after_write(request: HttpRequest, memory: Memory, message: str) -> HttpResponse:
    messages.success(request, message)
    if request.htmx:
        return _detail(request, memory)
    return redirect("dashboard:memory", memory_id=memory.public_id)


@login_required
@require_POST
@domain_errors
def memory_edit(request: HttpRequest, memory_id: str) -> HttpResponse:
    actor = actor_for(request)
    memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
    form = MemoryEditForm(request.POST)
    if form.is_valid():
        try:
            memory = lifecycle.memory_edit(
                actor=actor,
                memory=memory,
                content=form.cleaned_data["content"],
                kind=form.cleaned_data["kind"],
            )
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            return _after_write(request, memory, _("Saved. The earlier text is kept as a version."))
    return _detail(request, memory, status=INVALID, edit_form=form, open_form="edit")


@login_required
@require_POST
@domain_errors
def memory_forget(request: HttpRequest, memory_id: str) -> HttpResponse:
    actor = actor_for(request)
    memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
    form = ForgetForm(request.POST)
    if form.is_valid():
        try:
            memory = lifecycle.memory_forget(
                actor=actor, memory=memory, reason=form.cleaned_data["reason"]
            )
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            return _after_write(request, memory, _("Forgotten. You can restore it at any time."))
    return _detail(request, memory, status=INVALID, forget_form=form, open_form="forget")


@login_required
@require_POST
@domain_errors
def memory_restore(request: HttpRequest, memory_id: str) -> HttpResponse:
    actor = actor_for(request)
    memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
    try:
        memory = lifecycle.memory_restore(actor=actor, memory=memory)
    except DomainError as exc:
        messages.error(request, exc.message)
        if request.htmx:
            return _detail(request, memory, status=INVALID)
        return redirect("dashboard:memory", memory_id=memory.public_id)
    return _after_write(request, memory, _("Restored."))


@login_required
@require_POST
@domain_errors
def memory_link(request: HttpRequest, memory_id: str) -> HttpResponse:
    actor = actor_for(request)
    memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
    form = LinkForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            try:
                target = selectors.memory_for_read(actor=actor, public_id=data["to"])
            except DomainError as exc:
                raise exc.naming("to") from None
            links.link_create(actor=actor, source=memory, target=target, link_type=data["type"])
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            return _after_write(request, memory, _("Linked."))
    return _detail(request, memory, status=INVALID, link_form=form, open_form="link")


@login_required
@require_POST
@domain_errors
def memory_unlink(request: HttpRequest, memory_id: str, link_id: str) -> HttpResponse:
    actor = actor_for(request)
    memory = selectors.memory_for_write(actor=actor, public_id=memory_id)
    link = links.link_of_memory(actor=actor, memory=memory, public_id=link_id)
    links.link_remove(actor=actor, link=link)
    return _after_write(request, memory, _("Link removed. The history keeps it."))


@login_required
@domain_errors
def remember(request: HttpRequest) -> HttpResponse:
    actor = actor_for(request)
    scopes = access.writable_scopes(actor).order_by("kind", "name", "id")
    # ?scope= preselects a scope (the scope page links here); the choices stay the writable ones.
    form = RememberForm(
        request.POST or None, scopes=scopes, initial={"scope": request.GET.get("scope", "")}
    )
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                result = memory_remember(
                    actor=actor,
                    request=RememberInput(
                        content=data["content"],
                        kind=data["kind"],
                        scope=data["scope"],
                        verbatim=data["verbatim"] or None,
                        source_kind=SourceKind.DASHBOARD,
                    ),
                )
            except DomainError as exc:
                add_domain_error(form, exc)
            else:
                if result.deduplicated:
                    messages.info(
                        request,
                        _("An identical memory already existed; your write was added to it."),
                    )
                else:
                    messages.success(request, _("Remembered."))
                if result.similar_existing:
                    messages.warning(
                        request,
                        _("Similar memories exist in this scope: %(ids)s.")
                        % {"ids": ", ".join(similar.id for similar in result.similar_existing)},
                    )
                return redirect("dashboard:memory", memory_id=result.memory.public_id)
        return render(request, "dashboard/remember.html", {"form": form}, status=INVALID)
    return render(request, "dashboard/remember.html", {"form": form})
