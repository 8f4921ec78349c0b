"""Each SDK adapter says when its request has left, before the provider answers anything:
the turn records its start in that wait (sessions/turn.py, ``TurnStart``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from switchman.engine.config.registry import ApiKind
from switchman.engine.providers.base import REQUEST_SENT, StreamEvent, TextDelta
from tests.providers.test_adapters import APIS, adapter_for, request
from tests.support.fake_provider import FakeProvider


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.mark.parametrize("api", APIS)
async def test_the_request_is_announced_once_sent_before_the_provider_answers(
        api: ApiKind, fake: FakeProvider) -> None:
    stall = fake.script_stall("late", before_headers=True)  # no status line, no event
    announced: list[int] = []
    sent = asyncio.Event()
    events: list[StreamEvent] = []

    def on_sent() -> None:
        announced.append(len(fake.requests))
        sent.set()

    async def call() -> None:
        REQUEST_SENT.set(on_sent)  # this task's, as the turn runner sets it
        events.extend([e async for e in adapter_for(api, fake).stream(request())])

    task = asyncio.ensure_future(call())
    async with asyncio.timeout(30):
        await sent.wait()
        assert events == []  # nothing answered yet: the announcement did not wait for it
        assert await stall.wait_reached_async()
    fake.release_stalls()
    await task
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["late"]
    assert len(announced) == 1  # once per request
