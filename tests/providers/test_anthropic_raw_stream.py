"""The Anthropic adapter reads the SDK's raw events and assembles only what it needs,
through the real SDK against the fake provider server."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

from switchman.engine.config.registry import ApiKind
from switchman.engine.messages import TextBlock, ToolUseBlock
from switchman.engine.providers.base import Finished, TextDelta, ToolCall, UsageReport
from tests.providers.test_adapters import adapter_for, collect, request
from tests.support.fake_provider import FakeProvider
from tests.support.fake_provider import script as fake_script


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture
def snapshots(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every message snapshot the SDK's stream helper would build (one per event)."""
    helper = importlib.import_module("anthropic.lib.streaming._messages")
    accumulate = helper.accumulate_event
    built: list[str] = []

    def counting(**arguments: Any) -> Any:
        built.append(arguments["event"].type)
        return accumulate(**arguments)

    monkeypatch.setattr(helper, "accumulate_event", counting)
    return built


async def test_an_answer_is_assembled_without_message_snapshots(
        fake: FakeProvider, snapshots: list[str]) -> None:
    fake.script(fake_script.Reply(
        thinking="Read it first.", text=("Let me ", "look."),
        tool_calls=(fake_script.ToolCall(name="read_file", input={"path": "src/a.py", "n": [1]},
                                         id="toolu_9"),),
        usage=fake_script.Usage(input_tokens=40, output_tokens=7, cache_read_input_tokens=30,
                                cache_creation_input_tokens=5)))
    events = await collect(adapter_for(ApiKind.ANTHROPIC, fake), request(reasoning_effort="low"))
    assert snapshots == []
    assert isinstance(events[0], UsageReport) and events[0].usage.input_tokens == 40
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Let me ", "look."]
    call = ToolCall("toolu_9", "read_file", {"path": "src/a.py", "n": [1]})
    assert [e for e in events if isinstance(e, ToolCall)] == [call]
    final = events[-1]
    assert isinstance(final, Finished)
    assert final.stop_reason == "tool_use"
    assert final.content == [TextBlock("Let me look."),
                             ToolUseBlock("toolu_9", "read_file", {"path": "src/a.py", "n": [1]})]
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.cache_read_tokens,
            final.usage.cache_write_tokens) == (40, 7, 30, 5)

