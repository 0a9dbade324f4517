"""The API rate limit holds across web processes: two servers share one budget per user."""

from __future__ import annotations

import time

import httpx2
import pytest

from tests.factories import make_token
from tests.served import start_uvicorn, stop_process_group

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_two_web_processes_share_the_rate_of_a_user(tenancy):
    servers = [start_uvicorn(ZM_API_RATE="5/day") for _ in range(2)]
    try:
        # The windows are fixed days (from midnight UTC): the seven calls fall inside one
        # unless this runs in a day's last 30 seconds, when it waits for the next day.
        if 86400 - time.time() % 86400 < 30:
            time.sleep(86400 - time.time() % 86400 + 1)
        headers = {"Authorization": f"Bearer {make_token(tenancy.owner)}"}
        codes = [
            httpx2.get(f"{servers[n % 2][1]}/api/v1/me", headers=headers, timeout=10).status_code
            for n in range(7)
        ]
        other = httpx2.get(
            f"{servers[0][1]}/api/v1/me",
            headers={"Authorization": f"Bearer {make_token(tenancy.writer)}"},
            timeout=10,
        )
    finally:
        outputs = [stop_process_group(proc) for proc, _ in servers]
    assert codes == [200] * 5 + [429, 429]
    assert other.status_code == 200  # the budget is per user
    assert not any("Traceback" in output for output in outputs), outputs
