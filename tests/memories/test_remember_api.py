"""The write path through REST: remember, dedup, guard, validation, idempotency, batch."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memories.models import Memory, Provenance


def remember(client, content, kind="decision", **extra):
    return client.post(
        "/api/v1/memories", {"content": content, "kind": kind, **extra}, format="json"
    )


@pytest.fixture
def owner(tenancy, api):
    return api(tenancy.owner)


def test_remember_creates_a_memory_with_provenance(tenancy, owner):
    response = remember(
        owner,
        "We deploy with blue-green releases behind the load balancer.",
        scope=tenancy.team.public_id,
        conversation_id="conv-1",
        source_path="docs/deploy.md",
        verbatim="blue-green, always",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["id"].startswith("mem_")
    assert body["deduplicated"] is False and body["similar_existing"] == []
    assert (body["kind"], body["scope"], body["translation_status"]) == (
        "decision",
        tenancy.team.public_id,
        "skipped",
    )
    memory = Memory.objects.get(public_id=body["id"])
    assert memory.embedding is not None and len(memory.embedding) == 384
    assert memory.author_kind == "agent" and memory.content_lang == "en"
    [row] = memory.provenance.all()
    assert (row.conversation_id, row.source_path, row.verbatim) == (
        "conv-1",
        "docs/deploy.md",
        "blue-green, always",
    )
    detail = owner.get(f"/api/v1/memories/{body['id']}").json()
    assert detail["provenance"][0]["verbatim"] == "blue-green, always"


def test_without_scope_it_goes_to_the_personal_scope(tenancy, owner):
    body = remember(owner, "I prefer tabs over spaces in Makefiles.", kind="preference").json()
    personal = tenancy.owner.owned_scopes.get(kind="personal")
    assert body["scope"] == personal.public_id


def test_identical_text_is_absorbed_with_a_new_provenance_row(tenancy, owner, api):
    first = remember(owner, "Run `make test` before every push.", scope=tenancy.team.public_id)
    again = remember(
        api(tenancy.writer),
        "  run `make TEST`   before every push. ",
        scope=tenancy.team.public_id,
        conversation_id="conv-2",
    )
    assert again.status_code == 200
    assert again.json()["deduplicated"] is True
    assert again.json()["id"] == first.json()["id"]
    assert Memory.objects.filter(scope=tenancy.team).count() == 1
    rows = Provenance.objects.filter(memory__public_id=first.json()["id"]).order_by("id")
    assert [r.absorbed for r in rows] == [False, True]
    assert rows[1].conversation_id == "conv-2"
    assert rows[1].created_by == tenancy.writer


def test_near_duplicate_is_reported_and_stored_unless_absorbing(tenancy, owner):
    scope = tenancy.team.public_id
    first = remember(owner, "The staging database is reset every night at 2am UTC.", scope=scope)
    near = remember(owner, "The staging database gets reset every night at 2am UTC.", scope=scope)
    assert near.status_code == 201
    [similar] = near.json()["similar_existing"]
    assert similar["id"] == first.json()["id"]
    assert similar["similarity"] >= 0.92 and similar["age_days"] >= 0
    absorbed = remember(
        owner,
        "The staging database is being reset every night at 2am UTC.",
        scope=scope,
        absorb_similar=True,
    )
    assert absorbed.status_code == 200 and absorbed.json()["deduplicated"] is True
    assert Memory.objects.filter(scope=tenancy.team).count() == 2


def test_different_scopes_do_not_dedup(tenancy, owner):
    text = "Our error budget is 0.1% per quarter."
    a = remember(owner, text, scope=tenancy.team.public_id).json()
    b = remember(owner, text).json()
    assert a["id"] != b["id"] and not b["deduplicated"]


def test_forgotten_memories_do_not_absorb(tenancy, owner):
    text = "Feature flags live in config/flags.yaml."
    first = remember(owner, text, kind="fact").json()
    owner.post(f"/api/v1/memories/{first['id']}/forget", {"reason": "moved"}, format="json")
    second = remember(owner, text, kind="fact").json()
    assert second["id"] != first["id"] and second["deduplicated"] is False


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("content", "deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1", "private key"),
        ("content", "the CI user is AKIAIOSFODNN7EXAMPLE in us-east-1", "AWS access key"),
        ("content", "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 for the bot", "GitHub token"),
        ("content", "db is postgres://app:s3cretpass@db.internal:5432/app", "password in a URL"),
        (
            "content",
            "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "JSON Web Token",
        ),
        ("content", "set ANTHROPIC key sk-ant-api03-abcdefghijklmnopqrstuvwx", "Anthropic"),
        ("content", "password = hunter2hunter22", "password or secret"),
        ("verbatim", "my key is AKIAIOSFODNN7EXAMPLE", "AWS access key"),
        ("source_path", "https://bob:pa55word@git.example.com/repo", "password in a URL"),
        ("conversation_id", "xoxb-123456789012-abcdefghij", "Slack"),
    ],
)
def test_secrets_are_refused_and_nothing_is_stored(tenancy, owner, field, value, what):
    body = {"content": "A harmless note about deploys.", "kind": "fact", field: value}
    response = owner.post("/api/v1/memories", body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert field in error["details"]
    assert what.lower() in error["message"].lower()
    assert Memory.objects.count() == 0 and Provenance.objects.count() == 0


@pytest.mark.parametrize(
    "text",
    [
        "Passwords are hashed with argon2; never log the password field.",
        "Set DATABASE_URL=postgres://user@localhost/db for local work.",
        "The API key lives in 1Password under 'Anthropic'; export ANTHROPIC_API_KEY=<your key>.",
        "JWT expiry is 15 minutes; refresh tokens last 30 days.",
    ],
)
def test_talk_about_secrets_is_not_a_secret(owner, text):
    assert remember(owner, text, kind="convention").status_code == 201


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": "", "kind": "fact"}, "content"),
        ({"content": "   \n\t ", "kind": "fact"}, "content"),
        ({"content": "x\x00y", "kind": "fact"}, "content"),
        ({"content": 42, "kind": "fact"}, "content"),
        ({"kind": "fact"}, "content"),
        ({"content": "ok", "kind": "rumour"}, "kind"),
        ({"content": "ok"}, "kind"),
        ({"content": "ok", "kind": "fact", "absorb_similar": "yes"}, "absorb_similar"),
        ({"content": "ok", "kind": "fact", "author_kind": "robot"}, "author_kind"),
        ({"content": "ok", "kind": "fact", "mood": "happy"}, "mood"),
    ],
)
def test_bad_input_names_the_field(owner, body, field):
    response = owner.post("/api/v1/memories", body, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["error"]["details"]
    assert Memory.objects.count() == 0


def test_each_body_is_validated_on_its_own(tenancy, owner):
    """One serializer instance per thread validates body after body: nothing of one (its
    fields, its errors) reaches the next."""
    full = remember(
        owner,
        "Releases are tagged from main.",
        scope=tenancy.team.public_id,
        conversation_id="conv-9",
        source_path="RELEASING.md",
        entities=["main"],
    )
    assert full.status_code == 201, full.json()
    refused = owner.post("/api/v1/memories", {"content": 42}, format="json")
    assert set(refused.json()["error"]["details"]) == {"content", "kind"}
    bare = remember(owner, "Hotfixes are tagged from the release branch.", kind="fact")
    assert bare.status_code == 201, bare.json()
    assert owner.post("/api/v1/memories", None, format="json").status_code == 400
    memory = Memory.objects.get(public_id=bare.json()["id"])
    [row] = memory.provenance.all()
    assert (row.conversation_id, row.source_path) == ("", "")
    assert memory.scope == tenancy.owner.owned_scopes.get(kind="personal")
    assert not memory.mentions.filter(entity__name="main").exists()


@override_settings(MAX_MEMORY_CHARS=200)
def test_content_over_the_limit(owner):
    response = remember(owner, "word " * 100, kind="fact")
    assert response.status_code == 400
    assert "200" in response.json()["error"]["details"]["content"][0]


def test_foreign_or_unknown_scope_is_404(tenancy, api):
    client = api(tenancy.outsider)
    foreign = remember(client, "note", scope=tenancy.team.public_id)
    unknown = remember(client, "note", scope="scp_nope")
    assert foreign.status_code == unknown.status_code == 404
    assert Memory.objects.count() == 0


def test_reader_and_read_only_token_cannot_remember(tenancy, api):
    reader = remember(api(tenancy.reader), "note", scope=tenancy.team.public_id)
    assert reader.status_code == 403
    read_only = remember(api(tenancy.owner, read_only=True), "note", scope=tenancy.team.public_id)
    assert read_only.status_code == 403
    assert remember(api(tenancy.owner, read_only=True), "note").status_code == 403
    assert Memory.objects.count() == 0


def test_idempotency_key_replays_the_first_answer(owner):
    first = remember(owner, "Cache TTL is 300 seconds.", kind="fact", idempotency_key="k-1")
    retry = remember(owner, "Cache TTL is 300 seconds.", kind="fact", idempotency_key="k-1")
    assert first.status_code == 201
    assert retry.json() == first.json()
    assert Memory.objects.count() == 1 and Provenance.objects.count() == 1
    other = remember(owner, "Cache TTL is 300 seconds.", kind="fact", idempotency_key="k-2")
    assert other.json()["deduplicated"] is True


def test_batch_answers_each_item_on_its_own(tenancy, owner):
    items = [
        {"content": "Use ruff for linting.", "kind": "convention"},
        {"content": "", "kind": "fact"},
        {"content": "Secrets: AKIAIOSFODNN7EXAMPLE", "kind": "fact"},
        {"content": "Note for a foreign scope.", "kind": "fact", "scope": "scp_nope"},
        {"content": "Use ruff for linting.", "kind": "convention"},
        {"content": "Prefer pathlib over os.path.", "kind": "convention", "extra": 1},
        {"content": "Logs go to stderr.", "kind": "convention", "scope": tenancy.team.public_id},
    ]
    response = owner.post("/api/v1/memories/batch", {"items": items}, format="json")
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 400, 400, 404, 200, 400, 201]
    assert results[4]["memory"]["id"] == results[0]["memory"]["id"]
    assert "content" in results[1]["error"]["details"]
    assert "extra" in results[5]["error"]["details"]
    assert Memory.objects.count() == 2


def test_batch_limits(owner):
    items = [{"content": f"note {i}", "kind": "fact"} for i in range(101)]
    too_many = owner.post("/api/v1/memories/batch", {"items": items}, format="json")
    assert too_many.status_code == 400 and "items" in too_many.json()["error"]["details"]
    empty = owner.post("/api/v1/memories/batch", {"items": []}, format="json")
    assert empty.status_code == 400
    malformed = owner.generic(
        "POST", "/api/v1/memories/batch", b'{"items": [', content_type="application/json"
    )
    assert malformed.status_code == 400 and "body" in malformed.json()["error"]["details"]


def test_the_stored_vectors_are_the_models_for_the_text(tenancy, owner):
    """The model runs ahead in another thread while the request goes on: what is stored is
    still the model's answer for the stored text, a long text's windows included."""
    from memories.embeddings import embed_contents
    from memories.models import MemoryWindow

    short = "Deploys run database migrations before the new release takes traffic."
    long = " ".join(f"Step {n} of the release checklist verifies service {n}." for n in range(60))
    response = owner.post(
        "/api/v1/memories/batch",
        {"items": [{"content": text, "kind": "fact"} for text in (short, long, short)]},
        format="json",
    )
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 201, 200]
    expected = embed_contents([short, long])
    for result, embedded in zip(results, expected, strict=False):
        memory = Memory.objects.get(public_id=result["memory"]["id"])
        assert list(memory.embedding) == pytest.approx(embedded.vector, abs=1e-6)
        windows = MemoryWindow.objects.filter(memory=memory).order_by("position")
        assert [w.end_char for w in windows] == [w.end_char for w, _ in embedded.windows]
        for row, (_, vector) in zip(windows, embedded.windows, strict=True):
            assert list(row.embedding) == pytest.approx(vector, abs=1e-6)
    assert len(expected[1].windows) > 1


def test_a_batch_stores_each_vector_bit_for_bit(tenancy, owner):
    """A batch's rows go in as one statement with each vector written as text: PostgreSQL
    reads back exactly the float32 numbers the model gave, for the memories and their
    windows, and the rows are whole (ids, validity, the search copy)."""
    import numpy as np

    from memories.embeddings import embed_contents
    from memories.models import MemorySearch, MemoryWindow

    texts = [f"Service {n} retries webhooks {n + 2} times (hooks/{n}.yaml)." for n in range(9)]
    texts.append(" ".join(f"Runbook step {n} restarts worker {n} on deploy." for n in range(60)))
    response = owner.post(
        "/api/v1/memories/batch",
        {"items": [{"content": text, "kind": "fact"} for text in texts]},
        format="json",
    )
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201] * len(texts)
    expected = embed_contents(texts)

    def exact(stored, vector) -> bool:
        return np.array_equal(
            np.asarray(stored, dtype=np.float32), np.asarray(vector, dtype=np.float32)
        )

    for result, embedded in zip(results, expected, strict=True):
        memory = Memory.objects.get(public_id=result["memory"]["id"])
        assert memory.valid and exact(memory.embedding, embedded.vector)
        search = MemorySearch.objects.get(memory=memory)
        assert exact(search.embedding, embedded.vector)
        windows = MemoryWindow.objects.filter(memory=memory).order_by("position")
        assert len(windows) == len(embedded.windows)
        for row, (_, vector) in zip(windows, embedded.windows, strict=True):
            assert exact(row.embedding, vector)
    assert len(expected[-1].windows) > 1


def test_a_batch_of_two_passes_finds_near_duplicates_stored_before_it_only(tenancy, owner):
    """A batch is looked up and inserted pass by pass of the model (64 texts a pass, shortest
    first), while the model works on the next: a text of the second pass finds the near
    duplicates stored before the batch, never a row its first pass inserted, so the answers
    are those of one lookup before any insert."""
    scope = tenancy.team.public_id
    stored = remember(
        owner, "The production cache is flushed every Sunday at 3am UTC.", scope=scope
    )
    fillers = [f"Ticket {n} was closed." for n in range(63)]
    first = "The staging database is reset every night at 2am UTC."  # the first pass's last
    near_first = "The staging database is being reset every night at 2am UTC."
    near_stored = "The production cache is being flushed every Sunday at 3am UTC."
    from memories.embeddings import embed_texts

    one, other = embed_texts([first, near_first])
    assert sum(a * b for a, b in zip(one, other, strict=True)) >= 0.92  # near duplicates
    items = [{"content": text, "kind": "fact", "scope": scope} for text in fillers]
    items += [
        {"content": near_stored, "kind": "fact", "scope": scope},
        {"content": near_first, "kind": "fact", "scope": scope, "absorb_similar": True},
        {"content": first, "kind": "fact", "scope": scope},
    ]
    response = owner.post("/api/v1/memories/batch", {"items": items}, format="json")
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201] * len(items)
    by_text = {
        item["content"]: result["memory"] for item, result in zip(items, results, strict=True)
    }
    assert [s["id"] for s in by_text[near_stored]["similar_existing"]] == [stored.json()["id"]]
    assert by_text[near_first]["similar_existing"] == []
    assert not by_text[near_first]["deduplicated"]
    assert Memory.objects.filter(scope=tenancy.team, valid=True).count() == 1 + len(items)
    # Made in the requests' order: their times sort as the items came.
    made = Memory.objects.filter(public_id__in=[r["memory"]["id"] for r in results])
    in_order = [m.public_id for m in made.order_by("created_at")]
    assert in_order == [r["memory"]["id"] for r in results]


def test_a_refused_caller_gets_the_same_answer_and_writes_nothing(tenancy, api, client):
    """Authentication, write access and the scope are settled before the model starts: a bad
    token, a reader and a foreign scope are answered as always, and nothing is stored."""
    text = "Blue-green deploys keep the previous release warm for an hour."
    bad = client.post(
        "/api/v1/memories",
        {"content": text, "kind": "fact"},
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer zm_00000000_not-a-real-token",
    )
    assert bad.status_code == 401
    reader = remember(api(tenancy.reader), text, scope=tenancy.team.public_id)
    assert reader.status_code == 403
    foreign = remember(api(tenancy.outsider), text, scope=tenancy.team.public_id)
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "not_found"
    assert Memory.objects.count() == 0 and Provenance.objects.count() == 0


def test_a_texts_sql_characters_are_stored_as_written(tenancy, owner):
    """A single write's values are written as SQL while the model runs (`sql.Insert.bound`):
    quotes, backslashes, percent signs and placeholders in them stay text."""
    content = "It's 100% done: O'Brien said \\ 'ok' %s %(name)s $1 '); DROP TABLE x; --"
    response = remember(owner, content, scope=tenancy.team.public_id, conversation_id="c%s'1")
    assert response.status_code == 201, response.json()
    memory = Memory.objects.get(public_id=response.json()["id"])
    assert memory.content == content
    assert memory.provenance.get().conversation_id == "c%s'1"
    assert owner.get(f"/api/v1/memories/{memory.public_id}").json()["content"] == content
