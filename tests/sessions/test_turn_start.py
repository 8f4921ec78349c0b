"""What a turn does before its provider is called, counted (never timed): the work on the
path to the first token."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from switchman.engine import files, tokens
from switchman.engine.learning import database as patterns_db
from switchman.engine.learning import fingerprint as learned
from switchman.engine.providers.base import (
    AdapterSource,
    ProviderRequest,
    StreamEvent,
    TextDelta,
)
from switchman.engine.routing.context import TurnContext
from switchman.engine.service import Switchman
from switchman.engine.sessions.records import ChatDelta
from switchman.engine.tools.confinement import WorkspaceRoot
from tests.sessions.conftest import Recorder, scripted_engine
from tests.support.scripted_adapter import ScriptedAdapter


@pytest.fixture
def service(tmp_path: Path, adapter: ScriptedAdapter) -> Iterator[Switchman]:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "routing.yaml").write_text("global_default: sonnet\nrules: []\n")
    (tmp_path / "config" / "profiles.yaml").write_text("profiles: {}\n")
    engine = scripted_engine(tmp_path, adapter, None,
                             {".switchman/routing.yaml": "rules: []\n"}).service
    yield engine
    engine.store.db.close()


async def test_a_turn_looks_at_each_config_file_once_before_calling_the_model(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")  # the first turn checks every file
    looked: Counter[Path] = Counter()
    signature = files.entry_signature

    def counting(path: Path) -> tuple[int, int] | None:
        looked[path] += 1
        return signature(path)

    monkeypatch.setattr("switchman.engine.config.store.entry_signature", counting)
    reply = adapter.text("hello", "there", gate=asyncio.Event())
    turn = asyncio.ensure_future(service.chat(workspace, None, "a question"))
    await reply.reached.wait()  # the provider has been called
    at_call = dict(looked)
    reply.gate.set()  # type: ignore[union-attr]
    await turn
    assert (tmp_path / "config" / "routing.yaml") in at_call
    assert (tmp_path / "workspace" / ".switchman" / "routing.yaml") in at_call
    assert max(at_call.values()) == 1, at_call


async def test_a_turns_size_estimates_do_not_grow_with_the_history(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The session keeps its transcript's estimate as messages are added; a turn estimates
    only what it adds (routing, and the charge of a call cut short), never the history."""
    workspace = str(tmp_path / "workspace")
    estimated: list[str] = []
    estimate = tokens.estimate_text

    def counting(text: str) -> int:
        estimated.append(text)
        return estimate(text)

    monkeypatch.setattr(tokens, "estimate_text", counting)
    counts = []
    for turn in range(12):
        adapter.calls(("c1", "read_file", {"path": f"notes-{turn}.md"}))
        estimated.clear()
        await service.chat(workspace, None, f"question {turn}")
        counts.append(len(estimated))
    assert counts[2] == counts[-1], counts  # 10 turns (40 messages) later: the same work


def noted_turn_starts(service: Switchman, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that gets "turn start" each time a turn of ``service`` starts (tests add their
    own entries to it, to see what ran between the starts)."""
    order: list[str] = []
    start = service.lifecycle._start

    def starting(*args: Any, **kwargs: Any) -> Any:
        order.append("turn start")
        return start(*args, **kwargs)

    monkeypatch.setattr(service.lifecycle, "_start", starting)
    return order


async def test_what_the_editor_sent_with_many_chats_runs_between_their_turn_starts(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty chats read in one go were twenty turn starts queued on the loop ahead of the
    editor's didChange that came with them: its check waited for all of them."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    order = noted_turn_starts(service, monkeypatch)

    async def editor() -> None:
        order.append("editor")

    sessions = [service.new_session(workspace).id for _ in range(5)]
    for _ in sessions:
        adapter.text("fine")
    chats = [asyncio.ensure_future(service.chat(workspace, s, "go")) for s in sessions]
    edit = asyncio.ensure_future(editor())  # queued behind the five chats, as read
    await asyncio.gather(*chats, edit)

    assert order.count("turn start") == 5
    assert order.index("editor") <= 1, order


async def test_a_chat_sent_alone_starts_its_turn_without_waiting_a_pass_of_the_loop(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a start that follows another in the same pass waits for the next pass."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    order = noted_turn_starts(service, monkeypatch)
    loop = asyncio.get_running_loop()
    adapter.text("fine")
    alone = asyncio.ensure_future(service.chat(workspace, None, "go"))
    loop.call_soon(order.append, "next pass")  # runs right after the chat's first step
    await alone
    assert order == ["turn start", "next pass"]

    order.clear()
    sessions = [service.new_session(workspace).id for _ in range(2)]
    for _ in sessions:
        adapter.text("fine")
    both = [asyncio.ensure_future(service.chat(workspace, s, "go")) for s in sessions]
    loop.call_soon(order.append, "next pass")
    await asyncio.gather(*both)
    assert order == ["turn start", "next pass", "turn start"]


async def test_a_chat_starts_its_turn_once_the_editors_diagnostics_are_answered(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """While the editor waits for an edit's diagnostics, turn starts give way (bounded: see
    tests/engine/test_turn_starts.py)."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    order = noted_turn_starts(service, monkeypatch)
    service.turn_starts.give_way_seconds = 60
    answered = service.turn_starts.editor_waits()
    adapter.text("fine")
    chat = asyncio.ensure_future(service.chat(workspace, None, "go"))
    for _ in range(5):
        await asyncio.sleep(0)
    order.append("answered")
    answered()
    await chat
    assert order == ["answered", "turn start"]


