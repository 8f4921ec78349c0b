"""A fake model-provider HTTP server (Anthropic Messages + OpenAI Chat Completions).

In-process use::

    with FakeProvider() as fake:
        fake.script_text("Hel", "lo", usage=Usage(input_tokens=3, output_tokens=2))
        client = anthropic.AsyncAnthropic(
            base_url=fake.anthropic_base_url, api_key="k", max_retries=0
        )
        ...
        fake.wait_for_requests(1)

JSON steps for ``POST /_fake/script`` (a list, or ``{"steps": [...], "model": "m"}``)::

    {"kind": "text", "chunks": ["Hel", "lo"], "usage": {"input_tokens": 3, "output_tokens": 2,
     "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
     "stop_reason": "end_turn", "chunk_delay": 0.0}
    {"kind": "tool_call", "text": ["Checking."], "tool_calls": [{"name": "get_weather",
     "id": "toolu_1", "input": {"city": "Paris"},
     "argument_chunks": ["{\\"city\\":", "\\"Paris\\"}"]}]}
    {"kind": "tool_call", "name": "get_weather", "input": {"city": "Paris"}}      # shorthand
    {"kind": "error", "status": 429, "message": "slow down", "error_type": "rate_limit_error",
     "retry_after": 3, "headers": {"x-should-retry": "false"}}
    {"kind": "disconnect", "chunks": ["a", "b"], "after_chunks": 1, "reset": false}
    {"kind": "stall", "chunks": ["a", "b"], "after_chunks": 1, "before_headers": false}
    {"kind": "stream_error", "chunks": ["a"], "after_chunks": 1, "error_type": "overloaded_error",
     "message": "Overloaded"}

Any text/tool_call step may also carry
``"fault": {"kind": "disconnect" | "stall" | "stream_error", ...}``.
See :mod:`.control` for the other endpoints.
"""

from .provider import FakeProvider
from .script import (
    CutShort,
    Disconnect,
    ErrorReply,
    Fault,
    Reply,
    Stall,
    Step,
    StreamError,
    ToolCall,
    Usage,
    parse_step,
    parse_steps,
)
from .state import RecordedRequest

__all__ = [
    "CutShort",
    "Disconnect",
    "ErrorReply",
    "FakeProvider",
    "Fault",
    "RecordedRequest",
    "Reply",
    "Stall",
    "Step",
    "StreamError",
    "ToolCall",
    "Usage",
    "parse_step",
    "parse_steps",
]
