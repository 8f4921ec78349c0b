"""Tests of the fake provider, driven through the real Anthropic and OpenAI SDKs.

Besides checking the fake, these pin down how the installed SDK versions
behave (exception classes, stream helpers, usage reporting), so a change in
an SDK upgrade shows up here first.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.support.fake_provider import (
    FakeProvider,
    Reply,
    Stall,
    ToolCall,
    Usage,
    parse_step,
)

ANTHROPIC_KEY = "sk-ant-fake-key"
OPENAI_KEY = "sk-openai-fake-key"
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
    "nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
WAIT = 5.0
REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A started fake provider, stopped after the test."""
    with FakeProvider() as provider:
        yield provider


def anthropic_client(fake: FakeProvider, **options: Any) -> anthropic.AsyncAnthropic:
    """A real Anthropic client pointed at the fake, without retries."""
    options.setdefault("max_retries", 0)
    return anthropic.AsyncAnthropic(
        base_url=fake.anthropic_base_url, api_key=ANTHROPIC_KEY, **options
    )


def openai_client(fake: FakeProvider, **options: Any) -> openai.AsyncOpenAI:
    """A real OpenAI client pointed at the fake, without retries."""
    options.setdefault("max_retries", 0)
    return openai.AsyncOpenAI(base_url=fake.openai_base_url, api_key=OPENAI_KEY, **options)


async def anthropic_text(
    client: anthropic.AsyncAnthropic, prompt: str = "hi", sink: list[str] | None = None
) -> list[str]:
    """Stream a one-message conversation and collect the text deltas.

    Deltas are also appended to ``sink`` as they arrive, so a caller still sees
    what was received when the stream fails part-way.
    """
    received = [] if sink is None else sink
    async with client.messages.stream(
        model="claude-test", max_tokens=100, messages=[{"role": "user", "content": prompt}]
    ) as stream:
        async for text in stream.text_stream:
            received.append(text)
    return received


async def openai_text(
    client: openai.AsyncOpenAI, prompt: str = "hi", sink: list[str] | None = None
) -> list[str]:
    """Stream a one-message chat completion and collect the content deltas."""
    received = [] if sink is None else sink
    stream = await client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": prompt}], stream=True
    )
    async for chunk in stream:
        received.extend(c.delta.content for c in chunk.choices if c.delta.content)
    return received


# ---------------------------------------------------------------------------
# Anthropic Messages API
# ---------------------------------------------------------------------------


async def test_anthropic_streams_text_with_usage(fake: FakeProvider) -> None:
    usage = Usage(
        input_tokens=12, output_tokens=3, cache_read_input_tokens=40, cache_creation_input_tokens=5
    )
    fake.script_text("Hel", "lo ", "world", usage=usage)
    async with (
        anthropic_client(fake) as client,
        client.messages.stream(
            model="claude-test",
            max_tokens=100,
            system="You are terse.",
            messages=[{"role": "user", "content": "hi"}],
        ) as stream,
    ):
        event_types = [event.type async for event in stream]
        message = await stream.get_final_message()

    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello world"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens == 12
    assert message.usage.output_tokens == 3
    assert message.usage.cache_read_input_tokens == 40
    assert message.usage.cache_creation_input_tokens == 5
    assert event_types[0] == "message_start"
    assert event_types.count("text") == 3
    assert event_types[-2:] == ["message_delta", "message_stop"]


async def test_anthropic_records_request_headers_system_and_image(fake: FakeProvider) -> None:
    async with anthropic_client(fake) as client:
        await client.messages.create(
            model="claude-test",
            max_tokens=50,
            system=[{"type": "text", "text": "System prompt here"}],
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": PNG_B64,
                            },
                        },
                        {"type": "text", "text": "What is this?"},
                    ],
                }
            ],
        )
    (request,) = await fake.wait_for_requests_async(1)
    assert request.api == "anthropic"
    assert request.path == "/v1/messages"
    assert request.model == "claude-test"
    assert request.stream is False
    assert request.body["system"] == [{"type": "text", "text": "System prompt here"}]
    image = request.body["messages"][0]["content"][0]
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": PNG_B64}
    # anthropic 2.x sends the API key as a bearer token, not x-api-key.
    assert request.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert "x-api-key" not in request.headers
    assert request.headers["anthropic-version"]


