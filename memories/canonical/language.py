"""Deterministic language detection for the write path.

The tool contract asks agents to write memories in English, and most of the time they do. The
server still checks every write, because canonical English is an invariant and the contract is
only followed most of the time. This module answers one question, cheaply and the same way every
time: should this memory be sent to canonicalization (translation), or not?

The rule, in order:

1. Mask the protected spans (code, paths, URLs, identifiers, quoted terms; see `protected.py`).
   They are kept verbatim whatever the language, and they are noise to a language detector: a
   sentence that is mostly code must never go to translation because the detector guessed wrong
   on `select_for_update` or `stdout`.
2. Skipped when too little prose is left (`MIN_PROSE_LETTERS`, with CJK characters weighted by
   `IDEOGRAPH_WEIGHT` because one of them carries about as much text as a short Latin word).
   On a word or two no detector can tell English from its neighbours, a translation of "OK." or
   of a bare path buys nothing, and the contract says English: not translating is the safe side.
3. Foreign when most of the (weighted) letters are in a script other than Latin
   (`NON_LATIN_SHARE`). English is written in Latin letters, so a memory whose prose is mostly
   Cyrillic, Han, kana, Hangul, Arabic, ... was not written in English, however short it is and
   whatever the detector says. The language is the detector's answer when it names one, else a
   guess from the script.
4. Function words. Latin-script prose gets a vote from small lists of the most frequent
   function words of English and of the languages agents' users most often write in. When one
   side has at least `MIN_FUNCTION_WORDS` hits and at least `FUNCTION_WORD_MARGIN` times as many
   as the other, it decides. This is what fixes the detector's known weakness on short technical
   text: cld2 reads "Logs go to stdout as JSON lines." as Danish because of "stdout", and
   "I test del browser usano chromium tramite Playwright." as English because of the English
   jargon, while "to"/"as" and "i"/"del" are plain evidence. A word that is a function word in
   several languages counts for each of them, so it only decides when nothing else does.
5. The detector: foreign when it is reliable and names a language other than English, unless
   the prose holds more English function words than function words of the language it named
   (cld2 reads "Golang services use zerolog." as Tswana: one English word is more evidence than
   none of Tswana).
6. An unreliable detector still gets a say when it is confident (`BEST_EFFORT_MIN_PERCENT`) on a
   non-English language, the prose has no English function word at all, and something else
   backs it: a function word of another language or an accented Latin letter. Short status
   lines such as "Brakuje indeksu na created_at." are otherwise judged English, while cld2's
   best effort on "Delete dead code." (Nynorsk) has nothing behind it.
7. Otherwise English.

Thresholds err towards English: translating an English memory costs an LLM call and risks
mangling it, while a missed foreign memory is still stored, readable and findable by people who
search in its language. Why each one has its value:

* `MAX_ANALYZED_CHARS` (20 000): memories are short and a few kilobytes of prose settle the
  question; the cap keeps masking and detection bounded whatever a caller sends.
* `MIN_PROSE_LETTERS` (12): about two short words. Below it cld2 mostly answers "unknown" or a
  guess ("Use Python 3.11." comes out as Latin), and the short foreign lines it would catch are
  thank-yous and "done" notes that carry no knowledge worth a translation.
* `IDEOGRAPH_WEIGHT` (3): a Han, kana or Hangul character stands for a syllable or a word, so a
  seven-character Chinese sentence is a sentence, not two words.
* `NON_LATIN_SHARE` (0.5): a majority, so that an English sentence naming a person or a term in
  another script stays English, while prose mostly in that script is foreign.
* `MIN_FUNCTION_WORDS` (2) and `FUNCTION_WORD_MARGIN` (2): one word can be a name, a loan word or
  shared by several languages ("a", "in", "die"); two, and twice the other side, is a pattern.
* `BEST_EFFORT_MIN_PERCENT` (90): cld2's best effort on a few words is often a coin toss between
  neighbours; only a confident one counts, and only with the backing described in step 6.

cld2's own prior ("hintLanguage=en") would be the obvious way to lean towards English, but it is
far too strong: it turns plain Spanish, Italian and French sentences of a dozen words into
English. The function-word vote leans the same way only where the words themselves say so.

The detector is cld2 (pycld2), reached through polyglot's `Detector` as the design names it.
polyglot imports cleanly with the prebuilt `pyicu-wheels` (no system ICU, no compiler), so there
is no reason to bypass it: `Detector(text, quiet=True)` runs cld2 in reliable mode and falls back
to cld2's best effort with `reliable` set to False, which is exactly the pair of answers steps 5
and 6 need, and its language codes come out through ICU (legacy codes such as cld2's "iw" are
mapped to ISO 639-1 here). Its one side effect, a WARNING log line on every unreliable (that is,
every short) text, is silenced below because that is the normal case here, not a problem to
report. cld2 is a compiled n-gram model: deterministic, no model download, microseconds per
sentence. It rejects some code points (C0/C1 controls, noncharacters) and Python strings can hold
lone surrogates that do not encode, so the prose is sanitized first, and any detector error falls
back to the rule without the detector: `detect_language` never raises.

This module imports nothing from Django so the benchmark and the tests can run it bare.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from memories.canonical.function_words import (
    best_other_language,
    count_hits,
    words_of,
)
from memories.canonical.protected import mask_protected
from memories.canonical.scripts import (
    SCRIPT_LANGUAGE,
    UNDETERMINED,
    count_letters,
    has_accented_latin,
)

__all__ = ["LanguageDecision", "detect_language"]

# The thresholds below are explained, with their values, in the module docstring.

# Only the head of a very long text is analysed.
MAX_ANALYZED_CHARS = 20_000

# Below this many (weighted) prose letters the text is skipped: not sent to translation.
MIN_PROSE_LETTERS = 12


# Share of (weighted) letters outside the Latin script above which the prose is foreign.
NON_LATIN_SHARE = 0.5

# Function-word vote: the winning side needs this many hits...
MIN_FUNCTION_WORDS = 2
# ...and this many times the hits of the other side (English against the best other language).
FUNCTION_WORD_MARGIN = 2

# An unreliable detector answer counts only at or above this confidence (percent of the text).
BEST_EFFORT_MIN_PERCENT = 90


STATUS_SKIPPED = "skipped"
STATUS_ENGLISH = "english"
STATUS_FOREIGN = "foreign"


@dataclass(frozen=True)
class LanguageDecision:
    """What the write path needs to know about a memory's language."""

    lang: str
    is_english: bool
    needs_translation: bool
    status: str
    reason: str


