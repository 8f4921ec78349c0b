"""YAML 1.1 scalar values (booleans, whole numbers, numbers) read without exceptions.

PyYAML's constructors raise on text the resolver never produced but an explicit
tag can force (``!!bool maybe``, ``!!int abc``), on hex or sexagesimal text read
as a float (``0x1``, ``9:9:…:59`` overflowing), and on integers longer than
Python's conversion limit. A configuration file is untrusted input, so each of
these must become a located problem instead: the readers here return ``None``
for text that is not a value of the type, and a value the caller range-checks.
"""

from __future__ import annotations

import math
import re
import sys

MAX_NUMBER_CHARS = 1000
"""Longer number text is not read at all (no setting needs anywhere near this many digits);
it would only cost time, and Python refuses integers past 4,300 digits."""

_BOOLEANS = {"yes": True, "true": True, "on": True, "no": False, "false": False, "off": False}
_INT = re.compile(r"""[-+]?(?:
      0b[01_]+
    | 0x[0-9a-fA-F_]+
    | 0[0-7_]+
    | (?:0|[1-9][0-9_]*)
    | [1-9][0-9_]*(?::[0-5]?[0-9])+
)\Z""", re.VERBOSE)
_FLOAT = re.compile(r"""[-+]?(?:
      (?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    | [0-9][0-9_]*(?:[eE][-+]?[0-9]+)
    | [0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
)\Z""", re.VERBOSE)
_SPECIAL_FLOATS = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}


def yaml_bool(text: str) -> bool | None:
    """The boolean ``text`` spells in YAML 1.1 (``yes``, ``off``, ``True``...), or None."""
    return _BOOLEANS.get(text.lower())


def yaml_int(text: str) -> int | None:
    """The whole number ``text`` spells in YAML 1.1 (hex, octal, binary, base 60), or None."""
    if len(text) > MAX_NUMBER_CHARS or not _INT.match(text):
        return None
    sign, digits = _split_sign(text.replace("_", ""))
    base, body = {"0b": (2, digits[2:]), "0x": (16, digits[2:])}.get(digits[:2], (10, digits))
    if not body:
        return None  # "0x_" and "0b_" have no digits at all
    if ":" in body:
        return sign * _base60(body)
    if base == 10 and len(body) > 1 and body.startswith("0"):
        base = 8
    return sign * int(body, base)


def yaml_float(text: str) -> float | None:
    """The number ``text`` spells in YAML 1.1 as a float, or None.

    Whole-number forms (hex, base 60...) are accepted too, as YAML reads them
    into a number field. The result may be infinite or NaN; the caller decides.
    """
    special = _SPECIAL_FLOATS.get(text.lower())
    if special is not None:
        return special
    whole = yaml_int(text)
    if whole is not None:
        return _to_float(whole)
    if len(text) > MAX_NUMBER_CHARS or not _FLOAT.match(text):
        return None
    sign, digits = _split_sign(text.replace("_", ""))
    mantissa = re.split("[eE]", digits)[0]
    if not any(char.isdigit() for char in mantissa):
        return None  # ".", ".e5"
    if ":" in digits:
        head, _, fraction = digits.rpartition(".")
        return sign * (_to_float(_base60(head)) + float("0." + (fraction or "0")))
    return sign * float(digits)


def _to_float(value: int) -> float:
    # float() raises OverflowError past the largest double; YAML's reading is infinity
    if abs(value) > sys.float_info.max:
        return math.inf if value > 0 else -math.inf
    return float(value)


def _split_sign(text: str) -> tuple[int, str]:
    if text[:1] in ("+", "-"):
        return (-1 if text[0] == "-" else 1), text[1:]
    return 1, text


def _base60(digits: str) -> int:
    value = 0
    for part in digits.split(":"):
        value = value * 60 + int(part)
    return value
