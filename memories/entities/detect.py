"""The entities a text names, found by shape, without an LLM and without the database.

Every write runs this (through `memories.canonical.content`), so it is a handful of regular
expressions over the text, leaning towards precision: a wrong entity costs every later recall
that trusts it, a missed one is found again by the dictionary match once anybody names it.

In order, each pass claiming its spans so a later one cannot split them: fenced code is skipped
(a code block's names are the code's, not the memory's subject); URLs; inline code holding one
term; paths and file names; handles (`@name`); ticket keys (`PROJ-123`, `owner/repo#12`, "issue
#12"); code-shaped identifiers (snake_case, camelCase, dotted names, calls, names with a letter
glued to a digit); then proper names by a conservative rule:

- a run of capitalized words that does not open a sentence (an opening word is capitalized
  whatever it is), in a line that is not itself title case (a heading), none of them a word that
  is capitalized for another reason (the pronoun I, days and months, greetings);
- an inner capital (`GitHub`, `PostgreSQL`) anywhere;
- a short quoted phrase whose every word is capitalized (a title: "The Alchemist");
- one or two capitalized words opening the text before a colon (a speaker: "Caroline: ...").

Its precision and recall on a hand-labelled set are measured by `bench/entities.py` and asserted
by `tests/memories/test_entities_detect.py`. Imports nothing from Django: the benchmark runs it
bare.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memories.entities.names import MIN_KEY_CHARS, name_key

# The kinds the detector gives (values of `memories.models.EntityKind`).
URL, HANDLE, TICKET, PATH = "url", "handle", "ticket", "path"
IDENTIFIER, NAME = "identifier", "name"

MAX_SURFACE_CHARS = 200


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Found:
    surface: str  # as the text wrote it
    kind: str
    key: str  # `name_key(surface)`


_EXT = (
    r"(?:py|pyi|ipynb|js|mjs|cjs|jsx|ts|tsx|vue|svelte|json|jsonl|ya?ml|toml|ini|cfg|conf|env|lock"
    r"|txt|md|rst|adoc|html?|css|scss|xml|svg|csv|tsv|sql|sh|bash|zsh|ps1|bat|go|rs|java|kt|scala"
    r"|rb|php|pl|c|h|cc|cpp|hpp|cs|swift|dart|lua|ex|exs|erl|hs|tf|proto|graphql|dockerfile|mk"
    r"|log|db|sqlite3?|po|whl|tar|gz|tgz|zip|jar|wasm|png|jpe?g|gif|webp|pdf|output)"
)
_SEG = r"[A-Za-z0-9_@+~%=\-.\u00c0-\u024f]+"
_TRAILING = ".,;:!?)]}'\"`*"

_FENCED = re.compile(r"(?<![`~])(`{3,}+|~{3,}+)[\s\S]*?(?:\1|\Z)")
# Markup tags (`<user_query>`, `</summary>`) frame a text; their names are not what it is about.
_TAG = re.compile(r"</?[A-Za-z][\w:\-]*(?:\s[^<>\n]*)?/?>")
_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_URL = re.compile(r"(?<![\w@])(?:[A-Za-z][A-Za-z0-9+.\-]{1,15}://|www\.)[^\s<>\"'`]+")
_INLINE = re.compile(r"(?<!`)`([^`\n]{2,80})`(?!`)")
_WINDOWS_PATH = re.compile(r"(?<![\w])[A-Za-z]:\\[\w.\-$~\\ ]*[\w$~]")
_ROOTED_PATH = re.compile(rf"(?<![\w/\\.~\-])(?:~|\.{{1,2}}|\$\{{?\w+\}}?)?/{_SEG}(?:/{_SEG})*/?")
_RELATIVE_PATH = re.compile(rf"(?<![\w/\\.~\-@]){_SEG}(?:/{_SEG})+/?", re.ASCII)
_FILE_NAME = re.compile(
    rf"(?<![\w./\\\-])\.?[A-Za-z0-9_][\w\-]*(?:\.[\w\-]+)*\.{_EXT}(?![\w\-]|\.\w)", re.ASCII
)
# A dotfile (`.env`, `.gitignore`) stands alone: not an extension in brackets, `(.ex)`, nor a
# member after a call, `).Length`.
_DOTFILE = re.compile(r"(?<![\w./\\\-()])\.[A-Za-z][\w]*(?:\.[\w]+)*(?![\w\-/(])", re.ASCII)
_HANDLE = re.compile(r"(?<![\w.@/`])@[A-Za-z][A-Za-z0-9_\-]{1,38}(?![\w@/\-])")
_TICKET = re.compile(r"(?<![\w\-])[A-Z][A-Z0-9]{1,9}-\d{1,7}(?![\w\-])")
_REPO_TICKET = re.compile(r"(?<![\w/])[\w.\-]+/[\w.\-]+#\d{1,7}(?!\w)")
_WORD_TICKET = re.compile(
    r"\b(?:issues?|PRs?|pull requests?|tickets?|bugs?|MRs?|merge requests?)\s+(#\d{1,7})(?!\w)",
    re.IGNORECASE,
)
# A standard's name with a number (UTF-8, SHA-256, ISO-8601) is named the same way as a ticket;
# it is an entity all the same, of another kind.
_STANDARDS = _words(
    "UTF UCS SHA MD ISO RFC PEP CVE ECMA IEEE COVID GPT HTTP TLS SSL IPV AES RSA X ES"
)
# A name glued to its parentheses, empty or holding arguments (not `insertions(+)`).
_CALL = re.compile(
    r"(?<![\w.])([A-Za-z_][\w.]*[A-Za-z0-9_])\((?:[\w\"'\[{][^()\n]{0,80})?\)", re.ASCII
)
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+(?![\w])", re.ASCII)
_SNAKE = re.compile(r"(?<![\w\-])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*(?![\w\-])", re.ASCII)
_CAMEL = re.compile(r"(?<![\w\-])[a-z]+[0-9]*[A-Z][A-Za-z0-9]*(?![\w\-])", re.ASCII)
_VERSIONED = re.compile(
    r"(?<![\w\-.])(?=[\w\-]*(?:[A-Za-z]\d|\d[A-Za-z]))[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+"
    r"(?:\.[A-Za-z0-9]+)*(?![\w\-])",
    re.ASCII,
)
# A commit or object id (`0629d16`, `b0be39e`): hex with a digit and a letter, 7 to 40 long.
_HEX_ID = re.compile(r"(?<![\w\-.])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w\-])")
# An inner capital: GitHub, PostgreSQL, JSONField (a plural acronym, URLs, is prose).
_INNER_CAPITAL = re.compile(
    r"(?<![\w\-])(?:[A-Z][a-z0-9]+[A-Z]|[A-Z]{2,}[a-z]{2})[A-Za-z0-9]*(?![\w\-])", re.ASCII
)

_UPPER = "A-Z\u00c0-\u00d6\u00d8-\u00de"
_LOWER = "a-z\u00df-\u00f6\u00f8-\u00ff"
_CAPITALIZED = rf"[{_UPPER}][{_LOWER}]+(?:['\u2019][{_LOWER}]+)?"
# A run of capitalized words, "of" allowed between two of them (Bank of America).
_NAME_RUN = re.compile(
    rf"(?<![\w'\u2019\-@/.]){_CAPITALIZED}(?:\s(?:of\s)?{_CAPITALIZED}){{0,3}}(?![\w\-@/])"
)
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{2,60})[\"\u201d]")
_SPEAKER = re.compile(rf"\A({_CAPITALIZED}(?: {_CAPITALIZED})?):\s+\S")
_TITLE_WORD = re.compile(rf"^(?:{_CAPITALIZED}|\d+|[A-Z]{{2,}}\d*)$")
_SMALL_WORDS = _words("a an the of and or in on at to for with from by as vs")

# Capitalized for a reason other than being a name, wherever they stand.
_NOT_NAMES = _words(
    """
    i i'm i'd i'll i've i’m ok okay
    monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    mon tue tues wed thu thur thurs fri sat sun
    jan feb mar apr jun jul aug sep sept oct nov dec
    hey hi hello bye goodbye thanks thank wow oh yes no yeah yep nope please sorry congrats
    cool great awesome nice sure well so but and or also anyway btw lol omg
    mr mrs ms dr prof sir madam mx
    """
)
# Words that open a line as a label ("Note: ..."), not a speaker.
_NOT_SPEAKERS = _words(
    """
    note notes update decision warning error summary context example reason status title
    priority result answer question user assistant system fix todo done tip caveat important
    step goal problem solution cause output input usage source prompt response task issue bug
    feature changes change action plan next why how what when where who edit update rule
    convention gotcha fact preference background details description request reply
    """
)
_QUOTES = set("\"'\u201c\u2018")
_MARKUP = set("(*_[")
# What may stand right before a word inside a sentence; anything else (a full stop, a colon, a
# bullet, an arrow, a tag, a line break) opens a new one.
_INSIDE = set(",)\u201d\u2019&")


def detected(text: str, *, names: bool = True) -> list[Found]:
    """The entities the text names, each once (by key), in the order found. `names=False`
    leaves out proper names, whose rule reads English (a text waiting for translation: its
    English is read again once it is there)."""
    return scanned(text, names=names)[0]


def scanned(text: str, *, names: bool = True) -> tuple[list[Found], str]:
    """What `detected` finds, and the text with the spans it took by shape (code, paths, URLs,
    identifiers) blanked: the dictionary match reads that, so that a known name inside a longer
    path or identifier (`spotter` in `/home/marco/projects/spotter/plan.md`) is not taken for
    a mention of it."""
    work = _FENCED.sub(_blank, text)
    work = _TAG.sub(_blank, work)
    work = _EMAIL.sub(_blank, work)  # an address is personal data, and not a handle
    found: dict[str, Found] = {}

    def claim(surface: str, kind: str) -> None:
        surface = surface.strip()
        if len(surface) > MAX_SURFACE_CHARS:
            return
        key = name_key(surface)
        if len(key) < MIN_KEY_CHARS or (key.isdigit() and kind != TICKET) or key in found:
            return
        found[key] = Found(surface, kind, key)

    def each(pattern: re.Pattern[str], kind, group=0, accept=None) -> None:
        nonlocal work
        for match in list(pattern.finditer(work)):
            surface = group(match) if callable(group) else match.group(group)
            surface = surface.rstrip(_TRAILING)
            if len(surface) < 2 or (accept is not None and not accept(surface)):
                continue
            claim(surface, kind(surface) if callable(kind) else kind)
            start, end = match.span()
            if group == 0:  # trailing punctuation stays: it may end the sentence
                end = start + len(surface)
            work = work[:start] + " " * (end - start) + work[end:]

    each(_URL, URL)
    each(_INLINE, _inline_kind, group=_inline_term, accept=_one_term)
    each(_WINDOWS_PATH, PATH)
    each(_ROOTED_PATH, PATH, accept=_rooted_is_path)
    each(_RELATIVE_PATH, PATH, accept=_relative_is_path)
    each(_FILE_NAME, PATH)
    each(_DOTFILE, PATH, accept=lambda s: len(s) > 2)
    each(_HANDLE, HANDLE)
    each(_REPO_TICKET, TICKET)
    each(_WORD_TICKET, TICKET, group=1)
    each(_TICKET, _ticket_kind)
    each(_CALL, IDENTIFIER, group=1)
    each(_DOTTED, IDENTIFIER)
    each(_SNAKE, IDENTIFIER, accept=lambda s: any(c.isalpha() for c in s))
    each(_CAMEL, IDENTIFIER)
    each(_VERSIONED, IDENTIFIER)
    each(_HEX_ID, IDENTIFIER)
    prose = work
    if names:
        each(_INNER_CAPITAL, NAME)
        for surface in _proper_names(work):
            claim(surface, NAME)
    return list(found.values()), prose


def _blank(match: re.Match[str]) -> str:
    return " " * (match.end() - match.start())


def _inline_term(match: re.Match[str]) -> str:
    """The name in inline code, without a call's arguments: `select_for_update()`."""
    term = match.group(1).strip()
    return term.split("(", 1)[0] if term.endswith(")") and "(" in term else term


