"""Imports from other memory systems: one reader per system turns the file it wrote into
`SourceRecord`s (see `records`); the import service writes them through the one write path."""
