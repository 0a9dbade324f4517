"""The catalogues: complete, not fuzzy, placeholders intact, and the committed .mo files are what
the .po files compile to. Every dashboard page renders in all five languages with no label left
in English."""

from __future__ import annotations

import gettext
import re
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.test import Client

from memories.entities.links import link_create
from memories.entities.services import entity_alias_add, entity_merge, entity_split
from memories.models import Conflict, ConflictStatus, Entity
from memories.portability.prepared import export_job_start
from memories.services.remember import RememberInput, memory_remember
from scopes.models import Scope
from scopes.services import token_create
from tests.dashboard.conftest import canonicalized
from zeromemory.core.actor import Actor

LOCALE = Path(settings.BASE_DIR) / "locale"
TRANSLATED = [code for code, _ in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|\{\w*\}")


def catalogue(lang: str) -> polib.POFile:
    path = LOCALE / lang / "LC_MESSAGES" / "django.po"
    assert path.exists(), f"{path} is missing"
    return polib.pofile(str(path))


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_entry_is_translated_and_none_is_fuzzy(lang):
    po = catalogue(lang)
    assert not po.metadata_is_fuzzy, f"{lang}: the header is marked fuzzy"
    assert po.metadata.get("Language") == lang
    entries = [e for e in po if not e.obsolete]
    assert len(entries) > 100
    fuzzy = [e.msgid for e in entries if "fuzzy" in e.flags]
    assert not fuzzy, f"{lang}: fuzzy entries {fuzzy}"
    untranslated = [e.msgid for e in entries if not e.translated()]
    assert not untranslated, f"{lang}: untranslated entries {untranslated}"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_translations_keep_their_placeholders(lang):
    for entry in catalogue(lang):
        wanted = sorted(PLACEHOLDER.findall(entry.msgid))
        forms = entry.msgstr_plural.values() if entry.msgid_plural else [entry.msgstr]
        for form in forms:
            assert sorted(PLACEHOLDER.findall(form)) == wanted, (lang, entry.msgid, form)


def expected_catalogue(po: polib.POFile) -> dict:
    """What GNU msgfmt puts in the .mo for this .po, keyed as gettext.GNUTranslations keys it."""
    expected = {}
    for entry in po:
        if entry.obsolete or "fuzzy" in entry.flags or not entry.translated():
            continue
        msgid = f"{entry.msgctxt}\x04{entry.msgid}" if entry.msgctxt else entry.msgid
        if entry.msgid_plural:
            for index, form in entry.msgstr_plural.items():
                expected[(msgid, int(index))] = form
        else:
            expected[msgid] = entry.msgstr
    return expected


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_compiled_mo_matches_the_po(lang):
    mo_path = LOCALE / lang / "LC_MESSAGES" / "django.mo"
    assert mo_path.exists(), f"{mo_path} is missing: run manage.py compilemessages"
    with mo_path.open("rb") as fh:
        compiled = gettext.GNUTranslations(fh)._catalog
    compiled = {key: value for key, value in compiled.items() if key != ""}  # the header
    expected = expected_catalogue(catalogue(lang))
    stale = sorted(str(k) for k in set(expected) ^ set(compiled))
    assert not stale, f"{lang}: .mo and .po disagree on {stale[:10]}; run compilemessages"
    differing = [k for k in expected if expected[k] != compiled[k]]
    assert not differing, f"{lang}: .mo differs from .po on {differing[:10]}"


# Every dashboard page: the check below reads each rendered page in each language.


class _Text(HTMLParser):
    """The text nodes of a page and the attribute values people read."""

    ATTRIBUTES = {"placeholder", "title", "aria-label", "hx-confirm", "data-confirm", "alt"}

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "code", "blockquote"):
            self._skip += 1
        for name, value in attrs:
            if name in self.ATTRIBUTES and value:
                self.texts.append(" ".join(value.split()))

    def handle_endtag(self, tag):
        if tag in ("script", "style", "code", "blockquote") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not self._skip:
            self.texts.append(text)


def english_labels(lang: str) -> set[str]:
    """The dashboard's own labels whose translation differs from the English."""
    labels = set()
    for entry in catalogue(lang):
        sources = {path for path, _ in entry.occurrences}
        ours = any(path.startswith(("templates/", "dashboard/")) for path in sources)
        if ours and not entry.msgid_plural and entry.msgstr and entry.msgstr != entry.msgid:
            labels.add(" ".join(entry.msgid.split()))
    return labels


