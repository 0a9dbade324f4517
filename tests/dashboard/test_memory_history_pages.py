"""The dashboard's search as of an instant (a date picker) and the memory page's timeline."""

from __future__ import annotations

from datetime import UTC

from tests.memories.validity_support import Clock


def test_search_as_of_shows_the_text_valid_then(tenancy, api, login, kinds_seeded):
    clock = Clock()
    owner = api(tenancy.owner)
    created = owner.post(
        "/api/v1/memories",
        {
            "content": "Nightly builds run at 01:00 UTC.",
            "kind": "fact",
            "scope": tenancy.team.public_id,
        },
        format="json",
    ).json()["id"]
    clock.days_pass(3)
    owner.patch(
        f"/api/v1/memories/{created}",
        {"content": "Nightly builds run at 03:00 UTC."},
        format="json",
    )
    clock.days_pass(3)
    client = login(tenancy.reader)
    picked = clock.day(1).astimezone(UTC).strftime("%Y-%m-%dT%H:%M")
    then = client.get("/", {"q": "nightly builds", "as_of": picked}).content.decode()
    assert "run at 01:00 UTC" in then and "run at 03:00 UTC" not in then
    assert f'value="{picked}"' in then  # the picker keeps the instant
    now = client.get("/", {"q": "nightly builds"}).content.decode()
    assert "run at 03:00 UTC" in now
    future = client.get("/", {"q": "nightly builds", "as_of": "2999-01-01T00:00"})
    assert future.status_code == 400 and "Must not be in the future." in future.content.decode()
    page = client.get(f"/memories/{created}/").content.decode()
    assert 'id="timeline"' in page and "Edited" in page and "Written" in page
    assert "run at 01:00 UTC" in page  # the text before the edit, on its event
    german = login(tenancy.reader, "de").get(f"/memories/{created}/").content.decode()
    assert "Zeitleiste" in german and "Bearbeitet" in german
