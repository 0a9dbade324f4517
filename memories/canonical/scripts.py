"""Scripts of letters: which script a character belongs to, and weighted letter counts.

Part of the language rule in `memories.canonical.language` (its docstring explains the
thresholds). A Han, kana or Hangul character weighs `IDEOGRAPH_WEIGHT` letters: it stands for a
syllable or a word.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import lru_cache

UNDETERMINED = "und"

# Weight of one Han, kana or Hangul character in letter counts.
IDEOGRAPH_WEIGHT = 3

LATIN = "Latin"

# (first code point, last code point, script). Latin is everything below U+0250 plus the Latin
# extension blocks; scripts that are not listed count as "Other" (still non-Latin).
_SCRIPT_RANGES = sorted(
    [
        (0x0000, 0x024F, LATIN),
        (0x0370, 0x03FF, "Greek"),
        (0x0400, 0x052F, "Cyrillic"),
        (0x0530, 0x058F, "Armenian"),
        (0x0590, 0x05FF, "Hebrew"),
        (0x0600, 0x06FF, "Arabic"),
        (0x0750, 0x077F, "Arabic"),
        (0x0900, 0x097F, "Devanagari"),
        (0x0980, 0x09FF, "Bengali"),
        (0x0A00, 0x0A7F, "Gurmukhi"),
        (0x0A80, 0x0AFF, "Gujarati"),
        (0x0B80, 0x0BFF, "Tamil"),
        (0x0C00, 0x0C7F, "Telugu"),
        (0x0C80, 0x0CFF, "Kannada"),
        (0x0D00, 0x0D7F, "Malayalam"),
        (0x0D80, 0x0DFF, "Sinhala"),
        (0x0E00, 0x0E7F, "Thai"),
        (0x0E80, 0x0EFF, "Lao"),
        (0x1000, 0x109F, "Myanmar"),
        (0x10A0, 0x10FF, "Georgian"),
        (0x1100, 0x11FF, "Hangul"),
        (0x1200, 0x139F, "Ethiopic"),
        (0x1780, 0x17FF, "Khmer"),
        (0x1C80, 0x1C8F, "Cyrillic"),
        (0x1E00, 0x1EFF, LATIN),
        (0x1F00, 0x1FFF, "Greek"),
        (0x2C60, 0x2C7F, LATIN),
        (0x2DE0, 0x2DFF, "Cyrillic"),
        (0x3040, 0x309F, "Hiragana"),
        (0x30A0, 0x30FF, "Katakana"),
        (0x3130, 0x318F, "Hangul"),
        (0x31F0, 0x31FF, "Katakana"),
        (0x3400, 0x4DBF, "Han"),
        (0x4E00, 0x9FFF, "Han"),
        (0xA640, 0xA69F, "Cyrillic"),
        (0xA720, 0xA7FF, LATIN),
        (0xA960, 0xA97F, "Hangul"),
        (0xAB30, 0xAB6F, LATIN),
        (0xAC00, 0xD7FF, "Hangul"),
        (0xF900, 0xFAFF, "Han"),
        (0xFB00, 0xFB06, LATIN),
        (0xFB1D, 0xFB4F, "Hebrew"),
        (0xFB50, 0xFDFF, "Arabic"),
        (0xFE70, 0xFEFF, "Arabic"),
        (0xFF21, 0xFF5A, LATIN),
        (0xFF66, 0xFF9F, "Katakana"),
        (0xFFA0, 0xFFDC, "Hangul"),
        (0x20000, 0x3134F, "Han"),
    ]
)
_RANGE_STARTS = [start for start, _, _ in _SCRIPT_RANGES]

IDEOGRAPHIC_SCRIPTS = frozenset({"Han", "Hiragana", "Katakana", "Hangul"})

# The language a script most likely means when the detector names none.
SCRIPT_LANGUAGE = {
    "Greek": "el",
    "Cyrillic": "ru",
    "Armenian": "hy",
    "Hebrew": "he",
    "Arabic": "ar",
    "Devanagari": "hi",
    "Bengali": "bn",
    "Gurmukhi": "pa",
    "Gujarati": "gu",
    "Tamil": "ta",
    "Telugu": "te",
    "Kannada": "kn",
    "Malayalam": "ml",
    "Sinhala": "si",
    "Thai": "th",
    "Lao": "lo",
    "Myanmar": "my",
    "Georgian": "ka",
    "Hangul": "ko",
    "Ethiopic": "am",
    "Khmer": "km",
    "Hiragana": "ja",
    "Katakana": "ja",
    "Han": "zh",
}


@lru_cache(maxsize=4096)
def script_of(char: str) -> str:
    code = ord(char)
    index = bisect.bisect_right(_RANGE_STARTS, code) - 1
    if index >= 0:
        start, end, script = _SCRIPT_RANGES[index]
        if start <= code <= end:
            return script
    return "Other"


@dataclass(frozen=True)
class Letters:
    weighted: float
    latin: float
    by_script: dict[str, float]

    @property
    def non_latin_share(self) -> float:
        return 0.0 if self.weighted == 0 else 1 - self.latin / self.weighted

    def dominant_script(self) -> str:
        scripts = {name: count for name, count in self.by_script.items() if name != LATIN}
        if not scripts:
            return LATIN
        if scripts.get("Han") and (scripts.get("Hiragana") or scripts.get("Katakana")):
            return "Hiragana"  # Japanese mixes kanji with kana; Chinese has no kana.
        return max(sorted(scripts), key=lambda name: scripts[name])


def count_letters(prose: str) -> Letters:
    by_script: dict[str, float] = {}
    for char in prose:
        if char.isalpha():
            script = script_of(char)
            weight = IDEOGRAPH_WEIGHT if script in IDEOGRAPHIC_SCRIPTS else 1
            by_script[script] = by_script.get(script, 0) + weight
    weighted = sum(by_script.values())
    return Letters(weighted=weighted, latin=by_script.get(LATIN, 0), by_script=by_script)


def has_accented_latin(prose: str) -> bool:
    """Whether the prose has a Latin letter outside ASCII (é, ł, ş, ñ, å, ß ...): rare in English
    prose, common in almost every other Latin-script language."""
    return any(ord(char) > 0x7F and char.isalpha() and script_of(char) == LATIN for char in prose)
