"""The Anthropic Messages API dialect (``POST /v1/messages``)."""

from __future__ import annotations

import json

from .script import ErrorReply, JSONDict, Reply, StreamError, ToolCall, Usage, argument_pieces
from .wire import Frame, ReplyContext, last_user_message_text, sse

_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


def stop_reason(reply: Reply) -> str:
    """The Anthropic ``stop_reason`` for a reply (OpenAI names are mapped)."""
    if reply.stop_reason is not None:
        return _STOP_REASONS.get(reply.stop_reason, reply.stop_reason)
    return "tool_use" if reply.tool_calls else "end_turn"


def tool_id(call: ToolCall, ctx: ReplyContext, position: int) -> str:
    """The scripted tool-use id, or a deterministic fake one."""
    return call.id if call.id is not None else f"toolu_fake_{ctx.seq}_{position}"


def usage_json(usage: Usage, output_tokens: int) -> JSONDict:
    """A usage object with the given output token count."""
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
    }


def message_json(
    ctx: ReplyContext, content: list[JSONDict], reason: str | None, usage: JSONDict
) -> JSONDict:
    """A full ``message`` object."""
    return {
        "id": f"msg_fake_{ctx.seq}",
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": reason,
        "stop_sequence": None,
        "usage": usage,
    }


def _event(payload: JSONDict) -> bytes:
    """An SSE event whose ``event:`` name is the payload's ``type``."""
    return sse(payload, event=str(payload["type"]))


def _block_frames(index: int, start_block: JSONDict, deltas: list[JSONDict]) -> list[Frame]:
    """content_block_start, one content frame per delta, content_block_stop."""
    frames = [
        Frame(_event({"type": "content_block_start", "index": index, "content_block": start_block}))
    ]
    for delta in deltas:
        payload = {"type": "content_block_delta", "index": index, "delta": delta}
        frames.append(Frame(_event(payload), kind="content"))
    frames.append(Frame(_event({"type": "content_block_stop", "index": index})))
    return frames


def _text_block_frames(index: int, chunks: tuple[str, ...]) -> list[Frame]:
    """Frames of one streamed text block."""
    deltas = [{"type": "text_delta", "text": chunk} for chunk in chunks]
    return _block_frames(index, {"type": "text", "text": ""}, deltas)


def _tool_block_frames(index: int, call: ToolCall, call_id: str) -> list[Frame]:
    """Frames of one streamed tool_use block."""
    start = {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}
    deltas = [
        {"type": "input_json_delta", "partial_json": piece} for piece in argument_pieces(call)
    ]
    return _block_frames(index, start, deltas)


class AnthropicWire:
    """Anthropic Messages API request/response encoding."""

    name = "anthropic"

    def stream_frames(self, reply: Reply, ctx: ReplyContext) -> list[Frame]:
        """message_start, ping, the content blocks, message_delta, message_stop."""
        usage = reply.effective_usage()
        start = {
            "type": "message_start",
            "message": message_json(ctx, [], None, usage_json(usage, 1)),
        }
        frames = [
            Frame(_event(start), kind="preamble"),
            Frame(sse({"type": "ping"}, "ping"), kind="preamble"),
        ]
        index = 0
        if reply.thinking is not None:
            deltas = [{"type": "thinking_delta", "thinking": reply.thinking},
                      {"type": "signature_delta", "signature": f"sig-{ctx.seq}"}]
            frames += _block_frames(index, {"type": "thinking", "thinking": "",
                                            "signature": ""}, deltas)
            index += 1
        if reply.text:
            frames += _text_block_frames(index, reply.text)
            index += 1
        for position, call in enumerate(reply.tool_calls):
            frames += _tool_block_frames(index, call, tool_id(call, ctx, position))
            index += 1
        delta = {"stop_reason": stop_reason(reply), "stop_sequence": None}
        end = {
            "type": "message_delta",
            "delta": delta,
            "usage": usage_json(usage, usage.output_tokens),
        }
        frames.append(Frame(_event(end)))
        frames.append(Frame(_event({"type": "message_stop"})))
        return frames

    def stream_error_frame(self, fault: StreamError, ctx: ReplyContext) -> Frame:
        """An ``event: error`` frame."""
        payload = {"type": "error", "error": {"type": fault.error_type, "message": fault.message}}
        return Frame(sse(payload, event="error"))

    def complete_body(self, reply: Reply, ctx: ReplyContext) -> JSONDict:
        """A non-streamed ``message`` object."""
        content: list[JSONDict] = []
        if reply.text:
            content.append({"type": "text", "text": "".join(reply.text)})
        for position, call in enumerate(reply.tool_calls):
            arguments = json.loads("".join(argument_pieces(call)))
            content.append(
                {
                    "type": "tool_use",
                    "id": tool_id(call, ctx, position),
                    "name": call.name,
                    "input": arguments,
                }
            )
        usage = reply.effective_usage()
        return message_json(
            ctx, content, stop_reason(reply), usage_json(usage, usage.output_tokens)
        )

    def error_body(self, error: ErrorReply, request_id: str) -> JSONDict:
        """``{"type": "error", "error": {...}, "request_id": ...}``."""
        return {
            "type": "error",
            "error": {"type": error.anthropic_type(), "message": error.message},
            "request_id": request_id,
        }

    def request_id(self, seq: int) -> tuple[str, str]:
        """Anthropic reports the id in ``request-id``."""
        return "request-id", f"req_fake_{seq}"

    def last_user_text(self, body: JSONDict) -> str:
        """Text of the last user message."""
        return last_user_message_text(body.get("messages"))
