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

import bisect
import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from memories.protected import mask_protected

__all__ = ["LanguageDecision", "detect_language"]

# The thresholds below are explained, with their values, in the module docstring.

# Only the head of a very long text is analysed.
MAX_ANALYZED_CHARS = 20_000

# Below this many (weighted) prose letters the text is skipped: not sent to translation.
MIN_PROSE_LETTERS = 12

# Weight of one Han, kana or Hangul character in letter counts.
IDEOGRAPH_WEIGHT = 3

# Share of (weighted) letters outside the Latin script above which the prose is foreign.
NON_LATIN_SHARE = 0.5

# Function-word vote: the winning side needs this many hits...
MIN_FUNCTION_WORDS = 2
# ...and this many times the hits of the other side (English against the best other language).
FUNCTION_WORD_MARGIN = 2

# An unreliable detector answer counts only at or above this confidence (percent of the text).
BEST_EFFORT_MIN_PERCENT = 90

UNDETERMINED = "und"

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


# --- scripts -------------------------------------------------------------------------------------

_LATIN = "Latin"

# (first code point, last code point, script). Latin is everything below U+0250 plus the Latin
# extension blocks; scripts that are not listed count as "Other" (still non-Latin).
_SCRIPT_RANGES = sorted(
    [
        (0x0000, 0x024F, _LATIN),
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
        (0x1E00, 0x1EFF, _LATIN),
        (0x1F00, 0x1FFF, "Greek"),
        (0x2C60, 0x2C7F, _LATIN),
        (0x2DE0, 0x2DFF, "Cyrillic"),
        (0x3040, 0x309F, "Hiragana"),
        (0x30A0, 0x30FF, "Katakana"),
        (0x3130, 0x318F, "Hangul"),
        (0x31F0, 0x31FF, "Katakana"),
        (0x3400, 0x4DBF, "Han"),
        (0x4E00, 0x9FFF, "Han"),
        (0xA640, 0xA69F, "Cyrillic"),
        (0xA720, 0xA7FF, _LATIN),
        (0xA960, 0xA97F, "Hangul"),
        (0xAB30, 0xAB6F, _LATIN),
        (0xAC00, 0xD7FF, "Hangul"),
        (0xF900, 0xFAFF, "Han"),
        (0xFB00, 0xFB06, _LATIN),
        (0xFB1D, 0xFB4F, "Hebrew"),
        (0xFB50, 0xFDFF, "Arabic"),
        (0xFE70, 0xFEFF, "Arabic"),
        (0xFF21, 0xFF5A, _LATIN),
        (0xFF66, 0xFF9F, "Katakana"),
        (0xFFA0, 0xFFDC, "Hangul"),
        (0x20000, 0x3134F, "Han"),
    ]
)
_RANGE_STARTS = [start for start, _, _ in _SCRIPT_RANGES]

_IDEOGRAPHIC_SCRIPTS = frozenset({"Han", "Hiragana", "Katakana", "Hangul"})

