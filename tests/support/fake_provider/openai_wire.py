"""The OpenAI Chat Completions dialect (``POST /v1/chat/completions``).

Scripted usage is in Anthropic terms; it maps to OpenAI's as
``prompt_tokens = input + cache_read + cache_creation``,
``prompt_tokens_details.cached_tokens = cache_read``,
``completion_tokens = output`` and ``total_tokens = prompt + completion``.
"""

from __future__ import annotations

from .script import ErrorReply, JSONDict, Reply, StreamError, ToolCall, Usage, argument_pieces
from .wire import Frame, ReplyContext, last_user_message_text, sse

_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def finish_reason(reply: Reply) -> str:
    """The OpenAI ``finish_reason`` (Anthropic names are mapped)."""
    if reply.stop_reason is not None:
        return _FINISH_REASONS.get(reply.stop_reason, reply.stop_reason)
    return "tool_calls" if reply.tool_calls else "stop"


def call_id(call: ToolCall, ctx: ReplyContext, position: int) -> str:
    """The scripted tool call id, or a deterministic fake one."""
    return call.id if call.id is not None else f"call_fake_{ctx.seq}_{position}"


def usage_json(usage: Usage) -> JSONDict:
    """OpenAI ``CompletionUsage`` for the scripted usage."""
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
    }


def include_usage(body: JSONDict) -> bool:
    """Whether the request asked for ``stream_options.include_usage``."""
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


class _ChunkBuilder:
    """Builds ``chat.completion.chunk`` frames for one response."""

    def __init__(self, ctx: ReplyContext) -> None:
        self.ctx = ctx
        self.with_usage = include_usage(ctx.body)

    def chunk(self, choices: list[JSONDict]) -> JSONDict:
        """A chunk envelope around ``choices``."""
        payload: JSONDict = {
            "id": f"chatcmpl-fake-{self.ctx.seq}",
            "object": "chat.completion.chunk",
            "created": self.ctx.created,
            "model": self.ctx.model,
            "system_fingerprint": "fp_fake",
            "choices": choices,
        }
        if self.with_usage:
            payload["usage"] = None
        return payload

    def delta(self, delta: JSONDict, finish: str | None = None) -> bytes:
        """An SSE frame with one choice carrying ``delta``."""
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse(self.chunk([choice]))

    def tool_frames(self, position: int, call: ToolCall) -> list[Frame]:
        """The header chunk (id, name) and argument delta chunks of a tool call."""
        header = {
            "index": position,
            "id": call_id(call, self.ctx, position),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        where = {"index": position} if call.indexed else {}
        if not call.indexed:
            del header["index"]
        frames = [Frame(self.delta({"tool_calls": [header]}))]
        for piece in argument_pieces(call):
            part = {**where, "function": {"arguments": piece}}
            frames.append(Frame(self.delta({"tool_calls": [part]}), kind="content"))
        return frames

    def usage_frame(self, usage: Usage) -> Frame:
        """The trailing usage-only chunk (empty ``choices``)."""
        payload = self.chunk([])
        payload["usage"] = usage_json(usage)
        return Frame(sse(payload))


class OpenAIWire:
    """OpenAI Chat Completions request/response encoding."""

    name = "openai"

    def stream_frames(self, reply: Reply, ctx: ReplyContext) -> list[Frame]:
        """Role chunk, content / tool chunks, finish chunk, [usage chunk], [DONE]."""
        build = _ChunkBuilder(ctx)
        role: JSONDict = {
            "role": "assistant",
            "content": "" if reply.text else None,
            "refusal": None,
        }
        frames = [Frame(build.delta(role), kind="preamble")]
        frames += [Frame(build.delta({"content": chunk}), kind="content") for chunk in reply.text]
        for position, call in enumerate(reply.tool_calls):
            frames += build.tool_frames(position, call)
        frames.append(Frame(build.delta({}, finish=finish_reason(reply))))
        if build.with_usage:
            frames.append(build.usage_frame(reply.effective_usage()))
        frames.append(Frame(sse("[DONE]")))
        return frames

    def stream_error_frame(self, fault: StreamError, ctx: ReplyContext) -> Frame:
        """A ``data: {"error": {...}}`` frame, which the SDK raises as APIError."""
        payload = {
            "error": {
                "message": fault.message,
                "type": fault.error_type,
                "param": None,
                "code": None,
            }
        }
        return Frame(sse(payload))

    def complete_body(self, reply: Reply, ctx: ReplyContext) -> JSONDict:
        """A non-streamed ``chat.completion`` object."""
        message: JSONDict = {
            "role": "assistant",
            "content": "".join(reply.text) or None,
            "refusal": None,
        }
        if reply.tool_calls:
            message["tool_calls"] = [
                _full_tool_call(call, ctx, i) for i, call in enumerate(reply.tool_calls)
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": finish_reason(reply),
        }
        return {
            "id": f"chatcmpl-fake-{ctx.seq}",
            "object": "chat.completion",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_fake",
            "choices": [choice],
            "usage": usage_json(reply.effective_usage()),
        }

    def error_body(self, error: ErrorReply, request_id: str) -> JSONDict:
        """``{"error": {"message", "type", "param", "code"}}``."""
        default_type = "server_error" if error.status >= 500 else "invalid_request_error"
        error_type, code = _ERROR_TYPES.get(error.status, (default_type, None))
        if error.error_type is not None:
            error_type = error.error_type
        return {
            "error": {"message": error.message, "type": error_type, "param": None, "code": code}
        }

    def request_id(self, seq: int) -> tuple[str, str]:
        """OpenAI reports the id in ``x-request-id``."""
        return "x-request-id", f"req_fake_{seq}"

    def last_user_text(self, body: JSONDict) -> str:
        """Text of the last user message."""
        return last_user_message_text(body.get("messages"))


def _full_tool_call(call: ToolCall, ctx: ReplyContext, position: int) -> JSONDict:
    """A complete (non-streamed) tool call object."""
    arguments = "".join(argument_pieces(call))
    return {
        "id": call_id(call, ctx, position),
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }
