"""The daemon collects garbage when idle, freezing survivors so collections stay cheap."""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest

from switchman.server.features.config_editing import idle_gc
from switchman.server.features.config_editing.idle_gc import IdleCollector


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The collector's calls on this thread (a config check another test left running on a
    worker thread freezes too, engine/gcpause.py; those are not the collector's)."""
    recorded: list[str] = []
    here = threading.current_thread()

    def record(name: str) -> None:
        if threading.current_thread() is here:
            recorded.append(name)

    monkeypatch.setattr(gc, "freeze", lambda: record("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: record("unfreeze"))
    monkeypatch.setattr(idle_gc, "pausing", lambda: False)

    def collect(*_: int) -> int:
        record("collect")
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    return recorded


async def test_collects_once_after_a_pause_and_freezes_new_documents_at_once(
        calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    collector = IdleCollector(idle=0.01, refresh=100.0, clock=lambda: 0.0)
    collected = asyncio.Event()
    collect = collector.collect

    def collect_and_tell() -> None:
        collect()
        collected.set()

    monkeypatch.setattr(collector, "collect", collect_and_tell)
    collector.busy(settle_now=True)
    assert calls == ["freeze"]
    collector.busy()
    collector.busy()  # more work postpones the collection; only one runs
    await asyncio.wait_for(collected.wait(), 5)
    assert calls == ["freeze", "collect", "freeze"]


def test_everything_is_unfrozen_and_collected_now_and_then(calls: list[str]) -> None:
    now = [0.0]
    collector = IdleCollector(idle=1.0, refresh=300.0, clock=lambda: now[0])
    collector.collect()
    now[0] = 301.0
    collector.collect()
    assert calls == ["collect", "freeze", "unfreeze", "collect", "freeze"]


async def test_no_collection_while_a_turn_is_running(
        calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    running = [True]
    collector = IdleCollector(idle=0.001, refresh=100.0, clock=lambda: 0.0,
                              turn_running=lambda: running[0])
    attempts: list[asyncio.Event] = [asyncio.Event(), asyncio.Event()]
    collect = collector.collect

    def collect_and_tell() -> None:
        collect()
        for attempt in attempts:
            if not attempt.is_set():
                attempt.set()
                return

    monkeypatch.setattr(collector, "collect", collect_and_tell)
    collector.busy()
    await asyncio.wait_for(attempts[0].wait(), 5)
    assert calls == []  # a turn is streaming: the collection was put off, not run
    running[0] = False
    await asyncio.wait_for(attempts[1].wait(), 5)
    assert calls == ["collect", "freeze"]  # tried again by itself, ran once the turn ended


async def test_no_collection_while_a_check_holds_collection_paused(
        calls: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection then would scan everything the running check has built so far."""
    paused = [True]
    monkeypatch.setattr(idle_gc, "pausing", lambda: paused[0])
    collector = IdleCollector(idle=1.0, refresh=100.0, clock=lambda: 0.0)
    collector.collect()
    assert calls == []
    paused[0] = False
    collector.collect()
    assert calls == ["collect", "freeze"]