# --- detector ------------------------------------------------------------------------------------

try:
    from polyglot.detect import Detector as _Detector
except Exception:  # noqa: BLE001 - without polyglot (or ICU) the rule runs without the detector
    _Detector = None

# polyglot logs a WARNING for every text cld2 cannot classify reliably; for short memories that is
# the normal case, so it is not worth a log line per write.
logging.getLogger("polyglot.detect.base").setLevel(logging.ERROR)

# cld2 rejects C0/C1 control characters and Unicode noncharacters ("invalid UTF-8"), and lone
# surrogates cannot be encoded at all; all become spaces before detection.
_UNDETECTABLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(0x11))
    + "]"
)

# Codes cld2 still uses for languages whose ISO 639-1 code changed.
_LEGACY_CODES = {"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}


@dataclass(frozen=True)
class _Detection:
    lang: str  # ISO 639-1 (or "und")
    reliable: bool
    percent: float


def _normalize_code(code: str) -> str:
    base = re.split(r"[_\-]", code.strip().lower(), maxsplit=1)[0]
    if not base or base in {"un", "xx", "xxx", "zzb", "zzh", "zzp"} or not base.isalpha():
        return UNDETERMINED
    return _LEGACY_CODES.get(base, base)


def _detect(prose: str) -> _Detection | None:
    """cld2 through polyglot, or None when the detector is missing or fails on this text."""
    if _Detector is None:
        return None
    try:
        detector = _Detector(prose, quiet=True)
        best = detector.language
        return _Detection(
            lang=_normalize_code(best.code),
            reliable=bool(detector.reliable),
            percent=float(best.confidence),
        )
    except Exception:  # noqa: BLE001 - any detector failure falls back to the rule without it
        return None


# --- the rule ------------------------------------------------------------------------------------


def _decision(lang: str, status: str, reason: str) -> LanguageDecision:
    foreign = status == STATUS_FOREIGN
    return LanguageDecision(
        lang=lang,
        is_english=status == STATUS_ENGLISH,
        needs_translation=foreign,
        status=status,
        reason=reason,
    )


def detect_language(text: str) -> LanguageDecision:
    """Decide whether `text` is English prose, foreign prose, or too little prose to tell.

    Deterministic, cheap, and total: any input, including non-strings, gives a decision.
    """
    try:
        return _detect_language(text)
    except Exception as error:  # noqa: BLE001 - the write path must never fail on detection
        return _decision(UNDETERMINED, STATUS_SKIPPED, f"detection failed: {type(error).__name__}")


def _detect_language(text: str) -> LanguageDecision:
    if not isinstance(text, str):
        return _decision(UNDETERMINED, STATUS_SKIPPED, "not a string")
    prose = _UNDETECTABLE.sub(" ", mask_protected(text[:MAX_ANALYZED_CHARS]))
    letters = count_letters(prose)

    if letters.weighted < MIN_PROSE_LETTERS:
        return _decision(
            UNDETERMINED,
            STATUS_SKIPPED,
            f"{letters.weighted:g} prose letters after masking, fewer than {MIN_PROSE_LETTERS}",
        )

    detection = _detect(prose)

    if letters.non_latin_share > NON_LATIN_SHARE:
        script = letters.dominant_script()
        lang = SCRIPT_LANGUAGE.get(script, UNDETERMINED)
        if detection is not None and detection.lang not in {"en", UNDETERMINED}:
            lang = detection.lang
        return _decision(
            lang,
            STATUS_FOREIGN,
            f"{letters.non_latin_share:.0%} of prose letters are non-Latin ({script})",
        )

    words = words_of(prose)
    english_hits = count_hits(words, "en")
    other_lang, other_hits = best_other_language(words)
    if english_hits >= MIN_FUNCTION_WORDS and english_hits >= FUNCTION_WORD_MARGIN * other_hits:
        return _decision(
            "en",
            STATUS_ENGLISH,
            f"{english_hits} English function words against {other_hits} ({other_lang})",
        )
    if other_hits >= MIN_FUNCTION_WORDS and other_hits >= FUNCTION_WORD_MARGIN * english_hits:
        lang = other_lang
        if detection is not None and detection.lang not in {"en", UNDETERMINED}:
            lang = detection.lang
        return _decision(
            lang,
            STATUS_FOREIGN,
            f"{other_hits} {other_lang} function words against {english_hits} English",
        )

    if detection is None:
        return _decision("en", STATUS_ENGLISH, "detector unavailable; English by default")
    if detection.reliable and detection.lang not in {"en", UNDETERMINED}:
        own_hits = count_hits(words, detection.lang)
        if english_hits > own_hits:
            return _decision(
                "en",
                STATUS_ENGLISH,
                f"detector said {detection.lang}, but the prose has {english_hits} English "
                f"function words against {own_hits} of {detection.lang}",
            )
        return _decision(
            detection.lang, STATUS_FOREIGN, f"detector: {detection.lang} ({detection.percent:g}%)"
        )
    if (
        not detection.reliable
        and detection.lang not in {"en", UNDETERMINED}
        and detection.percent >= BEST_EFFORT_MIN_PERCENT
        and english_hits == 0
        and (other_hits > 0 or has_accented_latin(prose))
    ):
        return _decision(
            detection.lang,
            STATUS_FOREIGN,
            f"detector best effort: {detection.lang} ({detection.percent:g}%), "
            "no English function word, foreign word or accented letter",
        )
    if detection.lang == "en":
        return _decision("en", STATUS_ENGLISH, f"detector: en ({detection.percent:g}%)")
    return _decision("en", STATUS_ENGLISH, "no reliable evidence against English")
