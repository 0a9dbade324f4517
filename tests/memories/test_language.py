"""Protected spans and the write-path language rule (memories/canonical/protected.py and
language.py).

Plain functions without Django: both modules import nothing from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memories.canonical.language import LanguageDecision, detect_language
from memories.canonical.protected import mask_protected, protected_spans

DATA = Path(__file__).resolve().parent.parent / "data" / "language_sentences.tsv"


def _rows() -> list[tuple[str, str]]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "lang\ttext"
    return [tuple(line.split("\t", 1)) for line in lines[1:] if line.strip()]


# --- protected spans -----------------------------------------------------------------------------


def test_fenced_code_block_is_one_span_claimed_before_its_contents():
    text = "Run this first:\n```\npip install -r requirements/base.txt\nmake test\n```\nthen push."
    spans = protected_spans(text)
    assert spans == ["```\npip install -r requirements/base.txt\nmake test\n```"]


def test_inline_code():
    assert protected_spans("Always run `make test` before pushing.") == ["`make test`"]
    assert protected_spans("Use ``a `tick` inside`` here") == ["``a `tick` inside``"]


def test_url_without_trailing_punctuation():
    text = "See https://docs.djangoproject.com/en/5.1/ref/models/querysets/. Also www.example.com!"
    assert protected_spans(text) == [
        "https://docs.djangoproject.com/en/5.1/ref/models/querysets/",
        "www.example.com",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "src/app/main.py",
        "./manage.py",
        "~/.config/zero-memory",
        "/var/log/zm/web.log",
        "memories/migrations/",
        "vendor/",
        "C:\\src\\zero-memory",
        "settings.py",
        "package.json",
        ".env",
        ".env.example",
    ],
)
def test_paths_and_file_names(path):
    assert protected_spans(f"Look at {path} before changing anything.") == [path]


@pytest.mark.parametrize(
    "identifier",
    [
        "select_for_update",
        "MAX_CONTENT_CHARS",
        "__init__",
        "parseConfig",
        "DashboardChart",
        "JSONField",
        "os.path.join",
        "django.db.models",
        "print()",
        "readable_scopes(user)",
        "django-q2",
        "--no-input",
        "DEBUG=False",
    ],
)
def test_identifiers(identifier):
    assert protected_spans(f"We rely on {identifier} here") == [identifier]


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ('The customer calls them "workspaces" in meetings.', "workspaces"),
        ("Use the term 'memory', not note.", "memory"),
        ("The customer calls them “workspaces”.", "workspaces"),
        ("Le client parle d'«espaces de travail» ici.", "espaces de travail"),
        ("Der Kunde nennt sie „Arbeitsbereiche“ im Alltag.", "Arbeitsbereiche"),
        ("顧客は「ワークスペース」と呼ぶ", "ワークスペース"),
    ],
)
def test_quoted_terms(text, term):
    assert protected_spans(text) == [term]


def test_prose_is_left_alone():
    text = "Don't merge and/or rebase, e.g. L'utente said it's fine; PostgreSQL'i seçtik."
    assert protected_spans(text) == ["PostgreSQL"]


def test_a_long_quotation_is_prose_not_a_term():
    text = 'He said "please always run the whole suite before you push" yesterday.'
    assert protected_spans(text) == []


def test_mask_replaces_each_span_with_a_space():
    text = "Usa `select_for_update(skip_locked=True)` en src/app/sweeper.py para no traducir"
    assert mask_protected(text) == "Usa   en   para no traducir"
    assert mask_protected("no code at all") == "no code at all"
    assert mask_protected("") == ""


def test_spans_inside_code_are_not_claimed_twice():
    text = "Run `python src/app/main.py --fast` and open https://x.example/a_b"
    assert protected_spans(text) == ["`python src/app/main.py --fast`", "https://x.example/a_b"]


# --- detect_language -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "`./manage.py migrate`",
        "src/app/main.py",
        "https://github.com/acme/zero-memory/pull/418",
        "```pip install -r requirements/base.txt```",
        "DATABASE_URL",
        "settings.py, urls.py, asgi.py",
        "OK.",
    ],
)
def test_code_only_text_is_skipped(text):
    decision = detect_language(text)
    assert decision.status == "skipped"
    assert decision.needs_translation is False
    assert decision.is_english is False


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        (
            "`make test` を main に push する前に必ず実行すること。",
            "ja",
        ),
        ("只在周二和周四部署。", "zh"),
        (
            "Никогда не коммить файл .env, используй .env.example.",
            "ru",
        ),
        (
            "배포는 화요일과 목요일에만 합니다.",
            "ko",
        ),
    ],
)
def test_non_latin_script_is_foreign(text, lang):
    decision = detect_language(text)
    assert decision.status == "foreign"
    assert decision.needs_translation is True
    assert decision.is_english is False
    assert decision.lang == lang


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        (
            "Usa `select_for_update(skip_locked=True)` en el sweeper para no traducir dos veces.",
            "es",
        ),
        (
            "Der Sweeper nutzt `select_for_update`, damit zwei Worker nicht dieselbe Zeile "
            "übersetzen.",
            "de",
        ),
        ("Nie commituj pliku .env do repozytorium, używaj .env.example.", "pl"),
        (
            ".env dosyasını asla depoya gönderme, onun yerine .env.example kullan.",
            "tr",
        ),
    ],
)
def test_latin_script_foreign_sentences(text, lang):
    decision = detect_language(text)
    assert decision.status == "foreign"
    assert decision.needs_translation is True
    assert decision.lang == lang


@pytest.mark.parametrize(
    "text",
    [
        "Always run `make test` before pushing to main.",
        "Use `select_for_update(skip_locked=True)` in the sweeper so two workers never collide.",
        "Never commit the .env file; copy .env.example instead.",
        "Logs go to stdout as JSON lines.",
        "Prefer pathlib.Path over os.path.join in new code.",
    ],
)
def test_english_with_code_is_english(text):
    decision = detect_language(text)
    assert decision == LanguageDecision(
        lang="en",
        is_english=True,
        needs_translation=False,
        status="english",
        reason=decision.reason,
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        " \n\t ",
        "\x00",
        "a\x00b" * 50,
        "\ud800",
        "Hola \ud800 mundo, ¿cómo estás hoy? \udfff",
        "\U0001f600" * 40,
        "\ufffe\uffff\U0010ffff",
        "\x85\x7f control characters \x1b[31m red \x1b[0m and more text here",
        "`" * 5000,
        "Nie commituj pliku .env do repozytorium. " * 5000,  # about 200 KB
        "x" * 200_000,
    ],
)
def test_never_raises(text):
    decision = detect_language(text)
    assert isinstance(decision, LanguageDecision)
    assert decision.status in {"skipped", "english", "foreign"}
    assert decision.needs_translation == (decision.status == "foreign")
    protected_spans(text)
    mask_protected(text)


def test_not_a_string_is_skipped_not_raised():
    assert detect_language(None).status == "skipped"  # type: ignore[arg-type]
    assert detect_language(b"bytes").status == "skipped"  # type: ignore[arg-type]


def test_deterministic():
    texts = [text for _, text in _rows()[:80]]
    first = [detect_language(text) for text in texts]
    assert [detect_language(text) for text in reversed(texts)][::-1] == first
    assert [protected_spans(text) for text in texts] == [protected_spans(text) for text in texts]


# --- the data set --------------------------------------------------------------------------------


def test_data_set_shape():
    rows = _rows()
    languages = {lang for lang, _ in rows} - {"en", "und"}
    assert len(rows) >= 320
    assert len(languages) >= 12
    assert 0.4 <= sum(lang == "en" for lang, _ in rows) / len(rows) <= 0.6
    assert any(lang == "und" for lang, _ in rows)


def test_data_set_accuracy_and_no_english_code_sent_to_translation():
    rows = _rows()
    correct = 0
    english_code_translated = []
    for lang, text in rows:
        decision = detect_language(text)
        if lang in ("en", "und"):
            correct += not decision.needs_translation
            if lang == "en" and protected_spans(text) and decision.needs_translation:
                english_code_translated.append(text)
        else:
            correct += decision.needs_translation
    assert correct / len(rows) >= 0.97
    assert english_code_translated == []
