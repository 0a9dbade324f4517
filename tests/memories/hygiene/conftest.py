from __future__ import annotations

import pytest

from memories.models import Conflict, ConflictStatus, Memory, Relation
from tests.memories.hygiene.support import write


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


@pytest.fixture
def open_pair(pair, tenancy):
    """The pair in the team's review queue, as the judge leaves a duplicate it is unsure of."""
    return Conflict.objects.create(
        scope=tenancy.team,
        memory_a=pair[0],
        memory_b=pair[1],
        status=ConflictStatus.OPEN,
        verdict=Relation.DUPLICATE,
        confidence=0.8,
        rationale="Both say the staging database is reset on Mondays.",
    )
