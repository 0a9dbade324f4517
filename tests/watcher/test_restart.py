"""Nothing lost, nothing twice: the watcher killed with SIGKILL in the middle of a send or at
any moment, or the server down for a while, and every turn still reaches the server whole
exactly once (turns are longer than the overlap, so a turn seen twice would be a duplicate)."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

from tests.served import wait_for
from tests.watcher.support import said, times_stored, write_turns

TURNS = 24


def all_stored(turns: range) -> bool:
    return all(times_stored(said(n)) for n in turns)


def assert_once_each(turns: range, gate) -> None:
    assert [times_stored(said(n)) for n in turns] == [1] * len(turns)
    accepted = Counter(p.body["chunk_hash"] for p in gate.ingests() if p.status == 202)
    assert accepted and max(accepted.values()) == 1


def test_killed_in_the_middle_of_a_send_then_restarted(home, watch, gate):
    watcher = watch()
    write_turns(home, range(1, TURNS + 1))
    gate.held.set()  # the server stores the chunk; its answer never reaches the watcher
    first = watcher.start()
    assert gate.holding.acquire(timeout=60), watcher.log()
    watcher.kill(first)
    [held] = gate.ingests()
    assert held.status == 202
    gate.held.clear()
    watcher.start()
    wait_for(lambda: all_stored(range(1, TURNS + 1)), timeout=60, what="every turn")
    assert_once_each(range(1, TURNS + 1), gate)
    resent = [p for p in gate.ingests() if p.body["chunk_hash"] == held.body["chunk_hash"]]
    assert [p.status for p in resent] == [202, 200]  # sent again, and the ledger knew it


def test_killed_at_any_moment_while_the_session_goes_on(home, watch, gate):
    watcher = watch()
    writer = threading.Thread(target=write_turns, args=(home, range(1, TURNS + 1), 0.15))
    writer.start()
    chance = random.Random(16)  # noqa: S311 - a reproducible spread of moments
    while writer.is_alive():
        process = watcher.start()
        time.sleep(chance.uniform(0.1, 1.2))
        watcher.kill(process)
    writer.join()
    watcher.start()
    wait_for(lambda: all_stored(range(1, TURNS + 1)), timeout=60, what="every turn")
    time.sleep(2)  # an idle flush or a resend still on its way would show now
    assert_once_each(range(1, TURNS + 1), gate)


def test_the_server_down_for_a_while_then_up(home, watch, gate):
    gate.shut()
    watcher = watch()
    watcher.start()
    write_turns(home, range(1, TURNS + 1))

    def failed_send() -> bool:
        # The last error's line, not the spool's ("0 refused by the server" is always there).
        last = [line for line in watcher.run("status").stdout.splitlines() if "last error" in line]
        return bool(last) and ("refused" in last[0].lower() or "did not answer" in last[0])

    wait_for(failed_send, timeout=30, what="a failed send")
    status = watcher.run("status").stdout
    assert "spool: 0 chunk(s)" not in status, status
    assert times_stored(said(1)) == 0
    gate.open()
    wait_for(lambda: all_stored(range(1, TURNS + 1)), timeout=90, what="every turn")
    assert_once_each(range(1, TURNS + 1), gate)
    wait_for(lambda: "spool: 0 chunk(s)" in watcher.run("status").stdout, timeout=30, what="spool")
