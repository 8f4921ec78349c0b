"""The Anthropic Messages API through the official ``anthropic`` SDK (async, streaming)."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

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
    announce_when_sent,
    normalize_history,
)
from switchman.engine.providers.errors import (
    ProviderError,
    class_for_status,
    cut_short,
    error_detail,
    retry_after_seconds,
    shown_address,
    unreadable,
)
from switchman.engine.routing.tiers import thinking_budget

_ENCODER = msgspec.json.Encoder()
CONNECT_TIMEOUT = 10.0
THINKING_KEPT = 256
"""Answers whose thinking blocks are remembered (see :meth:`AnthropicAdapter._remember`)."""


class AnthropicAdapter:
    """Streams calls to one Anthropic-compatible endpoint with one key."""

    def __init__(self, provider: ProviderSpec, key: str | None) -> None:
        self._sdk = importlib.import_module("anthropic")
        self._key = key or ""
        timeout = self._sdk.Timeout(provider.timeout_seconds, connect=CONNECT_TIMEOUT)
        self._client = self._sdk.AsyncAnthropic(
            api_key=self._key or "missing",
            base_url=provider.base_url,
            max_retries=0,  # Switchman owns retries (see sessions.turn)
            timeout=timeout,
            # the client the SDK would make (its limits, keep-alive, timeout), telling the
            # turn when a request has left
            http_client=self._sdk.DefaultAsyncHttpxClient(
                timeout=timeout, event_hooks={"request": [announce_when_sent]}),
        )
        self._message = importlib.import_module("anthropic.types").Message
        self._events = self._sdk.AsyncStream[
            importlib.import_module("anthropic.types").RawMessageStreamEvent]
        self._thinking: dict[str, list[dict[str, Any]]] = {}
        # The SDK's own partial-JSON parser (a dependency of the SDK): a tool call cut off
        # by max_tokens keeps the arguments that did arrive, as the SDK's helper did.
        self._parse_json = importlib.import_module("jiter").from_json

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Yield text and tool calls as they arrive, then the final result.

        Reads the SDK's raw events: its ``messages.stream()`` helper rebuilds a message
        snapshot (pydantic objects) at every event, most of the CPU each delta cost the
        daemon under many streams; the adapter keeps only what it uses (:class:`_Answer`).

        The request body is encoded here (:meth:`_body`) and handed to the SDK as bytes:
        ``messages.create`` copies every dict of the body (the tool definitions' schemas
        included) and then encodes it with the standard ``json`` module, about 0.5 ms per
        request for the eleven tools a turn is offered, before the request can leave.
        """
        answer = _Answer(self._parse_json)
        try:
            async with await self._client.post(
                    "/v1/messages", content=self._body(request), cast_to=self._message,
                    stream=True, stream_cls=self._events) as stream:
                async for event in stream:
                    converted = answer.take(event)
                    if converted is not None:
                        yield converted
        except Exception as exc:
            raise self._classify(exc, request.model_id) from None
        if not answer.whole:
            raise cut_short(request.model_id)
        self._remember(answer.thinking(), answer.tool_ids())
        yield answer.finished()

    def _body(self, request: ProviderRequest) -> bytes:
        """The request as JSON: :meth:`_arguments`, streamed, encoded by msgspec (the tool
        definitions are msgspec structs whose fields are the API's)."""
        return _ENCODER.encode({**self._arguments(request), "stream": True})

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
            arguments["tools"] = request.tools  # name, description, input_schema
        return arguments

    def _remember(self, thinking: list[dict[str, Any]], tool_ids: list[str]) -> None:
        """Keep an answer's thinking blocks, keyed by its tool calls: with extended thinking
        the API wants them back, unchanged, before those calls in the next request of the
        tool loop. Transcripts do not store them, so they live here for the turn."""
        if not thinking:
            return
        for tool_id in tool_ids:
            self._thinking[tool_id] = thinking
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
            return ProviderError(ErrorClass.NETWORK, detail, model=model,
                                 address=shown_address(self._client.base_url))
        if (failure := unreadable(exc, model)) is not None:
            return failure
        raise exc


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


