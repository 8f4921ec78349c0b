"""Scripted reply steps for the fake provider, and their JSON form.

A test queues *steps*; each incoming model request consumes one step:

* :class:`Reply` - a successful answer: text chunks, tool calls, usage, an
  optional per-chunk delay and an optional :data:`Fault` that interrupts the
  stream (:class:`Disconnect`, :class:`Stall` or :class:`StreamError`).
* :class:`ErrorReply` - an HTTP error response in the API's error shape.

Usage numbers are given in Anthropic terms (``input_tokens`` excludes cached
tokens); the OpenAI wire format converts them (see ``openai_wire``).
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any, TypeAlias

JSONDict = dict[str, Any]

#: Anthropic ``error.type`` for each HTTP status the fake knows about.
ANTHROPIC_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

#: HTTP status for an Anthropic ``error.type`` (used for non-streamed stream errors).
STATUS_FOR_ERROR_TYPE: dict[str, int] = {v: k for k, v in ANTHROPIC_ERROR_TYPES.items()}


class ScriptError(ValueError):
    """A JSON step could not be understood."""


@dataclass(frozen=True)
class Usage:
    """Token usage reported for a reply (Anthropic semantics)."""

    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class ToolCall:
    """One tool call the fake model makes.

    ``argument_chunks`` optionally fixes how the JSON arguments are split into
    streamed deltas; their concatenation must be valid JSON. When omitted the
    serialized ``input`` is split into up to three pieces. ``indexed`` False streams the
    call's chunks without ``index`` (OpenAI), as some compatible servers do: the header chunk
    names the call by its id alone, the argument chunks by nothing.
    """

    name: str
    input: JSONDict = field(default_factory=dict)
    id: str | None = None
    argument_chunks: tuple[str, ...] | None = None
    indexed: bool = True


@dataclass(frozen=True)
class Disconnect:
    """Close the TCP connection abruptly after ``after_chunks`` content deltas.

    With ``reset`` the socket is closed with SO_LINGER 0 (a TCP RST) instead of
    a FIN.
    """

    after_chunks: int = 0
    reset: bool = False


@dataclass(frozen=True)
class StreamError:
    """Send an in-stream error event after ``after_chunks`` content deltas."""

    after_chunks: int = 0
    error_type: str = "overloaded_error"
    message: str = "Overloaded"


@dataclass(eq=False)
class Stall:
    """Stop sending after ``after_chunks`` content deltas until released.

    Set :attr:`release` (or call :meth:`FakeProvider.release_stalls`) to let
    the stream continue. :attr:`reached` is set when the server starts
    stalling; :attr:`client_gone` when the client disconnected while stalled.
    With ``before_headers`` the server stalls before sending any response
    header, which lets a client's timeout fire during the request itself.
    """

    after_chunks: int = 0
    before_headers: bool = False
    release: threading.Event = field(default_factory=threading.Event, repr=False)
    reached: threading.Event = field(default_factory=threading.Event, repr=False)
    client_gone: threading.Event = field(default_factory=threading.Event, repr=False)

    def wait_reached(self, timeout: float = 20.0) -> bool:
        """Block until the server is stalling on this step."""
        return self.reached.wait(timeout)

    async def wait_reached_async(self, timeout: float = 20.0) -> bool:
        """Await (without blocking the loop) until the server is stalling."""
        return await asyncio.to_thread(self.reached.wait, timeout)

    async def wait_client_gone_async(self, timeout: float = 20.0) -> bool:
        """Await until the server noticed the client went away while stalled."""
        return await asyncio.to_thread(self.client_gone.wait, timeout)


@dataclass(frozen=True)
class CutShort:
    """End the body properly after ``after_chunks`` content deltas, without the stream's
    closing events (Anthropic's ``message_delta``/``message_stop``, OpenAI's
    ``finish_reason`` chunk and ``[DONE]``): a proxy or server that gave up mid-answer.
    ``frame`` (raw bytes: an SSE frame whose data is not JSON, say) is sent first."""

    after_chunks: int = 0
    frame: bytes = b""


Fault: TypeAlias = Disconnect | Stall | StreamError | CutShort


@dataclass(frozen=True)
class Reply:
    """A successful model answer: text first, then tool calls.

    ``stop_reason`` may be given in either API's vocabulary; by default it is
    ``tool_use`` when there are tool calls and ``end_turn`` otherwise.
    ``usage`` defaults to 10 input tokens and one output token per chunk.
    """

    text: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    stop_reason: str | None = None
    chunk_delay: float = 0.0
    fault: Fault | None = None
    thinking: str | None = None
    """Anthropic only: a thinking block (signed ``sig-<n>``) before the text."""

    def effective_usage(self) -> Usage:
        """The scripted usage, or a deterministic default."""
        if self.usage is not None:
            return self.usage
        chunks = len(self.text) + sum(len(argument_pieces(c)) for c in self.tool_calls)
        return Usage(input_tokens=10, output_tokens=max(1, chunks))


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error response in the API's own error JSON shape."""

    status: int
    message: str = "Scripted error"
    error_type: str | None = None
    retry_after: float | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def anthropic_type(self) -> str:
        """The Anthropic ``error.type`` for this error."""
        if self.error_type is not None:
            return self.error_type
        fallback = "api_error" if self.status >= 500 else "invalid_request_error"
        return ANTHROPIC_ERROR_TYPES.get(self.status, fallback)


Step: TypeAlias = Reply | ErrorReply


