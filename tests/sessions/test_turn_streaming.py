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
