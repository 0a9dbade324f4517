"""The read path: recall, build_context and briefings, without any LLM or translation.

`recall.py` is hybrid recall (one SQL round trip; `sql.py` holds its legs and tuning,
`statement.py` the statement, `fragments.py` the SQL the read path shares); `inputs.py` checks a
read's query, k, kinds and scopes; `context.py` is build_context and the briefing, over
`budget.py` (tokens, sections, rendering) and `sections.py` (recent decisions, open loops, the
most important memories).
"""
