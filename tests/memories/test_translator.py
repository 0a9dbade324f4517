"""translate_to_english through the real anthropic SDK against the fake Messages API over HTTP."""

from __future__ import annotations

import pytest

from memories.canonical.translator import TOOL_NAME, TranslationFailed, translate_to_english
from tests.fakes.anthropic_api import (
    delay,
    malformed_tool_input,
    raw,
    status,
    text_only,
    tool_answer,
    tool_answer_from,
)
from tests.served import free_port

GERMAN = (
    "Benutze `select_for_update()` in memories/services/remember.py, wenn zwei Worker dieselbe "
    "Zeile ändern."
)
ENGLISH = (
    "Use `select_for_update()` in memories/services/remember.py when two workers change the same "
    "row."
)


def _sent_key(request) -> str | None:
    """The API key as the SDK sent it: x-api-key, or a bearer token in newer SDK versions."""
    if "x-api-key" in request.headers:
        return request.headers["x-api-key"]
    authorization = request.headers.get("authorization", "")
    return authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None


def _translate(text: str = "Die Tests laufen gegen PostgreSQL.", lang: str = "de") -> str:
    return translate_to_english(text=text, source_lang=lang).english


def test_success_returns_the_english_from_a_forced_tool_call(fake_anthropic, settings):
    fake_anthropic.script(tool_answer("  The tests run against PostgreSQL.\n"))

    assert _translate() == "The tests run against PostgreSQL."

    [request] = fake_anthropic.requests
    assert request.method == "POST"
    assert request.path == "/v1/messages"
    assert _sent_key(request) == "test-key"
    body = request.json
    assert body["model"] == settings.TRANSLATOR_MODEL
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    [tool] = body["tools"]
    assert tool["name"] == TOOL_NAME
    assert tool["input_schema"]["properties"]["english"]["type"] == "string"
    assert tool["input_schema"]["required"] == ["english"]
    assert body["max_tokens"] >= 1024
    assert "verbatim" in body["system"] or "exactly" in body["system"]
    [message] = body["messages"]
    assert message["role"] == "user"
    assert "Die Tests laufen gegen PostgreSQL." in message["content"]
    assert "de" in message["content"]


def test_protected_spans_kept_verbatim_pass_the_check(fake_anthropic):
    fake_anthropic.script(tool_answer(ENGLISH))

    assert _translate(GERMAN) == ENGLISH

    # The prompt names the spans the model has to keep.
    prompt = fake_anthropic.requests[0].json["messages"][0]["content"]
    assert "select_for_update()" in prompt
    assert "memories/services/remember.py" in prompt


def test_max_tokens_grows_with_the_input(fake_anthropic):
    fake_anthropic.script(tool_answer_from(lambda request: "Short."), tool_answer("Long."))
    _translate("Kurz.")
    _translate("Lang. " * 2000)

    short, long = (request.json["max_tokens"] for request in fake_anthropic.requests)
    assert long > short


def test_a_dropped_identifier_fails_naming_it(fake_anthropic):
    text = "Die Funktion memory_remember prüft zuerst den Inhalt auf Geheimnisse."
    fake_anthropic.script(tool_answer("The remember function checks the content for secrets."))

    with pytest.raises(TranslationFailed) as caught:
        _translate(text)

    assert caught.value.message == "translation dropped the protected span `memory_remember`"
    assert caught.value.retryable is True


def test_a_changed_quoted_term_fails(fake_anthropic):
    text = "Im Team sagen wir „Arbeitsbereich“ statt Workspace."
    fake_anthropic.script(tool_answer('In the team we say "work area" instead of workspace.'))

    with pytest.raises(TranslationFailed, match="`Arbeitsbereich`"):
        _translate(text)


def test_without_a_key_nothing_is_sent(fake_anthropic, settings):
    settings.ANTHROPIC_API_KEY = ""
    fake_anthropic.script(tool_answer("never used"))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.message == "ANTHROPIC_API_KEY is not set"
    assert caught.value.retryable is False
    assert fake_anthropic.requests == []


def test_rate_limit_is_retryable_after_the_servers_wait(fake_anthropic):
    fake_anthropic.script(status(429, headers={"retry-after": "7"}))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.retryable is True
    assert caught.value.retry_after == 7
    assert "429" in caught.value.message
    # max_retries=0: the SDK made one request and left the retrying to us.
    assert len(fake_anthropic.requests) == 1


def test_rate_limit_without_retry_after(fake_anthropic):
    fake_anthropic.script(status(429))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.retryable is True
    assert caught.value.retry_after is None


@pytest.mark.parametrize("code", [500, 502, 503, 529])
def test_server_errors_are_retryable(fake_anthropic, code):
    fake_anthropic.script(status(code))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.retryable is True
    assert str(code) in caught.value.message
    assert len(fake_anthropic.requests) == 1


@pytest.mark.parametrize("code", [400, 401, 403, 404])
def test_client_errors_are_not_retryable(fake_anthropic, code):
    fake_anthropic.script(status(code))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.retryable is False
    assert str(code) in caught.value.message


def test_an_answer_past_the_timeout_fails_as_a_timeout(fake_anthropic, settings):
    settings.TRANSLATOR_TIMEOUT_SECONDS = 1
    fake_anthropic.script(delay(2.5, then=tool_answer("Too late.")))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert "timeout" in caught.value.message
    assert caught.value.retryable is True
    assert len(fake_anthropic.requests) == 1


@pytest.mark.parametrize(
    "tool_input",
    [{"text": "The tests run."}, {"english": 42}, {"english": None}, {"english": "  \n"}, {}],
)
def test_malformed_tool_input_fails(fake_anthropic, tool_input):
    fake_anthropic.script(malformed_tool_input(tool_input))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.retryable is True
    assert "english" in caught.value.message or "empty" in caught.value.message


def test_an_answer_without_the_tool_call_fails(fake_anthropic):
    fake_anthropic.script(text_only("Here is the translation: The tests run against PostgreSQL."))

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert TOOL_NAME in caught.value.message
    assert caught.value.retryable is True


@pytest.mark.parametrize(
    "step",
    [
        raw(b"<html><body>Bad gateway</body></html>", content_type="text/html"),
        raw(b"this is not json"),
        raw(b'{"unexpected": "shape"}'),
    ],
    ids=["html", "broken-json", "not-a-message"],
)
def test_a_body_that_is_not_a_message_fails(fake_anthropic, step):
    fake_anthropic.script(step)

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert caught.value.retryable is True


def test_an_unreachable_api_fails_as_retryable(fake_anthropic, settings):
    settings.ANTHROPIC_BASE_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there

    with pytest.raises(TranslationFailed) as caught:
        _translate()

    assert "could not reach the Anthropic API" in caught.value.message
    assert caught.value.retryable is True
    assert fake_anthropic.requests == []


def test_the_exhausted_script_answers_500(fake_anthropic):
    with pytest.raises(TranslationFailed, match="script exhausted"):
        _translate()
