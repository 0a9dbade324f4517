from __future__ import annotations

import pytest

from memories.models import Memory
from tests.hygiene.support import write


@pytest.fixture
def pair(tenancy, kinds_seeded):
    """Two memories of the team written by one person, the first older: (a, b)."""
    a = write(
        tenancy.owner, "The staging database is reset every Monday at 06:00 UTC.", tenancy.team
    )
    b = write(tenancy.owner, "Every Monday at 06:00 UTC the staging DB gets wiped.", tenancy.team)
    assert a.pk < b.pk
    return a, b


@pytest.fixture
def valid_count(tenancy):
    return lambda: Memory.objects.filter(scope=tenancy.team, valid=True).count()
