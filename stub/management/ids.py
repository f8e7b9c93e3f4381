"""Row ids as the service writes them: a prefix and 26 Crockford base32 characters (a ULID)."""

from __future__ import annotations

import os
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_LENGTH = 26  # 128 bits, five to a character


def crockford(raw: bytes) -> str:
    """The first 16 bytes as 26 Crockford base32 characters."""
    number = int.from_bytes(raw[:16].ljust(16, b"\0"), "big")
    chars = []
    for _ in range(_LENGTH):
        number, digit = divmod(number, 32)
        chars.append(_ALPHABET[digit])
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    """Time-ordered and unique for the life of the process, across resets: an id a test
    held on to never names a different row later."""
    millis = time.time_ns() // 1_000_000
    return prefix + crockford(millis.to_bytes(6, "big") + os.urandom(10))
