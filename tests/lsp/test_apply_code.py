"""Apply (``switchman/applyCode``): a code block from an answer, put into a file through the
same approval, trust and ``workspace/applyEdit`` as the edit tools."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from switchman.engine.service import DATABASE_NAME
from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import SwitchmanClient, running_server

SOURCE = "# café\ndef main():\n    return 42\n"


@pytest.fixture
async def vscode(daemon: Daemon) -> AsyncIterator[tuple[SwitchmanClient, ToolEditor]]:
    (daemon.workspace / "src" / "app.py").write_text(SOURCE, "utf-8")
    async with running_server("visual-studio-code", daemon.env, [daemon.workspace],
                              LISTEN) as client:
        yield client, ToolEditor(client)


async def apply(client: SwitchmanClient, daemon: Daemon, **params: Any) -> Any:
    uri = (daemon.workspace / "src" / "app.py").as_uri()
    return await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.APPLY_CODE, {"workspace": daemon.uri, "uri": uri, "text": SOURCE, **params})


async def test_apply_replaces_the_selection_after_approval(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    # line 2, "42" (UTF-16 columns; the é on line 0 must not shift anything)
    span = {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 13}}
    result = await apply(client, daemon, code="43", range=span, turn_id="t1")
    request = editor.approvals[0]
    assert result == {"applied": True, "unchanged": False, "decision": "allow_once",
                      "path": "src/app.py",
                      "reason": None, "approval": {  # a chat shows it at once (Neovim's)
                          "id": request["id"], "title": request["title"],
                          "outcome": "allowed_once", "reason": None, "command": None,
                          "cwd": None, "path": "src/app.py", "diff": request["diff"],
                          "tier": None, "requested_tier": None,
                          "model": None, "routed_by": None, "worker_tools": None,
                          "superseded": None, "model_changed": None}}
    assert (request["tool"], request["tool_class"], request["turn_id"]) == (
        "apply_code", "write", "t1")
    assert request["title"] == "Apply the code block to src/app.py (replacing the selection)"
    assert "-    return 42\n+    return 43\n" in request["diff"]
    assert editor.buffer(daemon.workspace / "src" / "app.py") == SOURCE.replace("42", "43")
    assert (daemon.workspace / "src" / "app.py").read_text("utf-8") == SOURCE  # ToolEditor: no save



async def test_the_selection_is_read_in_utf16_after_an_emoji_on_its_line(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    path = daemon.workspace / "src" / "app.py"
    text = 'x = "😀"; y = 42\n'
    path.write_text(text, "utf-8")
    span = {"start": {"line": 0, "character": 14}, "end": {"line": 0, "character": 16}}  # "42"
    result = await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.APPLY_CODE, {"workspace": daemon.uri, "uri": path.as_uri(), "text": text,
                             "code": "43", "range": span})
    assert result["applied"] is True
    assert '-x = "😀"; y = 42\n+x = "😀"; y = 43\n' in editor.approvals[0]["diff"]  # as asked
    assert editor.buffer(path) == 'x = "😀"; y = 43\n'


async def test_apply_without_a_range_replaces_the_whole_file(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    result = await apply(client, daemon, code="print('hi')\n")
    assert result["applied"] is True
    assert editor.approvals[0]["title"].endswith("(replacing the whole file)")
    assert editor.buffer(daemon.workspace / "src" / "app.py") == "print('hi')\n"


@pytest.mark.parametrize("params", [
    {"code": SOURCE},
    {"code": "42", "range": {"start": {"line": 2, "character": 11},
                             "end": {"line": 2, "character": 13}}},
])
async def test_a_code_block_already_in_the_file_is_not_asked_about(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon,
        params: dict[str, Any]) -> None:
    """The user was asked to approve an empty diff, and the answer said it was applied."""
    client, editor = vscode
    result = await apply(client, daemon, turn_id="t1", **params)
    assert result == {"applied": False, "unchanged": True, "decision": "deny",
                      "path": "src/app.py", "approval": None,
                      "reason": "src/app.py already has this code: there is nothing to change."}
    assert (editor.approvals, editor.edits) == ([], [])


async def test_a_denied_apply_changes_nothing_and_says_why(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    editor.answers.append({"decision": "deny", "reason": "wrong file"})
    result = await apply(client, daemon, code="x = 1\n")
    assert result.pop("approval")["outcome"] == "denied"
    assert result == {"applied": False, "unchanged": False, "decision": "deny",
                      "path": "src/app.py",
                      "reason": "wrong file"}
    assert editor.edits == []


async def test_the_session_keeps_each_applys_question_in_its_turn(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon, fake: FakeProvider) -> None:
    """A rebuilt chat shows an Apply's answered card in the turn whose code block it applied."""
    client, editor = vscode
    fake.script_text("```python\nx = 1\n```")
    turn = await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.CHAT, {"workspace": daemon.uri, "message": "show me x"})
    editor.answers.append({"decision": "deny", "reason": "wrong file"})
    # the editors name the turn only
    await apply(client, daemon, code="x = 1\n", turn_id=turn["turn_id"])
    await apply(client, daemon, code="x = 1\n", session_id=turn["session_id"],
                turn_id=turn["turn_id"])  # allowed once
    await apply(client, daemon, code="x = 1\n", turn_id="no-such-turn")  # not kept
    await apply(client, daemon, code="x = 1\n", session_id="another",
                turn_id=turn["turn_id"])  # not that session's turn: not kept
    detail = await client.request(methods.SESSION, {"session_id": turn["session_id"]})
    title = "Apply the code block to src/app.py (replacing the whole file)"
    assert detail["applies"] == [
        {"turn_id": turn["turn_id"], "approval": {
            "id": editor.approvals[0]["id"], "title": title, "outcome": "denied",
            "reason": "wrong file", "command": None, "cwd": None, "path": "src/app.py",
            "diff": editor.approvals[0]["diff"], "tier": None, "requested_tier": None,
            "model": None, "routed_by": None, "worker_tools": None,
            "superseded": None, "model_changed": None}},
        {"turn_id": turn["turn_id"], "approval": {
            "id": editor.approvals[1]["id"], "title": title, "outcome": "allowed_once",
            "reason": None, "command": None, "cwd": None, "path": "src/app.py",
            "diff": editor.approvals[1]["diff"], "tier": None, "requested_tier": None,
            "model": None, "routed_by": None, "worker_tools": None,
            "superseded": None, "model_changed": None}}]


