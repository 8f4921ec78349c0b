"""The provider adapters, through the real SDKs, against the fake provider server."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, cast

import msgspec
import pytest
from pydantic._internal import _generics as pydantic_generics

from switchman.engine.availability import ErrorClass
from switchman.engine.config.registry import ApiKind, ProviderSpec
from switchman.engine.keys import KeyRing
from switchman.engine.messages import (
    AttachmentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from switchman.engine.providers.base import (
    Finished,
    ProviderAdapter,
    ProviderRequest,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolSpec,
)
from switchman.engine.providers.errors import ProviderError
from switchman.engine.providers.factory import AdapterFactory, DeferredAdapter
from tests.support.fake_provider import CutShort, FakeProvider, Reply, Stall, Usage

KEY = "sk-test-0123456789abcdef"
APIS = [ApiKind.ANTHROPIC, ApiKind.OPENAI, ApiKind.OPENAI_COMPATIBLE]


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


def adapter_for(api: ApiKind, fake: FakeProvider) -> ProviderAdapter:
    base = fake.anthropic_base_url if api is ApiKind.ANTHROPIC else fake.openai_base_url
    spec = ProviderSpec(name="p", api=api, api_key_env="TEST_KEY", base_url=base,
                        timeout_seconds=10)
    return AdapterFactory(KeyRing({"TEST_KEY": KEY})).adapter(spec)


def user(text: str, *blocks: object) -> Message:
    content = [TextBlock(text), *blocks]
    return Message(id="m1", session_id="s", turn_id="t", role="user",
                   content=content, created_at=datetime.now(UTC))  # type: ignore[arg-type]


def request(*messages: Message, **extra: object) -> ProviderRequest:
    return ProviderRequest(model_id="p:model-x", api_model="model-x",
                           messages=list(messages) or [user("hello")], **extra)  # type: ignore[arg-type]


async def collect(adapter: ProviderAdapter, req: ProviderRequest) -> list[StreamEvent]:
    return [event async for event in adapter.stream(req)]


async def stream_texts(adapter: ProviderAdapter, req: ProviderRequest, seen: list[str]) -> None:
    """Stream ``req``, adding each text delta to ``seen`` as it arrives (kept if it fails)."""
    async for event in adapter.stream(req):
        if isinstance(event, TextDelta):
            seen.append(event.text)


@pytest.mark.parametrize("api", APIS)
async def test_streams_text_and_usage(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_text("Hel", "lo", usage=Usage(input_tokens=12, output_tokens=3))
    events = await collect(adapter_for(api, fake), request(system="be brief"))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo"]
    final = events[-1]
    assert isinstance(final, Finished)
    assert final.stop_reason == "end_turn"
    assert final.usage.input_tokens == 12
    assert final.usage.output_tokens == 3
    assert final.content == [TextBlock("Hello")]
    body = fake.requests[0].body
    assert body["model"] == "model-x"
    assert body["stream"] is True
    if api is ApiKind.ANTHROPIC:
        assert body["system"] == "be brief"
    else:
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert body["stream_options"] == {"include_usage": True}
    assert fake.requests[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("api", APIS)
async def test_streams_a_tool_call(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_tool_call("read_file", {"path": "src/a.py"}, id="call_1", text=["Let me look."])
    tools = [ToolSpec("read_file", "Read a file", {"type": "object",
                                                   "properties": {"path": {"type": "string"}}})]
    events = await collect(adapter_for(api, fake), request(tools=tools))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls == [ToolCall("call_1", "read_file", {"path": "src/a.py"})]
    final = events[-1]
    assert isinstance(final, Finished)
    assert final.stop_reason == "tool_use"
    assert ToolUseBlock("call_1", "read_file", {"path": "src/a.py"}) in final.content
    body = fake.requests[0].body
    names = ([t["name"] for t in body["tools"]] if api is ApiKind.ANTHROPIC
             else [t["function"]["name"] for t in body["tools"]])
    assert names == ["read_file"]
    if api is ApiKind.ANTHROPIC:  # encoded by the adapter: the API's fields, sent as JSON
        assert body["tools"] == [{"name": "read_file", "description": "Read a file",
                                  "input_schema": tools[0].input_schema}]
        assert fake.requests[0].headers["content-type"] == "application/json"


@pytest.mark.parametrize("api", APIS)
async def test_history_with_tool_results_and_images(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_text("done")
    now = datetime.now(UTC)
    history = [
        user("look", ImageBlock("image/png", "aGVsbG8=")),
        Message(id="a", session_id="s", turn_id="t", role="assistant", created_at=now,
                content=[ToolUseBlock("c1", "read_file", {"path": "x"})]),
        Message(id="r", session_id="s", turn_id="t", role="tool", created_at=now,
                content=[ToolResultBlock("c1", "file text")]),
    ]
    await collect(adapter_for(api, fake), request(*history))
    sent = str(fake.requests[0].body["messages"])
    assert "aGVsbG8=" in sent
    assert "file text" in sent


@pytest.mark.parametrize("api", APIS)
async def test_a_message_and_its_attachments_reach_the_model_apart(
        api: ApiKind, fake: FakeProvider) -> None:
    """Found in Neovim: an OpenAI-style model read "what do these doAttached file a.py:" and a
    closing fence run into the next attachment's header ("```Attached file b.py"), which no
    longer closes the code block: the message and its attachments are one string there."""
    fake.script_text("ok")
    attached = [AttachmentBlock(kind="file", path=name, text=text)
                for name, text in (("a.py", "A = 1"), ("b.py", "B = 2"))]
    await collect(adapter_for(api, fake), request(user("what do these do", *attached)))
    content = fake.requests[0].body["messages"][-1]["content"]
    parts = [content] if isinstance(content, str) else [part["text"] for part in content]
    read = "\n\n".join(parts)
    assert read == ("what do these do\n\nAttached file a.py:\n```\nA = 1\n```\n\n"
                    "Attached file b.py:\n```\nB = 2\n```"), read


@pytest.mark.parametrize("api", APIS)
async def test_dangling_tool_calls_get_an_error_result(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_text("ok")
    now = datetime.now(UTC)
    history = [user("a"), Message(id="a", session_id="s", turn_id="t", role="assistant",
                                  created_at=now,
                                  content=[ToolUseBlock("c9", "grep", {"pattern": "x"})]),
               user("b")]
    await collect(adapter_for(api, fake), request(*history))
    sent = str(fake.requests[0].body["messages"])
    assert "The tool call did not complete: the turn was stopped" in sent


STATUSES = [(401, ErrorClass.AUTH), (403, ErrorClass.AUTH), (429, ErrorClass.RATE_LIMIT),
            (500, ErrorClass.SERVER), (529, ErrorClass.OVERLOADED), (400, ErrorClass.BAD_REQUEST)]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("status", "error_class"), STATUSES)
async def test_error_statuses_are_classified(api: ApiKind, status: int, error_class: ErrorClass,
                                             fake: FakeProvider) -> None:
    fake.script_error(status, f"nope, key {KEY} refused", retry_after=2 if status == 429 else None)
    with pytest.raises(ProviderError) as caught:
        await collect(adapter_for(api, fake), request())
    error = caught.value
    assert error.error_class is error_class
    assert error.status == status
    assert KEY not in str(error)
    assert str(error).endswith(": nope, key [redacted] refused")  # the provider's words, no dict
    if status == 429:
        assert error.retry_after == 2.0


@pytest.mark.parametrize("api", APIS)
async def test_a_long_retry_after_is_explained(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_error(429, "slow down", retry_after=120)
    with pytest.raises(ProviderError) as caught:
        await collect(adapter_for(api, fake), request())
    assert str(caught.value) == (
        "p:model-x: rate limited (429): slow down — the provider asked to wait 120 s before "
        "trying again, longer than the 30 s Switchman waits within a turn")


@pytest.mark.parametrize("api", APIS)
async def test_disconnect_mid_stream_is_a_network_error(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_disconnect("one", "two", after_chunks=1)
    seen: list[str] = []
    with pytest.raises(ProviderError) as caught:
        await stream_texts(adapter_for(api, fake), request(), seen)
    assert caught.value.error_class is ErrorClass.NETWORK
    assert seen == ["one"]


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_ended_before_the_answer_is_a_network_error(
        api: ApiKind, fake: FakeProvider) -> None:
    """The body ends properly, but without the answer's end (a proxy that gave up): the
    text so far is not a finished answer, so the call fails as a cut connection does,
    instead of the turn ending "completed" on half an answer. Anthropic's stream says so by
    its open content block, OpenAI's by the missing ``finish_reason`` (its API always ends
    an answer with one: such a turn used to end "completed", charged nothing); an
    OpenAI-compatible one only when nothing came at all."""
    compatible = api is ApiKind.OPENAI_COMPATIBLE
    fake.script(Reply(text=("one", "two"), fault=CutShort(after_chunks=0 if compatible else 1)))
    seen: list[str] = []
    with pytest.raises(ProviderError) as caught:
        await stream_texts(adapter_for(api, fake), request(), seen)
    assert caught.value.error_class is ErrorClass.NETWORK
    assert str(caught.value) == ("p:model-x: could not reach the provider (network error): "
                                 "the stream ended before the answer did")
    assert seen == ([] if compatible else ["one"])


async def test_an_openai_compatible_stream_without_finish_reason_is_an_answer(
        fake: FakeProvider) -> None:
    """Some OpenAI-compatible servers never send ``finish_reason`` (and the SDK hides whether
    ``[DONE]`` came), so text that ended without one is the answer, as it always was: failing
    it would fail every turn on such a server."""
    fake.script(Reply(text=("one", "two"), fault=CutShort(after_chunks=2)))
    events = await collect(adapter_for(ApiKind.OPENAI_COMPATIBLE, fake), request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["one", "two"]
    assert isinstance(events[-1], Finished) and events[-1].stop_reason == "end_turn"


async def test_an_anthropic_stream_without_its_closing_events_is_an_answer_once_blocks_close(
        fake: FakeProvider) -> None:
    """A server that sends every content block whole but leaves out ``message_delta`` and
    ``message_stop`` gave the whole answer: only a block left open is a cut."""
    frames = b"".join(
        f"event: {kind}\ndata: {data}\n\n".encode() for kind, data in (
            ("content_block_start",
             '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'),
            ("content_block_delta", '{"type":"content_block_delta","index":0,'
             '"delta":{"type":"text_delta","text":"whole"}}'),
            ("content_block_stop", '{"type":"content_block_stop","index":0}')))
    fake.script(Reply(text=(), fault=CutShort(frame=frames)))
    events = await collect(adapter_for(ApiKind.ANTHROPIC, fake), request())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["whole"]
    assert isinstance(events[-1], Finished)


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_that_is_not_json_is_a_provider_error(
        api: ApiKind, fake: FakeProvider) -> None:
    """A frame of the stream that is not JSON is the provider's fault, not a bug of
    Switchman's: a provider error saying so (the turn then fails with provider_error, its
    message saved), not the parser's exception text as an internal error."""
    frame = (b"event: content_block_delta\ndata: {not json\n\n" if api is ApiKind.ANTHROPIC
             else b"data: {not json\n\n")
    fake.script(Reply(text=("one", "two"), fault=CutShort(after_chunks=1, frame=frame)))
    with pytest.raises(ProviderError) as caught:
        await collect(adapter_for(api, fake), request())
    assert caught.value.error_class is ErrorClass.SERVER
    assert caught.value.retryable
    assert str(caught.value) == ("p:model-x: server error: the provider sent a stream that "
                                 "could not be read")