def _one_term(term: str) -> bool:
    """Inline code naming one thing (`settings.py`, `mix_audit`), not a command or a snippet."""
    return " " not in term.strip() and any(char.isalpha() for char in term)


def _inline_kind(term: str) -> str:
    if "://" in term:
        return URL
    if "/" in term or "\\" in term or re.search(rf"\.{_EXT}$", term):
        return PATH
    return IDENTIFIER


def _rooted_is_path(surface: str) -> bool:
    """`/tmp/x`, `~/.config`, `./run.sh`; a lone `/word` is a slash command or a fraction."""
    body = surface.lstrip("~.$").lstrip("{").split("}", 1)[-1]
    return body.count("/") >= 2 or re.search(rf"\.{_EXT}/?$", body) is not None


def _relative_is_path(surface: str) -> bool:
    """`and/or` and `TCP/IP` are prose: a relative path has two slashes, a trailing slash or a
    file extension (`src/app/main`, `vendor/`, `routes/api.py`)."""
    if surface.endswith("/") or surface.count("/") >= 2:
        return any(char.isalpha() for char in surface)
    return re.search(rf"\.{_EXT}$", surface) is not None


def _ticket_kind(surface: str) -> str:
    return IDENTIFIER if surface.split("-", 1)[0] in _STANDARDS else TICKET


