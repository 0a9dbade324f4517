"""A person uses the dashboard in a real browser: every flow of the issue, one screenshot each."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from memories.models import ActivityLog, Memory, MemoryVersion, TranslationStatus
from memories.services.remember import RememberInput, memory_remember
from scopes.models import ApiToken, Membership, Role
from tests.factories import UserFactory, add_member, make_scope
from zeromemory.core.actor import Actor

pytestmark = pytest.mark.django_db(transaction=True)


def remember(user, content: str, *, scope=None, kind: str = "fact") -> Memory:
    return memory_remember(
        actor=Actor(user=user, surface="dashboard"),
        request=RememberInput(content=content, kind=kind, scope=scope.public_id if scope else None),
    ).memory


def test_sign_in_remember_and_find_it_by_search(session):
    UserFactory(username="ada")
    page = session.page()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Memories")).to_be_visible()

    page.get_by_role("link", name="Remember", exact=True).click()
    page.get_by_label("Content").fill("The staging database is reset every Sunday at 03:00 UTC.")
    page.get_by_label("Kind").select_option("gotcha")
    page.get_by_role("button", name="Remember").click()
    expect(page.get_by_text("Remembered.", exact=True)).to_be_visible()
    expect(page.locator(".memory-main .content")).to_have_text(
        "The staging database is reset every Sunday at 03:00 UTC."
    )

    page.get_by_role("link", name="Memories", exact=True).click()
    query = "when is staging reset"
    page.get_by_label("Search").fill(query)
    page.get_by_label("Search").press("Enter")
    card = page.locator(".memory-card").first
    expect(card).to_contain_text("reset every Sunday")
    expect(card.locator(".score")).to_be_visible()
    expect(card.locator(".badge.kind")).to_have_text("Gotcha")
    expect(page).to_have_url(re.compile(r"q=when"))
    session.screenshot(page, "search")
    row = ActivityLog.objects.get(operation="recall")
    assert (row.query, row.surface) == (query, "dashboard")


def test_a_search_that_finds_nothing_relevant_offers_the_nearest_anyway(session):
    owner = UserFactory(username="noor")
    remember(owner, "The staging database is reset every Sunday at 03:00 UTC.")
    page = session.page(owner)
    page.goto("/")
    page.get_by_label("Search").fill("zqxv kwyjibo flurble")
    page.get_by_label("Search").press("Enter")
    expect(page.get_by_text("Nothing relevant to your search was found.")).to_be_visible()
    expect(page.locator(".memory-card")).to_have_count(0)

    page.get_by_role("link", name="Show the nearest memories anyway").click()
    expect(page.locator(".memory-card").first).to_contain_text("reset every Sunday")
    expect(page).to_have_url(re.compile(r"nearest=(on|true|1)"))
    expect(page.get_by_text("Nothing relevant to your search was found.")).to_have_count(0)
    session.screenshot(page, "search-nearest")


def test_original_disclosure_on_a_canonicalized_memory(session):
    owner = UserFactory(username="grete")
    memory = remember(owner, "Feature flags are removed within two sprints of launch.")
    Memory.objects.filter(pk=memory.pk).update(
        content_original="Feature-Flags werden spätestens zwei Sprints nach dem Start entfernt.",
        content_lang="de",
        translation_status=TranslationStatus.DONE,
    )
    for scheme in ("light", "dark"):
        page = session.page(owner, color_scheme=scheme)
        page.goto(f"/memories/{memory.public_id}/")
        main = page.locator(".memory-main")
        expect(main.locator(".content")).to_have_text(
            "Feature flags are removed within two sprints of launch."
        )
        original = main.locator("details.original blockquote")
        expect(original).to_be_hidden()
        main.locator("details.original summary").click()
        expect(original).to_be_visible()
        expect(original).to_have_text(
            "Feature-Flags werden spätestens zwei Sprints nach dem Start entfernt."
        )
        expect(original).to_have_attribute("lang", "de")
        expect(main.locator("details.original summary")).to_contain_text("German")
        session.screenshot(page, f"original-{scheme}")


def test_edit_shows_the_version_then_forget_and_restore(session):
    owner = UserFactory(username="lin")
    memory = remember(owner, "Code review needs one approval.", kind="convention")
    page = session.page(owner)
    page.goto(f"/memories/{memory.public_id}/")

    page.locator("summary", has_text="Edit").click()
    page.get_by_label("Content").fill("Code review needs two approvals.")
    page.get_by_role("button", name="Save").click()
    expect(
        page.get_by_text("Saved. The earlier text is kept as a version.", exact=True)
    ).to_be_visible()
    expect(page.locator(".memory-main .content")).to_have_text("Code review needs two approvals.")
    expect(page.locator("#versions")).to_contain_text("Code review needs one approval.")
    assert MemoryVersion.objects.filter(memory=memory).count() == 1

    page.locator("summary", has_text="Forget").click()
    page.get_by_label("Reason").fill("We dropped the rule.")
    page.get_by_role("button", name="Forget").click()
    expect(page.locator(".memory-main .badge.danger")).to_have_text("Forgotten")
    expect(page.locator(".memory-main")).to_contain_text("We dropped the rule.")
    session.screenshot(page, "forgotten")

    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_text("Restored.", exact=True)).to_be_visible()
    expect(page.locator(".memory-main .badge.danger")).to_have_count(0)
    assert Memory.objects.get(pk=memory.pk).valid
    session.screenshot(page, "restored")


def test_an_admin_manages_a_member(session):
    owner = UserFactory(username="olga")
    UserFactory(username="pavel")
    team = make_scope(owner=owner, slug="platform")
    page = session.page(owner)
    page.goto(f"/scopes/{team.public_id}/")

    add = page.locator("#members form.inline-fields")
    add.get_by_label("Username").fill("pavel")
    add.get_by_label("Role").select_option(str(Role.WRITER.value))
    add.get_by_role("button", name="Add").click()
    expect(page.get_by_text("pavel was added.", exact=True)).to_be_visible()
    row = page.locator("#member-pavel")
    expect(row.get_by_role("combobox")).to_have_value(str(Role.WRITER.value))

    row.get_by_role("combobox").select_option(str(Role.READER.value))
    expect(page.get_by_text("The role of pavel was changed.", exact=True)).to_be_visible()
    assert Membership.objects.get(scope=team, user__username="pavel").role == Role.READER
    session.screenshot(page, "members")

    page.locator("#member-pavel").get_by_role("button", name="Remove").click()
    expect(page.get_by_text("pavel was removed.", exact=True)).to_be_visible()
    expect(page.locator("#member-pavel")).to_have_count(0)


def test_leaving_a_scope_asks_first(session):
    owner = UserFactory(username="quinn")
    member = UserFactory(username="rosa")
    team = make_scope(owner=owner, slug="platform")
    add_member(team, member, Role.WRITER)
    page = session.page(member, accept=False)
    page.goto(f"/scopes/{team.public_id}/")
    asked = []

    def answer(dialog, *, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, accept=False))
    page.get_by_role("button", name="Leave scope").click()
    assert asked == ["Leave this scope? You will no longer see its memories."]
    expect(page).to_have_url(re.compile(rf"/scopes/{team.public_id}/$"))
    assert Membership.objects.filter(scope=team, user=member).exists()

    page.once("dialog", lambda dialog: answer(dialog, accept=True))
    page.get_by_role("button", name="Leave scope").click()
    expect(page.get_by_text("You left the scope.", exact=True)).to_be_visible()
    assert len(asked) == 2
    assert not Membership.objects.filter(scope=team, user=member).exists()


def test_create_and_revoke_a_token(session):
    owner = UserFactory(username="tariq")
    page = session.page(owner)
    page.goto("/tokens/")
    page.get_by_label("Name").fill("laptop agent")
    page.get_by_label("Read-only").check()
    page.get_by_role("button", name="Create token").click()
    secret = page.locator("#token-secret")
    expect(secret).to_have_text(re.compile(r"^zm_[0-9a-f]{8}_\S+$"))
    token = ApiToken.objects.get(user=owner)
    assert token.read_only and secret.inner_text().startswith(token.prefix)
    row = page.locator(f"#token-{token.public_id}")
    expect(row).to_contain_text("Active")
    session.screenshot(page, "created")

    row.get_by_role("button", name="Revoke").click()
    expect(page.locator(f"#token-{token.public_id}")).to_contain_text("Revoked")
    expect(page.locator("#token-secret")).to_have_count(0)
    token.refresh_from_db()
    assert token.revoked_at is not None
    session.screenshot(page, "revoked")


@pytest.mark.parametrize(
    ("lang", "labels"),
    [
        ("de", {"nav": "Erinnerungen", "remember": "Etwas merken", "tokens": "API-Tokens"}),
        ("ja", {"nav": "メモリー", "remember": "何かを記憶する", "tokens": "APIトークン"}),
    ],
)
def test_pages_follow_the_browsers_language(session, lang, labels):
    owner = UserFactory(username=f"user-{lang}")
    remember(owner, "Use UTC in every log line.", kind="convention")
    page = session.page(owner, lang=lang)
    page.goto("/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.get_by_role("heading", level=1)).to_have_text(labels["nav"])
    card = page.locator(".memory-card").first
    expect(card).to_contain_text("Use UTC in every log line.")  # content is never translated
    session.screenshot(page, "memories")
    page.goto("/remember/")
    expect(page.get_by_role("heading", level=1)).to_have_text(labels["remember"])
    page.goto("/tokens/")
    expect(page.get_by_role("heading", level=1)).to_have_text(labels["tokens"])
    session.screenshot(page, "tokens")


def test_the_language_switcher_overrides_the_browser(session):
    owner = UserFactory(username="amelie")
    page = session.page(owner, lang="de")
    page.goto("/scopes/")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    page.locator("#language-select").select_option("fr")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page).to_have_url(re.compile(r"/scopes/$"))
    page.goto("/activity/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Activité")
    session.screenshot(page, "french")


def test_an_outsider_opening_someone_elses_memory_gets_404(session):
    owner = UserFactory(username="owner")
    outsider = UserFactory(username="outsider")
    team = make_scope(owner=owner, slug="core")
    add_member(team, UserFactory(username="member"), Role.READER)
    memory = remember(owner, "The on-call rota lives in the wiki.", scope=team)
    page = session.page(outsider)
    response = page.goto(f"/memories/{memory.public_id}/")
    assert response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
    expect(page.locator("body")).not_to_contain_text("on-call rota")
    session.screenshot(page, "404")