# The language a script most likely means when the detector names none.
_SCRIPT_LANGUAGE = {
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
def _script(char: str) -> str:
    code = ord(char)
    index = bisect.bisect_right(_RANGE_STARTS, code) - 1
    if index >= 0:
        start, end, script = _SCRIPT_RANGES[index]
        if start <= code <= end:
            return script
    return "Other"


@dataclass(frozen=True)
class _Letters:
    weighted: float
    latin: float
    by_script: dict[str, float]

    @property
    def non_latin_share(self) -> float:
        return 0.0 if self.weighted == 0 else 1 - self.latin / self.weighted

    def dominant_script(self) -> str:
        scripts = {name: count for name, count in self.by_script.items() if name != _LATIN}
        if not scripts:
            return _LATIN
        if scripts.get("Han") and (scripts.get("Hiragana") or scripts.get("Katakana")):
            return "Hiragana"  # Japanese mixes kanji with kana; Chinese has no kana.
        return max(sorted(scripts), key=lambda name: scripts[name])


def _count_letters(prose: str) -> _Letters:
    by_script: dict[str, float] = {}
    for char in prose:
        if char.isalpha():
            script = _script(char)
            weight = IDEOGRAPH_WEIGHT if script in _IDEOGRAPHIC_SCRIPTS else 1
            by_script[script] = by_script.get(script, 0) + weight
    weighted = sum(by_script.values())
    return _Letters(weighted=weighted, latin=by_script.get(_LATIN, 0), by_script=by_script)


# --- function words ------------------------------------------------------------------------------

# The most frequent function words per language, lower case. Lists are deliberately short and
# hold only function words (articles, pronouns, prepositions, conjunctions, auxiliaries, negation,
# "always/never/before"), the words that survive in a sentence full of English jargon; English
# also lists the handful of verbs that open most imperative memories. A word may appear in
# several lists; it then counts for each language.
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "en": "the a an and or but of to in on at by for with from into about as is are was were "
        "be been being it its it's this that these those there here we you they he she i our your "
        "their them not no never always only also than then so if when while before after because "
        "without instead should must can cannot can't will won't would could do does don't "
        "doesn't didn't isn't aren't has have had which what who how why where all any every each "
        "some other same just still yet once again very more most too "
        # the verbs that open most imperative memories ("Use ...", "Keep ...", "Never ...")
        "use run go get set make keep add avoid prefer need ask",
        "es": "el la los las de del que en un una por con para es no se lo al como más pero sus "
        "le ya si sin sobre este esta también hay cuando siempre nunca antes después y o muy "
        "está son ni porque todo todos hacer",
        "pt": "de da do das dos que em no na nos nas um uma para com por não se os as ao mais mas "
        "como já sempre nunca antes depois também isso esse essa este está são ser tem sem pelo "
        "pela ou quando porque e o a é",
        "it": "il lo la gli le di del della dei delle che non con un una uno da dal nel nella "
        "sono si al alla anche come più ma se ci questo questa sempre mai prima dopo quando perché "
        "invece ogni tutti tutto ancora già ad ed e i è l' d' all' dell' un'",
        "fr": "le la les de des du un une et est en que qui pour dans sur pas ne au aux par avec "
        "ce cette ces il elle nous vous on sont mais ou où plus sans toujours jamais avant après "
        "aussi à l' d' qu' n' c' s' j'",
        "de": "der die das den dem des und ist nicht ein eine einen zu mit von auf für im in es "
        "sich auch wir du sie bei nach aus vor wenn dass oder aber immer nie niemals bitte keine "
        "kein statt damit nur noch schon so also wie gibt sind werden wird hat haben",
        "nl": "de het een van en is dat die niet op te voor met zijn er maar ook als dan bij nog "
        "wel naar om je we wij ze dit geen altijd nooit moet kan wordt hebben heeft omdat "
        "voordat anders daar alles dus eerst",
        "pl": "nie się na do to że jest co jak ale po tak za od przez dla oraz lub czy tylko "
        "przed tym ten ta te być ma są bo już jeśli gdy zawsze nigdy bez przy we ze aby żeby "
        "można trzeba i w z",
        "id": "yang dan di ke dari ini itu untuk dengan tidak akan ada atau juga pada karena "
        "sudah saja kami kita jangan sebelum setelah bisa harus dalam tapi lebih selalu pernah "
        "jika kalau oleh agar supaya masih belum semua",
        "tr": "ve bir bu da de için ile çok daha gibi ama ne her sonra önce olarak var yok değil "
        "mi mı ki kadar şu ya veya asla sadece tüm hiç olan zaman",
        "sv": "och att det som en på är av för med till den har de inte om ett men var jag du vi "
        "kan ska alltid aldrig bara innan efter eller när så också från vid sig i",
        "da": "og at det som en på er af for med til den har de ikke om et men var jeg du vi kan "
        "skal altid aldrig kun før efter eller når så også fra",
        "no": "og at det som en på er av for med til den har de ikke om et men var jeg du vi kan "
        "skal alltid aldri bare før etter eller når så også fra",
        "cs": "je se na to že do jako ale pro by tak jsou jsem když nebo už jen před po při bez "
        "vždy nikdy není být který která které také tento tato toto aby a v s z k o i",
        "ro": "și în de la cu pe un nu este să se din care ca mai pentru sau dar sunt acest "
        "această după înainte mereu niciodată",
        "vi": "không là của và có được cho các những một này trong với khi trước sau luôn để người",
        "fi": "ja on ei se että oli ovat olla mutta kun jos niin tai myös vain aina ennen "
        "jälkeen kaikki tämä ne hän me te he sen siitä kanssa koska voi pitää täytyy älä ole",
        "hu": "a az és hogy nem is egy de meg van volt ez azt csak már még mint vagy ha mert sem "
        "kell minden mindig soha után előtt nincs lesz pedig",
        "ca": "el la els les de del que en un una per amb és no es ho als com més però sense "
        "sempre mai abans després quan perquè aquest aquesta també hi ha i",
        "sk": "je sa na to že do ako ale pre by tak sú som keď alebo už len pred po pri bez vždy "
        "nikdy nie byť ktorý ktorá ktoré aj tento táto toto aby a v s z k o i",
        "hr": "je na se da za od do su ne to ali kao što ili samo bez prije nakon uvijek nikad "
        "nikada kad kada ako jer biti sve ovo taj ta i u s a",
        "sw": "na ya wa kwa ni la za katika kwamba hii huo hiyo kila lakini au bila kabla baada "
        "sana pia kama tu si",
        "tl": "ang ng sa mga na ay at hindi ko mo ito iyan para kung pero lang din rin ba po siya "
        "kami tayo sila may wala lagi palagi bago",
    }.items()
}
# Languages cld2 names that share a list: Malay with Indonesian, Bokmål and Nynorsk with "no".
_LIST_ALIASES = {"ms": "id", "nb": "no", "nn": "no"}
_FOREIGN_FUNCTION_WORDS = {lang: words for lang, words in _FUNCTION_WORDS.items() if lang != "en"}

