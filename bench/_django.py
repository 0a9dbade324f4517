"""Set up Django for a benchmark script, on a throwaway database of the embedded server."""

from __future__ import annotations

import os
import statistics
import sys
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")
    os.environ["ZM_API_RATE"] = ""  # measure the server, not the rate limiter
    # Django's test client names its host "testserver", which only the test suite allows.
    os.environ.setdefault("ZM_ALLOWED_HOSTS", "localhost,127.0.0.1,testserver")
    os.environ.setdefault("ZM_LOG_LEVEL", "WARNING")
    import django

    django.setup()


def setup_for(data_dir: Path) -> None:
    """Django in a bench process, on the embedded database of a server's data directory."""
    os.environ["ZM_DATA_DIR"] = str(data_dir)
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zeromemory.settings")
    os.environ.setdefault("ZM_LOG_LEVEL", "WARNING")
    import django

    django.setup()


@contextmanager
def throwaway_database(name: str):
    """Create `name` with every migration applied, use it, drop it afterwards."""
    from django.db import connection

    connection.settings_dict["TEST"]["NAME"] = name
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def describe(values_ms: list[float]) -> str:
    return f"p50 {statistics.median(values_ms):7.2f} ms   p95 {percentile(values_ms, 95):7.2f} ms"
