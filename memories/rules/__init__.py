"""The learning loop: agents report the memories they used (`usage`), memories used across
conversations become rule candidates (`candidates`), a scope's admins approve, reword, reject and
order them (`decisions`), and the approved ones are exported for the tools that read rule files
(`export`). Delivery into context and briefings reads `memories.approved_rules`, a floor lower
(recall reads it, and recall and rules import neither the other)."""