async def test_an_apply_made_is_answered_as_made_when_its_card_cannot_be_kept(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon, fake: FakeProvider) -> None:
    """The question's record is written after the edit: if the database refuses it (another
    daemon holds the write lock past the wait), the editor was told the Apply failed, though
    the edit was made. It is told it was made; only the rebuilt card is missing."""
    client, editor = vscode
    fake.script_text("```python\nx = 1\n```")
    turn = await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.CHAT, {"workspace": daemon.uri, "message": "show me x"})
    editor.answers.append({"decision": "allow_once"})
    blocker = sqlite3.connect(daemon.data / DATABASE_NAME, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
    try:
        applied = await apply(client, daemon, code="x = 1\n", turn_id=turn["turn_id"])
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert (applied["applied"], applied["decision"]) == (True, "allow_once")
    assert len(editor.edits) == 1


async def test_always_allowing_apply_is_trust_of_its_own(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    editor.answers.append({"decision": "allow_always"})
    await apply(client, daemon, code="a = 1\n")
    second = await apply(client, daemon, code="b = 2\n")
    assert (second["applied"], second["decision"]) == (True, "allow_always")
    assert second["approval"] is None  # nothing asked: no line in the chat
    assert len(editor.approvals) == 1  # the second Apply did not ask
    trusted = await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.TRUST, {"workspace": daemon.uri})
    assert trusted["trusted"][0]["tools"] == ["apply_code"]  # not edit_file


async def test_applied_but_not_saved_comes_back_with_the_editors_reason(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    editor.unsaved = "The change is in the editor but was not saved: src/app.py (read-only)."
    result = await apply(client, daemon, code="x = 1\n")
    assert result.pop("approval")["outcome"] == "allowed_once"
    assert result == {"applied": True, "unchanged": False, "decision": "allow_once",
                      "path": "src/app.py",
                      "reason": "The change is in the editor but was not saved: src/app.py "
                                "(read-only)."}


async def test_the_editors_refusal_comes_back(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    editor.refusal = "the file is read-only"
    result = await apply(client, daemon, code="x = 1\n")
    assert (result.pop("approval")["outcome"], result["reason"]) == (  # as the turn keeps it
        "not_applied", "the file is read-only")
    assert result == {"applied": False, "unchanged": False, "decision": "allow_once",
                      "path": "src/app.py",
                      "reason": "the file is read-only"}


@pytest.mark.parametrize(("uri", "message"), [
    ("file:///etc/passwd", "outside the workspace"),
    ("untitled:Untitled-1", "is not a file URI"),
])
async def test_a_file_outside_the_workspace_is_refused_without_asking(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon, uri: str,
        message: str) -> None:
    client, editor = vscode
    with pytest.raises(JsonRpcException) as raised:
        await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
            methods.APPLY_CODE, {"workspace": daemon.uri, "uri": uri, "text": "", "code": "x"})
    assert message in raised.value.message
    assert raised.value.code == 1012
    assert editor.approvals == []


async def test_a_negative_position_is_invalid_params(
        vscode: tuple[SwitchmanClient, ToolEditor], daemon: Daemon) -> None:
    client, editor = vscode
    span = {"start": {"line": -1, "character": 0}, "end": {"line": 0, "character": 0}}
    with pytest.raises(JsonRpcException) as raised:
        await apply(client, daemon, code="x", range=span)
    assert raised.value.code == -32602
    assert editor.approvals == []
