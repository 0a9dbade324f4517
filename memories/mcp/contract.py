"""The tool contract as agents read it: the server's instructions and one description per tool.

This text is where the canonical-English discipline is asked of the calling model. The model has
the whole conversation in view, so its own English rendering is cheap and usually more faithful
than a translation made later by the server; the server still detects the language of every write
and canonicalizes what arrives in another language, and it never rewrites a query. Each
description stays under 2 KB (a test checks) because clients load every description into the
model's context on every turn. The kinds come from the catalogue (staff edit it): `KINDS` stands
for them here, and the server fills it in each time it lists its tools.
"""

from __future__ import annotations

from collections.abc import Iterable

KINDS = "{kinds}"

SERVER_INSTRUCTIONS = """\
zero-memory is long-term memory shared across your sessions and your team. Call briefing at the \
start of a session and build_context before a task; recall to look something up; remember what \
future sessions should know; forget what turned out wrong. Write memory content and queries in \
English even when the conversation is in another language, keeping code, identifiers, paths and \
quoted terms verbatim. Queries run exactly as sent: the server never translates them. Pass the \
same conversation_id (your session's id) on every call of a session: session_receipt then tells \
what the session got from memory and gave to it. After a task, call mark_used with the ids of the \
memories that helped (and those you found wrong)."""

REMEMBER = """\
Store one durable piece of knowledge so later sessions (yours or a teammate's agent) can find it: \
a decision, a convention, a preference, a gotcha, a fact.

Write `content` in English, whatever language the conversation is in. You hold the whole \
conversation, so your English rendering keeps the meaning better than a translation the server \
would make afterwards. Keep code, identifiers, file paths, URLs, commands and quoted terms exactly \
as they appear: never translate them. When the user's own phrasing matters (a preference or a \
decision worded just so), also pass their exact words, in the language they used, as `verbatim`; \
they are kept beside the memory.

Content in another language is still accepted: it is stored at once with translation_status \
"pending" and the server canonicalizes it to English in the background.

One self-contained fact per call: say which project, component or person it concerns. Secrets \
(keys, passwords, tokens) are refused.

- kind: one of {kinds}.
- scope: a scope id from list_scopes; omit it for your personal scope.
- conversation_id, source_path: where the knowledge came from.
- idempotency_key: a retry with the same key returns the first answer instead of writing again.
- entities: optional, what the memory is about (a service, a person, a repository, a file), as \
names or {name, kind, aliases}; name the thing the way the team does, and give its other names \
as aliases ("billing service" with "billing-svc"). The server finds identifiers, paths, URLs, \
handles, tickets and the names the scope already knows by itself.

Returns the memory id; deduplicated=true when an identical memory already held this fact (your \
write is recorded on it); similar_existing lists near duplicates (consider forgetting the older \
one if yours replaces it); translation_status is skipped (English), pending, done or failed."""

RECALL = """\
Search the memories you may read for the ones that match a query: hybrid search (meaning and \
exact words), ranked by relevance, kind and age.

Send the query in English, even when the user spoke another language: the stored memories are in \
English and you translate the user's intent better than anything downstream could. Keep code, \
identifiers, file paths and quoted terms verbatim in the query. The server runs the query exactly \
as sent (no translation, no rewriting) and logs that same string, so a query in another language \
simply matches poorly.

- query: a few words or a question, up to 4000 characters.
- scopes: scope ids from list_scopes to search in; omit to search every scope you can read.
- kinds: only these kinds ({kinds}).
- k: how many hits, 1 to 50 (default 10).
- as_of: an instant (ISO 8601 with its offset, e.g. 2026-05-01T12:00:00Z) to search what was \
valid then, as it read then; omit for now.
- nearest: true to get the k nearest memories even when none is relevant (default false).

Returns hits with id, content, kind, scope, score, similarity, age_days, has_original (true \
when the memory was translated and its original text is kept) and stale (true when nobody \
recalled or confirmed it for longer than its kind's half-life: check it before relying on it). \
Only relevant memories come back: when nothing you can read is relevant, results is empty, \
nothing_relevant is true and notice says so; memory has nothing on this, so do not guess from \
it. With nearest: true you get the nearest anyway, each marked relevant: false.

When you have used hits in your work, call mark_used with their ids (and any you found wrong): \
memories that prove useful rank higher and can become team rules."""

