"""Entities: search a scope's entities, one entity's page (its memories, names, neighbours as a
picture, timeline), its names (writers), merges and splits and their undoing (admins), and the
list of a scope's merges and splits for its admins."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from dashboard.common import (
    INVALID,
    actor_for,
    add_domain_error,
    domain_errors,
    next_page_url,
    with_entity_chips,
)
from dashboard.forms import EntityAliasForm, EntityMergeForm, EntitySearchForm, EntitySplitForm
from dashboard.neighbourhood import neighbourhood
from memories import selectors as memory_selectors
from memories.entities import selectors, services
from memories.models import Entity
from scopes import access
from scopes.models import Role
from zeromemory.core.errors import DomainError, NotFound, ValidationFailed
from zeromemory.core.paging import Page

PAGE_SIZE = 25


@login_required
@domain_errors
def entity_list(request: HttpRequest) -> HttpResponse:
    actor = actor_for(request)
    form = EntitySearchForm(
        request.GET, scopes=access.readable_scopes(actor).order_by("kind", "name", "id")
    )
    found, next_cursor, status = [], None, 200
    if form.is_valid():
        data = form.cleaned_data
        try:
            found, next_cursor = selectors.entity_search(
                actor=actor,
                query=data["q"],
                kind=data["kind"],
                scope_id=data["scope"],
                page=Page(data["cursor"] or None, PAGE_SIZE),
            )
        except ValidationFailed as exc:
            add_domain_error(form, exc)
            status = 400
    else:
        status = 400
    context = {
        "form": form,
        "entities": found,
        "next_url": next_page_url(request, "dashboard:entities", next_cursor),
    }
    return render(request, "dashboard/entity_list.html", context, status=status)


def _page(request: HttpRequest, entity: Entity, *, status: int = 200, **forms) -> HttpResponse:
    actor = actor_for(request)
    cursor = request.GET.get("cursor", "")[:40] or None
    description = selectors.entity_description(
        actor=actor, entity=entity, page=Page(cursor, PAGE_SIZE)
    )
    memory_selectors.with_verbatim(description.memories)
    with_entity_chips(actor, description.memories)
    role = access.role_in(actor, entity.scope)
    next_url = None
    if description.next_cursor:
        next_url = (
            reverse("dashboard:entity", args=[entity.public_id])
            + f"?cursor={description.next_cursor}"
        )
    context = {
        "entity": entity,
        "description": description,
        "aliases": selectors.entity_aliases(entity),
        "picture": neighbourhood(entity, description.neighbours),
        "timeline_max": max((day.memories for day in description.timeline), default=1),
        "next_url": next_url,
        "can_write": access.can_write(actor, entity.scope),
        "is_admin": role is not None and role >= Role.ADMIN and not actor.read_only,
        "alias_form": forms.get("alias_form") or EntityAliasForm(),
        "merge_form": forms.get("merge_form") or EntityMergeForm(),
        "split_form": forms.get("split_form") or EntitySplitForm(),
        "open_form": forms.get("open_form", ""),
    }
    return render(request, "dashboard/entity_detail.html", context, status=status)


@login_required
@domain_errors
def entity_detail(request: HttpRequest, entity_id: str) -> HttpResponse:
    return _page(request, selectors.entity_for_read(actor=actor_for(request), public_id=entity_id))


@login_required
@require_POST
@domain_errors
def entity_alias(request: HttpRequest, entity_id: str) -> HttpResponse:
    actor = actor_for(request)
    entity = selectors.entity_for_write(actor=actor, public_id=entity_id)
    form = EntityAliasForm(request.POST)
    if form.is_valid():
        try:
            services.entity_alias_add(actor=actor, entity=entity, alias=form.cleaned_data["alias"])
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            messages.success(request, _("Name added."))
            return redirect("dashboard:entity", entity_id=entity.public_id)
    return _page(request, entity, status=INVALID, alias_form=form, open_form="alias")


@login_required
@require_POST
@domain_errors
def entity_merge(request: HttpRequest, entity_id: str) -> HttpResponse:
    actor = actor_for(request)
    entity = selectors.entity_for_admin(actor=actor, public_id=entity_id)
    form = EntityMergeForm(request.POST)
    if form.is_valid():
        try:
            try:
                survivor = selectors.entity_for_read(
                    actor=actor, public_id=form.cleaned_data["into"]
                )
            except NotFound as exc:
                raise exc.naming("into") from None
            merge = services.entity_merge(actor=actor, merged=entity, survivor=survivor)
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            messages.success(request, _("Merged. Undo it from the scope's merges and splits."))
            return redirect("dashboard:entity", entity_id=merge.survivor.public_id)
    return _page(request, entity, status=INVALID, merge_form=form, open_form="merge")


@login_required
@require_POST
@domain_errors
def entity_split(request: HttpRequest, entity_id: str) -> HttpResponse:
    actor = actor_for(request)
    entity = selectors.entity_for_admin(actor=actor, public_id=entity_id)
    form = EntitySplitForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            split = services.entity_split(
                actor=actor,
                entity=entity,
                aliases=data["aliases"],
                name=data["name"],
                kind=data["kind"] or None,
            )
        except DomainError as exc:
            add_domain_error(form, exc)
        else:
            messages.success(request, _("Split. Undo it from the scope's merges and splits."))
            return redirect("dashboard:entity", entity_id=split.created.public_id)
    return _page(request, entity, status=INVALID, split_form=form, open_form="split")


def _undone(request: HttpRequest, entity: Entity, undo) -> HttpResponse:
    try:
        undo()
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Undone. The record stays, marked undone."))
    return redirect("dashboard:entity_changes", scope_id=entity.scope.public_id)


@login_required
@require_POST
@domain_errors
def entity_merge_undo(request: HttpRequest, entity_id: str) -> HttpResponse:
    actor = actor_for(request)
    entity = selectors.entity_for_admin(actor=actor, public_id=entity_id)

    def undo() -> None:
        merge = selectors.open_merge_of(actor=actor, public_id=entity_id)
        services.entity_merge_undo(actor=actor, merge=merge)

    return _undone(request, entity, undo)


@login_required
@require_POST
@domain_errors
def entity_split_undo(request: HttpRequest, entity_id: str) -> HttpResponse:
    actor = actor_for(request)
    entity = selectors.entity_for_admin(actor=actor, public_id=entity_id)

    def undo() -> None:
        split = selectors.split_that_made(actor=actor, public_id=entity_id)
        services.entity_split_undo(actor=actor, split=split)

    return _undone(request, entity, undo)


@login_required
@domain_errors
def entity_changes(request: HttpRequest, scope_id: str) -> HttpResponse:
    actor = actor_for(request)
    entries = selectors.scope_reshapes(actor=actor, scope_id=scope_id)
    scope = access.administrable_scope(actor, scope_id)
    moved = {
        entry.row.pk: selectors.split_aliases(entry.row)
        for entry in entries
        if entry.kind == "split"
    }
    rows = [
        {"entry": entry, "aliases": moved.get(entry.row.pk, []) if entry.kind == "split" else []}
        for entry in entries
    ]
    return render(request, "dashboard/entity_changes.html", {"scope": scope, "rows": rows})
