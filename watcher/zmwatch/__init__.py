"""zm-watch: follows agent transcripts and sends their user and assistant text to zero-memory's
ingest API, with nothing lost and nothing sent twice. Standard library only."""

__version__ = "0.1.0"