BUILD_CONTEXT = """\
Assemble what the team knows about a topic, within a token budget, before you start a task: \
memories relevant to the topic first, then important decisions and conventions, recent changes \
and open questions.

Write the topic in English, even when the user spoke another language; keep code, identifiers, \
file paths and quoted terms verbatim. The topic is searched exactly as sent: the server does not \
translate or rewrite it.

- topic: what you are about to work on, up to 4000 characters.
- max_tokens: the budget for the whole answer, 100 to 32000 (default 2000).
- scopes: scope ids from list_scopes; omit for every scope you can read.
- as_of: an instant (ISO 8601 with its offset) to assemble what was valid then; omit for now.

Returns sections (name, title, budget, tokens, rows with id, kind, scope, content) and the same \
context rendered as markdown, ready to read. The team's approved rules come first (kind "rule"): \
follow them. Afterwards call mark_used with the ids of the rows you actually used."""

BRIEFING = """\
A session-start briefing: what matters most across your scopes (important decisions, \
conventions, preferences), recent changes and open questions, within a token budget. Call it \
once at the start of a session; use build_context when you know the topic.

- max_tokens: the budget, 100 to 32000 (default 2000).
- scopes: scope ids from list_scopes; omit for every scope you can read.
- as_of: an instant (ISO 8601 with its offset) to brief on what was valid then; omit for now.

Returns sections (name, title, budget, tokens, rows with id, kind, scope, content) and the same \
briefing rendered as markdown."""

HISTORY = """\
The history of one memory: when it was valid (its periods: written or restored, then forgotten \
or superseded), its earlier versions, what superseded it and what it superseded (the chain both \
ways), hygiene merges with the provenance they moved, and a timeline of events, each with its \
time and author. Use it to answer "when did we switch" and "what replaced this".

- memory_id: the id from recall, build_context or briefing.

Answers not_found for a memory you cannot read."""

FORGET = """\
Invalidate a memory that is wrong or no longer true. Nothing is deleted: the memory leaves \
recall, context and briefings, keeps its history, and restore brings it back.

- memory_id: the id from remember, recall or build_context.
- reason: why it should be forgotten, in English (for example "Replaced by the decision to use \
PostgreSQL 18").

Answers not_found for a memory you cannot read, forbidden when your token or role may not write \
in its scope, conflict when it is already forgotten. Returns the memory with its new state."""

RESTORE = """\
Undo forget (or a supersede): the memory becomes valid again and returns to recall, context and \
briefings.

- memory_id: the id of the forgotten memory.

Answers not_found for a memory you cannot read, forbidden when your token or role may not write \
in its scope, conflict when it is valid already or an identical valid memory exists (the answer \
names it). Returns the memory with its new state."""

LIST_SCOPES = """\
List the scopes you can read: your personal scope, and the team and project scopes you belong \
to. Each has an id (pass it as scope or scopes to the other tools), a name, a kind, your role \
(reader, writer or admin) and writable: whether this connection may write there (a \
read-only token writes nowhere)."""

INGEST = """\
Hand the server a transcript chunk, a document or a stretch of history to extract memories from \
later, in the background; the call returns at once. Use it for material, not for one fact (use \
remember for that). Secrets in it are redacted before it is stored.

- content: the text (at most 200,000 characters by default).
- source_kind: transcript, document or history.
- conversation_id, source_path: where it came from (the client is the one this connection \
named when it connected).
- chunk_hash: its sha256, to ask (with probe: true) whether the server already has it.
- scope: a scope id from list_scopes; omit for your personal scope.

Returns the chunk's id and status (pending, waiting_for_key, extracted, skipped, failed) and \
duplicate: true when you sent the same chunk before (nothing is extracted twice)."""

