"""The product's own settings (memories, canonical English, capture, portability), read from
the environment.

`zeromemory.settings` imports every name here; `.env.example` lists each variable.
"""

from __future__ import annotations

from zeromemory.core.env import env_int, env_str

# Memories: size limit, the embedding model (a sentence-transformers name or local path; the
# bundled all-MiniLM-L6-v2 when empty) and the cosine similarity that flags a near duplicate.
MAX_MEMORY_CHARS = env_int("ZM_MAX_MEMORY_CHARS", 16_000, minimum=100)
EMBEDDING_MODEL = env_str("ZM_EMBEDDING_MODEL")
# auto: bfloat16 where the CPU supports it natively (about twice as fast), else float32.
EMBEDDING_PRECISION = env_str("ZM_EMBEDDING_PRECISION", "auto")
if EMBEDDING_PRECISION not in ("auto", "fp32", "bf16"):
    raise ValueError("ZM_EMBEDDING_PRECISION must be auto, fp32 or bf16")
NEAR_DUPLICATE_SIMILARITY = 0.92
# Activity log rows (every recall, context, briefing and remember) older than this are pruned daily.
ACTIVITY_RETENTION_DAYS = env_int("ZM_ACTIVITY_RETENTION_DAYS", 90, minimum=1)

# Canonicalization: the Anthropic Messages API translates non-English memories on the write path.
# Without a key the app runs and such memories wait as pending until one is configured.
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL")
TRANSLATOR_MODEL = env_str("ZM_TRANSLATOR_MODEL", "claude-haiku-4-5")
TRANSLATOR_TIMEOUT_SECONDS = env_int("ZM_TRANSLATOR_TIMEOUT", 30, minimum=1)
TRANSLATION_MAX_ATTEMPTS = env_int("ZM_TRANSLATION_MAX_ATTEMPTS", 6, minimum=1)
TRANSLATION_BACKOFF_SECONDS = env_int("ZM_TRANSLATION_BACKOFF", 30, minimum=1)
# How long a worker may hold a memory it is translating before the sweeper takes it back.
TRANSLATION_LEASE_SECONDS = env_int(
    "ZM_TRANSLATION_LEASE", TRANSLATOR_TIMEOUT_SECONDS + 60, minimum=1
)
# Tokens (input + output) translation may spend per scope and UTC day; 0 means no limit. A
# memory over the budget stays stored and readable, its translation deferred to the next day.
TRANSLATION_DAILY_TOKENS = env_int("ZM_TRANSLATION_DAILY_TOKENS", 1_000_000)
# A translated memory this close to another valid one in its scope is merged into it.
CANONICAL_MERGE_SIMILARITY = 0.97

# Capture: chunks of transcripts, documents and history, extracted into memories in the background.
MAX_CHUNK_CHARS = env_int("ZM_MAX_CHUNK_CHARS", 200_000, minimum=1000)
# Pieces one imported file may hold (each is a remember); more is refused before any is written.
IMPORT_MAX_PIECES = env_int("ZM_IMPORT_MAX_PIECES", 200, minimum=1)
EXTRACTOR_MODEL = env_str("ZM_EXTRACTOR_MODEL", "claude-haiku-4-5")
EXTRACTOR_TIMEOUT_SECONDS = env_int("ZM_EXTRACTOR_TIMEOUT", 120, minimum=1)
EXTRACTION_MAX_ATTEMPTS = env_int("ZM_EXTRACTION_MAX_ATTEMPTS", 6, minimum=1)
# Seconds a worker holds a chunk it is extracting before the sweeper may take it back.
EXTRACTION_LEASE_SECONDS = env_int("ZM_EXTRACTION_LEASE", EXTRACTOR_TIMEOUT_SECONDS + 60, minimum=1)
# Tokens (input + output) one user's chunks may spend per UTC day; 0 means no limit.
EXTRACTION_DAILY_TOKENS = env_int("ZM_EXTRACTION_DAILY_TOKENS", 2_000_000)
# Days a chunk's text is kept after extraction; then only its hash and results stay.
CHUNK_RETENTION_DAYS = env_int("ZM_CHUNK_RETENTION_DAYS", 30, minimum=1)

