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
# Query vectors kept per process by exact query text (0: every query runs the model).
QUERY_CACHE_ENTRIES = env_int("ZM_QUERY_CACHE_ENTRIES", 2048, minimum=0)
# Activity log rows (every recall, context, briefing and remember) older than this are pruned daily.
ACTIVITY_RETENTION_DAYS = env_int("ZM_ACTIVITY_RETENTION_DAYS", 90, minimum=1)

# Canonicalization: the Anthropic Messages API translates non-English memories on the write path.
# Without a key the app runs and such memories wait as pending until one is configured.
ANTHROPIC_API_KEY = env_str("ANTHROPIC_API_KEY")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL")
# Each background job's model, timeout, attempts, lease and daily token budget
# (ZM_TRANSLATOR_MODEL, ZM_TRANSLATOR_TIMEOUT, ZM_TRANSLATION_MAX_ATTEMPTS, ZM_TRANSLATION_LEASE,
# ZM_TRANSLATION_DAILY_TOKENS; the same for extraction and the hygiene judge) are declared with
# the job (`memories.jobs.JobSettings`) and read from the environment when the app loads;
# `.env.example` lists them (a test holds it to the declarations). The backoff's base is every
# job's: the first retry waits this long, doubling after each failure.
TRANSLATION_BACKOFF_SECONDS = env_int("ZM_TRANSLATION_BACKOFF", 30, minimum=1)
# A translated memory this close to another valid one in its scope is merged into it.
CANONICAL_MERGE_SIMILARITY = 0.97

# Capture: chunks of transcripts, documents and history, extracted into memories in the background.
MAX_CHUNK_CHARS = env_int("ZM_MAX_CHUNK_CHARS", 200_000, minimum=1000)
# Pieces one imported file may hold (each is a remember); more is refused before any is written.
IMPORT_MAX_PIECES = env_int("ZM_IMPORT_MAX_PIECES", 200, minimum=1)
# Days a chunk's text is kept after extraction; then only its hash and results stay.
CHUNK_RETENTION_DAYS = env_int("ZM_CHUNK_RETENTION_DAYS", 30, minimum=1)

# Hygiene: a scheduled scan pairs each memory changed since the last scan with its nearest valid
# neighbours in its scope; an LLM judges each pair; sure duplicates and supersessions are resolved
# (add-only, by authority rank), the rest wait in the review queue.
HYGIENE_INTERVAL_MINUTES = env_int("ZM_HYGIENE_INTERVAL_MINUTES", 60, minimum=1)
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