@pytest.fixture
def every_page(tenancy, memories):
    """(client, url) for every page of the dashboard, signed in as the team's admin or not."""
    Scope.objects.filter(pk=tenancy.team.pk).update(name="Platform core")
    health = canonicalized(
        tenancy.owner,
        tenancy.team,
        english="Every service exposes a health endpoint.",
        original="Chaque service expose un point de santé.",
        lang="fr",
    )
    token_create(actor=Actor(user=tenancy.owner), name="ci")
    first, second = sorted((memories.team, health), key=lambda memory: memory.pk)
    Conflict.objects.create(
        scope=tenancy.team,
        memory_a=first,
        memory_b=second,
        status=ConflictStatus.OPEN,
        verdict="contradiction",
        confidence=0.8,
    )
    # A typed link, so the memory pages show their links both ways.
    link_create(
        actor=Actor(user=tenancy.owner), source=memories.team, target=health, link_type="caused_by"
    )
    from memories.recall.recall import recall

    recall(actor=Actor(user=tenancy.owner, surface="dashboard"), query="health endpoint")
    team = tenancy.team.public_id
    # Two entities named together, one merged into another and then split off, so the entity
    # page draws a neighbour and the scope's merges and splits list both.
    write = memory_remember(
        actor=Actor(user=tenancy.owner),
        request=RememberInput(
            content="Dana runs the billing service.",
            kind="fact",
            scope=team,
            entities=["billing service", "Dana", "Stripe"],
        ),
    ).memory
    billing = Entity.objects.get(mentions__memory=write, name="billing service")
    stripe = Entity.objects.get(mentions__memory=write, name="Stripe")
    entity_merge(actor=Actor(user=tenancy.owner), merged=stripe, survivor=billing)
    entity_alias_add(actor=Actor(user=tenancy.owner), entity=billing, alias="billing API")
    entity_split(
        actor=Actor(user=tenancy.owner), entity=billing, aliases=["billing API"], name="billing API"
    )
    export = export_job_start(actor=Actor(user=tenancy.owner), scope=tenancy.team)
    return [
        (True, "/"),
        (True, "/?q=health+endpoint"),
        (True, "/?q=zzzz+qqqq+xxxx"),
        (True, "/?q=zzzz+qqqq+xxxx&nearest=1"),
        (True, "/remember/"),
        (True, f"/memories/{memories.translated.public_id}/"),
        (True, f"/memories/{memories.team.public_id}/"),
        (True, f"/memories/{health.public_id}/"),
        (True, "/scopes/"),
        (True, f"/scopes/{team}/"),
        (True, "/activity/"),
        (True, "/insights/"),
        (True, f"/insights/{team}/"),
        (True, "/ingest/"),
        (True, "/review/"),
        (True, "/tokens/"),
        (True, "/password/"),
        (True, "/password/confirm/?next=/rules/"),
        (True, "/rules/?status=held"),
        (True, "/account/"),
        (True, f"/scopes/{team}/exports/{export.public_id}/"),
        (True, "/memories/mem_missing/"),
        (True, "/entities/"),
        (True, "/entities/?q=zzzz"),
        (True, f"/entities/{billing.public_id}/"),
        (True, f"/scopes/{team}/entities/changes/"),
        (True, f"/scopes/{team}/import-from/"),
        (False, "/login/"),
        (False, "/signup/"),
    ]


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_page_renders_with_no_label_left_in_english(tenancy, every_page, lang):
    labels = english_labels(lang)
    signed_in = Client(headers={"Accept-Language": lang})
    signed_in.force_login(tenancy.owner)
    anonymous = Client(headers={"Accept-Language": lang})
    for authenticated, url in every_page:
        response = (signed_in if authenticated else anonymous).get(url)
        assert response.status_code in (200, 404), url
        body = response.content.decode()
        assert f'<html lang="{lang}">' in body, url
        parser = _Text()
        parser.feed(body)
        left = sorted(text for text in parser.texts if text in labels)
        assert not left, f"{lang} {url}: untranslated labels {left}"


def test_the_english_pages_use_the_source_strings(tenancy, every_page):
    client = Client(headers={"Accept-Language": "en"})
    client.force_login(tenancy.owner)
    body = client.get("/").content.decode()
    assert '<html lang="en">' in body and "<h1>Memories</h1>" in body
    # The check above sees labels: an English page is full of them.
    parser = _Text()
    parser.feed(body)
    assert len(set(parser.texts) & english_labels("de")) > 15


def test_memory_content_is_never_translated(tenancy, memories):
    for lang in TRANSLATED:
        client = Client(headers={"Accept-Language": lang})
        client.force_login(tenancy.owner)
        body = client.get(f"/memories/{memories.translated.public_id}/").content.decode()
        assert "Database migrations run before the deploy, never after it." in body
        assert "Datenbankmigrationen laufen vor dem Deployment, niemals danach." in body
