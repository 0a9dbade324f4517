"""The consent form: which of the person's scopes the grant covers, and whether it is read-only."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _
from oauth2_provider.forms import AllowForm


class ConsentForm(AllowForm):
    scopes = forms.MultipleChoiceField(
        label=_("Scopes this client may use"),
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": _("Choose at least one scope.")},
    )
    read_only = forms.BooleanField(label=_("Read-only"), required=False)

    def __init__(self, *args, scopes=(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.readable = {scope.public_id: scope for scope in scopes}
        self.fields["scopes"].choices = [
            (scope.public_id, f"{scope.name} ({scope.get_kind_display()})") for scope in scopes
        ]

    def chosen_scopes(self) -> list:
        return [self.readable[public_id] for public_id in self.cleaned_data["scopes"]]
