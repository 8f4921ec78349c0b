"""Quick fixes are verified by re-checking the file: that work stays off the event loop."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace import Workspace

from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.editing.fixes import fixes as real_fixes
from switchman.server.features.config_editing.feature import ConfigEditing

SHADOWED = ("rules:\n  - name: all\n    use: opus\n  - name: images\n"
            "    when: {has_images: true}\n    use: sonnet\n")


async def test_fixes_are_built_and_verified_on_the_config_worker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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

    threads: list[str] = []

    def recording_fixes(*args: object) -> object:
        threads.append(threading.current_thread().name)
        return real_fixes(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ConfigEditing.__module__ + ".fixes", recording_fixes)
    everything = types.Range(start=types.Position(0, 0), end=types.Position(6, 0))
    actions = await editing.code_actions(uri, everything)

    assert [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert threads and all(name.startswith("config-check") for name in threads), threads
