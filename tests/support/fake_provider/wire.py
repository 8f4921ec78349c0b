"""Shared pieces of the wire formats: frames, reply context, the format protocol."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, Protocol

from .script import ErrorReply, JSONDict, Reply, StreamError

FrameKind = Literal["preamble", "content", "structure"]


@dataclass(frozen=True)
class Frame:
    """One SSE event ready to write.

    ``kind`` is ``"content"`` for text / tool-argument deltas (the units that
    ``after_chunks`` counts), ``"preamble"`` for the leading events every
    stream starts with, and ``"structure"`` for everything else.
    """

    data: bytes
    kind: FrameKind = "structure"


@dataclass(frozen=True)
class ReplyContext:
    """What a wire format needs to know about the request being answered."""

    model: str
    seq: int
    created: int
    body: JSONDict


class WireFormat(Protocol):
    """An API dialect the fake speaks."""

    name: str

    def stream_frames(self, reply: Reply, ctx: ReplyContext) -> list[Frame]:
        """All SSE frames of a complete streamed reply."""
        ...

    def stream_error_frame(self, fault: StreamError, ctx: ReplyContext) -> Frame:
        """An in-stream error event."""
        ...

    def complete_body(self, reply: Reply, ctx: ReplyContext) -> JSONDict:
        """The JSON body of a non-streamed reply."""
        ...

    def error_body(self, error: ErrorReply, request_id: str) -> JSONDict:
        """The JSON body of an HTTP error response."""
        ...

    def request_id(self, seq: int) -> tuple[str, str]:
        """The response header name and value carrying a request id."""
        ...

    def last_user_text(self, body: JSONDict) -> str:
        """The text of the last user message (for the default echo reply)."""
        ...


def sse(data: object, event: str | None = None) -> bytes:
    """Encode one server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def text_of_content(content: object) -> str:
    """Join the text parts of a message ``content`` (string or block list)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return " ".join(p for p in parts if isinstance(p, str))


def last_user_message_text(messages: object) -> str:
    """The text of the last ``role == "user"`` message in a message list."""
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of_content(message.get("content"))
    return ""
