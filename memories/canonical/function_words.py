"""Function words per language: the vote that settles short technical text.

Part of the language rule in `memories.canonical.language` (its docstring explains how the vote
is used).
"""

from __future__ import annotations

import re

from memories.canonical.scripts import UNDETERMINED

# The most frequent function words per language, lower case. Lists are deliberately short and
# hold only function words (articles, pronouns, prepositions, conjunctions, auxiliaries, negation,
# "always/never/before"), the words that survive in a sentence full of English jargon; English
# also lists the handful of verbs that open most imperative memories. A word may appear in
# several lists; it then counts for each language.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
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
FOREIGN_FUNCTION_WORDS = {lang: words for lang, words in FUNCTION_WORDS.items() if lang != "en"}

# A word: letters with inner apostrophes (don't, l'utente, PostgreSQL'i).
_WORD_RE = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")


def words_of(prose: str) -> list[str]:
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


def count_hits(words: list[str], lang: str) -> int:
    """How many of `words` are function words of `lang` (0 for a language without a list)."""
    vocabulary = FUNCTION_WORDS.get(_LIST_ALIASES.get(lang, lang), frozenset())
    return sum(1 for word in words if word in vocabulary)


def best_other_language(words: list[str]) -> tuple[str, int]:
    """The non-English language with the most function words among `words`, and that count."""
    best_lang, best_hits = UNDETERMINED, 0
    for lang in FOREIGN_FUNCTION_WORDS:
        hits = count_hits(words, lang)
        if hits > best_hits:
            best_lang, best_hits = lang, hits
    return best_lang, best_hits
