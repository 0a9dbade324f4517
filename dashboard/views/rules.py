"""Rules: what agents' usage proposed to the admins of a scope (candidates), the approved rules
every context and briefing opens with, in their order, and the rejected ones. Admins approve (in
new words if they like), reject and move rules; everyone who reads a scope sees its approved
rules. Approving and moving need the password given within `REAUTH_MINUTES` (else the person is
sent to confirm it); a wording that fetches, runs or sends is held until approved again with
the confirmation."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from dashboard.common import actor_for, domain_errors, render_page, wants_partial
from dashboard.forms import RuleFilterForm
from memories.models import RuleStatus
from memories.rules import decisions
from memories.rules import selectors as rule_selectors
from scopes import access
from zeromemory.core.errors import ConflictError, ReauthenticationRequired, ValidationFailed

HELD_MESSAGE = gettext_lazy(
    "Held for a second look: this wording tells agents to fetch, run or send something. "
    "Confirm it to deliver it to every member's agents."
)


def _page(request: HttpRequest, data) -> HttpResponse:
    actor = actor_for(request)
    form = RuleFilterForm(data)
    found, status, answer = [], RuleStatus.CANDIDATE, 400
    if form.is_valid():
        status = form.cleaned_data["status"] or RuleStatus.CANDIDATE
        scope = form.cleaned_data["scope"] or None
        found, answer = rule_selectors.rule_list(actor=actor, scope=scope, status=status), 200
    context = {
        "form": form,
        "rules": found,
        "status": status,
        # Which rules this person may decide on (the buttons show only there).
        "admin_scopes": set(access.administrable_scopes(actor).values_list("id", flat=True)),
        "swap_messages": wants_partial(request) and request.method == "POST",
    }
    partial = "dashboard/partials/rule_results.html"
    return render_page(request, "dashboard/rules.html", partial, context, status=answer)


@login_required
@domain_errors
def rule_list(request: HttpRequest) -> HttpResponse:
    return _page(request, request.GET)


def _after(request: HttpRequest) -> HttpResponse:
    """The list the action was taken on, again (its status from the form)."""
    data = {"status": request.POST.get("status", ""), "scope": request.POST.get("scope", "")}
    if wants_partial(request):
        return _page(request, data)
    return redirect(f"{reverse('dashboard:rules')}?{urlencode({'status': data['status']})}")


def _confirm_password(request: HttpRequest) -> HttpResponse:
    """Off to give the password again, then back to the list the action was taken on."""
    back = f"{reverse('dashboard:rules')}?{urlencode({'status': request.POST.get('status', '')})}"
    url = f"{reverse('dashboard:password_confirm')}?{urlencode({'next': back})}"
    messages.info(request, _("Confirm your password first."))
    response = redirect(url)
    if wants_partial(request):
        response = HttpResponse(status=204, headers={"HX-Redirect": url})
    return response


def _decide(
    request: HttpRequest, rule_id: str, decide, done: str, *, person: bool = True, **options
) -> HttpResponse:
    actor = actor_for(request)
    find = rule_selectors.rule_for_decision if person else rule_selectors.rule_for_admin
    try:
        rule = find(actor=actor, public_id=rule_id)
    except ReauthenticationRequired:
        return _confirm_password(request)
    try:
        rule = decide(actor=actor, rule=rule, **options)
    except (ConflictError, ValidationFailed) as exc:
        messages.error(request, exc.message)
    else:
        if rule.status == RuleStatus.HELD:
            messages.warning(request, HELD_MESSAGE)
        else:
            messages.success(request, done)
    return _after(request)


@login_required
@require_POST
@domain_errors
def rule_approve(request: HttpRequest, rule_id: str) -> HttpResponse:
    text = request.POST.get("text")
    confirm = request.POST.get("confirm") == "1"
    return _decide(
        request,
        rule_id,
        decisions.rule_approve,
        _("Rule approved."),
        text=text or None,
        confirm=confirm,
    )


@login_required
@require_POST
@domain_errors
def rule_reject(request: HttpRequest, rule_id: str) -> HttpResponse:
    return _decide(request, rule_id, decisions.rule_reject, _("Rule rejected."), person=False)


@login_required
@require_POST
@domain_errors
def rule_move(request: HttpRequest, rule_id: str) -> HttpResponse:
    try:
        position = int(request.POST.get("position", ""))
    except ValueError:
        position = 0
    return _decide(request, rule_id, decisions.rule_move, _("Rule moved."), position=position)
