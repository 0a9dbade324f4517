"""Hygiene: find duplicates, supersessions and contradictions among a scope's memories, resolve
the sure ones add-only, and queue the rest for a person (scan, judge, rules, review)."""
