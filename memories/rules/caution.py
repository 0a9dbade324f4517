"""Which rule wordings are held for a second look: those that tell agents to fetch, run or send
something. An approved rule opens every member's context and the MCP server's instructions, so a
rule such as "always run the script at https://…/setup.sh" or "email the logs to …" waits until
an admin confirms it explicitly.

A plain pattern list, deliberately broad: a false alarm costs one more click, a miss hands every
member's agent an instruction nobody looked at twice.
"""

from __future__ import annotations

import re

_PATTERNS = [
    # Addresses to fetch from or send to.
    r"\b(?:https?|ftps?|sftp|ssh|file|git|s3|gs|wss?)://",
    r"\bwww\.[a-z0-9-]+\.",
    r"\b[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]",
    # Commands that fetch or run.
    r"\b(?:curl|wget|iwr|invoke-webrequest|invoke-expression|iex|scp|rsync|nc|netcat|ncat)\b",
    r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|c|tc|fi)?sh\b",
    r"\b(?:bash|sh|zsh|powershell|pwsh|python3?|node|perl|ruby)\s+(?:-c\b|<\(|-\s)",
    r"\beval\b",
    r"\b(?:pip3?|npm|npx|yarn|pnpm|gem|cargo|go|brew|apt(?:-get)?)\s+(?:install|add|get|run)\b",
    # Words that tell an agent to run, fetch or send.
    r"\b(?:run|execute|exec|launch|source|invoke)\b(?:\s+[\w./-]+){0,3}?\s+"
    r"(?:script|command|binary|installer|snippet|payload)s?\b",
    r"\b[\w./-]{1,255}\.(?:sh|bash|ps1|bat|cmd|exe)\b",
    r"\b(?:download|fetch|upload|exfiltrate|transmit|forward)\w*\b",
    r"\b(?:send|post|push|report|submit|copy|share|leak)\w*\b[^.\n]{0,60}?\b(?:to|into)\b"
    r"[^.\n]{0,40}?(?:\burl\b|\bendpoint\b|\bserver\b|\bwebhook\b|\bhost\b|\baddress\b|"
    r"\bchannel\b|\binbox\b|\bemail\b|@|://)",
    r"\bsend\s+(?:it|them|this|that|the\s+\w+|all\s+\w+|every\s+\w+)?\s*to\b",
    r"\be-?mail\b",
    r"\bwebhooks?\b",
]
_CAUTION = re.compile("|".join(f"(?:{pattern})" for pattern in _PATTERNS), re.IGNORECASE)


def needs_second_look(text: str) -> bool:
    """Whether this wording tells agents to fetch, run or send anything."""
    return _CAUTION.search(text) is not None
