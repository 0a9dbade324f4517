"""The read path: recall, build_context and briefings, without any LLM or translation.

Recall's ranking lives in three files: `inputs.py` (the read requests, one pydantic model each,
that REST, MCP and in-process callers share), `recall.py` (the service and the one SQL round
trip), `statement.py` (the statement: legs, fusion, decay, usage boost, tuning). `context.py` is
build_context and the briefing, over `budget.py` (tokens, sections, rendering) and
`sections.py` (recent decisions, open loops, the most important memories).
"""
