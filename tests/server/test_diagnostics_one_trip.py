"""With no debounce, an edit of a configuration file is applied, checked and answered in one
trip to the check process. Each trip waits for the event loop on its way out and back, behind
every stream's callbacks while chats start (several milliseconds each on a loaded machine)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from switchman.engine.config.checking import CHECKS
from switchman.engine.turn_starts import TurnStarts
from switchman.server.features.config_editing import checker
from switchman.server.features.config_editing.feature import (
    DELAY_ENV,
    DELAY_OPTION,
    ConfigEditing,
)
from tests.server.test_code_actions_off_loop import SHADOWED, opened


def recorded(editing: ConfigEditing) -> tuple[list[dict[str, Any]], asyncio.Event]:
    """What ``editing`` publishes from now on, and an event set at each publication."""
    published: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    def notify_json(method: str, params: dict[str, Any], now: bool = False) -> None:
        published.append(params)
        arrived.set()

    editing.server.notify_json = notify_json  # type: ignore[method-assign]
    return published, arrived


async def settled(editing: ConfigEditing) -> None:
    """Wait until the check that opening scheduled is done: with a debounce it runs in tasks,
    which on a loaded machine could still be going when the test's own edit starts (a second
    check counted as the edit's)."""
    while editing._tasks or editing._pending:
        await asyncio.gather(*editing._tasks, *editing._pending.values(), return_exceptions=True)


async def test_with_no_debounce_an_edit_is_checked_in_one_trip(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DELAY_ENV, raising=False)
    editing, uri = await opened(tmp_path, {DELAY_OPTION: 0})
    published, arrived = recorded(editing)
    trips: list[str] = []
    submit = CHECKS.submit

    def counted(work: Any, *args: Any) -> Any:
        trips.append(work.__name__)
        return submit(work, *args)

    monkeypatch.setattr(CHECKS, "submit", counted)
    text = SHADOWED.replace("name: images", "name: pictures")
    editing.server.workspace.put_text_document(types.TextDocumentItem(
        uri=uri, language_id="yaml", version=2, text=text))
    editing.updated(uri)
    assert not editing._tasks  # no task waits for the answer: a callback shows it
    await asyncio.wait_for(arrived.wait(), 60)

    assert trips == ["update_and_diagnose"]
    [params] = published
    assert params["version"] == 2
    assert "shadowed-rule" in [d["code"] for d in params["diagnostics"]]


async def test_a_check_of_an_outdated_text_is_not_published(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two quick edits: the first one's answer arrives after the second was made, and only
    the second one's diagnostics are shown."""
    monkeypatch.delenv(DELAY_ENV, raising=False)
    editing, uri = await opened(tmp_path, {DELAY_OPTION: 0})
    published, arrived = recorded(editing)
    for version, name in ((2, "pictures"), (3, "photos")):
        text = SHADOWED.replace("name: images", f"name: {name}")
        editing.server.workspace.put_text_document(types.TextDocumentItem(
            uri=uri, language_id="yaml", version=version, text=text))
        editing.updated(uri)
    await asyncio.wait_for(arrived.wait(), 60)
    await CHECKS.run(os.getpid)  # both edits' answers have come back before this one

    assert [p["version"] for p in published] == [3]


async def test_turn_starts_give_way_until_an_edits_diagnostics_are_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chat's turn start that comes while an edit is being checked waits for its answer:
    the editor's diagnostics are interactive, a burst of turn starts is bulk work."""
    monkeypatch.delenv(DELAY_ENV, raising=False)
    editing, uri = await opened(tmp_path, {DELAY_OPTION: 0})
    editing.server.turn_starts = TurnStarts(give_way_seconds=60)
    published, arrived = recorded(editing)
    started_when_shown: list[bool] = []
    show = editing._show

    def showing(path: Path, checked: Any) -> None:
        started_when_shown.append(start.done())
        show(path, checked)

    monkeypatch.setattr(editing, "_show", showing)
    text = SHADOWED.replace("name: images", "name: pictures")
    editing.server.workspace.put_text_document(types.TextDocumentItem(
        uri=uri, language_id="yaml", version=2, text=text))
    editing.updated(uri)
    start = asyncio.ensure_future(editing.server.turn_starts.take_turn())
    await asyncio.wait_for(arrived.wait(), 60)
    await asyncio.wait_for(start, 5)

    assert started_when_shown and not any(started_when_shown)
    assert [p["version"] for p in published] == [2]


async def test_with_a_debounce_turn_starts_give_way_while_the_text_is_checked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DELAY_ENV, raising=False)
    editing, uri = await opened(tmp_path, {DELAY_OPTION: 1})
    await settled(editing)
    editing.server.turn_starts = TurnStarts(give_way_seconds=60)
    published, arrived = recorded(editing)
    starts: list[asyncio.Future[None]] = []
    started_when_answered: list[bool] = []
    off_loop = editing.off_loop

    async def checking(work: Any, *args: Any) -> Any:
        if work is checker.diagnostics:  # a turn's chat arrives as the check goes out
            starts.append(asyncio.ensure_future(editing.server.turn_starts.take_turn()))
        result = await off_loop(work, *args)
        await asyncio.sleep(0)  # the start's first step has run
        if work is checker.diagnostics:
            started_when_answered.append(starts[-1].done())
        return result

    monkeypatch.setattr(editing, "off_loop", checking)
    text = SHADOWED.replace("name: images", "name: pictures")
    editing.server.workspace.put_text_document(types.TextDocumentItem(
        uri=uri, language_id="yaml", version=2, text=text))
    editing.updated(uri)
    await asyncio.wait_for(arrived.wait(), 60)
    [start] = starts
    await asyncio.wait_for(start, 5)
    assert started_when_answered == [False]
    assert [p["version"] for p in published] == [2]