def _proper_names(work: str) -> list[str]:
    names: list[str] = []
    speaker = _SPEAKER.match(work)
    if speaker and name_key(speaker.group(1)).split()[0] not in _NOT_SPEAKERS:
        names.append(speaker.group(1))
    for match in list(_QUOTED.finditer(work)):
        words = match.group(1).split()
        if words and all(
            _TITLE_WORD.match(word.strip(",.!?:;")) or (index and word.lower() in _SMALL_WORDS)
            for index, word in enumerate(words)
        ):
            names.append(match.group(1).strip())
            work = work[: match.start()] + " " * len(match.group(0)) + work[match.end() :]
    title_lines = _title_case_lines(work)
    for match in _NAME_RUN.finditer(work):
        words = match.group(0).split()
        if _is_label(work, match):
            continue
        if _opens_sentence(work, match.start()):
            words = words[1:]  # the opening word is capitalized whatever it is
            if words and words[0] == "of":
                continue
        while words and words[0].casefold() in _NOT_NAMES:
            words = words[1:]
        while words and (words[-1].casefold() in _NOT_NAMES or words[-1] == "of"):
            words = words[:-1]
        if not words or any(word.casefold() in _NOT_NAMES for word in words):
            continue
        if _line_of(work, match.start()) in title_lines:
            continue
        names.append(re.sub(r"['\u2019]s$", "", " ".join(words)))
    return names