def argument_pieces(call: ToolCall) -> tuple[str, ...]:
    """The streamed pieces of a tool call's JSON arguments."""
    if call.argument_chunks is not None:
        return call.argument_chunks
    encoded = json.dumps(call.input, separators=(",", ":"))
    size = max(1, -(-len(encoded) // 3))
    return tuple(encoded[i : i + size] for i in range(0, len(encoded), size))


def words(text: str) -> tuple[str, ...]:
    """Split text into word chunks that keep their trailing spaces."""
    pieces: list[str] = []
    for part in text.split(" "):
        pieces.append(part + " ")
    pieces[-1] = pieces[-1][:-1]
    return tuple(p for p in pieces if p)


def echo_reply(last_user_text: str) -> Reply:
    """The default reply used when the script queue is empty."""
    return Reply(text=words(f"Echo: {last_user_text}"))


# --------------------------------------------------------------------------
# JSON decoding (control API)
# --------------------------------------------------------------------------

_FAULT_KINDS = ("disconnect", "stall", "stream_error")
_REPLY_KINDS = ("text", "tool_call", "tool_calls")


def parse_steps(payload: object) -> list[Step]:
    """Decode a JSON list of steps."""
    if not isinstance(payload, list):
        raise ScriptError("steps must be a JSON list")
    return [parse_step(item) for item in payload]


def parse_step(obj: object) -> Step:
    """Decode one JSON step (see the package docstring for the format)."""
    data = _require_dict(obj, "step")
    kind = data.get("kind", "text")
    if kind == "error":
        return _parse_error(data)
    if kind in _FAULT_KINDS:
        return _parse_reply(data, fault=_parse_fault(data))
    if kind in _REPLY_KINDS:
        fault_obj = data.get("fault")
        fault = None if fault_obj is None else _parse_fault(_require_dict(fault_obj, "fault"))
        return _parse_reply(data, fault=fault)
    raise ScriptError(f"unknown step kind: {kind!r}")


def _require_dict(obj: object, what: str) -> JSONDict:
    """Return ``obj`` as a dict or raise :class:`ScriptError`."""
    if not isinstance(obj, dict):
        raise ScriptError(f"{what} must be a JSON object")
    return obj


def _str_tuple(value: object, what: str) -> tuple[str, ...]:
    """Decode a string or a list of strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ScriptError(f"{what} must be a string or a list of strings")


def _parse_usage(value: object) -> Usage | None:
    """Decode an optional usage object."""
    if value is None:
        return None
    data = _require_dict(value, "usage")
    known = {
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    }
    unknown = set(data) - known
    if unknown:
        raise ScriptError(f"unknown usage fields: {sorted(unknown)}")
    return Usage(**{k: int(v) for k, v in data.items()})


def _parse_tool_call(value: object) -> ToolCall:
    """Decode one tool call object."""
    data = _require_dict(value, "tool call")
    name = data.get("name")
    if not isinstance(name, str):
        raise ScriptError("tool call needs a string 'name'")
    chunks = data.get("argument_chunks")
    return ToolCall(
        name=name,
        input=_require_dict(data.get("input", {}), "tool call input"),
        id=data.get("id"),
        argument_chunks=None if chunks is None else _str_tuple(chunks, "argument_chunks"),
    )


def _parse_tool_calls(data: JSONDict) -> tuple[ToolCall, ...]:
    """Decode ``tool_calls`` or the single-call shorthand (``name``/``input``)."""
    calls = [_parse_tool_call(c) for c in data.get("tool_calls", [])]
    if "name" in data:
        calls.append(_parse_tool_call(data))
    if data.get("kind") in ("tool_call", "tool_calls") and not calls:
        raise ScriptError("a tool_call step needs 'tool_calls' or 'name'")
    return tuple(calls)


def _parse_reply(data: JSONDict, fault: Fault | None) -> Reply:
    """Decode the reply fields shared by all content steps."""
    text = _str_tuple(data.get("chunks", data.get("text")), "chunks")
    return Reply(
        text=text,
        tool_calls=_parse_tool_calls(data),
        usage=_parse_usage(data.get("usage")),
        stop_reason=data.get("stop_reason"),
        chunk_delay=float(data.get("chunk_delay", 0.0)),
        fault=fault,
    )


def _parse_fault(data: JSONDict) -> Fault:
    """Decode a fault from an object with a ``kind``."""
    kind = data.get("kind")
    after = int(data.get("after_chunks", 0))
    if kind == "disconnect":
        return Disconnect(after_chunks=after, reset=bool(data.get("reset", False)))
    if kind == "stall":
        return Stall(after_chunks=after, before_headers=bool(data.get("before_headers", False)))
    if kind == "stream_error":
        return StreamError(
            after_chunks=after,
            error_type=str(data.get("error_type", "overloaded_error")),
            message=str(data.get("message", "Overloaded")),
        )
    raise ScriptError(f"unknown fault kind: {kind!r}")


def _parse_error(data: JSONDict) -> ErrorReply:
    """Decode an ``error`` step."""
    status = data.get("status")
    if not isinstance(status, int):
        raise ScriptError("an error step needs an integer 'status'")
    retry_after = data.get("retry_after")
    headers = _require_dict(data.get("headers", {}), "headers")
    return ErrorReply(
        status=status,
        message=str(data.get("message", "Scripted error")),
        error_type=data.get("error_type"),
        retry_after=None if retry_after is None else float(retry_after),
        headers=tuple((str(k), str(v)) for k, v in headers.items()),
    )
