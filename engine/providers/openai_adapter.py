"""OpenAI Chat Completions (streaming, with usage) through the official ``openai`` SDK.

The same adapter serves OpenAI-compatible local servers (Ollama, vLLM, LM
Studio, llama.cpp) through the provider's ``base_url``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator
from typing import Any

from switchman.engine.availability import ErrorClass
from switchman.engine.config.registry import ApiKind, ProviderSpec
from switchman.engine.ids import new_id
from switchman.engine.keys import redact
from switchman.engine.messages import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from switchman.engine.providers.base import (
    INVALID_ARGUMENTS,
    Finished,
    ProviderRequest,
    StreamEvent,
    TextDelta,
    ToolCall,
    announce_when_sent,
    normalize_history,
)
from switchman.engine.providers.errors import (
    ProviderError,
    class_for_status,
    connection_failure,
    cut_short,
    error_detail,
    retry_after_seconds,
    shown_address,
    unreadable,
)

CONNECT_TIMEOUT = 10.0


class _PendingCall:
    """A tool call whose arguments are still arriving."""

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        self.arguments = ""

    def whole(self) -> bool:
        """Whether the call is named and its arguments so far are complete JSON."""
        try:
            json.loads(self.arguments)
        except json.JSONDecodeError:
            return False
        except ValueError:  # whole, but a number in it is too long to read (see finish)
            pass
        return bool(self.name)

    def finish(self) -> ToolCall:
        try:
            parsed = json.loads(self.arguments or "{}")
        except ValueError:  # not JSON, or an integer over Python's 4,300-digit limit
            parsed = {INVALID_ARGUMENTS: self.arguments}
        # A server that sends no id (some OpenAI-compatible ones) gets one: the history
        # pairs each result with its call by id, and Anthropic takes no empty id.
        return ToolCall(self.id or f"call_{new_id()}", self.name,
                        parsed if isinstance(parsed, dict) else
                        {INVALID_ARGUMENTS: self.arguments})


def _call_key(part: Any, calls: dict[int, _PendingCall]) -> int:
    """Which call a streamed tool-call chunk belongs to: its ``index``. Some compatible servers
    send none: then a chunk with an id not seen yet starts a new call, one with a known id
    continues that call, and one without an id continues the latest call unless it starts
    another (:func:`_starts_another`). Every chunk was the first call's before, so separate
    calls were run together."""
    index = getattr(part, "index", None)
    if isinstance(index, int):
        return index
    if part.id:
        known = next((key for key, call in calls.items() if call.id == part.id), None)
        if known is not None:
            return known
        latest = next(reversed(calls), None)
        if latest is None or calls[latest].id:  # an id-less header may have come first
            return max(calls, default=-1) + 1
        return latest
    latest = next(reversed(calls), None)
    if latest is None:
        return 0
    return max(calls) + 1 if _starts_another(part, calls[latest]) else latest


def _starts_another(part: Any, latest: _PendingCall) -> bool:
    """Whether a chunk with neither index nor id begins a call of its own: it names a
    function while the latest call is whole (named, its arguments complete JSON), or names
    another function than the latest, which has no arguments yet. Arguments alone, or the
    latest's name repeated while its arguments are still arriving, continue the latest."""
    name: str | None = part.function.name if part.function is not None else None
    if not name or not latest.name:
        return False
    if not latest.arguments.strip():
        return name != latest.name
    return latest.whole()