def _opens_sentence(text: str, position: int) -> bool:
    """Whether the word at `position` is the first of a sentence, a line, a list item or a
    quotation (where any word is capitalized): true unless a word, a comma or a closing
    bracket or quote stands right before it."""
    index = position - 1
    while index >= 0 and (text[index] in " \t" or text[index] in _MARKUP):
        index -= 1
    if index < 0 or text[index] in _QUOTES:
        return True
    return not (text[index].isalnum() or text[index] in _INSIDE)


def _is_label(text: str, match: re.Match[str]) -> bool:
    """Words right before a colon label a field (`Title: ...`, `**Status:**`, `API Error: 529`);
    the one name that may stand there, a speaker's, is read before (`_SPEAKER`)."""
    return text[match.end() : match.end() + 3].lstrip("*_").startswith(":")


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position)


def _title_case_lines(text: str) -> set[int]:
    """Headings, table rows and lines that are not sentences where most words are capitalized
    (titles): no evidence of names there."""
    lines = set()
    for number, line in enumerate(text.split("\n")):
        if line.lstrip().startswith(("#", "|")):  # a Markdown heading or table row
            lines.add(number)
            continue
        if line.rstrip().endswith((".", "!", "?")):  # a sentence, however many names it has
            continue
        words = [
            match.group(0)
            for match in re.finditer(r"[^\W\d_]{4,}", line)
            if not _opens_sentence(line, match.start())
        ]
        if len(words) >= 3 and sum(word[0].isupper() for word in words) >= 0.6 * len(words):
            lines.add(number)
    return lines