async def test_anthropic_streams_tool_call_after_text(fake: FakeProvider) -> None:
    fake.script_tool_call(
        "get_weather", {"city": "Paris", "days": [1, 2]}, id="toolu_123", text=["Let me check."]
    )
    async with (
        anthropic_client(fake) as client,
        client.messages.stream(
            model="claude-test",
            max_tokens=100,
            messages=[{"role": "user", "content": "weather?"}],
            tools=[{"name": "get_weather", "input_schema": {"type": "object"}}],
        ) as stream,
    ):
        partials = [e.partial_json async for e in stream if e.type == "input_json"]
        message = await stream.get_final_message()

    assert len(partials) > 1
    assert json.loads("".join(partials)) == {"city": "Paris", "days": [1, 2]}
    assert message.stop_reason == "tool_use"
    text, tool = message.content
    assert text.type == "text"
    assert text.text == "Let me check."
    assert tool.type == "tool_use"
    assert (tool.id, tool.name, tool.input) == (
        "toolu_123",
        "get_weather",
        {"city": "Paris", "days": [1, 2]},
    )
    assert fake.requests[0].body["tools"][0]["name"] == "get_weather"


async def test_anthropic_raw_stream_with_two_tool_calls(fake: FakeProvider) -> None:
    fake.script_tool_calls(
        [ToolCall("a", {"x": 1}), ToolCall("b", {"y": "two"}, argument_chunks=('{"y":', '"two"}'))]
    )
    async with anthropic_client(fake) as client:
        stream = await client.messages.create(
            model="claude-test",
            max_tokens=100,
            messages=[{"role": "user", "content": "go"}],
            stream=True,
        )
        pieces: dict[int, str] = {}
        async for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                pieces[event.index] = pieces.get(event.index, "") + event.delta.partial_json
    assert {i: json.loads(p) for i, p in pieces.items()} == {0: {"x": 1}, 1: {"y": "two"}}