async def test_the_provider_is_called_before_the_turn_start_is_written_and_shown(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """The turn's durable start and its routing notice wait for the request to leave (they
    are written while the provider works), but come before any of its output."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    recorder = service.sessions.observer
    assert isinstance(recorder, Recorder)

    def turns() -> int:
        return int(service.store.db.execute("SELECT count(*) FROM turns").fetchone()[0])

    at_call: list[tuple[int, int]] = []
    at_first_delta: list[tuple[int, int, list[str]]] = []

    async def watched(request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        at_call.append((turns(), len(recorder.notices)))
        async for event in adapter.stream(request):
            yield event

    def delta(update: ChatDelta) -> None:
        if not at_first_delta:
            stored = service.store.messages(update.session_id)
            at_first_delta.append((turns(), len(recorder.notices), [m.text() for m in stored]))
        Recorder.delta(recorder, update)

    service.lifecycle.adapters = cast("AdapterSource", _Source(watched))
    recorder.delta = delta  # type: ignore[method-assign,assignment]
    adapter.text("hello", "there")
    await service.chat(workspace, None, "a question")
    assert at_call == [(1, 1)]  # only the warm-up turn: nothing of this one yet
    # the question and the first piece of the answer are saved before the piece is shown
    assert at_first_delta == [(2, 2, ["warm up", "Echo: warm up", "a question", "hello"])]


class _Source:
    """An adapter source whose one adapter streams through ``stream``."""

    def __init__(self, stream: Callable[[ProviderRequest], AsyncIterator[StreamEvent]]) -> None:
        self.stream = stream

    def adapter(self, provider: object) -> _Source:
        return self


async def test_a_turn_is_fingerprinted_once_for_routing_and_learning(
        service: Switchman, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace = str(tmp_path / "workspace")
    taken: list[str] = []
    fingerprint = learned.fingerprint

    def counting(ctx: TurnContext, *centre_and_mean: object) -> object:
        taken.append(ctx.message)
        return fingerprint(ctx, *centre_and_mean)  # type: ignore[arg-type]

    monkeypatch.setattr(learned, "fingerprint", counting)
    await service.chat(workspace, None, "warm up")  # the workspace has a row to compare with
    taken.clear()
    await service.chat(workspace, None, "a question")
    assert taken == ["a question"]
    await service.learning.written()
    rows = patterns_db.count(service.patterns.connection, str(tmp_path / "workspace"))
    assert rows == 2  # …and the turn was recorded


async def test_a_request_is_estimated_only_for_a_call_cut_short(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Estimating the request (the system prompt and every tool description) waited between
    the provider's first event and the first delta; only a call that ends before the
    provider reports its usage needs it."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    estimated: list[list[str]] = []
    estimate = tokens.estimate_turn

    def counting(texts: list[str], images: int = 0) -> int:
        estimated.append(texts)
        return estimate(texts, images)

    monkeypatch.setattr("switchman.engine.sessions.turn.estimate_turn", counting)
    assert (await service.chat(workspace, None, "a question")).status == "completed"
    assert estimated == []

    cut_short = asyncio.Event()

    class Silent:  # answers, then never reports usage nor finishes
        def adapter(self, provider: object) -> Silent:
            return self

        async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
            yield TextDelta("partial")
            cut_short.set()
            await asyncio.Event().wait()

    service.lifecycle.adapters = cast("AdapterSource", Silent())
    turn = asyncio.ensure_future(service.chat(workspace, None, "another question"))
    await cut_short.wait()
    turn.cancel()
    result = await turn
    assert result.status == "cancelled"
    assert len(estimated) == 1 and estimated[0][0].startswith("You are")  # the system prompt
    assert result.usage.input_tokens > estimate(estimated[0])  # with the transcript's


async def test_a_turns_tools_look_up_no_path_before_the_model_is_called(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools find the workspace's real folder (system calls) at their first call, not
    while the turn is on its way to the first token."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    confined: list[Path] = []
    init = WorkspaceRoot.__init__

    def counting(self: WorkspaceRoot, folder: Path) -> None:
        confined.append(folder)
        init(self, folder)

    monkeypatch.setattr(WorkspaceRoot, "__init__", counting)
    reply = adapter.text("hello", gate=asyncio.Event())
    turn = asyncio.ensure_future(service.chat(workspace, None, "a question"))
    await reply.reached.wait()
    assert confined == []
    reply.gate.set()  # type: ignore[union-attr]
    await turn
    adapter.calls(("c1", "read_file", {"path": "notes.md"}))
    await service.chat(workspace, None, "read my notes")
    assert confined == [tmp_path / "workspace"]  # the call found it


async def test_nothing_goes_to_the_pattern_writer_during_a_turn(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Handing the message's evidence about the previous turn to the writer thread woke the
    thread in the middle of the turn's start (on the way to the first token); it goes with
    the turn's own row, first, at the turn's end."""
    workspace = str(tmp_path / "workspace")
    await service.chat(workspace, None, "warm up")
    await service.learning.written()
    handed: list[str] = []
    at_call: list[list[str]] = []
    submit = service.learning._writer.submit

    def recording(action: Callable[..., object], *args: object) -> Any:
        handed.append(getattr(action, "__name__", "?"))
        return submit(action, *args)

    class Watching:  # what had been handed over when the provider was called
        def adapter(self, provider: object) -> Watching:
            return self

        async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
            at_call.append(list(handed))
            async for event in adapter.stream(request):
                yield event

    monkeypatch.setattr(service.learning._writer, "submit", recording)
    service.lifecycle.adapters = cast("AdapterSource", Watching())
    await service.chat(workspace, None, "a question")
    assert at_call == [[]]
    assert handed == ["observe_message", "store_row"]
    await service.learning.written()