# Hygiene: a scheduled scan pairs each memory changed since the last scan with its nearest valid
# neighbours in its scope; an LLM judges each pair; sure duplicates and supersessions are resolved
# (add-only, by authority rank), the rest wait in the review queue.
HYGIENE_INTERVAL_MINUTES = env_int("ZM_HYGIENE_INTERVAL_MINUTES", 60, minimum=1)
HYGIENE_MODEL = env_str("ZM_HYGIENE_MODEL", "claude-haiku-4-5")
HYGIENE_TIMEOUT_SECONDS = env_int("ZM_HYGIENE_TIMEOUT", 60, minimum=1)
HYGIENE_MAX_ATTEMPTS = env_int("ZM_HYGIENE_MAX_ATTEMPTS", 6, minimum=1)
HYGIENE_LEASE_SECONDS = env_int("ZM_HYGIENE_LEASE", HYGIENE_TIMEOUT_SECONDS + 60, minimum=1)
# Tokens (input + output) the judge may spend per scope and UTC day; 0 means no limit. Pairs over
# the budget wait, queued, for the next day.
HYGIENE_DAILY_TOKENS = env_int("ZM_HYGIENE_DAILY_TOKENS", 1_000_000)
# Pairs of one scope judged in one call (one forced tool answer per pair).
HYGIENE_PAIRS_PER_CALL = env_int("ZM_HYGIENE_PAIRS_PER_CALL", 20, minimum=1)
# Neighbours per subject, and the cosine similarity a neighbour needs to make a pair.
HYGIENE_NEIGHBOURS = 3
HYGIENE_MIN_SIMILARITY = 0.78
# Judge confidence at which a duplicate, or a supersession, is resolved without a person.
HYGIENE_AUTO_DUPLICATE = 0.90
HYGIENE_AUTO_SUPERSEDE = 0.95

# Portability: an archive's upload limit, its entries' (each, all); an export URL's life (s).
IMPORT_MAX_BYTES = env_int("ZM_IMPORT_MAX_BYTES", 100 * 1_048_576, minimum=1024)
IMPORT_MAX_ENTRY_BYTES = env_int("ZM_IMPORT_MAX_ENTRY_BYTES", 4 * 1_048_576, minimum=1024)
IMPORT_MAX_TOTAL_BYTES = env_int("ZM_IMPORT_MAX_TOTAL_BYTES", 1024 * 1_048_576, minimum=1024)
EXPORT_URL_SECONDS = env_int("ZM_EXPORT_URL_SECONDS", 300, minimum=10)
# What one imported memory may hold beyond remember's limits: provenance rows and versions.
IMPORT_MAX_PROVENANCE = env_int("ZM_IMPORT_MAX_PROVENANCE", 1000, minimum=1)
IMPORT_MAX_VERSIONS = env_int("ZM_IMPORT_MAX_VERSIONS", 100, minimum=1)
# Characters of memory text one import request (REST, dashboard) may embed: what a remember
# batch of 100 items may (manage.py import_export has no such budget).
IMPORT_MAX_EMBED_CHARS = env_int("ZM_IMPORT_MAX_EMBED_CHARS", 1_600_000, minimum=1000)
# Bytes one import request (REST) may decompress to in all: every text of an archive is parsed
# and written inside the request, not only what is embedded.
IMPORT_MAX_REQUEST_BYTES = env_int("ZM_IMPORT_MAX_REQUEST_BYTES", 32 * 1_048_576, minimum=1024)

# Rules: a convention, decision, gotcha or preference that agents report using (mark_used) in
# this many distinct conversations becomes a rule candidate for its scope's admins.
RULE_MIN_CONVERSATIONS = env_int("ZM_RULE_MIN_CONVERSATIONS", 3, minimum=1)
# Minutes a password check (signing in, or confirming the password) lets a person approve, edit
# and reorder rules before the dashboard asks for the password again.
REAUTH_MINUTES = env_int("ZM_REAUTH_MINUTES", 15, minimum=1)
