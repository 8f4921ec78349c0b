"""The Anthropic Messages API through the official ``anthropic`` SDK (async, streaming)."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from typing import Any

from switchman.engine.availability import ErrorClass
from switchman.engine.config.registry import ProviderSpec
from switchman.engine.keys import redact
from switchman.engine.messages import (
    AttachmentBlock,
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ToolUseBlock,
    Usage,
)
from switchman.engine.providers.base import (
    Finished,
    ProviderRequest,
    StreamEvent,
    TextDelta,
    ToolCall,
    UsageReport,
    normalize_history,
)
from switchman.engine.providers.errors import (
    ProviderError,
    class_for_status,
    error_detail,
    retry_after_seconds,
)
from switchman.engine.routing.tiers import thinking_budget

CONNECT_TIMEOUT = 10.0
THINKING_KEPT = 256
"""Answers whose thinking blocks are remembered (see :meth:`AnthropicAdapter._remember`)."""


class AnthropicAdapter:
    """Streams calls to one Anthropic-compatible endpoint with one key."""

    def __init__(self, provider: ProviderSpec, key: str | None) -> None:
        self._sdk = importlib.import_module("anthropic")
        self._key = key or ""
        self._client = self._sdk.AsyncAnthropic(
            api_key=self._key or "missing",
            base_url=provider.base_url,
            max_retries=0,  # Switchman owns retries (see sessions.turn)
            timeout=self._sdk.Timeout(provider.timeout_seconds, connect=CONNECT_TIMEOUT),
        )
        self._thinking: dict[str, list[dict[str, Any]]] = {}
        self._snapshot_class = _stream_snapshot_class()

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Yield text and tool calls as they arrive, then the final result."""
        try:
            async with self._client.messages.stream(**self._arguments(request)) as stream:
                async for event in stream:
                    converted = _event(event)
                    if converted is not None:
                        yield converted
                final = await stream.get_final_message()
        except Exception as exc:
            raise self._classify(exc, request.model_id) from None
        self._remember(final.content)
        yield Finished(_stop_reason(final.stop_reason), _usage(final.usage),
                       [b for b in map(_block, final.content) if b is not None])

    def _arguments(self, request: ProviderRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": request.api_model,
            "max_tokens": request.max_output_tokens,
            "messages": to_anthropic(request.messages, self._thinking),
        }
        if request.system:
            arguments["system"] = request.system
        if request.reasoning_effort is not None:
            # Thinking counts against max_tokens: the answer keeps its own allowance.
            budget = thinking_budget(request.reasoning_effort)
            arguments["thinking"] = {"type": "enabled", "budget_tokens": budget}
            arguments["max_tokens"] = request.max_output_tokens + budget
        if request.tools:
            arguments["tools"] = [{"name": t.name, "description": t.description,
                                   "input_schema": t.input_schema} for t in request.tools]
        return arguments

    def _remember(self, content: list[Any]) -> None:
        """Keep an answer's thinking blocks, keyed by its tool calls: with extended thinking
        the API wants them back, unchanged, before those calls in the next request of the
        tool loop. Transcripts do not store them, so they live here for the turn."""
        thinking = [b.model_dump() for b in content
                    if getattr(b, "type", "") in ("thinking", "redacted_thinking")]
        if not thinking:
            return
        for block in content:
            if getattr(block, "type", "") == "tool_use":
                self._thinking[block.id] = thinking
        while len(self._thinking) > THINKING_KEPT:
            del self._thinking[next(iter(self._thinking))]

    def _classify(self, exc: Exception, model: str) -> ProviderError:
        sdk = self._sdk
        detail = redact(error_detail(exc), [self._key])
        if isinstance(exc, sdk.APIStatusError):
            error_type = getattr(exc, "type", None) or _body_type(exc)
            return ProviderError(class_for_status(exc.status_code, error_type), detail,
                                 model=model, status=exc.status_code if exc.status_code != 200
                                 else None, retry_after=retry_after_seconds(exc.response.headers))
        if isinstance(exc, sdk.APITimeoutError) or _is_timeout(exc):
            return ProviderError(ErrorClass.TIMEOUT, detail, model=model)
        if isinstance(exc, sdk.APIConnectionError) or _is_transport(exc):
            return ProviderError(ErrorClass.NETWORK, detail, model=model)
        raise exc


def _stream_snapshot_class() -> object:
    """The class the SDK names at the start of every stream, to be kept alive.

    The SDK's stream evaluates ``ParsedMessage[ResponseFormatT]`` on each
    ``message_start``. pydantic caches parametrised classes only weakly and nothing
    else holds this one, so each garbage collection frees it and the next stream
    rebuilds it: 1 to 5 ms before the first token, on about 40% of the daemon's turns
    (it allocates far more than a lone SDK client, so it collects more often).
    """
    try:
        streaming = importlib.import_module("anthropic.lib.streaming._messages")
        return streaming.ParsedMessage[streaming.ResponseFormatT]
    except (ImportError, AttributeError, TypeError):  # another SDK version: nothing to keep
        return None


def to_anthropic(messages: list[Message],
                 thinking: dict[str, list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """Canonical messages as Anthropic ``messages`` (tool results go in user turns);
    ``thinking`` holds remembered thinking blocks by tool call id, put back first."""
    out: list[dict[str, Any]] = []
    for message in normalize_history(messages):
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for b in map(_content, message.content) if b is not None]
        kept = next((thinking[b.id] for b in message.content
                     if isinstance(b, ToolUseBlock) and thinking and b.id in thinking), None)
        if role == "assistant" and kept:
            blocks = [*kept, *blocks]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _content(block: Block) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ImageBlock):
        return {"type": "image", "source": {"type": "base64", "media_type": block.media_type,
                                            "data": block.data}}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, AttachmentBlock):  # normally made text by normalize_history
        return {"type": "text", "text": block.rendered()}
    return {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content,
            "is_error": block.is_error}


def _event(event: Any) -> StreamEvent | None:
    kind = getattr(event, "type", None)
    if kind == "text":
        return TextDelta(event.text) if event.text else None
    if kind == "message_start":
        return UsageReport(_usage(event.message.usage))
    if kind == "content_block_stop" and getattr(event.content_block, "type", "") == "tool_use":
        block = event.content_block
        return ToolCall(block.id, block.name, dict(block.input or {}))
    return None


def _block(block: Any) -> Block | None:
    if block.type == "text":
        return TextBlock(block.text)
    if block.type == "tool_use":
        return ToolUseBlock(block.id, block.name, dict(block.input or {}))
    return None  # thinking and other blocks are not kept


def _usage(usage: Any) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
    )


def _stop_reason(reason: str | None) -> str:
    return {"tool_use": "tool_use", "max_tokens": "max_tokens"}.get(reason or "", "end_turn")


def _body_type(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return error.get("type")
    return None



def _is_timeout(exc: Exception) -> bool:
    # The SDK does not wrap transport errors raised while a stream is being read.
    return any(cls.__name__ in ("TimeoutException", "ReadTimeout", "ConnectTimeout",
                                "WriteTimeout", "PoolTimeout") for cls in type(exc).__mro__)


def _is_transport(exc: Exception) -> bool:
    return any(cls.__name__ in ("TransportError", "NetworkError", "RemoteProtocolError",
                                "ReadError", "ConnectError", "ProtocolError")
               and cls.__module__.startswith(("httpx", "httpcore"))
               for cls in type(exc).__mro__)
