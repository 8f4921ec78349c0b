"""Converting engine records to JSON-ready values for LSP messages, in one place."""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
from lsprotocol import types
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
    handlers validate plain data with msgspec instead. An editor's ``applyEdit`` answer
    whose ``applied`` is not a JSON boolean cannot be read (a refusal, docs/protocol.md).
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]
    for message in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message, _plain_message)
    structure_result = converter.get_structure_hook(types.ApplyWorkspaceEditResult)

    def apply_edit_result(data: Any, cls: type[Any]) -> Any:
        # cattrs reads any truthy value as a boolean: the string "false" was "applied"
        if not isinstance(data, dict) or not isinstance(data.get("applied"), bool):
            raise ValueError('"applied" must be true or false')
        return structure_result(data, cls)

    converter.register_structure_hook(types.ApplyWorkspaceEditResult, apply_edit_result)
    return converter


def _plain_message(data: dict[str, Any], cls: type[Any]) -> Any:
    """A message whose params (or result) stay as sent; absent fields (params are optional in
    JSON-RPC) and unknown ones (other clients' extensions) are fine."""
    return cls(**{field.name: data.get(field.name) for field in attrs.fields(cls)})
