"""Insights: the daily rows folded from the activity log, memories and chunks, and the answers
that read them (a scope's insights, a session's receipt)."""
