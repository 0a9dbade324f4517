"""A request's model pass started before its checks, for a bearer that passed them lately
(`memories.api.early_pass`): a single remember's, a recall's and a build_context's, used when its
text is the one the service embeds, never for an outsider, forgotten for a bearer once refused,
and no answer changes."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memories import embeddings
from memories.api import early_pass
from memories.models import Memory
from memories.recall import query_vector
from scopes.models import ApiToken
from scopes.services import hash_token_secret, token_revoke
from tests.factories import make_scope, make_token
from zeromemory.core.actor import Actor

TEXT = "The staging database is reset every Sunday night at 02:00 UTC."


@pytest.fixture(autouse=True)
def _no_bearer_seen():
    early_pass._seen.clear()
    yield
    early_pass._seen.clear()


@pytest.fixture
def aheads(monkeypatch):
    """Every pass started from here on, as (who started it: "early" before the checks or
    "service" after them, the pass)."""
    made: list[tuple[str, embeddings.EmbeddedAhead]] = []

    def counted(where: str):
        class Counted(embeddings.EmbeddedAhead):
            def __init__(self, texts):
                super().__init__(texts)
                made.append((where, self))

        return Counted

    monkeypatch.setattr("memories.api.early_pass.EmbeddedAhead", counted("early"))
    monkeypatch.setattr("memories.services.remember.EmbeddedAhead", counted("service"))
    return made


def client_of(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def remember(client, content, **extra):
    return client.post(
        "/api/v1/memories", {"content": content, "kind": "fact", **extra}, format="json"
    )


def test_a_bearer_that_passed_lately_has_one_pass_started_before_its_checks(tenancy, aheads):
    writer = client_of(make_token(tenancy.writer))
    scope = tenancy.team.public_id
    assert remember(writer, "The first write of this bearer.", scope=scope).status_code == 201
    assert [where for where, _ in aheads] == ["service"]  # unknown until then

    response = remember(writer, f"  {TEXT}\n", scope=scope)

    assert response.status_code == 201, response.json()
    [(where, started)] = aheads[1:]  # the early one, used by the service: no second pass
    assert where == "early" and started.embeds([TEXT])
    memory = Memory.objects.get(public_id=response.json()["id"])
    assert memory.content == TEXT
    assert list(memory.embedding) == pytest.approx(embeddings.embed_texts([TEXT])[0], abs=1e-6)


def test_a_pass_started_for_another_text_is_not_used(tenancy, aheads):
    """The service embeds what it stores: a replay, or a text the checks change, gets its own
    pass (here an idempotent retry: answered from its record, nothing embedded)."""
    writer = client_of(make_token(tenancy.writer))
    scope = tenancy.team.public_id
    first = remember(writer, TEXT, scope=scope, idempotency_key="k-1")
    assert first.status_code == 201
    again = remember(writer, TEXT, scope=scope, idempotency_key="k-1")
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"]
    assert [(where, ahead.embeds([TEXT])) for where, ahead in aheads] == [
        ("service", True),
        ("early", True),
        ("service", False),
    ]
    assert Memory.objects.filter(content=TEXT).count() == 1


def test_an_outsiders_bearer_starts_no_pass(tenancy, aheads):
    stranger = client_of("zm_" + "x" * 40)
    for _ in range(2):
        assert remember(stranger, TEXT).status_code == 401
    assert aheads == [] and not early_pass._seen
    assert not Memory.objects.filter(content=TEXT).exists()


def test_a_revoked_bearer_is_forgotten_at_its_first_refusal(tenancy, aheads):
    secret = make_token(tenancy.writer)
    writer = client_of(secret)
    scope = tenancy.team.public_id
    assert remember(writer, "Written before the revocation.", scope=scope).status_code == 201
    token = ApiToken.objects.get(secret_hash=hash_token_secret(secret))
    token_revoke(actor=Actor(user=tenancy.writer), token=token)

    refused = remember(writer, TEXT, scope=scope)
    assert refused.status_code == 401
    # one pass more, dropped unused: the bearer was still known
    assert [where for where, _ in aheads] == ["service", "early"]
    assert not early_pass._seen  # and now forgotten
    assert remember(writer, TEXT, scope=scope).status_code == 401
    assert len(aheads) == 2
    assert not Memory.objects.filter(content=TEXT).exists()


def test_a_reader_is_refused_as_before(tenancy, aheads):
    reader = client_of(make_token(tenancy.reader))
    scope = tenancy.team.public_id
    assert reader.get("/api/v1/memories").status_code == 200  # known now
    response = remember(reader, TEXT, scope=scope)
    assert response.status_code == 403, response.json()
    assert not Memory.objects.filter(content=TEXT).exists()


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (json.dumps({"content": "a\x00b", "kind": "fact"}), "application/json", 400),
        (json.dumps({"content": "a\ud800b", "kind": "fact"}), "application/json", 400),
        (json.dumps({"content": "x" * 16_001, "kind": "fact"}), "application/json", 400),
        (json.dumps({"content": "   ", "kind": "fact"}), "application/json", 400),
        (json.dumps({"content": ["a list"], "kind": "fact"}), "application/json", 400),
        (json.dumps({"content": TEXT, "kind": "no-such-kind"}), "application/json", 400),
        ("[" * 100_000 + "]" * 100_000, "application/json", 400),
        ("{not json", "application/json", 400),
        (b"\xff\xfe", "application/json", 400),
        (TEXT, "text/plain", 415),
    ],
)
def test_a_known_bearers_bad_body_is_answered_as_before(tenancy, body, content_type, status):
    writer = client_of(make_token(tenancy.writer))
    assert remember(writer, "Known from this write on.").status_code == 201
    response = writer.post("/api/v1/memories", body, content_type=content_type)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"]
    assert Memory.objects.count() == 1
    assert remember(writer, TEXT).status_code == 201


@pytest.fixture
def query_passes(monkeypatch):
    """Every query's pass made from here on, as (started before the checks, the pass)."""
    made: list[list] = []
    original = query_vector.QueryVector.__init__

    def counted(self, query):
        original(self, query)
        made.append([False, self])

    def early_begin(query, *, started=None):
        vector = query_vector.begin(query, started=started)
        made[-1][0] = True
        return vector

    monkeypatch.setattr(query_vector.QueryVector, "__init__", counted)
    monkeypatch.setattr(early_pass, "query_vector", type("M", (), {"begin": early_begin}))
    return made


