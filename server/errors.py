"""Engine errors as JSON-RPC errors: a numeric code and a stable ``data.code``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from switchman.engine.errors import (
    DataFolderUnusable,
    EmptyMessage,
    InvalidApply,
    InvalidAttachment,
    InvalidText,
    NoModelAvailable,
    NothingToRate,
    PatternsNotSaved,
    SwitchmanError,
    TrustNotSaved,
    TurnElsewhere,
    TurnInProgress,
    UnknownAlias,
    UnknownModel,
    UnknownProfile,
    UnknownSession,
    UnknownTurn,
    UnknownWorkspace,
    WorkerSession,
)
from switchman.engine.plain import to_plain

log = logging.getLogger(__name__)

CODES: dict[type[SwitchmanError], int] = {
    UnknownWorkspace: 1001,
    UnknownSession: 1002,
    UnknownAlias: 1003,
    UnknownModel: 1004,
    EmptyMessage: 1005,
    NoModelAvailable: 1006,
    TurnInProgress: 1007,
    UnknownTurn: 1008,
    InvalidText: 1009,
    WorkerSession: 1010,
    InvalidAttachment: 1011,
    InvalidApply: 1012,
    UnknownProfile: 1013,
    TurnElsewhere: 1014,
    DataFolderUnusable: 1015,
    TrustNotSaved: 1016,
    NothingToRate: 1017,
    PatternsNotSaved: 1018,
}


EXPECTED_CODES = frozenset({*CODES.values(), JsonRpcInvalidParams.CODE})
"""Error codes that answer a user's mistake, not a bug (not worth a traceback in logs)."""


def rpc_error(error: SwitchmanError) -> JsonRpcException:
    """The JSON-RPC error the editor receives for ``error``."""
    data: dict[str, Any] = {"code": error.code}
    if isinstance(error, UnknownAlias):
        data.update(token=error.token, suggestions=error.suggestions)
    elif isinstance(error, UnknownModel):
        data.update(name=error.name, suggestions=error.suggestions)
    elif isinstance(error, NoModelAvailable):
        # Imported here: the routing modules are not needed to answer ``initialize``.
        from switchman.engine.routing.explain import render  # noqa: PLC0415

        data.update(decision=to_plain(error.decision), text=render(error.decision))
    elif isinstance(error, UnknownProfile):
        data.update(name=error.name, known=error.known)
    elif isinstance(error, TurnInProgress | TurnElsewhere | NothingToRate | PatternsNotSaved) or (
            isinstance(error, WorkerSession) and error.turn_id is not None):
        data.update(turn_id=error.turn_id)
    code = CODES.get(type(error), JsonRpcInternalError.CODE)
    return JsonRpcException(message=str(error), code=code, data=data)


def invalid_params(detail: str) -> JsonRpcException:
    """The error for params that do not match the method's shape."""
    return JsonRpcInvalidParams(message=f"Invalid params: {detail}",
                                data={"code": "invalid_params", "detail": detail})


@contextmanager
def as_rpc_errors() -> Iterator[None]:
    """Turn engine errors raised inside the block into JSON-RPC errors."""
    try:
        yield
    except SwitchmanError as error:
        raise rpc_error(error) from None
    except JsonRpcException:
        raise
    except Exception as error:  # a bug: the editor gets a plain message, the log the traceback
        log.exception("request failed")
        raise JsonRpcException(
            message="Switchman could not carry out this request because of an internal error; "
                    "nothing was changed. The daemon's log has the details.",
            code=-32603, data={"code": "internal_error"}) from error
