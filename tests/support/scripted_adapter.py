"""An in-memory :class:`ProviderAdapter`: scripted replies, no HTTP (like httpx's MockTransport).

Fast turn-loop tests use it beside the HTTP fake provider (which runs the
real SDKs). Each LLM call takes the first queued :class:`ScriptedReply` whose
``model`` and ``match`` fit the request; with none queued it answers
``Echo: <last user text>``. A reply can hold a :class:`asyncio.Event` gate to
pause mid-stream (the test releases it) and a :class:`ProviderError` to fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from switchman.engine.config.registry import ProviderSpec
from switchman.engine.messages import Block, TextBlock, ToolUseBlock, Usage
from switchman.engine.providers.base import (
    Finished,
    ProviderRequest,
    StreamEvent,
    TextDelta,
    ToolCall,
    UsageReport,
    request_sent,
)


@dataclass
class ScriptedReply:
    """One scripted answer."""

    text: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=lambda: Usage(100, 10))
    stop_reason: str | None = None
    model: str | None = None
    """Only for requests to this model id (e.g. ``anthropic:claude-haiku-4-5``)."""
    match: str | None = None
    """Only for requests whose first user message contains this text."""
    gate: asyncio.Event | None = None
    """Pause after the first text chunk (or the ``gate_after``-th) until set."""
    gate_after: int = 1
    reached: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the reply starts streaming."""
    error: Exception | None = None
    """Raised instead of answering: a :class:`ProviderError`, or any exception (a bug)."""

    def fits(self, request: ProviderRequest) -> bool:
        """Whether this reply answers ``request``."""
        first = next((m.text() for m in request.messages if m.role == "user"), "")
        return (self.model is None or self.model == request.model_id) and \
            (self.match is None or self.match in first)


class ScriptedAdapter:
    """A provider adapter (for every provider) that plays scripted replies."""

    def __init__(self) -> None:
        self.replies: list[ScriptedReply] = []
        self.requests: list[ProviderRequest] = []
        self.request_times: list[float] = []

    def adapter(self, provider: ProviderSpec) -> ScriptedAdapter:
        """The :class:`AdapterSource` interface: this object serves every provider."""
        return self

    def script(self, *replies: ScriptedReply) -> None:
        """Queue replies."""
        self.replies.extend(replies)

    def text(self, *chunks: str, **options: Any) -> ScriptedReply:
        """Queue a text reply."""
        reply = ScriptedReply(text=chunks, **options)
        self.script(reply)
        return reply

    def calls(self, *calls: tuple[str, str, dict[str, Any]], **options: Any) -> ScriptedReply:
        """Queue a reply calling tools, given as (id, name, input)."""
        reply = ScriptedReply(tool_calls=tuple(ToolCall(i, n, a) for i, n, a in calls),
                              **options)
        self.script(reply)
        return reply

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Play the first fitting reply."""
        self.requests.append(request)
        self.request_times.append(asyncio.get_running_loop().time())
        reply = self._take(request)
        reply.reached.set()
        request_sent()  # as the SDK adapters do once the request is on the socket
        if reply.error is not None:
            raise reply.error
        yield UsageReport(Usage(reply.usage.input_tokens, 1))
        for index, chunk in enumerate(reply.text):
            yield TextDelta(chunk)
            if index == reply.gate_after - 1 and reply.gate is not None:
                await reply.gate.wait()
        for call in reply.tool_calls:
            yield call
        content: list[Block] = [TextBlock("".join(reply.text))] if reply.text else []
        content += [ToolUseBlock(c.id, c.name, c.input) for c in reply.tool_calls]
        stop = reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")
        yield Finished(stop, reply.usage, content)

    def _take(self, request: ProviderRequest) -> ScriptedReply:
        for index, reply in enumerate(self.replies):
            if reply.fits(request):
                return self.replies.pop(index)
        last = next((m.text() for m in reversed(request.messages) if m.role == "user"), "")
        return ScriptedReply(text=(f"Echo: {last}",))
