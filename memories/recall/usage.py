"""The usage boost: a memory agents reported using (mark_used) ranks higher, within bounds.

boost = 1 + MAX_EXTRA · (1 − e^(−uses / USES_SCALE)) · 0.5^(days since last use / HALF_LIFE_DAYS)

- never above 1 + MAX_EXTRA (×1.4), and slow to get there: ×1.02 after one use, ×1.06 after
  three, ×1.16 after ten, ×1.31 after thirty, so a memory that helped once does not push aside
  the right answer to another question (bench/recall.py's held-out half measured a small loss
  with a scale of 3, none with 20);
- it fades with the time since the memory was last used (half of it gone after 30 days);
- a memory found wrong has its uses reset (`memories.rules.usage`), so its boost is gone.

It multiplies recall's score as one factor of its own, beside the kind weight and the age decay,
reading the one-row-per-memory `UsageCounter` table through a left join.
"""

from __future__ import annotations

from memories.recall.fragments import MAX_HALF_LIVES

MAX_EXTRA = 0.4
USES_SCALE = 20.0
HALF_LIFE_DAYS = 30.0

JOIN = "LEFT JOIN memories_memoryusage u ON u.memory_id = {memory}"
# The fade's exponent is bounded (`MAX_HALF_LIVES`): a last use dated 1970 or year 1 would
# otherwise make the power underflow, and PostgreSQL answers an error. The uses' exponent is a
# numeric (an integer over a decimal), which goes to 0 without an error, and stays NULL without
# a usage row (LEAST and GREATEST skip NULLs: bounding it would give that memory a boost).
BOOST = (
    f"(1 + {MAX_EXTRA} * coalesce((1 - exp(-u.uses / {USES_SCALE}))"
    " * power(0.5, least(greatest(extract(epoch FROM now() - u.last_used_at)::float8 / 86400, 0)"
    f" / {HALF_LIFE_DAYS}, {MAX_HALF_LIVES})), 0))"
)