class OpenAIAdapter:
    """Streams calls to one OpenAI or OpenAI-compatible endpoint."""

    def __init__(self, provider: ProviderSpec, key: str | None) -> None:
        self._sdk = importlib.import_module("openai")
        self._key = key or ""
        self._compatible = provider.api is ApiKind.OPENAI_COMPATIBLE
        timeout = self._sdk.Timeout(provider.timeout_seconds, connect=CONNECT_TIMEOUT)
        self._client = self._sdk.AsyncOpenAI(
            api_key=self._key or "not-needed",  # local servers ignore it; the SDK wants one
            base_url=provider.base_url,
            max_retries=0,  # Switchman owns retries (see sessions.turn)
            timeout=timeout,
            http_client=self._sdk.DefaultAsyncHttpxClient(  # as in the Anthropic adapter
                timeout=timeout, event_hooks={"request": [announce_when_sent]}),
        )

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Yield text and tool calls as they arrive, then the final result."""
        text: list[str] = []
        calls: dict[int, _PendingCall] = {}
        finish: str | None = None
        usage = Usage()
        try:
            stream = await self._client.chat.completions.create(**self._arguments(request))
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or ():
                    for event in self._choice(choice, text, calls):
                        yield event
                    finish = choice.finish_reason or finish
        except Exception as exc:
            raise self._classify(exc, request.model_id) from None
        # OpenAI's own API ends every answer with a finish_reason: without one the stream was
        # cut (a proxy that gave up), whatever arrived. Some OpenAI-compatible servers never
        # send it, so for them only an empty stream is plainly unfinished.
        if finish is None and (not self._compatible or (not text and not calls)):
            raise cut_short(request.model_id)
        finished_calls = [c.finish() for _, c in sorted(calls.items())]
        for call in finished_calls:
            yield call
        content: list[Block] = [TextBlock("".join(text))] if text else []
        content += [ToolUseBlock(c.id, c.name, c.input) for c in finished_calls]
        stop = "tool_use" if finished_calls else _stop_reason(finish or "stop")
        yield Finished(stop, usage, content)

    def _choice(self, choice: Any, text: list[str], calls: dict[int, _PendingCall]) -> list[
            StreamEvent]:
        delta = choice.delta
        events: list[StreamEvent] = []
        if delta is None:
            return events
        if delta.content:
            text.append(delta.content)
            events.append(TextDelta(delta.content))
        for part in delta.tool_calls or ():
            pending = calls.setdefault(_call_key(part, calls), _PendingCall())
            pending.id = part.id or pending.id
            if part.function is not None:
                pending.name = part.function.name or pending.name
                pending.arguments += part.function.arguments or ""
        return events

    def _arguments(self, request: ProviderRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": request.api_model,
            "messages": to_openai(request.messages, request.system),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        # Local servers differ on the newer field; OpenAI's own models need it.
        limit = "max_tokens" if self._compatible else "max_completion_tokens"
        arguments[limit] = request.max_output_tokens
        if request.reasoning_effort is not None:
            arguments["reasoning_effort"] = request.reasoning_effort
        if request.tools:
            arguments["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.input_schema}}
                for t in request.tools]
        return arguments

    def _classify(self, exc: Exception, model: str) -> ProviderError:
        sdk = self._sdk
        detail = redact(error_detail(exc), [self._key])
        if isinstance(exc, sdk.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else {}
            return ProviderError(class_for_status(exc.status_code, body.get("type")), detail,
                                 model=model, status=exc.status_code,
                                 retry_after=retry_after_seconds(exc.response.headers))
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError(ErrorClass.TIMEOUT, detail, model=model)
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderError(ErrorClass.NETWORK, detail, model=model,
                                 address=shown_address(self._client.base_url))
        if isinstance(exc, sdk.APIError):  # an error object inside the stream
            return ProviderError(ErrorClass.SERVER, detail, model=model)
        if (cause := connection_failure(exc)) is not None:
            return ProviderError(ErrorClass.NETWORK, redact(str(cause), [self._key]), model=model,
                                 address=shown_address(self._client.base_url))
        if (failure := unreadable(exc, model)) is not None:
            return failure
        raise exc


def to_openai(messages: list[Message], system: str | None) -> list[dict[str, Any]]:
    """Canonical messages as Chat Completions ``messages``."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in normalize_history(messages):
        if message.role == "tool":
            out += [{"role": "tool", "tool_call_id": b.tool_use_id, "content": b.content}
                    for b in message.content if isinstance(b, ToolResultBlock)]
        elif message.role == "assistant":
            out.append(_assistant(message))
        else:
            out.append({"role": "user", "content": _user_content(message.content)})
    return out


def _assistant(message: Message) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": "assistant", "content": message.text() or None}
    uses = message.tool_uses()
    if uses:
        entry["tool_calls"] = [{"id": u.id, "type": "function", "function": {
            "name": u.name, "arguments": json.dumps(u.input)}} for u in uses]
    return entry


def _user_content(blocks: list[Block]) -> str | list[dict[str, Any]]:
    """A user message's content: one string when it is all text, its blocks (the message, each
    attachment rendered) a blank line apart, as the separate blocks Anthropic is sent read;
    joined as they were, an attachment's closing fence ran into the next one's header."""
    if all(isinstance(b, TextBlock) for b in blocks):
        return "\n\n".join(b.text for b in blocks if isinstance(b, TextBlock) and b.text)
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append({"type": "image_url", "image_url": {
                "url": f"data:{block.media_type};base64,{block.data}"}})
    return parts


def _usage(usage: Any) -> Usage:
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    prompt = usage.prompt_tokens or 0
    return Usage(input_tokens=max(prompt - cached, 0), output_tokens=usage.completion_tokens or 0,
                 cache_read_tokens=cached)


def _stop_reason(finish: str) -> str:
    return {"length": "max_tokens", "tool_calls": "tool_use"}.get(finish, "end_turn")

