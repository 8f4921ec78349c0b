"""A streamed reply shares the event loop: the editor and other streams run between deltas."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from switchman.engine.service import Switchman
from switchman.engine.sessions.records import ChatDelta
from tests.sessions.conftest import Recorder, scripted_engine
from tests.support.scripted_adapter import ScriptedAdapter


@pytest.fixture
def service(tmp_path: Path, adapter: ScriptedAdapter) -> Iterator[Switchman]:
    engine = scripted_engine(tmp_path, adapter, None, {}).service
    yield engine
    engine.store.db.close()


async def test_a_reply_that_arrived_at_once_lets_the_loop_run_between_its_deltas(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """The in-memory adapter yields its chunks without waiting, as the SDK does for a reply
    already read whole: each delta must still leave before the next is produced."""
    log: list[str] = []
    recorder = service.sessions.observer
    assert isinstance(recorder, Recorder)

    def delta(item: ChatDelta) -> None:
        log.append(f"delta {item.text}")

    recorder.delta = delta  # type: ignore[method-assign,assignment]
    loop = asyncio.get_running_loop()
    running = True

    def tick() -> None:  # stands for everything else the loop serves
        log.append("loop")
        if running:
            loop.call_soon(tick)

    adapter.text("one ", "two ", "three ", "four")
    loop.call_soon(tick)
    await service.chat(str(tmp_path / "workspace"), None, "a question")
    running = False
    deltas = [i for i, entry in enumerate(log) if entry.startswith("delta")]
    assert len(deltas) == 4
    assert all(b - a > 1 for a, b in itertools.pairwise(deltas)), log


async def test_text_shown_just_after_a_save_is_saved_when_the_stream_pauses(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """The first words are saved at once and later ones at most every half second: words
    that arrive within that half second and are followed by a pause (a model thinking, or a
    daemon killed then) are saved once it is up, not only when more text comes. They were
    shown but lost with a kill -9 before."""
    recorder = service.sessions.observer
    assert isinstance(recorder, Recorder)
    shown = asyncio.Event()
    saved = asyncio.Event()

    def delta(item: ChatDelta) -> None:
        if item.text == "answer ":
            shown.set()

    def statement(sql: str) -> None:  # the store's own connection, as it writes
        if shown.is_set() and "messages" in sql and sql.lstrip().upper().startswith("INSERT"):
            saved.set()

    recorder.delta = delta  # type: ignore[method-assign,assignment]
    gate = asyncio.Event()
    adapter.text("partial ", "answer ", "and the rest", gate=gate, gate_after=2)
    chat = asyncio.ensure_future(service.chat(str(tmp_path / "workspace"), None, "a question"))
    try:
        await asyncio.wait_for(shown.wait(), 20)
        service.store.db.set_trace_callback(statement)
        await asyncio.wait_for(saved.wait(), 20)
        session_id = service.store.current_session(service.workspaces.resolve(
            str(tmp_path / "workspace")))
        assert session_id is not None
        answers = [m.text() for m in service.store.messages(session_id) if m.role == "assistant"]
        assert answers == ["partial answer "]
    finally:
        service.store.db.set_trace_callback(None)
        gate.set()
    result = await chat
    assert result.text == "partial answer and the rest"
    answers = [m.text() for m in service.store.messages(result.session_id)
               if m.role == "assistant"]
    assert answers == ["partial answer and the rest"]