# A word: letters with inner apostrophes (don't, l'utente, PostgreSQL'i).
_WORD_RE = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


def _words(prose: str) -> list[str]:
    words: list[str] = []
    for match in _WORD_RE.finditer(prose):
        word = match.group(0).lower().replace("\u2019", "'")
        if len(word) == 1 and prose[match.end() : match.end() + 1] == ".":
            continue  # an initial or an abbreviation (e.g., i.e.), not the word "e" or "i"
        words.append(word)
        if "'" in word:
            # French and Italian elision: l'utente, d'espaces, qu'il count as l', d', qu'.
            words.append(word.split("'", 1)[0] + "'")
    return words


def _hits(words: list[str], lang: str) -> int:
    """How many of `words` are function words of `lang` (0 for a language without a list)."""
    vocabulary = _FUNCTION_WORDS.get(_LIST_ALIASES.get(lang, lang), frozenset())
    return sum(1 for word in words if word in vocabulary)


def _best_other_language(words: list[str]) -> tuple[str, int]:
    """The non-English language with the most function words among `words`, and that count."""
    best_lang, best_hits = UNDETERMINED, 0
    for lang in _FOREIGN_FUNCTION_WORDS:
        hits = _hits(words, lang)
        if hits > best_hits:
            best_lang, best_hits = lang, hits
    return best_lang, best_hits


def _has_accented_latin(prose: str) -> bool:
    """Whether the prose has a Latin letter outside ASCII (é, ł, ş, ñ, å, ß ...): rare in English
    prose, common in almost every other Latin-script language."""
    return any(ord(char) > 0x7F and char.isalpha() and _script(char) == _LATIN for char in prose)


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
    letters = _count_letters(prose)

    if letters.weighted < MIN_PROSE_LETTERS:
        return _decision(
            UNDETERMINED,
            STATUS_SKIPPED,
            f"{letters.weighted:g} prose letters after masking, fewer than {MIN_PROSE_LETTERS}",
        )

    detection = _detect(prose)

    if letters.non_latin_share > NON_LATIN_SHARE:
        script = letters.dominant_script()
        lang = _SCRIPT_LANGUAGE.get(script, UNDETERMINED)
        if detection is not None and detection.lang not in {"en", UNDETERMINED}:
            lang = detection.lang
        return _decision(
            lang,
            STATUS_FOREIGN,
            f"{letters.non_latin_share:.0%} of prose letters are non-Latin ({script})",
        )

    words = _words(prose)
    english_hits = _hits(words, "en")
    other_lang, other_hits = _best_other_language(words)
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
        own_hits = _hits(words, detection.lang)
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
        and (other_hits > 0 or _has_accented_latin(prose))
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
