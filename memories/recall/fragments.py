"""SQL shared by the read path's statements."""

from __future__ import annotations

# A memory's age in days, never negative.
AGE_DAYS = "greatest(extract(epoch FROM now() - m.created_at)::float8 / 86400, 0)"
# The kind's weight times its age decay, 0.5^(age / half-life), for a row `k` of the catalogue.
DECAY = "k.weight * power(0.5, {age} / greatest(k.half_life_days, 1))"
