"""The one text normalizer: what text PostgreSQL can store, and the form two texts share when
they say the same thing.

`unstorable` is what every door refuses (NUL, which PostgreSQL text cannot hold, and a lone
surrogate, which is not UTF-8). `comparable` is the form the content hash is taken of (Unicode
compatibility forms, case and runs of whitespace do not make two texts different), and, with
`punctuation=False`, the looser form the hygiene judge compares sides by. It lives in core
because tenancy's and the surfaces' input checks use it as well as the memory write path.
"""

from __future__ import annotations

import re
import unicodedata

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_WHITESPACE = re.compile(r"\s+")
_PUNCTUATION = re.compile(r"[\W_]+")


def unstorable(text: str) -> bool:
    """Whether the text holds a NUL or a lone surrogate (PostgreSQL stores neither)."""
    return _UNSTORABLE.search(text) is not None


def comparable(text: str, *, punctuation: bool = True) -> str:
    """The text in compatibility form (NFKC), case-folded, its whitespace runs one space and its
    ends stripped; without punctuation (every run of it one space) when `punctuation` is False.

    The content hash is of `comparable(text)`: changing this form changes every stored hash."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if not punctuation:
        folded = _PUNCTUATION.sub(" ", folded)
    return _WHITESPACE.sub(" ", folded).strip()
