"""Quick fixes (verified by re-checking the file), completion, hover and the outline of a long
file take tens of milliseconds or more: that work stays off the event loop."""

from __future__ import annotations

import sys
import threading
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
from switchman.engine.editing.fixes import fixes as real_fixes
from switchman.server.features.config_editing.feature import ConfigEditing

SHADOWED = ("rules:\n  - name: all\n    use: opus\n  - name: images\n"
            "    when: {has_images: true}\n    use: sonnet\n")


async def opened(tmp_path: Path) -> tuple[ConfigEditing, str]:
    """Config editing over an in-memory workspace holding routing.yaml, checked once."""
    path = tmp_path / "routing.yaml"
    uri = from_fs_path(str(path))
    assert uri is not None
    workspace = Workspace(None)
    workspace.put_text_document(types.TextDocumentItem(
        uri=uri, language_id="yaml", version=1, text=SHADOWED))
    server = SimpleNamespace(workspace=workspace, client_capabilities=types.ClientCapabilities(),
                             initialization_options={}, turns_running=lambda: False)
    editing = ConfigEditing(server, ConfigDocuments(tmp_path))  # type: ignore[arg-type]
    await editing.off_loop(editing.documents.update, editing.path_of(uri), SHADOWED)
    return editing, uri


def recording(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Record the thread on which the feature module's ``name`` function is called."""
    threads: list[str] = []
    module = sys.modules[ConfigEditing.__module__]
    real = getattr(module, name)

    def record(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, record)
    return threads


async def test_completion_hover_and_outline_run_on_the_config_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Completion's cursor scan reads every line of a new version: on the loop, the first
    request after an edit of a large file stalled every stream."""
    editing, uri = await opened(tmp_path)
    threads = {name: recording(monkeypatch, name) for name in ("complete", "hover", "outline")}
    items = await editing.completion(uri, types.Position(1, 6))
    found = await editing.hover(uri, types.Position(2, 6))
    symbols = await editing.symbols(uri)
    assert items and found is not None and symbols
    for name, seen in threads.items():
        assert seen and all(thread.startswith("config-check") for thread in seen), (name, seen)


async def test_fixes_are_built_and_verified_on_the_config_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    editing, uri = await opened(tmp_path)

    threads: list[str] = []

    def recording_fixes(*args: object) -> object:
        threads.append(threading.current_thread().name)
        return real_fixes(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ConfigEditing.__module__ + ".fixes", recording_fixes)
    everything = types.Range(start=types.Position(0, 0), end=types.Position(6, 0))
    actions = await editing.code_actions(uri, everything)

    assert [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert threads and all(name.startswith("config-check") for name in threads), threads


async def test_the_store_and_the_editor_check_on_one_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two checks side by side (the editor's buffer, the store's saved file) left the loop a
    third of the interpreter: every check in the process runs on one thread, in turn."""
    threads: list[int] = []
    real = routing_file.check_routing_doc

    def recording(doc: YamlDocument, *args: Any) -> Any:
        if doc.path.endswith("/routing.yaml"):  # not the built-in file, checked on the loop
            threads.append(threading.get_ident())
        return real(doc, *args)

    monkeypatch.setattr(routing_file, "check_routing_doc", recording)
    monkeypatch.setattr(check_module, "check_routing_doc", recording)
    editing, uri = await opened(tmp_path)
    await editing.symbols(uri)  # the editor checks its buffer
    (tmp_path / "routing.yaml").write_text(SHADOWED.replace("all", "every"))
    store = ConfigStore(tmp_path, background=True)
    store.policy()
    await store.settle()  # the store checks the saved file (a different text)
    store.close()

    assert len(threads) == 2 and threads[0] == threads[1] != threading.get_ident()