LIST_CONFLICTS = """\
The review queue of the scopes you administer: pairs of memories the server found that may be \
duplicates, where one may replace the other, or that disagree, and memories someone challenged. \
Each item shows both memories side by side (content, kind, author and its rank), the judge's \
verdict, confidence and rationale.

- scope: a scope id from list_scopes; omit for every scope you administer.
- status: open (the default: waiting for review), resolved, cleared, pending, waiting_for_key, \
failed.
- verdict: only items with this verdict (duplicate, a_supersedes_b, b_supersedes_a, \
contradiction, complementary, unrelated, challenge).
- cursor, limit: the next page (next_cursor of the previous answer), 1 to 200 items.

Answers forbidden in a scope you read but do not administer."""

RESOLVE_CONFLICT = """\
Resolve an item of the review queue (scope admins only). Nothing is deleted: a retired memory \
is superseded or forgotten and can be restored.

- conflict_id: the id from list_conflicts.
- action: keep_both, a_supersedes_b, b_supersedes_a, merge (the memory of lower authority, or \
the older, is superseded and its provenance joins the other), forget_a, forget_b, dismiss, or \
undo (reverse the last resolution, automatic ones included). A challenge takes keep_both, \
forget_a or dismiss.

Answers conflict when the item is not open (undo it first). Returns the item."""

CHALLENGE = """\
Dispute a memory you believe is wrong or outdated, with the reason: it goes to the review queue \
of its scope's admins and is marked disputed in recall, build_context and briefings until they \
decide. Prefer this to forget when you are not sure, or when the memory is not yours.

- memory_id: the id from recall, build_context or briefing.
- reason: why, in English, with the evidence (a file, a command output, a newer decision).

Returns the queue item's id and whether it is new: a memory already challenged keeps its open \
item, and your reason is added to it. Only the scope's admins read the item itself."""

EXPORT_MEMORIES = """\
Export scopes you administer (your personal scope, and team or project scopes where you are \
admin) as a zip of markdown files: every memory with its original text, provenance, versions \
and links, and the review queue.

- scopes: scope ids from list_scopes; omit for every scope you administer.

Returns a download URL that works once and only for a few minutes (fetch it with any HTTP \
client, no credentials needed), when it expires, the scopes and how many memories they hold."""


MARK_USED = """\
Report which memories you actually used in this conversation, after recall, build_context or \
briefing, and which you found wrong. Used memories rank higher in later searches (a bounded \
boost that fades when they stop being used), and a convention, decision, gotcha or preference \
used across several conversations is proposed to the scope's admins as a team rule. A memory you \
found wrong loses its boost and goes to the review queue, as with challenge.

- memory_ids: ids from recall, build_context or briefing that helped (at most 100).
- wrong: memories you found wrong, each {memory_id, reason}; reason in English, with the evidence.
- conversation_id: your conversation or session id, the same one you passed to the reads; a \
memory counts once per conversation, and only if a read answered it to you in that conversation.

Answers not_found for a memory you cannot read (nothing is recorded then). Returns the ids \
counted now, those already counted in this conversation, those not counted (not served to you \
in this conversation), and the review items opened."""

RULES_RESOURCE = (
    "The team rules approved by the admins of the scopes this connection reads, in their order; "
    "follow them."
)

RULES_HEADING = "Team rules (approved by your scopes' admins; follow them):"


def rules_instructions(rules: Iterable[tuple[str, str]]) -> str:
    """The rules as the server's instructions carry them: (scope name, text) pairs, in order."""
    lines = [f"- [{scope}] {' '.join(text.split())}" for scope, text in rules]
    return "\n".join([RULES_HEADING, *lines]) if lines else ""


SESSION_RECEIPT = """\
One line on what this session got from memory and gave to it: memories recalled and written, \
tokens of memory delivered, conflicts its memories raised. Counts the calls that carried the same \
conversation_id, the watcher's captured chunks included.

- conversation_id: the session's id; omit it to use the one this call carries.

Returns the figures and the line to show."""

