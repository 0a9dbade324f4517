"""What memories are about and how they hang together, per scope: entities found on every write
without an LLM, and the dictionary match the read path uses (`detect`, `names`, `dictionary`,
`mentions`, `services`); typed links between memories (`links`)."""
