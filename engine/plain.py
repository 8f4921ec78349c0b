"""Engine records as plain JSON data, with every time written the one way Switchman writes
times (:func:`~switchman.engine.clock.utc_text`: ISO 8601 UTC to the millisecond, ``Z``).

msgspec writes a ``datetime`` with six digits of fraction, or none at a whole second
(``…:15.793000Z``, ``…:16Z``); the protocol promises ``…:15.793Z`` everywhere. The records
keep ``datetime`` fields (the store and the engine compute with them), so the times are
rewritten here, as the records become JSON, and nowhere else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from switchman.engine.clock import utc_text

_DATETIME = (datetime,)


def to_plain(value: Any) -> Any:
    """``value`` (msgspec Structs, enums, Decimals, datetimes, …) as dicts, lists, strings and
    numbers, its times as :func:`utc_text` writes them."""
    plain = msgspec.to_builtins(value, builtin_types=_DATETIME)
    if type(plain) is datetime:
        return utc_text(plain)
    if type(plain) is dict or type(plain) is list:
        _write_times(plain)
    return plain


def _write_times(node: dict[Any, Any] | list[Any]) -> None:
    """Replace, in place, each ``datetime`` under ``node`` (fresh from ``to_builtins``; setting
    an existing key while iterating is allowed)."""
    pairs = node.items() if isinstance(node, dict) else enumerate(node)
    for key, item in pairs:
        kind = type(item)
        if kind is datetime:
            node[key] = utc_text(item)
        elif kind is dict or kind is list:
            _write_times(item)
