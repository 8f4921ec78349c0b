"""What an API key looks like, to refuse one written into a file and never to repeat one.

A configuration file names where a key comes from, never a key; a key pasted into one
anyway (where its source goes, or by mistake anywhere else) must not travel on in the
messages about the file: the editor's diagnostics, ``switchman rules check`` and the
``routing.policy_invalid`` event kept in the database.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

_KEY_PREFIXED = re.compile(r"(?:sk|gsk|xai|ghp|hf)[-_][A-Za-z0-9_\-]{16,}\Z")
_KEY_CHARS = re.compile(r"[A-Za-z0-9_\-]{32,}\Z")
_CANDIDATE = re.compile(r"[A-Za-z0-9_\-]{16,}")
REDACTED = "[redacted]"


def looks_like_a_key(value: str) -> bool:
    """Whether ``value`` is an API key itself: a known key prefix (``sk-``, ``gsk_`` …), or
    32 or more letters, digits, ``-`` and ``_`` that change between upper case, lower case
    and digits as often as random text does (at least 4 times in 10 characters; a long
    variable name such as ``MyCompanyAnthropicKey2024`` changes about 3 times)."""
    value = value.strip()
    if _KEY_PREFIXED.match(value):
        return True
    if not _KEY_CHARS.match(value):
        return False
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "o"
             for c in value]
    changes = sum(a != b for a, b in itertools.pairwise(kinds))
    return changes >= 0.4 * (len(value) - 1)


def mask_keys(text: str) -> str:
    """``text`` with every word that looks like an API key replaced by ``[redacted]``."""
    if len(text) < 16:
        return text
    return _CANDIDATE.sub(lambda m: REDACTED if looks_like_a_key(m.group()) else m.group(), text)


def mask_keys_in(value: Any) -> Any:
    """:func:`mask_keys` on every text inside plain data (lists, dicts, strings)."""
    if isinstance(value, str):
        return mask_keys(value)
    if isinstance(value, list):
        return [mask_keys_in(v) for v in value]
    if isinstance(value, dict):
        return {k: mask_keys_in(v) for k, v in value.items()}
    return value
