"""The content guard: memories are shared and long-lived, so secrets never get in.

Each pattern names what it found; the refusal says which field held it and stores nothing. The
patterns favour precision: well-known key formats, private keys, JWTs, credentials in URLs, and
`password=`-style assignments whose value looks like a real secret rather than a placeholder.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

from zeromemory.core.errors import ValidationFailed

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    (
        "an AWS secret access key",
        re.compile(r"(?i)aws_?secret_?access_?key\s*[=:]\s*['\"]?[A-Za-z0-9/+=]{40}\b"),
    ),
    (
        "a GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("an OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}")),
    ("a Stripe key", re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("a zero-memory API token", re.compile(r"\bzm_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}")),
    (
        "a JSON Web Token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ),
    (
        "a password in a URL",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:(?!\{|\$|<|\*+@)[^\s/@]{3,}@[^\s/]+"),
    ),
    (
        "a password or secret assignment",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)"
            r"\s*[=:]\s*['\"]?(?=[^\s'\"]*\d)(?=[^\s'\"]*[A-Za-z])(?![<{$%])[^\s'\"<>]{10,}"
        ),
    ),
]


def find_secret(text: str) -> str | None:
    """What kind of secret the text holds, or None."""
    for name, pattern in _PATTERNS:
        if pattern.search(text):
            return name
    return None


def refuse_secrets(fields: dict[str, str | None]) -> None:
    """Raise ValidationFailed for the first field that holds a secret."""
    for field, value in fields.items():
        if not value:
            continue
        found = find_secret(value)
        if found:
            raise ValidationFailed(
                field,
                _(
                    "This looks like %(what)s. Secrets are never stored in memory; remove it "
                    "(refer to where the secret is kept instead). Nothing was stored."
                )
                % {"what": found},
            )


def redact_secrets(text: str) -> tuple[str, list[str]]:
    """The text with every secret replaced by a marker naming its kind, and the kinds found.

    For captured text (a transcript, a document), which is kept rather than refused: the marker
    says what was there, never the secret itself.
    """
    found: list[str] = []
    for name, pattern in _PATTERNS:

        def mark(match: re.Match[str], name: str = name) -> str:
            found.append(name)
            return f"[redacted: {name}]"

        text = pattern.sub(mark, text)
    return text, sorted(set(found))