class _Answer:
    """One streamed answer, assembled from the raw events: text, tool calls (their JSON
    arguments joined and parsed when the block ends), thinking blocks with their
    signatures, usage and the stop reason."""

    def __init__(self, parse_json: Callable[..., Any]) -> None:
        self._parse_json = parse_json
        self._blocks: dict[int, dict[str, Any]] = {}
        """By index: ``text`` and ``tool_use`` blocks with their pieces so far, and
        thinking blocks as the API sent them (``redacted_thinking`` whole)."""
        self._pieces: dict[int, list[str]] = {}
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._ended = False
        """``message_stop`` arrived."""

    def take(self, event: Any) -> StreamEvent | None:
        """Add one raw event; what it means for the turn, if anything."""
        kind = event.type
        if kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        if kind == "content_block_start":
            block = event.content_block
            if block.type in ("text", "tool_use", "thinking", "redacted_thinking"):
                self._blocks[event.index] = block.model_dump()
                self._pieces[event.index] = []
            return None
        if kind == "content_block_stop":
            return self._stop(event.index)
        if kind == "message_start":
            self._usage = {k: v or 0 for k, v in _usage_counts(event.message.usage).items()}
            return UsageReport(Usage(**self._usage))
        if kind == "message_stop":
            self._ended = True
        elif kind == "message_delta":
            self._stop_reason = event.delta.stop_reason
            # The counts are totals so far; those left out keep message_start's values.
            self._usage.update({k: v for k, v in _usage_counts(event.usage).items()
                                if v is not None})
        return None

    @property
    def whole(self) -> bool:
        """Whether the body carried the whole answer: ``message_stop`` came, or the
        ``message_delta`` with the stop reason sent just before it; from a server that leaves
        both out (some Anthropic-compatible ones), every content block begun was closed. A
        block left open, or no block at all, without either is a body that ended before the
        answer did (:func:`cut_short`)."""
        return self._ended or self._stop_reason is not None \
            or (bool(self._blocks) and not self._pieces)

    def _delta(self, index: int, delta: Any) -> StreamEvent | None:
        block = self._blocks.get(index)
        if block is None:
            return None
        kind = delta.type
        if kind == "text_delta" and block["type"] == "text":
            self._pieces[index].append(delta.text)
            return TextDelta(delta.text) if delta.text else None
        if kind == "input_json_delta" and block["type"] == "tool_use":
            self._pieces[index].append(delta.partial_json)
        elif kind == "thinking_delta" and block["type"] == "thinking":
            self._pieces[index].append(delta.thinking)
        elif kind == "signature_delta" and block["type"] == "thinking":
            block["signature"] = delta.signature  # sent whole, once
        return None

    def _stop(self, index: int) -> StreamEvent | None:
        block = self._blocks.get(index)
        if block is None:
            return None
        pieces = "".join(self._pieces.pop(index, ()))
        if block["type"] == "text":
            block["text"] += pieces
        elif block["type"] == "thinking":
            block["thinking"] += pieces
        elif block["type"] == "tool_use":
            if pieces:
                block["input"] = self._parse_json(pieces.encode(), partial_mode=True)
            arguments = block["input"]
            block["input"] = dict(arguments) if isinstance(arguments, dict) else {}
            return ToolCall(block["id"], block["name"], block["input"])
        return None

    def thinking(self) -> list[dict[str, Any]]:
        """The answer's thinking blocks, exactly as the API sent them (signatures included)."""
        return [b for _, b in sorted(self._blocks.items())
                if b["type"] in ("thinking", "redacted_thinking")]

    def tool_ids(self) -> list[str]:
        """The ids of the answer's tool calls."""
        return [b["id"] for _, b in sorted(self._blocks.items()) if b["type"] == "tool_use"]

    def finished(self) -> Finished:
        """The end of the call: stop reason, usage, and the text and tool calls in order."""
        for index in list(self._pieces):  # a block the stream never closed
            self._stop(index)
        content: list[Block] = []
        for _, block in sorted(self._blocks.items()):
            if block["type"] == "text":
                content.append(TextBlock(block["text"]))
            elif block["type"] == "tool_use":
                content.append(ToolUseBlock(block["id"], block["name"], block["input"]))
        usage = Usage(**self._usage) if self._usage else Usage()
        return Finished(_stop_reason(self._stop_reason), usage, content)


def _usage_counts(usage: Any) -> dict[str, Any]:
    """The counts Switchman keeps, by :class:`Usage` field (None where not reported)."""
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "cache_read_tokens": getattr(usage, "cache_read_input_tokens", None),
            "cache_write_tokens": getattr(usage, "cache_creation_input_tokens", None)}


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
