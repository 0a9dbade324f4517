"""The one form a name is matched in: two spellings of a name are one key when they differ only
in case, Unicode compatibility form, punctuation or spacing ("Billing-Svc", "billing svc",
"billing_svc"). Aliases are stored under it and texts are cut into word n-grams of it, so the
dictionary match is one indexed lookup of keys.

Imports nothing from Django: the benchmark runs it bare.
"""

from __future__ import annotations

import re
import unicodedata

# Aliases match as runs of up to this many words: "the billing API", "Sara Bareilles".
MAX_NGRAM_WORDS = 4
# A chain of merges is short (each one a person's decision); the bound, which every resolution
# (the dictionary's and recall's statements) keeps, only stops a cycle that a concurrent pair of
# merges might leave.
MAX_MERGE_HOPS = 16
MIN_KEY_CHARS = 2
_SEPARATORS = re.compile(r"[\W_]+")
_WORD = re.compile(r"[^\W_]+")


def name_key(name: str) -> str:
    """The key a name is stored and looked up under: NFKC, case-folded, every run of
    punctuation, underscores and spaces one space, no leading or trailing space."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _SEPARATORS.sub(" ", folded).strip()


def text_keys(text: str) -> dict[str, str]:
    """Every run of one to MAX_NGRAM_WORDS words of the text, as keys, each with the words as
    they first appeared (a dictionary hit answers with the surface the memory used)."""
    words = [(match.group(0), match.start(), match.end()) for match in _WORD.finditer(text)]
    keys: dict[str, str] = {}
    for start in range(len(words)):
        for length in range(1, MAX_NGRAM_WORDS + 1):
            end = start + length
            if end > len(words):
                break
            key = " ".join(
                unicodedata.normalize("NFKC", word).casefold() for word, _, _ in words[start:end]
            )
            # A number alone names nothing (a ticket's "#12" is found with its mark).
            if len(key) >= MIN_KEY_CHARS and not key.isdigit() and key not in keys:
                keys[key] = text[words[start][1] : words[end - 1][2]]
    return keys


def dictionary_hits(keys: dict[str, str], aliases: dict[str, str]) -> list[tuple[str, str]]:
    """(key, surface) of every key of a text that is a known alias (`aliases`: key to the
    alias as it was written). Case does not matter, except that a plain lower-case word does
    not match a capitalized one-word name: "will" or "may" in prose is not Will or May."""
    hits = []
    for key, surface in keys.items():
        alias = aliases.get(key)
        if alias is None:
            continue
        if " " not in key and surface.isalpha() and surface.islower() and not alias.islower():
            continue
        hits.append((key, surface))
    return hits
