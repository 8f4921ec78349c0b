"""Reasoning effort reaches the provider, through the real SDKs, against the fake server:
OpenAI's ``reasoning_effort``, Anthropic's extended thinking with a budget."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from switchman.engine.config.registry import ApiKind
from switchman.engine.messages import Message, ToolResultBlock
from switchman.engine.providers.base import Finished
from switchman.engine.routing.tiers import THINKING_BUDGETS
from tests.providers.test_adapters import adapter_for, collect, request, user
from tests.support.fake_provider import FakeProvider
from tests.support.fake_provider.script import Reply, ToolCall


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.mark.parametrize("api", [ApiKind.OPENAI, ApiKind.OPENAI_COMPATIBLE])
async def test_openai_gets_reasoning_effort(api: ApiKind, fake: FakeProvider) -> None:
    fake.script_text("ok")
    fake.script_text("ok")
    adapter = adapter_for(api, fake)
    await collect(adapter, request(reasoning_effort="high"))
    await collect(adapter, request())
    assert fake.requests[0].body["reasoning_effort"] == "high"
    assert "reasoning_effort" not in fake.requests[1].body


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
async def test_anthropic_gets_a_thinking_budget(effort: str, fake: FakeProvider) -> None:
    fake.script_text("ok")
    await collect(adapter_for(ApiKind.ANTHROPIC, fake),
                  request(reasoning_effort=effort, max_output_tokens=4096))
    body = fake.requests[0].body
    budget = THINKING_BUDGETS[effort]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == 4096 + budget  # the answer keeps its own allowance


async def test_anthropic_without_effort_does_not_think(fake: FakeProvider) -> None:
    fake.script_text("ok")
    await collect(adapter_for(ApiKind.ANTHROPIC, fake), request(max_output_tokens=4096))
    body = fake.requests[0].body
    assert "thinking" not in body
    assert body["max_tokens"] == 4096


async def test_thinking_blocks_go_back_before_their_tool_calls(fake: FakeProvider) -> None:
    # With extended thinking, Anthropic requires the answer's thinking block (signature
    # included) again before its tool_use in the next request of the tool loop.
    fake.script(Reply(thinking="Let me read the file.",
                      tool_calls=(ToolCall(name="read_file", input={"path": "a.py"},
                                           id="toolu_1"),)))
    fake.script_text("done")
    adapter = adapter_for(ApiKind.ANTHROPIC, fake)
    first = await collect(adapter, request(reasoning_effort="low"))
    final = first[-1]
    assert isinstance(final, Finished)
    assistant = Message(id="a1", session_id="s", turn_id="t", role="assistant",
                        content=final.content, created_at=user("x").created_at)
    result = Message(id="r1", session_id="s", turn_id="t", role="tool",
                     content=[ToolResultBlock("toolu_1", "print('hi')")],
                     created_at=user("x").created_at)
    await collect(adapter, request(user("read a.py"), assistant, result,
                                   reasoning_effort="low"))
    replayed = fake.requests[1].body["messages"][1]
    assert replayed["role"] == "assistant"
    assert replayed["content"] == [  # the thinking block exactly as streamed, then the call
        {"type": "thinking", "thinking": "Let me read the file.", "signature": "sig-1"},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}]
