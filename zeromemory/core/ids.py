"""Public identifiers: a type prefix and a sortable random part (ULID-like, Crockford base32)."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        value, rem = divmod(value, 32)
        chars.append(_ALPHABET[rem])
    return "".join(reversed(chars))


def new_public_id(prefix: str) -> str:
    """`<prefix>_` + 10 chars of millisecond time + 16 random chars: sorts by creation time."""
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{_encode(millis, 10)}{_encode(secrets.randbits(80), 16)}"