DESCRIPTIONS = {
    "remember": REMEMBER,
    "recall": RECALL,
    "build_context": BUILD_CONTEXT,
    "briefing": BRIEFING,
    "forget": FORGET,
    "restore": RESTORE,
    "list_scopes": LIST_SCOPES,
    "ingest": INGEST,
    "list_conflicts": LIST_CONFLICTS,
    "resolve_conflict": RESOLVE_CONFLICT,
    "challenge": CHALLENGE,
    "history": HISTORY,
    "export_memories": EXPORT_MEMORIES,
    "mark_used": MARK_USED,
    "session_receipt": SESSION_RECEIPT,
}


def described(description: str, kinds: Iterable[str]) -> str:
    """A tool's description with the catalogue's kinds in place of `KINDS` (named in general
    when the catalogue could not be read)."""
    return description.replace(KINDS, ", ".join(kinds) or "the catalogue's kinds")


# -- move_memories, share, promote_rule, reject_rule, import_memory, benchmark_memory ----------

MOVE_MEMORIES = """\
Move memories to another scope you may write (a personal finding promoted to the team). \
Nothing is deleted: each memory is written in the target with its provenance and validity, \
the original is forgotten with a reason naming where it went (restore brings it back), and the \
history of both shows the move. A target that holds the same text already absorbs it.

- memory_ids: up to 100 memories you may write.
- to_scope: a scope id from list_scopes you may write.
- confirm: true; without it the call is refused (validation_failed) and nothing moves.

All or none: not_found or forbidden for any memory or the scope moves nothing. Returns each \
original (forgotten now) and the memory it became."""

SHARE = """\
Copy a memory you can read into another scope you may write; the original is unchanged and \
the copy's provenance points back to it (its history shows shared_here).

- memory_id: the memory to copy.
- to_scope: a scope id from list_scopes you may write.

Returns the original and the copy (deduplicated: true when the scope held the same text)."""

PROMOTE_RULE = """\
Nominate a memory you may write as a team rule: it becomes a candidate in its scope, which a \
scope admin approves (signed in to the dashboard) or rejects. A candidate answers as it is; an \
approved rule, or a rejected one whose memory did not change since, answers conflict.

- memory_id: a valid memory (a convention, decision, gotcha or preference, typically).

Returns the rule (status candidate)."""

REJECT_RULE = """\
Reject a rule candidate (or take an approved rule out of the order): scope admins only, through \
a credential that is not restricted to scopes; anyone else gets forbidden.

- rule_id: the rule's id.

Answers conflict when it is rejected already. Returns the rule."""

IMPORT_MEMORY = """\
Import into a scope you may write, through the same path as the REST imports:

- scope: a scope id from list_scopes.
- archive_base64: a zero-memory export (the zip of export_memories), base64-encoded, up to \
what one MCP request carries (about 750 KB of zip; larger ones go through the REST import); a \
second import of the same archive writes nothing. Or:
- markdown: a CLAUDE.md, AGENTS.md, Cursor rule or Claude Code memory file; source_tool \
(claude-md, agents-md, cursor-rules, claude-memory) says which, source_path where it lives. \
Each section becomes a memory, each answered on its own (created, deduplicated, \
already_imported, or the refusal's code).

Secrets are refused and authority is yours, as for remember. Returns the counts (archive) or \
the pieces (markdown)."""

BENCHMARK_MEMORY = """\
Check whether a scope answers your agent's questions: give questions (in English) with the ids \
of the memories that should answer each; each question runs as one recall in that scope, \
exactly as recall runs it. No LLM.

- scope: a scope id you can read.
- cases: up to 50 of {question, expected_ids}.
- k: how many hits each recall returns, 1 to 50 (default 10).

Returns recall_at_k (the share of expected memories found in the top k, averaged), mrr (the \
mean of 1/rank of the first expected memory found), each question's answer and the misses."""

DESCRIPTIONS.update(
    move_memories=MOVE_MEMORIES,
    share=SHARE,
    promote_rule=PROMOTE_RULE,
    reject_rule=REJECT_RULE,
    import_memory=IMPORT_MEMORY,
    benchmark_memory=BENCHMARK_MEMORY,
)

