"""The read path's changes one at a time, for the ablation rows of bench/locomo.py and recall.py."""

from __future__ import annotations

from dataclasses import replace


def variants() -> list[tuple[str, object]]:
    """(name, Tuning): the read path before, each change alone on top of it, all of them."""
    from memories.recall.sql import BEFORE, PRODUCT

    changes = {
        "BM25 idf within the readable scopes": {"bm25": True},
        "any-term rows always": {"any_term_always": True},
        "deeper pools (10k per leg, 300 rows/term)": {
            "vector_depth": PRODUCT.vector_depth,
            "fulltext_depth": PRODUCT.fulltext_depth,
            "term_rows": PRODUCT.term_rows,
        },
        "linear fusion of the legs' scores (1:5)": {"linear": True},
        "coverage^1.5": {"coverage_power": PRODUCT.coverage_power},
    }
    together: dict[str, object] = {}
    rows: list[tuple[str, object]] = [("before (main)", BEFORE)]
    for name, change in changes.items():
        rows.append((f"+ {name} alone", replace(BEFORE, **change)))
        together.update(change)
    everything = replace(BEFORE, **together)
    assert everything == PRODUCT, "the ablation's changes must add up to the product's tuning"
    rows.append(("all together (the product)", everything))
    return rows