@pytest.mark.parametrize("api", APIS)
async def test_error_inside_the_stream(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_stream_error("a", after_chunks=1, error_type="overloaded_error")
    with pytest.raises(ProviderError) as caught:
        await collect(adapter_for(api, fake), request())
    assert caught.value.error_class in (ErrorClass.OVERLOADED, ErrorClass.SERVER)
    assert caught.value.retryable


@pytest.mark.parametrize("api", APIS)
async def test_connection_refused_is_a_network_error_naming_the_address(api: ApiKind) -> None:
    """A mistyped ``base_url`` in models.yaml: the message names the address that could not
    be reached (it said only "Connection error"), without a password or query in the URL."""
    spec = ProviderSpec(name="p", api=api, base_url="http://me:secret@127.0.0.1:9/v1?k=1")
    with pytest.raises(ProviderError) as caught:
        await collect(AdapterFactory(KeyRing({})).adapter(spec), request())
    assert caught.value.error_class is ErrorClass.NETWORK
    assert str(caught.value).startswith(
        "p:model-x: could not reach the provider at http://127.0.0.1:9/v1 (network error): ")
    assert "secret" not in str(caught.value) and "k=1" not in str(caught.value)


@pytest.mark.parametrize("api", APIS)
async def test_a_port_no_socket_can_have_is_a_network_error(api: ApiKind) -> None:
    spec = ProviderSpec(name="p", api=api, base_url="http://127.0.0.1:99999/v1")
    with pytest.raises(ProviderError) as caught:  # not an ExceptionGroup from the transport
        await collect(AdapterFactory(KeyRing({})).adapter(spec), request())
    assert caught.value.error_class is ErrorClass.NETWORK


def test_adapters_are_cached_per_key() -> None:
    spec = ProviderSpec(name="p", api=ApiKind.OPENAI, api_key_env="K")
    environ = {"K": "one"}
    factory = AdapterFactory(KeyRing(environ))
    first = factory.adapter(spec)
    assert factory.adapter(spec) is first
    environ["K"] = "two"
    assert factory.adapter(spec) is not first


def test_sdks_are_not_imported_until_a_provider_is_used() -> None:
    code = ("import sys, switchman.server.app, switchman.engine.providers.factory; "
            "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_making_an_adapter_imports_no_sdk_and_blocks_nothing() -> None:
    code = ("import sys\n"
            "from switchman.engine.config.registry import ApiKind, ProviderSpec\n"
            "from switchman.engine.keys import KeyRing\n"
            "from switchman.engine.providers.factory import AdapterFactory\n"
            "factory = AdapterFactory(KeyRing({'K': 'k'}))\n"
            "for api in (ApiKind.ANTHROPIC, ApiKind.OPENAI):\n"
            "    factory.adapter(ProviderSpec(name=api.value, api=api, api_key_env='K'))\n"
            "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_a_deferred_adapter_imports_on_a_worker_thread_once(fake: FakeProvider) -> None:
    threads: list[str] = []

    def create() -> ProviderAdapter:
        threads.append(threading.current_thread().name)
        return adapter_for(ApiKind.ANTHROPIC, fake)

    deferred = DeferredAdapter(create)
    fake.script_text("Hel", "lo")
    fake.script_text("again")
    first, second = await asyncio.gather(collect(deferred, request()), collect(deferred, request()))
    texts = {"".join(e.text for e in events if isinstance(e, TextDelta)) for events in
             (first, second)}
    assert texts == {"Hello", "again"}
    assert len(threads) == 1 and threads[0] != threading.main_thread().name


async def test_a_created_adapter_is_called_without_a_pass_of_the_event_loop() -> None:
    """Once the adapter exists, a stream reaches it at once: waiting on the creation's
    (done) future cost a pass of the loop and a wake-up through its self-pipe."""
    order: list[str] = []

    class Ready:
        async def stream(self, req: ProviderRequest) -> Any:
            order.append("adapter called")
            yield TextDelta("hi")

    deferred = DeferredAdapter(lambda: cast("ProviderAdapter", Ready()))
    await asyncio.wrap_future(deferred.prepare())
    events = deferred.stream(request())
    asyncio.get_running_loop().call_soon(order.append, "next pass of the loop")
    await anext(events)
    assert order[0] == "adapter called", order
    assert [e async for e in events] == []


async def test_a_key_a_provider_error_quotes_is_masked(fake: FakeProvider) -> None:
    """The adapter masks its own key and key-shaped text in an error; a gateway quoting
    another provider's key, or a rotated one, that looks like no key sent it on as it was."""
    other = "gw-quoted-key-0042"
    deferred = DeferredAdapter(lambda: adapter_for(ApiKind.ANTHROPIC, fake), KEY,
                               lambda: [other])
    fake.script_error(400, f"the gateway refused {other} and {KEY}")
    with pytest.raises(ProviderError) as caught:
        await collect(deferred, request())
    assert other not in str(caught.value) and other not in caught.value.detail
    assert "the gateway refused [redacted] and [redacted]" in str(caught.value)


@pytest.mark.parametrize("api", APIS)
async def test_a_401_quoting_the_key_shortened_masks_all_of_it(api: ApiKind,
                                                               fake: FakeProvider) -> None:
    """A 401 quoting the key as providers shorten it (its start, stars, its last 4): the
    key-shaped start was masked alone, which left ``[redacted]****cdef`` and the key's last
    characters, no longer the shortened form the key mask knows."""
    deferred = DeferredAdapter(lambda: adapter_for(api, fake), KEY, list)
    fake.script_error(401, f"Incorrect API key provided: {KEY[:10]}****{KEY[-4:]}. You can "
                      "find your API key at https://example.com/keys.")
    with pytest.raises(ProviderError) as caught:
        await collect(deferred, request())
    assert KEY[-4:] not in str(caught.value) and KEY[-4:] not in caught.value.detail
    assert "Incorrect API key provided: [redacted]. You can find" in str(caught.value)


async def test_what_creating_an_adapter_leaves_alive_is_frozen_for_the_collector(
        fake: FakeProvider) -> None:
    """An SDK import leaves many long-lived objects; full collections must not rescan them."""
    kept: list[dict[str, int]] = []
    during: list[bool] = []

    def create() -> ProviderAdapter:
        during.append(gc.isenabled())
        kept.extend({"n": n} for n in range(20_000))  # stands in for the SDK's modules
        return adapter_for(ApiKind.ANTHROPIC, fake)

    gc.unfreeze()
    await asyncio.wrap_future(DeferredAdapter(create).prepare())
    assert during == [False]  # no collection while it imports
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


@pytest.mark.parametrize("api", APIS)
async def test_a_stream_after_a_garbage_collection_rebuilds_no_sdk_class(
        api: ApiKind, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK names a parametrised pydantic class at each stream's start; pydantic caches
    it weakly, so unless the adapter holds it, a collection frees it and the next stream
    rebuilds it (milliseconds, before the first token)."""
    adapter = adapter_for(api, fake)
    fake.script_text("warm")
    await collect(adapter, request())
    built: list[str] = []
    create = pydantic_generics.create_generic_submodel

    def counting(name: str, *args: Any) -> Any:
        built.append(name)
        return create(name, *args)

    monkeypatch.setattr(pydantic_generics, "create_generic_submodel", counting)
    gc.collect()
    fake.script_text("again")
    assert [e.text for e in await collect(adapter, request()) if isinstance(e, TextDelta)] \
        == ["again"]
    assert built == []


async def test_preparing_starts_the_one_creation_the_first_stream_uses(fake: FakeProvider) -> None:
    created: list[ProviderAdapter] = []

    def create() -> ProviderAdapter:
        created.append(adapter_for(ApiKind.ANTHROPIC, fake))
        return created[-1]

    deferred = DeferredAdapter(create)
    assert await asyncio.wrap_future(deferred.prepare()) is created[0]  # before any turn
    fake.script_text("Hi")
    events = await collect(deferred, request())
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi"
    assert len(created) == 1


@pytest.mark.parametrize("api", APIS)
async def test_a_changed_timeout_applies_to_the_next_call(api: ApiKind, fake: FakeProvider) -> None:
    # models.yaml is read for every turn, but the SDK client (and its timeout) was kept from the
    # first call until a restart: a provider's lowered timeout_seconds did nothing.
    base = fake.anthropic_base_url if api is ApiKind.ANTHROPIC else fake.openai_base_url
    slow = ProviderSpec(name="p", api=api, api_key_env="TEST_KEY", base_url=base,
                        timeout_seconds=60)
    factory = AdapterFactory(KeyRing({"TEST_KEY": KEY}))
    fake.script_text("first")
    await collect(factory.adapter(slow), request())
    quick = msgspec.structs.replace(slow, timeout_seconds=0.5)
    fake.script(Reply(text=("never",), fault=Stall(before_headers=True)))
    with pytest.raises(ProviderError) as caught:
        await asyncio.wait_for(collect(factory.adapter(quick), request()), 10)
    assert caught.value.error_class is ErrorClass.TIMEOUT
    fake.release_stalls()