# A scope's tools (memories.mcp.scope_tools).
DESCRIBE_SCOPE = """\
What a scope holds: its valid memories by kind, the newest and the most recalled few, its \
approved team rules, how many review items are open, and (for its admins only) its members and \
their roles. Use it to get your bearings in a scope before working in it.

- scope: a scope id from list_scopes.

Answers not_found for a scope you cannot read."""

GET_CONFLICT = """\
One item of the review queue with both memories side by side: the judge's verdict and \
rationale (or a challenger's reason), each memory's text, author and authority rank, and how it \
was resolved. For the scope's admins, like list_conflicts.

- conflict_id: an id from list_conflicts."""

RESOLVE_CONFLICTS = """\
Resolve several review items at once, in order, through the same rules as resolve_conflict; all \
or nothing: if one item cannot be applied, nothing is written and the error names it \
(items.<index>). Retired memories are superseded or forgotten, never deleted (undo brings them \
back).

- items: [{conflict_id, action}], at most 50; action as in resolve_conflict.
- dry_run: true answers what the call would do, writing nothing. Use it first.
- confirm: must be true to resolve more than one item for real.

Returns each item as it is after the call (or would be, on a dry run)."""

SCAN_HYGIENE = """\
Scan one scope for duplicates and contradictions now instead of waiting for the schedule: its \
memories changed since the last scan are compared with their near neighbours in the scope, and \
new pairs go to the judge, within the scope's daily judge token budget (past it, judging waits \
for the next UTC day). For the scope's admins.

- scope: a scope id from list_scopes.
- cursor: next_cursor of the previous answer; while more is true, call again with it to compare \
the next share (each changed memory is compared once).

Returns how many memories were compared, the pairs found and newly queued, the scope's pairs \
waiting for the judge, and its judge tokens spent today against the budget."""

EXPORT_METRICS = """\
A scope's insights as plain numbers: reads, memories and tokens served, writes by people, agents \
and capture, queries that found nothing, the most recalled memories, the review and background \
queues, and LLM spend, over the last 7, 30 or 90 UTC days. For whoever reads the scope; queries \
of others that found nothing only for its admins.

- scope: a scope id from list_scopes.
- days: 7, 30 (the default) or 90."""

DESCRIPTIONS.update(
    describe_scope=DESCRIBE_SCOPE,
    get_conflict=GET_CONFLICT,
    resolve_conflicts=RESOLVE_CONFLICTS,
    scan_hygiene=SCAN_HYGIENE,
    export_metrics=EXPORT_METRICS,
)

# The typed links between memories (memories.mcp.link_tools).
LINK = """\
Link two memories of one scope so that later reads find the second from the first: \
memory_id <type> to, where type is relates_to (the default), depends_on, caused_by or \
example_of. Writing the same link again changes nothing; remove: true takes it back (its \
history keeps it). Supersession and contradiction are not links: use forget, challenge or the \
review queue.

- memory_id: a memory you may write (the link's source).
- to: a memory of the same scope (share it there first if it lives elsewhere).

Answers not_found for a memory you cannot read, forbidden when you may not write in the scope, \
conflict when either memory is forgotten or superseded. Returns the link."""

DESCRIPTIONS.update(link=LINK)

# What memories are about (memories.mcp.entity_tools).
ENTITIES = """\
Find what memories are about, or everything known about one thing. Entities are the people, \
teams, services, repositories, paths, tools, products, places and events your scopes' memories \
mention, each with a name and aliases.

- Search: query (part of a name or alias, any case), kind, scope; newest first, paged with \
cursor and limit. Each result says how many memories you can read mention it.
- Describe: entity_id from a search or a memory. Answers its memories newest first (paged), \
the entities they also mention (neighbours, with how many memories they share) and a timeline \
of the days they were written.

Read-only; only entities of scopes you can read. Answers not_found for an entity or scope you \
cannot read."""

DESCRIPTIONS.update(entities=ENTITIES)
