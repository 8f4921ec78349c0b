"""Turn starts give way while the editor waits for an answer, for a bounded time, and are
never starved by continuous edits."""

from __future__ import annotations

import asyncio

import pytest

from switchman.engine.turn_starts import TurnStarts

LONG = 60.0
"""A bound no test reaches: only the editor's answer lets the start go."""


async def passes(count: int = 5) -> None:
    """Let the event loop run ``count`` passes."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_turn_start_waits_while_the_editor_waits_and_goes_once_answered() -> None:
    starts = TurnStarts(give_way_seconds=LONG)
    answered = starts.editor_waits()
    start = asyncio.ensure_future(starts.take_turn())
    await passes()
    assert not start.done()
    answered()
    await asyncio.wait_for(start, 5)


async def test_a_chat_with_no_answer_out_starts_at_once() -> None:
    starts = TurnStarts(give_way_seconds=LONG)
    starts.editor_waits()()  # answered already
    start = asyncio.ensure_future(starts.take_turn())
    await asyncio.sleep(0)  # its first step
    assert start.done()


async def test_a_held_start_goes_after_the_bound_without_an_answer() -> None:
    starts = TurnStarts(give_way_seconds=0.02)
    starts.editor_waits()  # never answered
    loop = asyncio.get_running_loop()
    began = loop.time()
    await asyncio.wait_for(starts.take_turn(), 5)
    assert loop.time() - began >= 0.02


async def test_a_start_waits_for_the_answers_out_when_its_turn_comes_not_later_ones() -> None:
    """An edit made just after the last one's answer does not hold the start again: a start
    waits at most once."""
    starts = TurnStarts(give_way_seconds=LONG)
    first = starts.editor_waits()
    start = asyncio.ensure_future(starts.take_turn())
    await passes()
    first()
    starts.editor_waits()  # the next edit, before the start has run
    await asyncio.wait_for(start, 5)


async def test_every_answer_out_holds_the_start_and_answering_twice_counts_once() -> None:
    starts = TurnStarts(give_way_seconds=LONG)
    one, two = starts.editor_waits(), starts.editor_waits()
    start = asyncio.ensure_future(starts.take_turn())
    one()
    one()
    await passes()
    assert not start.done()
    two()
    await asyncio.wait_for(start, 5)


async def test_continuous_edits_never_starve_turn_starts() -> None:
    """The editor always has an answer out (each edit sent before the last one's answer):
    every queued start still goes, each after at most the bound."""
    starts = TurnStarts(give_way_seconds=0.01)
    stop = asyncio.Event()

    async def typing() -> None:
        answered = starts.editor_waits()
        while not stop.is_set():
            following = starts.editor_waits()
            answered()
            answered = following
            await asyncio.sleep(0)
        answered()

    editor = asyncio.ensure_future(typing())
    await asyncio.sleep(0)
    await asyncio.wait_for(asyncio.gather(*(starts.take_turn() for _ in range(5))), 10)
    stop.set()
    await editor


async def test_a_start_cancelled_while_it_gives_way_raises_cancelled() -> None:
    starts = TurnStarts(give_way_seconds=LONG)
    starts.editor_waits()
    start = asyncio.ensure_future(starts.take_turn())
    await passes()
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
