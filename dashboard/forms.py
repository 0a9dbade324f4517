"""Dashboard forms: shape and validate input; the services decide everything else."""

from __future__ import annotations

from datetime import UTC, datetime, time

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from memories.kinds import all_kinds
from memories.models import (
    ActivityOperation,
    ActivityOutcome,
    AuthorKind,
    ConflictStatus,
    EntityKind,
    LinkType,
    MemoryState,
    RuleStatus,
    TranslationStatus,
)
from memories.recall.inputs import MAX_QUERY_CHARS
from scopes.models import Role, Scope, ScopeKind
from zeromemory.core.actor import Surface

STATE_CHOICES = [*MemoryState.choices, ("all", _("All"))]


def _any(label: str) -> list[tuple[str, str]]:
    return [("", label)]


def kind_choices() -> list[tuple[str, str]]:
    """Kinds with their labels in the reader's language (django-modeltranslation)."""
    return [(slug, kind.label) for slug, kind in all_kinds().items()]


def scope_choices(scopes) -> list[tuple[str, str]]:
    return [(scope.public_id, _scope_label(scope)) for scope in scopes]


def _scope_label(scope: Scope) -> str:
    if scope.is_personal:
        return str(_("Personal"))
    return f"{scope.name} ({scope.get_kind_display()})"


class SignupForm(UserCreationForm):
    """Django's own sign-up form; the personal scope comes with the account."""


class MemoryFilterForm(forms.Form):
    # The query is passed to recall exactly as typed: no stripping.
    q = forms.CharField(
        label=_("Search"),
        required=False,
        strip=False,
        max_length=MAX_QUERY_CHARS,
        widget=forms.TextInput(
            attrs={"type": "search", "placeholder": _("Search your memories"), "autofocus": True}
        ),
    )
    # A free value, not a choice: a scope id the reader cannot read answers 404 from the
    # access module, the same as in the API.
    scope = forms.CharField(label=_("Scope"), required=False, max_length=40)
    kind = forms.ChoiceField(label=_("Kind"), required=False)
    translation_status = forms.ChoiceField(
        label=_("Translation"),
        required=False,
        choices=_any(_("Any translation")) + list(TranslationStatus.choices),
    )
    author_kind = forms.ChoiceField(
        label=_("Author"),
        required=False,
        choices=_any(_("Any author")) + list(AuthorKind.choices),
    )
    state = forms.ChoiceField(label=_("State"), required=False, choices=STATE_CHOICES)
    # Search as of an instant: the memories valid then, with the text they had (UTC).
    as_of = forms.DateTimeField(
        label=_("As of (UTC)"),
        required=False,
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    cursor = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)
    # A search that found nothing relevant offers the nearest memories anyway (recall's
    # `nearest`); a new search asks for the relevant ones again.
    nearest = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, scopes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scope"].widget = forms.Select(
            choices=_any(_("All scopes")) + scope_choices(scopes)
        )
        self.fields["kind"].choices = _any(_("All kinds")) + kind_choices()
        for name in ("scope", "kind", "translation_status", "author_kind", "state"):
            self.fields[name].widget.attrs["data-autosubmit"] = ""

    @property
    def query(self) -> str:
        """The query as typed, or "" when there is nothing to search for."""
        query = self.cleaned_data.get("q") or ""
        return query if query.strip() else ""


