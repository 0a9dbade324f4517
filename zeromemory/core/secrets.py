"""The one secret scanner: what every write refuses and what capture redacts.

Memories are shared and long-lived, so a secret never gets in through any field. `find_spans`
lists where secrets are in a text (the span of the secret itself: a whole private key from its
BEGIN line to its END line, the password of a URL, the value of an assignment), and every
caller uses it: `refuse_secrets` for the fields of a write (remember, edit, forget and challenge
reasons, scope and token names), `redact_secrets` for captured text kept rather than refused
(ingest's content, paths and ids). It lives in core because tenancy's own writes use it too.

The patterns favour precision: well-known key formats, private keys, JWTs, credentials in URLs,
and assignments of a secret-named key (`DB_PASSWORD=…`, `client_secret: …`, `"password": "…"`,
`<password>…</password>`, env-file, JSON, YAML, TOML and INI forms) whose value is not a
placeholder, a variable, an expression or a bare word of prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.utils.translation import gettext as _

from zeromemory.core.errors import ValidationFailed

PRIVATE_KEY = "a private key"
ASSIGNMENT = "a password or secret assignment"
URL_PASSWORD = "a password in a URL"  # noqa: S105 (a label, not a password)

_TOKENS: list[tuple[str, re.Pattern[str]]] = [
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
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
]

# Every repetition below is bounded, so a scan stays linear in the text: a hostile chunk of
# 200,000 characters ("a.a.a…", BEGIN lines without END) costs what any chunk costs.
#
# From the BEGIN line to the END line (a key block is far shorter than 32,000 characters); a key
# cut off before its END line is taken to the end of its base64 body.
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY(?: BLOCK)?)-----"
    r"(?:.{0,32000}?-----END (?P=label)-----|(?:[\sA-Za-z0-9+/=:,.-]|\\n)*)",
    re.DOTALL,
)
_URL_PASSWORD = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s/:@'\"]{1,200}:"
    r"(?P<value>(?!\{|\$|<|\*+@)[^\s/@'\"]{3,200})@[^\s/]"
)

# A key whose last word names a secret: DB_PASSWORD, client_secret, GITHUB_TOKEN, api-key,
# aws_secret_access_key, db.password. `max_tokens` or `password_hint` is not one. The match starts
# at that last word (after a separator, or where a word starts); the rest of the name is read back
# from there.
_KEY_WORD = (
    r"(?:pass(?:word|wd|phrase)|pwd|secret(?:[_-]?key)?|(?:access|auth|api|refresh|bearer|id)?"
    r"[_-]?token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?P<word>" + _KEY_WORD + r")[\"']?"
    r"(?P<sep>[ \t]{0,20}(?:=>|:=|[=:])[ \t]{0,20})"
    r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s\"',;]{1,200}))"
)
_XML_ASSIGNMENT = re.compile(
    r"(?i)<(?P<name>[A-Za-z0-9_.-]{0,60}?" + _KEY_WORD + r")>(?P<value>[^<\n]{1,200})</(?P=name)>"
)
_NAME_BEFORE = re.compile(r"[A-Za-z0-9_.-]{1,100}$")

_PLACEHOLDER = re.compile(
    r"(?i)^(?:[<{\[$%]|\*+$|x{3,}$|\.{3}|…|(?:true|false|yes|no|on|off|null|nil|none|required|"
    r"optional|redacted|hidden|masked|empty|unset|string|str|int|bool|env|secret|password|token|"
    r"placeholder|dummy|example|sample|test|todo|tbd)$|your[_-]|my[_-]|\[redacted)"
)
# Code or a path, not a value: settings.API_KEY, os.environ["X"], getenv("X"), process.env.X, a
# variable or constant, ~/.aws/credentials.
_EXPRESSION = re.compile(
    r"[(\[]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|^[a-z_]+$|^[~.]*/"
    r"|^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^[a-z]+(?:[A-Z][a-z]+)+$"  # API_KEY, userPassword
)


def _value_is_secret(value: str, *, quoted: bool, env_form: bool) -> bool:
    value = value.strip()
    if len(value) < 4 or _PLACEHOLDER.search(value) or value.isdigit():
        return False
    if quoted or env_form:
        return not (" " in value and value.count(" ") > 3)  # a sentence in quotes is prose
    if _EXPRESSION.search(value):
        return False
    # A bare value after `key: ` could be a word of prose ("the password: rotate it"): only one
    # that looks made up (a digit, a symbol, or a capital past its first letter) counts.
    return len(value) >= 6 and bool(
        re.search(r"\d|[^\w]|_", value) or re.search(r"[A-Z]", value[1:])
    )


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


def _assignments(text: str) -> Iterator[Span]:
    for match in _ASSIGNMENT.finditer(text):
        value = match.group("dq") or match.group("sq") or match.group("bare") or ""
        group = next(g for g in ("dq", "sq", "bare") if match.group(g) is not None)
        before = _NAME_BEFORE.search(text, max(0, match.start() - 100), match.start())
        name = (before.group() if before else "") + match.group("word")
        env_form = match.group("sep") == "=" and name.upper() == name
        if _value_is_secret(value, quoted=group != "bare", env_form=env_form):
            yield Span(match.start(group), match.end(group), ASSIGNMENT)
    for match in _XML_ASSIGNMENT.finditer(text):
        if _value_is_secret(match.group("value"), quoted=True, env_form=False):
            yield Span(match.start("value"), match.end("value"), ASSIGNMENT)


def _detectors() -> list[Callable[[str], Iterator[Span]]]:
    def keys(text: str) -> Iterator[Span]:
        for match in _PRIVATE_KEY.finditer(text):
            yield Span(match.start(), match.end(), PRIVATE_KEY)

    def urls(text: str) -> Iterator[Span]:
        for match in _URL_PASSWORD.finditer(text):
            yield Span(match.start("value"), match.end("value"), URL_PASSWORD)

    def tokens(text: str) -> Iterator[Span]:
        for name, pattern in _TOKENS:
            for match in pattern.finditer(text):
                yield Span(match.start(), match.end(), name)

    return [keys, tokens, urls, _assignments]


def find_spans(text: str) -> list[Span]:
    """Every secret in the text, in order, overlaps merged into the first (the outermost)."""
    spans = sorted(
        (span for detect in _detectors() for span in detect(text)),
        key=lambda s: (s.start, -s.end),
    )
    merged: list[Span] = []
    for span in spans:
        if merged and span.start < merged[-1].end:
            if span.end > merged[-1].end:
                merged[-1] = Span(merged[-1].start, span.end, merged[-1].kind)
            continue
        merged.append(span)
    return merged


def find_secret(text: str) -> str | None:
    """What kind of secret the text holds (the first one), or None."""
    spans = find_spans(text) if text else []
    return spans[0].kind if spans else None


def refuse_secrets(fields: dict[str, str | None]) -> None:
    """Raise ValidationFailed for the first field that holds a secret; nothing is stored."""
    for field, value in fields.items():
        found = find_secret(value) if isinstance(value, str) else None
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

    For captured text (a transcript, a document, its path), which is kept rather than refused:
    the marker says what was there, never the secret itself.
    """
    spans = find_spans(text) if text else []
    if not spans:
        return text, []
    parts, last = [], 0
    for span in spans:
        parts.append(text[last : span.start])
        parts.append(f"[redacted: {span.kind}]")
        last = span.end
    parts.append(text[last:])
    return "".join(parts), sorted({span.kind for span in spans})
