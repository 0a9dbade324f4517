"""What every dashboard view shares: the actor, full page or partial, and domain errors."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from memories.entities.selectors import entities_of_memories
from zeromemory.core.actor import Actor, session_password_checked_at
from zeromemory.core.errors import DomainError, Forbidden, NotFound

# A form that did not validate answers 422 (htmx is configured to swap it, see base.html).
INVALID = 422


def actor_for(request: HttpRequest) -> Actor:
    return Actor(
        user=request.user,
        surface="dashboard",
        password_checked_at=session_password_checked_at(request),
    )


def next_page_url(request: HttpRequest, url_name: str, cursor: str | None) -> str | None:
    """The same page with the same filters, one page further (None after the last page)."""
    if cursor is None:
        return None
    params = request.GET.copy()
    params["cursor"] = cursor
    return f"{reverse(url_name)}?{params.urlencode()}"


def wants_partial(request: HttpRequest) -> bool:
    """An htmx request swaps one target; a boosted or plain request gets the whole page."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.boosted


def render_page(
    request: HttpRequest,
    page: str,
    partial: str,
    context: dict[str, Any],
    *,
    status: int = 200,
) -> HttpResponse:
    template = partial if wants_partial(request) else page
    return render(request, template, context, status=status)


def domain_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A foreign or missing object answers 404; a role that is too low answers 403."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            raise Http404(exc.message) from None
        except Forbidden:
            # Rendered here rather than raised: Django logs a raised PermissionDenied with its
            # traceback, so every refused click would write one.
            return render(request, "403.html", status=403)

    return wrapper


def add_domain_error(form: forms.Form, exc: DomainError) -> None:
    """Put a service's refusal on the field it names, or on the form as a whole."""
    fields = [name for name in (exc.details or {}) if name in form.fields]
    for name in fields or [None]:
        form.add_error(name, exc.message)


def with_entity_chips(actor: Actor, memories: list[Any]) -> None:
    """Give each memory `entity_chips`: what it is about, for the chips of its card (only
    entities of scopes the actor reads)."""
    about = entities_of_memories(actor=actor, memories=memories)
    for memory in memories:
        memory.entity_chips = about.get(memory.pk, [])
