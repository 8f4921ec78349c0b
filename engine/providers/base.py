"""The adapter interface: a canonical request in, a stream of canonical events out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from typing import Any, Protocol

import msgspec

from switchman.engine.messages import (
    AttachmentBlock,
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool the model may call."""

    name: str
    description: str
    input_schema: dict[str, Any]


class ProviderRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One LLM call."""

    model_id: str
    api_model: str
    messages: list[Message]
    system: str | None = None
    tools: list[ToolSpec] = []
    max_output_tokens: int = 4096
    reasoning_effort: str | None = None
    """``low`` / ``medium`` / ``high``, only for models that take it (see routing.tiers)."""


class TextDelta(msgspec.Struct, frozen=True):
    """More answer text."""

    text: str


INVALID_ARGUMENTS = "_invalid_arguments"
"""The one key of a :class:`ToolCall`'s ``input`` whose arguments were not a JSON object:
their text as the model sent it (the tool answers with an error the model can correct)."""


class ToolCall(msgspec.Struct, frozen=True):
    """A complete tool call requested by the model."""

    id: str
    name: str
    input: dict[str, Any]


class UsageReport(msgspec.Struct, frozen=True):
    """Usage the provider reported before the end (Anthropic sends input tokens at the start),
    so a call cancelled midway is still charged for what it used."""

    usage: Usage


class Finished(msgspec.Struct, frozen=True):
    """The call ended: why, what it used, and the assembled assistant content."""

    stop_reason: str
    usage: Usage
    content: list[Block]


StreamEvent = TextDelta | ToolCall | UsageReport | Finished


class ProviderAdapter(Protocol):
    """Anything that can stream one LLM call."""

    def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Yield text deltas, tool calls and usage reports, then one :class:`Finished`."""
        ...


REQUEST_SENT: ContextVar[Callable[[], None] | None] = ContextVar("request_sent", default=None)
"""What to call once the current task's provider request has left (set by the turn runner).

The turn records its start while the provider works on the request, rather than
before sending it (``sessions/turn.py``); an adapter that cannot tell is still
correct, only slower: the runner records the start at the first event at the latest.
"""


def request_sent() -> None:
    """Tell the running turn that its request is on its way to the provider."""
    callback = REQUEST_SENT.get()
    if callback is not None:
        callback()


async def announce_when_sent(request: Any) -> None:
    """An httpx request hook: call :func:`request_sent` once the body has been written.

    httpcore reports the steps of a request to a ``trace`` extension; its
    ``…send_request_body.complete`` is the moment the whole request is on the socket.
    """
    if REQUEST_SENT.get() is None:
        return

    async def trace(step: str, info: dict[str, Any]) -> None:
        if step.endswith("send_request_body.complete"):
            request_sent()

    request.extensions["trace"] = trace


class AdapterSource(Protocol):
    """Where turns get the adapter for a provider (the SDK factory, or a test's fake)."""

    def adapter(self, provider: Any) -> ProviderAdapter:
        """The adapter for ``provider`` (a :class:`ProviderSpec`)."""
        ...


UNFINISHED_CALL = ("The tool call did not complete: the turn was stopped (cancelled, or "
                   "Switchman exited) before its result was recorded, so it may or may not "
                   "have taken effect. Check before doing it again.")
"""The result given to a tool call that has none (an edit approved just before the daemon
was killed may have been applied: the model is told to look rather than repeat it)."""


UNANSWERED_DELEGATION = ("(No answer to this /delegate: its worker did not finish. Switchman "
                         "stopped while it ran, or it is still running, so what it found, if "
                         "anything, is not known.)")
"""What the model reads after a user's ``/delegate`` that has no answer (its daemon was
killed while the worker ran), so the command is not read as part of the next message."""


def normalize_history(messages: list[Message]) -> list[Message]:
    """Make a stored transcript acceptable to providers.

    A turn that was cancelled or interrupted may have left a tool call with no
    result; such calls are answered with an error result so every tool call is
    followed by its result, as both APIs require. A user's ``/delegate`` (the only
    user message outside a turn) left without its answer gets a note saying so.
    A message sent again after its turn failed (what "Your message is saved; send it
    again to retry" and the editors' Retry do) is sent once: the unanswered first copy,
    attachments and all, is left out rather than paid for and read twice.
    Attachments become text.
    """
    answered = {b.tool_use_id for m in messages for b in m.content
                if isinstance(b, ToolResultBlock)}
    out: list[Message] = []
    for message in messages:
        if any(isinstance(b, AttachmentBlock) for b in message.content):
            message = msgspec.structs.replace(message, content=[  # noqa: PLW2901
                TextBlock(b.rendered()) if isinstance(b, AttachmentBlock) else b
                for b in message.content])
        if out and message.role == "user" and message.turn_id is not None \
                and out[-1].role == "user" and out[-1].turn_id is not None \
                and out[-1].content == message.content:
            out.pop()  # an unanswered turn's message, sent again: keep the retry only
        if out and out[-1].role == "user" and out[-1].turn_id is None \
                and message.role == "user":
            out.append(msgspec.structs.replace(out[-1], id=out[-1].id + "-unanswered",
                                               role="assistant", model=None,
                                               content=[TextBlock(UNANSWERED_DELEGATION)]))
        out.append(message)
        missing = [b for b in message.content
                   if isinstance(b, ToolUseBlock) and b.id not in answered]
        if missing and message.role == "assistant":
            results: list[Block] = [ToolResultBlock(b.id, UNFINISHED_CALL, is_error=True)
                                    for b in missing]
            out.append(msgspec.structs.replace(message, id=message.id + "-synthetic",
                                               role="tool", content=results))
    return out
