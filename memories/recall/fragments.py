"""SQL shared by the read path's statements."""

from __future__ import annotations

# A memory's age in days at an instant ({at}), never negative.
AGE_DAYS_AT = "greatest(extract(epoch FROM {at} - m.created_at)::float8 / 86400, 0)"
AGE_DAYS = AGE_DAYS_AT.format(at="now()")
# The memory `m` was valid at the instant {at}: within its outer bounds, and, only when it has a
# gap (forgotten or superseded, then restored), inside one of its periods. Most rows are decided
# by their own columns; the periods' index is read for the few with gaps.
VALID_AT = (
    "m.valid_from <= {at} AND (m.valid_until IS NULL OR m.valid_until > {at})"
    " AND (NOT m.validity_gaps OR EXISTS (SELECT 1 FROM memories_validityperiod p"
    " WHERE p.memory_id = m.id AND p.valid_from <= {at}"
    " AND (p.valid_until IS NULL OR p.valid_until > {at})))"
)
# What `m` said at {at}: the text an edit after that instant replaced (the earliest version
# written after it), or its text now. {column} is content, content_original or kind_id.
AT_VERSION = (
    "coalesce((SELECT v.{column} FROM memories_memoryversion v WHERE v.memory_id = m.id"
    " AND v.created_at > {at} ORDER BY v.number LIMIT 1), m.{column})"
)
# Not recalled, not confirmed (an absorbed write, an edit, a restore) and not written within
# one half-life of its kind (`k`): the memory is marked stale in answers, never hidden.
# Compared as ages in days, not as an instant a half-life before now: a half-life a staff member
# set near its column's bound (2^31 - 1 days) is no instant PostgreSQL can represent.
STALE = (
    "extract(epoch FROM now() - greatest(m.created_at, m.confirmed_at, m.last_recalled_at))"
    " / 86400 > greatest(k.half_life_days, 1)"
)
# Decay stops after this many half-lives (0.5^100 ≈ 8e-31): a memory older than that ranks as if
# it were that old. Unbounded, the power of a memory dated 1970 (20,000 days, half-life 14) is
# below the smallest float8 and PostgreSQL raises an underflow instead of answering; the bound
# also keeps the product with the fused score and the other factors far from it. The exponent is
# bounded, never an error caught: any instant a row may hold gives a number.
MAX_HALF_LIVES = 100
# The kind's weight times its age decay, 0.5^(age / half-life), for a row `k` of the catalogue.
DECAY = f"k.weight * power(0.5, least({{age}} / greatest(k.half_life_days, 1), {MAX_HALF_LIVES}))"
