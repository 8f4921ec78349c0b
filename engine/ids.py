"""Identifiers that sort by creation time (ULID layout: 48-bit ms time + 80 random bits)."""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = 0
_last_random = 0


def new_id() -> str:
    """A 26-character id, strictly increasing within this process."""
    global _last_ms, _last_random
    with _lock:
        now = time.time_ns() // 1_000_000
        if now <= _last_ms:
            now, random = _last_ms, _last_random + 1
        else:
            random = int.from_bytes(os.urandom(10), "big")
        _last_ms, _last_random = now, random
    value = (now << 80) | (random & ((1 << 80) - 1))
    return "".join(_ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))