class RememberForm(forms.Form):
    content = forms.CharField(
        label=_("Content"),
        strip=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_(
            "Write in English if you can. Text in another language is stored at once and "
            "translated to English in the background; the original stays with the memory."
        ),
    )
    kind = forms.ChoiceField(label=_("Kind"))
    scope = forms.ChoiceField(label=_("Scope"))
    verbatim = forms.CharField(
        label=_("Verbatim phrase"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Optional: the exact words as someone said them, in any language."),
    )

    def __init__(self, *args, scopes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = kind_choices()
        self.fields["scope"].choices = scope_choices(scopes)


class MemoryEditForm(forms.Form):
    content = forms.CharField(
        label=_("Content"), strip=False, widget=forms.Textarea(attrs={"rows": 5})
    )
    kind = forms.ChoiceField(label=_("Kind"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = kind_choices()


class ForgetForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"),
        max_length=1000,
        widget=forms.TextInput(attrs={"placeholder": _("Why should this be forgotten?")}),
    )


class LinkForm(forms.Form):
    """A typed link from the memory on the page to another memory of its scope."""

    type = forms.ChoiceField(label=_("Link"), choices=LinkType.choices)
    to = forms.CharField(
        label=_("To memory"),
        max_length=40,
        widget=forms.TextInput(attrs={"placeholder": _("A memory id of this scope")}),
    )


class ScopeCreateForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)
    slug = forms.CharField(
        label=_("Slug"),
        max_length=50,
        help_text=_("Lowercase letters, digits and hyphens, e.g. platform-team."),
    )
    kind = forms.ChoiceField(
        label=_("Kind"),
        choices=[
            (ScopeKind.TEAM, ScopeKind.TEAM.label),
            (ScopeKind.PROJECT, ScopeKind.PROJECT.label),
        ],
    )


class ScopeRenameForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=120)
    slug = forms.CharField(label=_("Slug"), max_length=50)


class RoleField(forms.TypedChoiceField):
    def __init__(self, **kwargs):
        super().__init__(
            label=_("Role"), choices=Role.choices, coerce=lambda value: Role(int(value)), **kwargs
        )


class MemberAddForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = RoleField(initial=Role.WRITER)


class MemberRoleForm(forms.Form):
    role = RoleField()


class TokenCreateForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=120,
        widget=forms.TextInput(attrs={"placeholder": _("e.g. laptop Claude Code")}),
    )
    read_only = forms.BooleanField(label=_("Read-only"), required=False)
    scopes = forms.MultipleChoiceField(
        label=_("Restrict to scopes"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Leave all unticked for a token that reaches every scope you can."),
    )
    expires_at = forms.DateField(
        label=_("Expires on"),
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text=_("Optional. The token stops working at the end of that day (UTC)."),
    )

    def __init__(self, *args, scopes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["scopes"].choices = scope_choices(scopes)

    @property
    def expiry(self) -> datetime | None:
        day = self.cleaned_data.get("expires_at")
        if day is None:
            return None
        return datetime.combine(day, time.max).replace(tzinfo=UTC)


class ActivityFilterForm(forms.Form):
    operation = forms.ChoiceField(
        label=_("Operation"),
        required=False,
        choices=_any(_("All operations")) + list(ActivityOperation.choices),
    )
    surface = forms.ChoiceField(
        label=_("Surface"),
        required=False,
        choices=_any(_("All surfaces")) + list(Surface.choices),
    )
    outcome = forms.ChoiceField(
        label=_("Outcome"),
        required=False,
        choices=_any(_("Any outcome")) + list(ActivityOutcome.choices),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("operation", "surface", "outcome"):
            self.fields[name].widget.attrs["data-autosubmit"] = ""

    cursor = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)


class ReviewFilterForm(forms.Form):
    # A free value: a scope the reviewer does not administer answers 403 or 404 from the selector.
    scope = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)
    status = forms.ChoiceField(
        label=_("Status"),
        required=False,
        # Open first: what waits for the reviewer.
        choices=sorted(ConflictStatus.choices, key=lambda choice: choice[0] != ConflictStatus.OPEN),
    )
    cursor = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["status"].widget.attrs["data-autosubmit"] = ""


class RuleFilterForm(forms.Form):
    scope = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)
    status = forms.ChoiceField(label=_("Status"), required=False, choices=RuleStatus.choices)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["status"].widget.attrs["data-autosubmit"] = ""


class PasswordConfirmForm(forms.Form):
    password = forms.CharField(
        label=_("Your password"),
        strip=False,
        max_length=4096,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    next = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)


class AccountDeleteForm(forms.Form):
    password = forms.CharField(
        label=_("Your password"),
        strip=False,
        max_length=4096,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    delete_shared_writes = forms.BooleanField(
        label=_("Also delete the memories I wrote in team and project scopes"),
        help_text=_("Left unticked, they stay with their teams, signed by “a deleted user”."),
        required=False,
    )
    confirm = forms.BooleanField(
        label=_("I understand that my account and my personal memories are deleted for good."),
        required=True,
    )


class EntitySearchForm(forms.Form):
    """The entities page's filters: part of a name or alias, a kind, a readable scope."""

    q = forms.CharField(label=_("Name or alias"), max_length=200, required=False)
    kind = forms.ChoiceField(label=_("Kind"), required=False)
    # A free value, as on the memories page: a scope one cannot read answers 404.
    scope = forms.CharField(label=_("Scope"), required=False, max_length=40)
    cursor = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)
    # A search that found nothing relevant offers the nearest memories anyway (recall's
    # `nearest`); a new search asks for the relevant ones again.
    nearest = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, scopes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = _any(_("Any kind")) + list(EntityKind.choices)
        self.fields["scope"].widget = forms.Select(
            choices=_any(_("All scopes")) + scope_choices(scopes)
        )


class EntityAliasForm(forms.Form):
    alias = forms.CharField(label=_("Another name"), max_length=200)


class EntityMergeForm(forms.Form):
    into = forms.CharField(
        label=_("Merge into"),
        max_length=40,
        widget=forms.TextInput(attrs={"placeholder": _("An entity id of this scope")}),
    )


class EntitySplitForm(forms.Form):
    aliases = forms.CharField(
        label=_("Names to move"),
        max_length=2000,
        help_text=_("One name per line, each a name of this entity."),
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    name = forms.CharField(label=_("Name of the new entity"), max_length=200)
    kind = forms.ChoiceField(label=_("Kind"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].choices = _any(_("The same kind")) + list(EntityKind.choices)

    def clean_aliases(self) -> list[str]:
        names = [line.strip() for line in self.cleaned_data["aliases"].splitlines()]
        names = [name for name in names if name]
        if not names:
            raise forms.ValidationError(_("Name at least one name to move."))
        return names


class ImportFromForm(forms.Form):
    """Another system's file for a scope: which system wrote it, the file, and a dry run."""

    system = forms.ChoiceField(label=_("System"), choices=())
    file = forms.FileField(
        label=_("File"),
        help_text=_("The file as the system wrote it: its JSON as is, or a zip of a folder."),
    )
    dry_run = forms.BooleanField(
        label=_("Dry run: say what would be written, write nothing"), required=False, initial=True
    )

    def __init__(self, *args, systems: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["system"].choices = [(name, name) for name in systems]