async def test_anthropic_non_streaming_reply(fake: FakeProvider) -> None:
    fake.script(Reply(text=("Hi ", "there"), tool_calls=(ToolCall("t", {"k": "v"}),)))
    async with anthropic_client(fake) as client:
        message = await client.messages.create(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hi there"
    assert message.stop_reason == "tool_use"


ANTHROPIC_ERRORS: list[tuple[int, type[anthropic.APIStatusError], str]] = [
    (400, anthropic.BadRequestError, "invalid_request_error"),
    (401, anthropic.AuthenticationError, "authentication_error"),
    (403, anthropic.PermissionDeniedError, "permission_error"),
    (429, anthropic.RateLimitError, "rate_limit_error"),
    (500, anthropic.InternalServerError, "api_error"),
    (529, anthropic.OverloadedError, "overloaded_error"),
]


@pytest.mark.parametrize(("status", "error_class", "error_type"), ANTHROPIC_ERRORS)
async def test_anthropic_error_statuses(
    fake: FakeProvider,
    status: int,
    error_class: type[anthropic.APIStatusError],
    error_type: str,
) -> None:
    fake.script_error(status, f"scripted {status}", retry_after=7 if status == 429 else None)
    async with anthropic_client(fake) as client:
        with pytest.raises(error_class) as caught:
            await anthropic_text(client)
    error = caught.value
    assert error.status_code == status
    assert error.type == error_type
    assert error.api_message == f"scripted {status}"
    assert error.request_id is not None
    if status == 429:
        assert error.response.headers["retry-after"] == "7"


async def test_anthropic_overloaded_is_an_internal_server_error(fake: FakeProvider) -> None:
    fake.script_error(529)
    async with anthropic_client(fake) as client:
        with pytest.raises(anthropic.InternalServerError):
            await anthropic_text(client)


async def test_anthropic_in_stream_error_event(fake: FakeProvider) -> None:
    fake.script_stream_error("partial", "more", after_chunks=1)
    received: list[str] = []
    async with anthropic_client(fake) as client:
        with pytest.raises(anthropic.APIStatusError) as caught:
            await anthropic_text(client, sink=received)
    # The HTTP status was 200, so the SDK raises the generic APIStatusError.
    assert type(caught.value) is anthropic.APIStatusError
    assert caught.value.status_code == 200
    assert caught.value.type == "overloaded_error"
    assert received == ["partial"]


async def test_anthropic_disconnect_mid_stream(fake: FakeProvider) -> None:
    fake.script_disconnect("one", "two", "three", after_chunks=2)
    received: list[str] = []
    async with anthropic_client(fake) as client:
        # anthropic 2.x does not wrap transport errors raised while iterating a stream.
        with pytest.raises(httpx2.RemoteProtocolError):
            await anthropic_text(client, sink=received)
    assert received == ["one", "two"]


async def test_anthropic_reset_mid_stream(fake: FakeProvider) -> None:
    fake.script_disconnect("one", "two", after_chunks=1, reset=True)
    async with anthropic_client(fake) as client:
        with pytest.raises(httpx2.ReadError):
            await anthropic_text(client)


async def test_anthropic_stall_cancelled_by_client(fake: FakeProvider) -> None:
    stall = fake.script_stall("first", "second", after_chunks=1)
    first_chunk = asyncio.Event()

    async def consume(client: anthropic.AsyncAnthropic) -> None:
        async with client.messages.stream(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as stream:
            async for _ in stream.text_stream:
                first_chunk.set()

    async with anthropic_client(fake) as client:
        task = asyncio.create_task(consume(client))
        await asyncio.wait_for(first_chunk.wait(), WAIT)
        assert await stall.wait_reached_async(WAIT)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert await stall.wait_client_gone_async(WAIT)


async def test_anthropic_stall_released(fake: FakeProvider) -> None:
    stall = fake.script_stall("a", "b", "c", after_chunks=2)
    async with anthropic_client(fake) as client:
        task = asyncio.create_task(anthropic_text(client))
        assert await stall.wait_reached_async(WAIT)
        assert not task.done()
        assert fake.release_stalls() == 1
        assert await asyncio.wait_for(task, WAIT) == ["a", "b", "c"]


async def test_anthropic_timeout_before_headers(fake: FakeProvider) -> None:
    fake.script_stall(before_headers=True)
    async with anthropic_client(fake, timeout=0.2) as client:
        with pytest.raises(anthropic.APITimeoutError):
            await anthropic_text(client)


async def test_anthropic_retries_follow_retry_after(fake: FakeProvider) -> None:
    fake.script_error(529, headers={"retry-after-ms": "1"})
    fake.script_error(429, retry_after=0.001)
    fake.script_text("finally")
    async with anthropic_client(fake, max_retries=2) as client:
        assert await anthropic_text(client) == ["finally"]
    retry_counts = [r.headers["x-stainless-retry-count"] for r in fake.requests]
    assert retry_counts == ["0", "1", "2"]


async def test_anthropic_connection_refused_is_api_connection_error() -> None:
    provider = FakeProvider().start()
    url = provider.anthropic_base_url
    provider.stop()
    client = anthropic.AsyncAnthropic(base_url=url, api_key=ANTHROPIC_KEY, max_retries=0)
    async with client:
        with pytest.raises(anthropic.APIConnectionError):
            await anthropic_text(client)


# ---------------------------------------------------------------------------
# OpenAI Chat Completions API
# ---------------------------------------------------------------------------


async def test_openai_streams_text_with_usage_chunk(fake: FakeProvider) -> None:
    fake.script_text(
        "Hel", "lo", usage=Usage(input_tokens=7, output_tokens=2, cache_read_input_tokens=3)
    )
    async with openai_client(fake) as client:
        stream = await client.chat.completions.create(
            model="gpt-test",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "hi"},
            ],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]

    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["Hel", "lo"]
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finish == ["stop"]
    *content_chunks, usage_chunk = chunks
    assert all(c.usage is None for c in content_chunks)
    assert usage_chunk.choices == []
    assert usage_chunk.usage is not None
    assert usage_chunk.usage.prompt_tokens == 10
    assert usage_chunk.usage.completion_tokens == 2
    assert usage_chunk.usage.total_tokens == 12
    assert usage_chunk.usage.prompt_tokens_details is not None
    assert usage_chunk.usage.prompt_tokens_details.cached_tokens == 3
    (request,) = fake.requests
    assert request.api == "openai"
    assert request.path == "/v1/chat/completions"
    assert request.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"


