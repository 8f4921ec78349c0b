"""Converting engine records to JSON-ready values for LSP messages, in one place."""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
from pygls.protocol import default_converter
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

from switchman.engine.plain import to_plain


def to_wire(value: Any) -> Any:
    """Any engine value (msgspec Structs, enums, Decimals, datetimes) as plain JSON data, its
    times to the millisecond as the protocol writes them (:func:`to_plain`)."""
    return to_plain(value)


def plain_params_converter() -> cattrs.Converter:
    """pygls' converter, but custom (``switchman/*``) params stay plain dicts.

    pygls turns the params of methods it does not know into namedtuples; our
    handlers validate plain data with msgspec instead.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    for message in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message, _plain_message)
    return converter


def _plain_message(data: dict[str, Any], cls: type[Any]) -> Any:
    """A message whose params (or result) stay as sent; absent fields (params are optional in
    JSON-RPC) and unknown ones (other clients' extensions) are fine."""
    return cls(**{field.name: data.get(field.name) for field in attrs.fields(cls)})
