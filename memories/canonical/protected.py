"""Spans of a memory that are not prose and must survive translation verbatim.

A memory written by a coding agent mixes prose with code, identifiers, file paths, URLs and quoted
domain terms. Two parts of the write path need to know where those spans are:

* language detection looks only at the prose, because `select_for_update(skip_locked=True)` or
  `memories/migrations/` says nothing about the language the writer thinks in, and a sentence that
  is mostly code must never be sent to translation just because the detector guessed wrong on
  the identifiers;
* canonicalization asks the translator to keep these spans untouched and then checks that each one
  is still present in the English text.

The patterns run as ordered passes over the text. A span claimed by an earlier pass cannot be
claimed (or split) by a later one, so a fenced block is claimed before the inline code, URLs and
identifiers inside it, inline code before the paths inside it, and so on. The patterns lean
towards recall on code and towards leaving ordinary words alone: masking an odd prose word costs
the detector a little evidence, while missing an identifier can make it send English to
translation or let a translator rename a function.

This module imports nothing from Django so the benchmark and the tests can run it bare.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["mask_protected", "protected_spans"]

# Quoted text is a protected term only while it is short: a domain word or name ("workspace",
# 'memory', «espace de travail») must be kept, but a whole quoted sentence is speech that the
# memory is about and has to be detected and translated like the rest of the prose.
QUOTED_TERM_MAX_CHARS = 60
QUOTED_TERM_MAX_WORDS = 5

# Extensions that make a bare word a file name (`settings.py`, `package.json`). A closed list,
# because an open pattern would also swallow abbreviations and sentence breaks without a space;
# lower case only, so that a missing space after a full stop ("done.So") stays prose.
_EXT = (
    r"(?:py|pyi|pyx|ipynb|js|mjs|cjs|jsx|ts|tsx|vue|svelte|json|jsonl|yml|yaml|toml|ini|cfg|conf"
    r"|env|lock|txt|md|rst|adoc|html|htm|css|scss|sass|less|xml|svg|csv|tsv|sql|sh|bash|zsh|fish"
    r"|ps1|bat|cmd|go|rs|java|kt|kts|scala|groovy|gradle|rb|php|pl|c|h|cc|cpp|hpp|cs|swift|dart"
    r"|lua|jl|ex|exs|erl|hs|ml|tf|tfvars|proto|graphql|gql|dockerfile|mk|log|pid|sock|db|sqlite3?"
    r"|dump|bak|tmp|po|mo|pot|pem|crt|key|pub|whl|egg|tar|gz|tgz|zip|jar|war|so|dll|exe|wasm|png"
    r"|jpe?g|gif|webp|ico|pdf)"
)

# Characters of a path segment: ASCII plus Latin-1/Latin Extended letters (`Übersetzung.md`), but
# no CJK, so that `memories/migrations/にある` stops at the Japanese text that follows without a
# space.
_SEG_CHARS = r"A-Za-z0-9_@+~%=\-.\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_SEG = rf"[{_SEG_CHARS}]+"
# A path starts only where no path character precedes it: one attempt per run of path
# characters, so a long run that turns out not to be a path is scanned once, not once per start.
_PATH_START = rf"(?<![{_SEG_CHARS}/\\])"
_NO_TRAILING_PUNCT = r"(?<![.,;:!?])"

_URL = (
    r"(?<![\w@])(?:[A-Za-z][A-Za-z0-9+.\-]{0,30}://|www\.|mailto:)"
    r"[!#-&(-;=?-~]*" + r"[A-Za-z0-9/#=&_\-~%+*@$]"
)


@dataclass(frozen=True)
class _Pass:
    """One kind of protected span: its pattern, an optional veto, and how to read the term."""

    name: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] | None = None
    term: Callable[[re.Match[str]], str] | None = None


_EXT_AT_END = re.compile(r"\." + _EXT + r"$")


def _relative_path_is_path(match: re.Match[str]) -> bool:
    """`and/or` and `TCP/IP` are prose; a relative path needs a trailing slash, two slashes or an
    extension on its last segment (`vendor/`, `src/app/main`, `routes/api.py`)."""
    text = match.group(0)
    if text.endswith("/") or text.count("/") >= 2:
        return any(ch.isalpha() for ch in text)
    last = text.rsplit("/", 1)[-1]
    return _EXT_AT_END.search(last) is not None


_QUOTE_PAIRS = (
    ('"', '"'),
    ("\u201c", "\u201d"),  # “English”
    ("\u201e", "\u201c\u201d"),  # „German“ and „Polish”
    ("\u00ab", "\u00bb"),  # «guillemets»
    ("\u00bb", "\u00ab"),  # »German guillemets«
    ("\u2039", "\u203a"),  # ‹single›
    ("\u201a", "\u2018\u2019"),  # ‚German single‘
    ("\u300c", "\u300d"),  # 「Japanese」
    ("\u300e", "\u300f"),  # 『Japanese』
    ("\u2018", "\u2019"),  # ‘curly single’
)


def _quote_pattern() -> re.Pattern[str]:
    """One alternative per quote style, each capturing its inner term in its own group."""
    alternatives = []
    for index, (opening, closing) in enumerate(_QUOTE_PAIRS):
        body = "[^" + re.escape(opening + closing) + r"\n]"
        alternatives.append(re.escape(opening) + rf"(?P<q{index}>{body}+?)[{re.escape(closing)}]")
    # A straight single quote is also an apostrophe (don't, L'utente, PostgreSQL'i), so it opens a
    # quote only where a word cannot run through it: after a non-word character and before a
    # non-space; it closes after a non-space and before a non-word character.
    alternatives.append(r"(?<![\w'])'(?P<qs>[^'\s](?:[^'\n]*?[^'\s])?)'(?![\w'])")
    return re.compile("|".join(alternatives))


def _quote_term(match: re.Match[str]) -> str:
    return next(value for value in match.groupdict().values() if value is not None).strip()


def _short_quote(match: re.Match[str]) -> bool:
    """Quoted text is a term only while it is short (see QUOTED_TERM_MAX_*)."""
    term = _quote_term(match)
    return len(term) <= QUOTED_TERM_MAX_CHARS and len(term.split()) <= QUOTED_TERM_MAX_WORDS


_PASSES: tuple[_Pass, ...] = (
    # Fenced blocks first: everything inside them is code, whatever it looks like.
    # Fences and inline code open on a whole run of backticks (possessive, and not preceded by
    # another backtick) so that a long run of backticks costs one attempt, not one per character.
    _Pass("fenced_code", re.compile(r"(?<![`~])(?P<fence>`{3,}+|~{3,}+)[\s\S]*?(?P=fence)")),
    _Pass("inline_code", re.compile(r"(?<!`)(?P<ticks>`++)[^\n]+?(?<!`)(?P=ticks)(?!`)")),
    _Pass("url", re.compile(_URL)),
    _Pass(
        "windows_path",
        re.compile(
            r"(?<![\w])(?:[A-Za-z]:\\|\\\\[A-Za-z0-9_.\-]+\\)[A-Za-z0-9_.\-$~\\]*"
            + _NO_TRAILING_PUNCT
        ),
    ),
    _Pass(
        "rooted_path",
        re.compile(
            _PATH_START + r"(?:~|\.{1,2})?/" + _SEG + r"(?:/" + _SEG + r")*/?" + _NO_TRAILING_PUNCT
        ),
    ),
    _Pass(
        "relative_path",
        re.compile(
            _PATH_START + _SEG + r"(?:(?:/" + _SEG + r")+/?|/)" + _NO_TRAILING_PUNCT,
            re.ASCII,
        ),
        accept=_relative_path_is_path,
    ),
    _Pass("quoted_term", _quote_pattern(), accept=_short_quote, term=_quote_term),
    # `foo()`, `select_for_update(skip_locked=True)`: a name glued to its parentheses.
    _Pass(
        "call",
        re.compile(r"(?<![\w.])[A-Za-z_][\w.]*\((?:[^()\n]|\([^()\n]*\)){0,200}\)", re.ASCII),
    ),
    _Pass(
        "file_name",
        re.compile(
            r"(?<![\w./\\\-])\.?[A-Za-z0-9_][\w\-]*(?:\.[\w\-]+)*\." + _EXT + r"(?![\w\-]|\.\w)",
            re.ASCII,
        ),
    ),
    # Dotfiles (`.env`, `.env.example`, `.gitignore`); the hyphen stays out so that the German
    # `.env-Datei` keeps its prose half.
    _Pass("dotfile", re.compile(r"(?<![\w./\\\-])\.[A-Za-z][\w]*(?:\.[\w]+)*", re.ASCII)),
    # Dotted names (`os.path.join`, `django.db.models`). Each segment has two or more characters
    # so that abbreviations like e.g., i.e., z.B. and p.ej. stay prose.
    _Pass(
        "dotted_name",
        re.compile(r"(?<![\w.])[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+", re.ASCII),
    ),
    # Hyphenated names with a letter glued to a digit (`django-q2`, `all-MiniLM-L6-v2`, `gpt-4o`,
    # `x86-64`) are product and model names. Hyphenated words without one are indistinguishable
    # from prose, and so are number compounds like "3-day" or "24-Stunden".
    _Pass(
        "versioned_name",
        re.compile(
            r"(?<![\w\-])(?=[\w\-]*(?:[A-Za-z]\d|\d[A-Za-z]))[A-Za-z0-9]\w*(?:-\w+)+(?![\w\-])",
            re.ASCII,
        ),
    ),
    _Pass("cli_flag", re.compile(r"(?<![\w\-])--?[A-Za-z][\w\-]*(?:=\S+)?(?=\s|$)", re.ASCII)),
    _Pass("assignment", re.compile(r"(?<![\w.])[A-Za-z_][\w.]*=[^\s,;]+", re.ASCII)),
    # snake_case, SCREAMING_SNAKE, _private and __dunder__: an underscore never occurs in prose.
    _Pass(
        "snake_case",
        re.compile(
            r"(?<!\w)(?=[A-Za-z0-9]*_)_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)*_*(?!\w)", re.ASCII
        ),
    ),
    # camelCase: a lower-case start followed by a capital inside the word.
    _Pass("camel_case", re.compile(r"(?<!\w)[a-z]+[0-9]*[A-Z]\w*(?!\w)", re.ASCII)),
    # PascalCase with an inner capital (`DashboardChart`, `PostgreSQL`); a plain capitalized word
    # or an acronym is prose. An acronym glued to a word (`JSONField`, `SQLite`) is a name too, but
    # a plural acronym (`URLs`, `PRs`) is prose, hence two lower-case letters at least.
    _Pass(
        "pascal_case",
        re.compile(r"(?<!\w)(?:[A-Z][a-z0-9]+[A-Z]|[A-Z]{2,}[a-z]{2})\w*(?!\w)", re.ASCII),
    ),
)


def _claimed(text: str) -> list[tuple[int, int, str]]:
    """(start, end, term) of every protected span, in text order, never overlapping.

    Each pass sees the text as it is; a match that overlaps a span claimed by an earlier pass is
    dropped whole, which is what makes the pass order meaningful.
    """
    # Claimed spans never overlap, so sorted starts and ends answer "is [start, end) free?" with
    # one bisection instead of a scan over every span claimed so far.
    starts: list[int] = []
    ends: list[int] = []
    terms: list[str] = []
    for step in _PASSES:
        for match in step.pattern.finditer(text):
            start, end = match.span()
            if start == end or (step.accept is not None and not step.accept(match)):
                continue
            index = bisect.bisect_right(starts, start)
            if (index > 0 and ends[index - 1] > start) or (
                index < len(starts) and starts[index] < end
            ):
                continue
            starts.insert(index, start)
            ends.insert(index, end)
            terms.insert(index, step.term(match) if step.term is not None else match.group(0))
    return list(zip(starts, ends, terms, strict=True))


def protected_spans(text: str) -> list[str]:
    """The spans of `text` that must come out of translation exactly as they went in.

    Quoted terms are returned without their quotation marks, since a translation may rightly
    change the quote style („x“ to "x") while it must keep the term itself.
    """
    return [term for _, _, term in _claimed(text)]


def mask_protected(text: str) -> str:
    """`text` with every protected span replaced by one space, so that only prose remains.

    A space rather than nothing keeps the words on either side of a span apart.
    """
    pieces: list[str] = []
    position = 0
    for start, end, _ in _claimed(text):
        pieces.append(text[position:start])
        pieces.append(" ")
        position = end
    pieces.append(text[position:])
    return "".join(pieces)