async def test_openai_stream_without_include_usage_has_no_usage(fake: FakeProvider) -> None:
    fake.script_text("a", "b")
    async with openai_client(fake) as client:
        stream = await client.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        chunks = [chunk async for chunk in stream]
    assert all(c.usage is None for c in chunks)
    assert all(c.choices for c in chunks)


async def test_openai_streams_tool_call_arguments(fake: FakeProvider) -> None:
    fake.script_tool_call("get_weather", {"city": "Paris"}, id="call_9", text=["Checking."])
    async with openai_client(fake) as client:
        stream = await client.chat.completions.create(
            model="gpt-test",
            messages=[{"role": "user", "content": "weather?"}],
            tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
            stream=True,
        )
        names: dict[int, str] = {}
        ids: dict[int, str] = {}
        arguments: dict[int, str] = {}
        fragments = 0
        finish_reason = None
        async for chunk in stream:
            choice = chunk.choices[0]
            finish_reason = choice.finish_reason or finish_reason
            for call in choice.delta.tool_calls or []:
                if call.id:
                    ids[call.index] = call.id
                if call.function and call.function.name:
                    names[call.index] = call.function.name
                if call.function and call.function.arguments:
                    arguments[call.index] = arguments.get(call.index, "") + call.function.arguments
                    fragments += 1
    assert (ids, names) == ({0: "call_9"}, {0: "get_weather"})
    assert json.loads(arguments[0]) == {"city": "Paris"}
    assert fragments > 1
    assert finish_reason == "tool_calls"


async def test_openai_stream_helper_final_completion(fake: FakeProvider) -> None:
    fake.script_tool_calls(
        [ToolCall("a", {"n": 1}), ToolCall("b", {"n": 2})],
        usage=Usage(input_tokens=4, output_tokens=6),
    )
    async with (
        openai_client(fake) as client,
        client.chat.completions.stream(
            model="gpt-test",
            messages=[{"role": "user", "content": "go"}],
            stream_options={"include_usage": True},
        ) as stream,
    ):
        event_types = {event.type async for event in stream}
        completion = await stream.get_final_completion()
    assert "tool_calls.function.arguments.done" in event_types
    calls = completion.choices[0].message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("a", {"n": 1}),
        ("b", {"n": 2}),
    ]
    assert completion.usage is not None
    assert completion.usage.total_tokens == 10


async def test_openai_non_streaming_reply_and_image_recorded(fake: FakeProvider) -> None:
    fake.script_tool_call("lookup", {"q": "x"})
    data_url = f"data:image/png;base64,{PNG_B64}"
    async with openai_client(fake) as client:
        completion = await client.chat.completions.create(
            model="gpt-test",
            messages=[
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Describe"},
                        {"type": "image_url", "image_url": {"url": data_url}},
                    ],
                }
            ],
        )
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert json.loads(call.function.arguments) == {"q": "x"}
    (request,) = await fake.wait_for_requests_async(1)
    assert request.body["messages"][0]["content"][1]["image_url"]["url"] == data_url


