"""Converting engine records to JSON-ready values for LSP messages, in one place."""

from __future__ import annotations

from typing import Any

import cattrs
import msgspec
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)


def to_wire(value: Any) -> Any:
    """Any engine value (msgspec Structs, enums, Decimals, datetimes) as plain JSON data."""
    return msgspec.to_builtins(value)


def plain_params_converter() -> cattrs.Converter:
    """pygls' converter, but custom (``switchman/*``) params stay plain dicts.

    pygls turns the params of methods it does not know into namedtuples; our
    handlers validate plain data with msgspec instead.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    converter.register_structure_hook(JsonRPCRequestMessage, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCNotification, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(JsonRPCResponseMessage, lambda obj, cls: cls(**obj))
    return converter
