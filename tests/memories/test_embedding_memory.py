"""The model's memory does not grow with the shapes of the passes it runs. A bfloat16 pass's
kernels are compiled for its exact shape (its texts by their padded length) and cached; a long
import meets thousands of shapes, and with the caches' default size a process grew by about
2 MB for each new one (825 MB over a 100,000-record import). Measured in a process of its own,
as the import command is one (the caches' size is read once, at a process's first pass; other
tests run torch before, mem0's own embedder among them), as the C heap in use (glibc's
mallinfo2), which the caches are allocated from: no clock in it."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest
from django.conf import settings

MEASURE = """
import ctypes, gc, random, string
import django
django.setup()
from memories import embeddings

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
    )]

mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
mallinfo2.restype = MallInfo2

def heap_in_use():
    gc.collect()
    info = mallinfo2()
    return info.uordblks + info.hblkhd

rng = random.Random(43)

def passes(shapes):
    for index in shapes:
        # Each pass a new shape (its texts by their padded length) of about as many words as
        # the others: more texts, shorter ones.
        count = embeddings.SMALL_BATCH + index
        embeddings.embed_texts([
            " ".join("".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(480 // count))
            for _ in range(count)
        ])

# The first shapes fill what is bounded (the caches, the threads' arenas); the next are new too.
passes(range(0, 40, 2))
before = heap_in_use()
passes(range(1, 40, 2))
print(heap_in_use() - before)
"""


def test_passes_of_many_shapes_leave_the_heap_as_it_was():
    try:
        ctypes.CDLL("libc.so.6").mallinfo2  # noqa: B018 - glibc 2.33 or later
    except (OSError, AttributeError):
        pytest.skip("glibc 2.33's mallinfo2 is needed to read the C heap")
    measured = subprocess.run(
        [sys.executable, "-c", MEASURE],
        cwd=settings.BASE_DIR,
        env=dict(os.environ, DJANGO_SETTINGS_MODULE="zeromemory.settings"),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    grown = int(measured.stdout.strip().splitlines()[-1])
    # Each new shape cached took about 2 MB (41 MB for these 20 with the libraries' default
    # caches); bounded, nothing.
    assert grown < 12 * 1_048_576, f"the heap grew by {grown / 1_048_576:.1f} MB"
