"""A web process sets aside what it loaded at start (the model, torch, transformers, Django)
for the garbage collector: a full collection then walks only what requests made since, not the
hundreds of thousands of objects that live as long as the process, so a request served beside a
batch in the same process does not wait a third of a second for it."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import child_env

PROBE = (
    "import gc\n"
    "import zeromemory.asgi\n"
    "print(gc.get_freeze_count(), len(gc.get_objects(generation=2)))\n"
)


def test_what_the_web_process_loaded_is_frozen_before_it_serves():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=child_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    frozen, old = map(int, done.stdout.split()[-2:])
    assert frozen > 100_000  # the libraries' and the model's objects
    assert old < frozen // 4  # what a full collection would still walk
