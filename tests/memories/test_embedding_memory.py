"""The model's memory does not grow with the shapes of the passes it runs. A bfloat16 pass's
kernels are compiled for its exact shape (its texts by their padded length) and cached; a long
import meets thousands of shapes, and with the caches' default size a process grew by about
2 MB for each new one (825 MB over a 100,000-record import). Measured as the C heap in use
(glibc's mallinfo2), which the caches are allocated from: no clock in it."""

from __future__ import annotations

import ctypes
import gc
import random
import string

import pytest

from memories import embeddings


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def _heap_in_use() -> int:
    """Bytes of the C heap in use: the arenas' allocated chunks and the mmapped blocks."""
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        pytest.skip("glibc 2.33's mallinfo2 is needed to read the C heap")
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return info.uordblks + info.hblkhd


def test_passes_of_many_shapes_leave_the_heap_as_it_was():
    rng = random.Random(43)

    def texts(count: int, words: int) -> list[str]:
        return [
            " ".join("".join(rng.choices(string.ascii_lowercase, k=6)) for _ in range(words))
            for _ in range(count)
        ]

    def passes(shapes: range) -> None:
        for index in shapes:
            # Each pass a new shape: more texts, longer ones (padded to the longest).
            embeddings.embed_texts(texts(embeddings.SMALL_BATCH + index, 4 + 2 * index))

    # The first shapes fill what is bounded (the caches, the threads' arenas); other tests may
    # have run passes in this process before.
    passes(range(16))
    gc.collect()
    before = _heap_in_use()
    passes(range(16, 32))
    gc.collect()
    grown = _heap_in_use() - before
    # Each new shape cached took 2 to 3 MB (about 110 MB for 40 of them); bounded, nothing.
    assert grown < 12 * 1_048_576, f"the heap grew by {grown / 1_048_576:.1f} MB"