OPENAI_ERRORS: list[tuple[int, type[openai.APIStatusError]]] = [
    (400, openai.BadRequestError),
    (401, openai.AuthenticationError),
    (403, openai.PermissionDeniedError),
    (429, openai.RateLimitError),
    (500, openai.InternalServerError),
    (529, openai.InternalServerError),
]


@pytest.mark.parametrize(("status", "error_class"), OPENAI_ERRORS)
async def test_openai_error_statuses(
    fake: FakeProvider, status: int, error_class: type[openai.APIStatusError]
) -> None:
    fake.script_error(status, f"scripted {status}", retry_after=2 if status == 429 else None)
    async with openai_client(fake) as client:
        with pytest.raises(error_class) as caught:
            await openai_text(client)
    error = caught.value
    assert error.status_code == status
    assert isinstance(error.body, dict)
    assert error.body["message"] == f"scripted {status}"
    if status == 429:
        assert error.response.headers["retry-after"] == "2"
        assert error.code == "rate_limit_exceeded"


async def test_openai_disconnect_mid_stream(fake: FakeProvider) -> None:
    fake.script_disconnect("one", "two", after_chunks=1)
    received: list[str] = []
    async with openai_client(fake) as client:
        # openai 3.x wraps transport errors during iteration in APIConnectionError.
        with pytest.raises(openai.APIConnectionError) as caught:
            await openai_text(client, sink=received)
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)
    assert received == ["one"]


async def test_openai_in_stream_error(fake: FakeProvider) -> None:
    fake.script_stream_error("partial", after_chunks=1, message="Server melted")
    async with openai_client(fake) as client:
        with pytest.raises(openai.APIError) as caught:
            await openai_text(client)
    assert not isinstance(caught.value, openai.APIStatusError)
    assert caught.value.message == "Server melted"


async def test_openai_stall_cancelled_by_asyncio_timeout(fake: FakeProvider) -> None:
    stall = fake.script_stall("first", "second", after_chunks=1)
    async with openai_client(fake) as client:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await openai_text(client)
    assert await stall.wait_reached_async(WAIT)
    assert await stall.wait_client_gone_async(WAIT)


async def test_openai_read_timeout_mid_stream(fake: FakeProvider) -> None:
    fake.script_stall("first", after_chunks=1)
    async with openai_client(fake, timeout=0.2) as client:
        with pytest.raises(openai.APITimeoutError):
            await openai_text(client)


# ---------------------------------------------------------------------------
# Scripting, recording, control API, CLI, lifecycle
# ---------------------------------------------------------------------------


async def test_default_reply_echoes_last_user_text(fake: FakeProvider) -> None:
    async with anthropic_client(fake) as a_client, openai_client(fake) as o_client:
        assert "".join(await anthropic_text(a_client, "ping one")) == "Echo: ping one"
        assert "".join(await openai_text(o_client, "ping two")) == "Echo: ping two"


async def test_model_keyed_queue_falls_back_to_shared(fake: FakeProvider) -> None:
    fake.script_text("shared")
    fake.script_text("for-claude", model="claude-test")
    async with anthropic_client(fake) as a_client, openai_client(fake) as o_client:
        assert await openai_text(o_client) == ["shared"]
        assert await anthropic_text(a_client) == ["for-claude"]
        assert "".join(await anthropic_text(a_client, "empty")) == "Echo: empty"


async def test_chunk_delay_and_concurrent_streams(fake: FakeProvider) -> None:
    count = 20
    for _ in range(count):
        fake.script_text("a", "b", "c", chunk_delay=0.01)
    async with anthropic_client(fake) as client:
        results = await asyncio.wait_for(
            asyncio.gather(*(anthropic_text(client) for _ in range(count))), WAIT
        )
    assert results == [["a", "b", "c"]] * count
    assert len(await fake.wait_for_requests_async(count)) == count


def test_wait_for_requests_times_out(fake: FakeProvider) -> None:
    with pytest.raises(TimeoutError):
        fake.wait_for_requests(1, timeout=0.05)


