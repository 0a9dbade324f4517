"""What memories are about and how they hang together, per scope: typed links between memories
(`links`)."""