@pytest.mark.parametrize(
    ("path", "field"), [("/api/v1/recall", "query"), ("/api/v1/context", "topic")]
)
def test_a_known_bearers_read_embeds_its_query_once_before_its_checks(
    tenancy, query_passes, path, field
):
    writer = client_of(make_token(tenancy.writer))
    written = remember(writer, TEXT, scope=tenancy.team.public_id)
    assert written.status_code == 201
    writer = client_of(make_token(tenancy.writer))  # a bearer not seen yet
    first = writer.post(path, {field: "when is staging reset?"}, format="json")
    assert first.status_code == 200, first.json()
    assert [early for early, _ in query_passes] == [False]

    again = writer.post(path, {field: "when is the staging database reset"}, format="json")

    assert again.status_code == 200, again.json()
    assert [early for early, _ in query_passes] == [False, True]  # one pass, the early one
    assert written.json()["id"] in again.content.decode()


def test_a_known_bearers_refused_read_drops_its_pass(tenancy, query_passes):
    reader = client_of(make_token(tenancy.reader))
    assert reader.post("/api/v1/recall", {"query": "staging"}, format="json").status_code == 200
    other = make_scope(owner=tenancy.owner, slug="elsewhere")
    refused = reader.post(
        "/api/v1/recall", {"query": "staging", "scopes": [other.public_id]}, format="json"
    )
    assert refused.status_code == 404, refused.json()
    assert [early for early, _ in query_passes] == [False, True]  # started, dropped unused
    # refused by the service, not by the checks: the bearer is still known
    assert reader.post("/api/v1/recall", {"query": "staging"}, format="json").status_code == 200
    assert [early for early, _ in query_passes] == [False, True, True]


@pytest.mark.parametrize(
    ("path", "field", "refused"),
    [
        ("/api/v1/recall", "query", {"k": 0}),
        ("/api/v1/recall", "query", {"unknown": True}),
        ("/api/v1/recall", "query", {"kinds": ["no-such-kind"]}),
        ("/api/v1/context", "topic", {"max_tokens": 1}),
        ("/api/v1/recall", "query", {"query": "   "}),
    ],
)
def test_a_known_bearers_refused_arguments_start_no_pass(
    tenancy, query_passes, path, field, refused
):
    """A read's arguments are checked by its own request model before its pass starts: refused
    arguments never run the model, known bearer or not."""
    writer = client_of(make_token(tenancy.writer))
    assert writer.get("/api/v1/memories").status_code == 200  # known from here on
    response = writer.post(path, {field: "staging", **refused}, format="json")
    assert response.status_code == 400, response.json()
    assert query_passes == []