async def test_control_api_scripts_and_records(fake: FakeProvider) -> None:
    steps = [
        {
            "kind": "text",
            "chunks": ["from ", "json"],
            "usage": {"input_tokens": 1, "output_tokens": 2},
        },
        {"kind": "tool_call", "name": "lookup", "input": {"q": 1}, "id": "toolu_j"},
        {"kind": "error", "status": 401, "message": "bad key"},
    ]
    async with httpx2.AsyncClient(base_url=fake.base_url) as http, anthropic_client(fake) as client:
        response = await http.post("/_fake/script", json={"steps": steps})
        assert response.json()["queued"] == 3
        assert await anthropic_text(client) == ["from ", "json"]
        message = await client.messages.create(
            model="claude-test", max_tokens=5, messages=[{"role": "user", "content": "x"}]
        )
        assert message.content[0].type == "tool_use"
        assert message.content[0].input == {"q": 1}
        with pytest.raises(anthropic.AuthenticationError):
            await anthropic_text(client)
        listed = await http.get("/_fake/requests", params={"wait": 3, "timeout": WAIT})
        body = listed.json()
        assert body["count"] == 3
        assert body["requests"][0]["headers"]["authorization"] == f"Bearer {ANTHROPIC_KEY}"
        assert (await http.post("/_fake/reset")).json() == {"ok": True}
        assert (await http.get("/_fake/requests")).json()["count"] == 0
        bad = await http.post("/_fake/script", json=[{"kind": "nonsense"}])
        assert bad.status_code == 400


async def test_control_api_stall_and_release(fake: FakeProvider) -> None:
    step = {"kind": "stall", "chunks": ["x", "y"], "after_chunks": 1}
    async with httpx2.AsyncClient(base_url=fake.base_url) as http, openai_client(fake) as client:
        await http.post("/_fake/script", json=[step])
        task = asyncio.create_task(openai_text(client))
        state = await http.get("/_fake/state", params={"wait_stalls": 1, "timeout": WAIT})
        assert state.json()["stalls_reached"] == 1
        assert (await http.post("/_fake/release")).json() == {"released": 1}
        assert await asyncio.wait_for(task, WAIT) == ["x", "y"]


def test_parse_step_formats() -> None:
    disconnect = parse_step({"kind": "disconnect", "chunks": ["a"], "after_chunks": 1})
    assert isinstance(disconnect, Reply)
    assert disconnect.text == ("a",)
    nested = parse_step({"kind": "text", "chunks": "a", "fault": {"kind": "stall"}})
    assert isinstance(nested, Reply)
    assert isinstance(nested.fault, Stall)
    calls = parse_step({"kind": "tool_calls", "tool_calls": [{"name": "n", "input": {"a": 1}}]})
    assert isinstance(calls, Reply)
    assert calls.tool_calls == (ToolCall("n", {"a": 1}),)


async def test_stop_does_not_hang_with_stalled_and_idle_connections() -> None:
    provider = FakeProvider().start()
    async with anthropic_client(provider) as client:
        assert await anthropic_text(client, "idle keep-alive connection") != []
        stall = provider.script_stall("a", after_chunks=1)
        task = asyncio.create_task(anthropic_text(client))
        assert await stall.wait_reached_async(WAIT)
        await asyncio.wait_for(asyncio.to_thread(provider.stop), WAIT)
        with pytest.raises(httpx2.TransportError):
            await asyncio.wait_for(task, WAIT)


async def test_cli_writes_port_file_and_serves(tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.fake_provider",
        "--port",
        "0",
        "--port-file",
        str(port_file),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), WAIT)
        port = int(line.decode().strip().split("=")[1])
        assert int(port_file.read_text()) == port
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            assert (await http.get("/_fake/health")).json() == {"ok": True}
    finally:
        process.terminate()
        assert await asyncio.wait_for(process.wait(), WAIT) == 0
