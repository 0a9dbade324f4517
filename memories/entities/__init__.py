"""What memories are about: entities per scope, found on every write without an LLM, and the
dictionary match the read path uses (see `detect`, `names`, `dictionary`, `mentions`,
`services`)."""
