"""Quick fixes (verified by re-checking the file), completion, hover and the outline of a long
file take tens of milliseconds or more: that work runs in the check process, outside the
daemon's interpreter, and survives that process dying."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import Workspace

from switchman.engine.config import check as check_module
from switchman.engine.config import routing_file
from switchman.engine.config.store import ConfigStore
from switchman.engine.config.yamldoc import YamlDocument
from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.turn_starts import TurnStarts
from switchman.server.features.config_editing import checker
from switchman.server.features.config_editing.feature import ConfigEditing
from tests.engine.test_check_process import Crash

SHADOWED = ("rules:\n  - name: all\n    use: opus\n  - name: images\n"
            "    when: {has_images: true}\n    use: sonnet\n")


async def opened(tmp_path: Path, options: dict[str, Any] | None = None
                 ) -> tuple[ConfigEditing, str]:
    """Config editing over an in-memory workspace holding routing.yaml, opened once (with
    ``options`` as the client's initialization options); nothing is published."""
    path = tmp_path / "routing.yaml"
    uri = from_fs_path(str(path))
    assert uri is not None
    workspace = Workspace(None)
    workspace.put_text_document(types.TextDocumentItem(
        uri=uri, language_id="yaml", version=1, text=SHADOWED))
    server = SimpleNamespace(workspace=workspace, client_capabilities=types.ClientCapabilities(),
                             initialization_options=options or {}, turns_running=lambda: False,
                             notify_json=lambda method, params, now=False: None,
                             turn_starts=TurnStarts(),
                             switchman=SimpleNamespace(  # no workspaces: blocks to poll here
                                 watch_block_skills=lambda on_change, wanted: None))
    editing = ConfigEditing(server, ConfigDocuments(tmp_path))  # type: ignore[arg-type]
    editing.updated(uri)  # remembers the document, in case a new check process needs it
    await editing.off_loop(checker.update, path, SHADOWED)
    return editing, uri


def not_here(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
    """Make ``module.name`` fail if it is called in this (the daemon's) process."""
    def fail(*args: object, **kwargs: object) -> object:
        raise AssertionError(f"{name} ran in the daemon's process")

    monkeypatch.setattr(module, name, fail)


async def test_completion_hover_and_outline_run_in_the_check_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Completion's cursor scan reads every line of a new version: on the loop, the first
    request after an edit of a large file stalled every stream; on a thread of the daemon it
    still took the loop's interpreter lock."""
    editing, uri = await opened(tmp_path)
    for name in ("complete", "hover", "outline"):
        not_here(monkeypatch, checker, name)
    items = await editing.completion(uri, types.Position(1, 6))
    found = await editing.hover(uri, types.Position(2, 6))
    symbols = await editing.symbols(uri)
    assert items and found is not None and symbols


async def test_fixes_are_built_and_verified_in_the_check_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    editing, uri = await opened(tmp_path)
    not_here(monkeypatch, checker, "fixes")
    everything = types.Range(start=types.Position(0, 0), end=types.Position(6, 0))
    actions = await editing.code_actions(uri, everything)

    assert [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix]


async def test_the_store_and_the_editor_check_in_the_check_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither the editor's buffer nor the store's saved file is checked in the daemon."""
    real = routing_file.check_routing_doc

    def here(doc: YamlDocument, *args: Any) -> Any:
        assert not doc.path.endswith("/routing.yaml"), "checked in the daemon's process"
        return real(doc, *args)  # the built-in file, checked on the loop

    monkeypatch.setattr(routing_file, "check_routing_doc", here)
    monkeypatch.setattr(check_module, "check_routing_doc", here)
    editing, uri = await opened(tmp_path)
    assert await editing.symbols(uri)  # the editor checks its buffer
    (tmp_path / "routing.yaml").write_text(SHADOWED.replace("all", "every"))
    store = ConfigStore(tmp_path, background=True)
    store.policy()
    await store.settle()  # the store checks the saved file (a different text)
    assert [rule.name for rule in store.policy().rules] == ["every", "images"]
    store.close()


async def test_a_new_check_process_is_given_the_open_documents(tmp_path: Path) -> None:
    """The documents live in the check process: after it dies, the next one has them."""
    editing, uri = await opened(tmp_path)
    first = await editing.symbols(uri)
    crash = Crash(tmp_path)
    lost = asyncio.ensure_future(editing.symbols(uri))
    await asyncio.sleep(0)  # the request is sent (behind the crash)
    crash.now()

    assert await lost == []
    assert await editing.symbols(uri) == first


async def test_a_check_lost_with_its_process_shows_a_located_diagnostic(tmp_path: Path) -> None:
    editing, _ = await opened(tmp_path)
    published: list[dict[str, Any]] = []

    def notify_json(method: str, params: dict[str, Any], now: bool = False) -> None:
        published.append(params)

    editing.server.notify_json = notify_json  # type: ignore[method-assign]
    crash = Crash(tmp_path)
    checking = asyncio.ensure_future(editing.publish(tmp_path / "routing.yaml"))
    await asyncio.sleep(0)
    crash.now()
    await checking

    [diagnostic] = published[0]["diagnostics"]
    assert diagnostic["code"] == "check-stopped" and diagnostic["range"]["start"]["line"] == 0
    await editing.publish(tmp_path / "routing.yaml")  # the next check, in a new process
    assert "shadowed-rule" in [d["code"] for d in published[1]["diagnostics"]]
