"""Write and execute tools end to end: approval in the editor, edits through applyEdit."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from switchman.server import methods
from tests.conftest import models_yaml
from tests.lsp.conftest import ANTHROPIC_KEY, LISTEN, OPENAI_KEY, Daemon, deltas
from tests.support.editor_tools import NEVER, ToolEditor
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import (
    SERVER_COMMAND,
    SwitchmanClient,
    client_capabilities,
    kill_9,
    running_server,
)
from tests.support.processes import ended, read_fifo
from tests.support.rawrpc import RawDaemon

SOURCE = "# café\ndef main():\n    return 42\n"
EDIT = {"path": "src/app.py", "old_text": "return 42", "new_text": "return 43"}


@pytest.fixture
def project(daemon: Daemon) -> Daemon:
    (daemon.workspace / "src" / "app.py").write_text(SOURCE, "utf-8")
    return daemon


@pytest.fixture
async def vscode(project: Daemon) -> AsyncIterator[tuple[SwitchmanClient, ToolEditor]]:
    async with running_server("visual-studio-code", project.env, [project.workspace],
                              LISTEN) as client:
        yield client, ToolEditor(client)


TURN_TIMEOUT = 90.0
"""A turn here makes two or three provider calls and an approval round trip: on a loaded
machine that takes longer than one request's usual bound."""


async def chat(client: SwitchmanClient, daemon: Daemon, message: str) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.CHAT, {"workspace": daemon.uri, "message": message}), TURN_TIMEOUT)


def tool_result(fake: FakeProvider, request: int = 1) -> dict[str, Any]:
    """The tool result the model received in its ``request``-th call."""
    result: dict[str, Any] = fake.requests[request].body["messages"][-1]["content"][0]
    return result


async def test_an_approved_edit_reaches_the_buffer_through_apply_edit(
        client: SwitchmanClient, project: Daemon, fake: FakeProvider) -> None:
    editor = ToolEditor(client)
    fake.script_tool_call("edit_file", EDIT, id="toolu_e")
    fake.script_text("Done.")
    result = await chat(client, project, "make main return 43")
    assert result["status"] == "completed"
    request = editor.approvals[0]
    assert (request["tool"], request["tool_class"], request["title"]) == (
        "edit_file", "write", "Edit src/app.py")
    assert (request["session_id"], request["turn_id"]) == (result["session_id"],
                                                           result["turn_id"])
    assert request["original"] == SOURCE
    assert "-    return 42\n+    return 43\n" in request["diff"]
    assert editor.buffer(project.workspace / "src" / "app.py") == SOURCE.replace("42", "43")
    assert (project.workspace / "src" / "app.py").read_text("utf-8") == SOURCE  # unsaved
    assert not tool_result(fake)["is_error"]
    assert "Edited src/app.py in the editor" in str(tool_result(fake)["content"])
    done = deltas(client, result["turn_id"], "tool_result")[0]["tool"]
    assert done["status"] == "done"
    # the question and its answer, as the session keeps them (a chat shows them live too)
    assert (done["approval"]["title"], done["approval"]["outcome"]) == (
        "Edit src/app.py", "allowed_once")


async def test_create_and_delete_are_resource_operations(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    client, editor = vscode
    fake.script_tool_call("create_file", {"path": "docs/notes.md", "content": "# Notes\n"})
    fake.script_tool_call("delete_file", {"path": "src/app.py"})
    fake.script_text("Done.")
    await chat(client, project, "add notes, remove app.py")
    create, delete = editor.edits
    assert create["documentChanges"][0] == {
        "kind": "create", "uri": (project.workspace / "docs" / "notes.md").as_uri(),
        "options": {"overwrite": False, "ignoreIfExists": False}}
    assert editor.buffer(project.workspace / "docs" / "notes.md") == "# Notes\n"
    assert delete == {"documentChanges": [{"kind": "delete",
                                           "uri": (project.workspace / "src" / "app.py").as_uri()}]}
    assert not (project.workspace / "src" / "app.py").exists()


async def test_an_edit_the_editor_refuses_is_reported_to_the_model(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    client, editor = vscode
    editor.refusal = "the file is read-only"
    fake.script_tool_call("edit_file", EDIT)
    fake.script_text("It could not be changed.")
    result = await chat(client, project, "make main return 43")
    assert result["status"] == "completed"
    returned = tool_result(fake)
    assert returned["is_error"] is True
    assert returned["content"] == ("The editor refused the change to src/app.py: the file is "
                                   "read-only. Nothing was changed.")
    # the tool line says why too: the user may have to act on it
    done = deltas(client, result["turn_id"], "tool_result")[0]["tool"]
    assert (done["status"], done["summary"]) == (
        "error", "refused by the editor: the file is read-only")


@pytest.mark.parametrize("answer", [None, ["applied"], "applied", {"applied": "false"},
                                    {"applied": 1}, {"applied": "true"}])
async def test_an_apply_edit_answer_that_cannot_be_read_is_a_refusal(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider,
        answer: Any) -> None:
    """An editor that answers workspace/applyEdit with a result of another shape (null, a
    list): the answer was dropped as unreadable and the turn waited for it for good. Only a
    JSON ``true`` is "applied": the string ``"false"`` passed for applied (read as truthy)."""
    vscode[1].raw_answer = answer
    fake.script_tool_call("edit_file", EDIT)
    fake.script_text("It could not be changed.")
    returned = await asyncio.wait_for(tool_result_of(vscode[0], project, fake), TURN_TIMEOUT)
    assert returned["is_error"] is True and "could not be read" in returned["content"]
    assert returned["content"].startswith(
        "The editor refused the change to src/app.py: the editor answered with an error (")


async def tool_result_of(client: SwitchmanClient, project: Daemon, fake: FakeProvider
                         ) -> dict[str, Any]:
    """Make main return 43: the result of the edit the model asked for."""
    assert (await chat(client, project, "make main return 43"))["status"] == "completed"
    return tool_result(fake)


async def test_an_edit_applied_but_not_saved_tells_the_model_so(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    # VS Code and Neovim save the edit; when they cannot, they still answer "applied" and say why
    client, editor = vscode
    editor.unsaved = ("The change is in the editor but was not saved: src/app.py (read-only). "
                      "The file on disk still has the old text.")
    fake.script_tool_call("edit_file", EDIT)
    fake.script_text("Applied, not saved.")
    result = await chat(client, project, "make main return 43")
    assert result["status"] == "completed"
    returned = tool_result(fake)
    assert returned["is_error"] is False
    assert returned["content"] == (
        "Edited src/app.py in the editor (the user can undo it). The change is in "
        "the editor but was not saved: src/app.py (read-only). The file on disk still has the old "
        "text. Commands and reads see the old file until it is saved.")
    done = deltas(client, result["turn_id"], "tool_result")[0]["tool"]
    assert (done["status"], done["summary"]) == ("done", "edited src/app.py (not saved)")


STALE = ("src/app.py changed in the editor since this change was proposed, so it was not "
         "applied. Nothing was changed; read the file again to make the change.")


@pytest.mark.parametrize(("answer", "told", "summary", "kept"), [
    # The editor's answer is only a decision, a reason and who refused: it cannot pass for
    # "nobody answered".
    ({"decision": "deny", "reason": "keep 42, it is the answer", "by_user": False},
     "The user denied this edit of src/app.py; it did not happen."
     " Their reason: keep 42, it is the answer.", "denied", "denied"),
    # Both clients turn an allowed edit down when its buffer changed while the user was asked;
    # the model was told "The user denied this edit", and could tell the user so.
    ({"decision": "deny", "reason": STALE, "refused_by": "editor"},
     "The user allowed this edit of src/app.py, but the editor did not apply it, so it did not "
     f"happen: {STALE}", "not applied", "not_applied"),
], ids=["the user's reason", "the editor turned down what the user allowed"])
async def test_a_denial_says_who_refused_and_why(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider,
        answer: dict[str, str], told: str, summary: str, kept: str) -> None:
    client, editor = vscode
    editor.answers.append(answer)
    fake.script_tool_call("edit_file", EDIT)
    fake.script_text("OK, I left it.")
    result = await chat(client, project, "make main return 43")
    assert result["status"] == "completed"
    assert editor.edits == []
    assert str(tool_result(fake)["content"]) == told
    assert deltas(client, result["turn_id"], "tool_result")[0]["tool"]["summary"] == summary
    # The session keeps the question and its answer with the call's result: a reloaded chat
    # shows the card answered, under the same id.
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    results = [b for m in detail["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert results[0]["approval"] == {
        "id": editor.approvals[0]["id"], "title": "Edit src/app.py", "outcome": kept,
        "reason": answer["reason"], "command": None, "cwd": None, "path": "src/app.py",
        "diff": editor.approvals[0]["diff"], "tier": None, "requested_tier": None,
        "model": None, "routed_by": None, "worker_tools": None,
        "superseded": None, "model_changed": None}


@pytest.mark.parametrize("reason", [None, "stale"])
async def test_refused_by_editor_on_a_command_is_the_users_denial(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider,
        reason: str | None) -> None:
    """``refused_by: "editor"`` means the editor turned down a change the user allowed. A
    command (or a delegation) has no buffer to turn it down: read as such, the model was told
    "The user allowed this command, but the editor did not apply it … it no longer fitted the
    file", which never happened. It is the user's denial."""
    client, editor = vscode
    editor.answers.append({"decision": "deny", "reason": reason, "refused_by": "editor"})
    fake.script_tool_call("run_command", {"command": "touch ran.txt"})
    fake.script_text("OK, I did not run it.")
    result = await chat(client, project, "touch a file")
    assert result["status"] == "completed"
    assert not (project.workspace / "ran.txt").exists()
    told = str(tool_result(fake)["content"])
    assert told.startswith("The user denied this command; it did not happen.")
    assert "editor" not in told and "fitted" not in told
    assert deltas(client, result["turn_id"], "tool_result")[0]["tool"]["summary"] == "denied"


@pytest.mark.parametrize("answer", [
    {"decision": "deny", "reason": {"x": 1}},
    {"decision": "deny", "reason": 5, "refused_by": ["editor"]},
], ids=["an object", "a number"])
async def test_a_deny_whose_reason_is_not_text_is_the_users_denial(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider,
        answer: dict[str, Any]) -> None:
    """A ``deny`` is the user's denial even when its ``reason`` is not text: the model was
    told "The user could not be asked to approve this command (the editor's answer could not
    be read)", as if nobody had answered. It is a denial with no reason, never an approval."""
    client, editor = vscode
    editor.answers.append(answer)
    fake.script_tool_call("run_command", {"command": "touch ran.txt"})
    fake.script_text("OK, I did not run it.")
    result = await chat(client, project, "touch a file")
    assert result["status"] == "completed"
    assert not (project.workspace / "ran.txt").exists()
    assert str(tool_result(fake)["content"]) == "The user denied this command; it did not happen."
    assert deltas(client, result["turn_id"], "tool_result")[0]["tool"]["summary"] == "denied"


async def test_a_lone_surrogate_in_the_editors_words_does_not_fail_the_turn(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    # JSON can carry "\ud800"; a deny reason or an applyEdit failureReason holding one used to
    # fail the turn when its tool result was stored.
    client, editor = vscode
    editor.answers.append({"decision": "deny", "reason": "no \ud800 thanks \U0001f600"})
    fake.script_tool_call("edit_file", EDIT)
    editor.refusal = "locked \udfff"
    fake.script_tool_call("edit_file", EDIT)
    fake.script_text("OK.")
    result = await chat(client, project, "make main return 43")
    assert result["status"] == "completed"
    assert str(tool_result(fake)["content"]).endswith("Their reason: no \ufffd thanks \U0001f600.")
    assert "The editor refused the change to src/app.py: locked \ufffd" in str(
        tool_result(fake, 2)["content"])


async def test_no_answer_in_time_is_a_denial(project: Daemon, fake: FakeProvider) -> None:
    env = {**project.env, "SWITCHMAN_APPROVAL_TIMEOUT_SECONDS": "1"}
    async with running_server("neovim", env, [project.workspace], LISTEN) as client:
        editor = ToolEditor(client)
        editor.answers.append(NEVER)
        fake.script_tool_call("run_command", {"command": "touch ran"})
        fake.script_text("Nobody answered.")
        result = await chat(client, project, "touch a file")
    assert result["status"] == "completed"
    # Nobody refused: the model must not tell the user they did.
    assert str(tool_result(fake)["content"]) == (
        "The user could not be asked to approve this command (no answer within 1 second),"
        " so it did not happen.")
    assert not (project.workspace / "ran").exists()


async def test_a_question_cut_short_by_stopping_the_turn_is_kept_as_stopped(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    """A reloaded chat shows the question again, saying the stop cut it short."""
    client, editor = vscode
    editor.answers.append(NEVER)
    fake.script_tool_call("run_command", {"command": "touch ran"})
    pending = asyncio.ensure_future(chat(client, project, "touch a file"))
    asked = await client.wait_for(methods.APPROVE)
    call = await client.wait_for(methods.CHAT_DELTA, lambda d: d["kind"] == "tool_call")
    await client.request(methods.CANCEL, {"turn_id": call["turn_id"]})
    result = await pending
    assert result["status"] == "cancelled"
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    results = [b for m in detail["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [(r["content"], r["is_error"]) for r in results] == [("Cancelled.", True)]
    assert results[0]["approval"] == {
        "id": asked["id"], "title": "Run `touch ran`", "outcome": "stopped", "reason": None,
        "command": "touch ran", "cwd": str(project.workspace), "path": None, "diff": None,
        "tier": None, "requested_tier": None,
        "model": None, "routed_by": None, "worker_tools": None,
        "superseded": None, "model_changed": None}
    # the chat shows it live too: the call's result delta carries the same record
    done = deltas(client, result["turn_id"], "tool_result")
    assert [(d["tool"]["id"], d["tool"]["status"], d["tool"]["summary"]) for d in done] == [
        (call["tool"]["id"], "error", "stopped")]
    assert done[0]["tool"]["approval"] == results[0]["approval"]
    assert not (project.workspace / "ran").exists()


async def test_always_is_kept_in_the_data_folder_listed_and_revocable(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    client, editor = vscode
    editor.answers.append({"decision": "allow_always"})
    fake.script_tool_call("run_command", {"command": "echo one"})
    fake.script_tool_call("run_command", {"command": "echo two"})
    fake.script_text("Ran both.")
    await chat(client, project, "run two commands")
    assert [a["command"] for a in editor.approvals] == ["echo one"]  # the second did not ask
    assert "Exit status 0.\ntwo" in str(tool_result(fake, 2)["content"])
    stored = json.loads((project.data / "trust.json").read_text())
    assert stored == {project.uri: ["run_command"]}
    assert not (project.workspace / ".switchman").exists()
    listed = await client.request(methods.TRUST, {"workspace": project.uri})
    assert listed == {"trusted": [{"workspace": project.uri, "tools": ["run_command"]}]}
    shown = await chat(client, project, "/trust")
    assert "Always allowed in this workspace (no question asked): run_command." in shown["text"]
    revoked = await client.request(methods.REVOKE_TRUST, {"workspace": project.uri,
                                                          "tool": "run_command"})
    assert revoked == {"workspace": project.uri, "revoked": ["run_command"]}
    fake.script_tool_call("run_command", {"command": "echo three"})
    fake.script_text("Asked again.")
    await chat(client, project, "once more")
    assert [a["command"] for a in editor.approvals] == ["echo one", "echo three"]


def test_trust_requests_name_a_folder_or_fail_clearly(
        project: Daemon, fake: FakeProvider, tmp_path: Path) -> None:
    # Over raw frames: a NUL or a lone surrogate failed with internal_error, and "", a relative
    # path or an http:// URI was taken as a folder under the daemon's own working directory.
    (project.data / "trust.json").write_text(json.dumps({project.uri: ["edit_file"]}))
    raw = RawDaemon(project.env, tmp_path / "stderr.log")
    try:
        raw.initialize(project.workspace)
        for workspace in ("", "relative/dir", "http://example.com/app", "/a\u0000b",
                          "file:///a%00b", "file:///\ud800"):
            for method in (methods.TRUST, methods.REVOKE_TRUST):
                error = raw.request(method, {"workspace": workspace})["error"]
                assert error["data"]["code"] == "unknown_workspace", (method, workspace, error)
                assert "give a file:// URI or an absolute path" in error["message"]
        # a folder that is not open still works, as a URI or as an absolute path
        assert raw.request(methods.TRUST, {"workspace": str(project.workspace)})["result"] == {
            "trusted": [{"workspace": project.uri, "tools": ["edit_file"]}]}
        assert raw.request(methods.REVOKE_TRUST, {"workspace": "/nowhere"})["result"] == {
            "workspace": "file:///nowhere", "revoked": []}
    finally:
        raw.close()
    assert json.loads((project.data / "trust.json").read_text()) == {project.uri: ["edit_file"]}


def test_a_damaged_trust_file_is_told_in_trust_listings_and_logged_once(
        project: Daemon, fake: FakeProvider, tmp_path: Path) -> None:
    # It was ignored in silence: the tools asked again and nothing said why.
    (project.data / "trust.json").write_text('{"' + project.uri + '": ["run_command"')
    told = (f"{project.data / 'trust.json'} cannot be read (not valid JSON at line 1, column "
            f"{len(project.uri) + 20}), so no tool is always allowed and each asks first; the "
            "next \"always\" answer starts it anew.")
    raw = RawDaemon(project.env, tmp_path / "stderr.log")
    try:
        raw.initialize(project.workspace)
        for _ in range(2):
            assert raw.request(methods.TRUST, {"workspace": project.uri})["result"] == {
                "trusted": [{"workspace": project.uri, "tools": []}], "problem": told}
        listed = raw.request(methods.CHAT, {"workspace": project.uri, "message": "/trust"})
        assert listed["result"]["text"] == ("No tool is always allowed in this workspace: file "
                                            f"changes and commands ask first.\n{told}")
    finally:
        raw.close()
    assert raw.stderr().count("trust.json cannot be read") == 1


async def test_always_survives_a_restart_and_slash_trust_revokes_it(
        project: Daemon, fake: FakeProvider) -> None:
    (project.data / "trust.json").write_text(json.dumps({project.uri: ["edit_file"]}))
    async with running_server("visual-studio-code", project.env, [project.workspace],
                              LISTEN) as client:
        editor = ToolEditor(client)
        fake.script_tool_call("edit_file", EDIT)
        fake.script_text("Edited.")
        await chat(client, project, "edit it")
        assert editor.approvals == []
        assert len(editor.edits) == 1
        typo = await chat(client, project, "/trust revoke edit_fle")  # says what is trusted
        assert typo["text"] == ("'edit_fle' was not always allowed here; nothing changed. "
                                "Did you mean /trust revoke edit_file? "
                                "Always allowed here: edit_file.")
        cut = await chat(client, project, "/trust revoke edit")  # the start of one
        assert "Did you mean /trust revoke edit_file?" in cut["text"]
        answer = await chat(client, project, "/trust revoke all")
        assert answer["text"] == "Switchman will ask again before: edit_file."
        again = await chat(client, project, "/trust revoke all")  # "all" is no tool's name
        assert again["text"] == "No tool was always allowed here; nothing changed."
    assert json.loads((project.data / "trust.json").read_text()) == {}


async def test_a_workspace_file_cannot_grant_trust(project: Daemon, fake: FakeProvider) -> None:
    switchman = project.workspace / ".switchman"
    switchman.mkdir()
    (switchman / "trust.json").write_text(json.dumps({project.uri: ["run_command"]}))
    (switchman / "routing.yaml").write_text("trust: {run_command: always}\n"
                                            "trusted_tools: [run_command]\n")
    async with running_server("visual-studio-code", project.env, [project.workspace],
                              LISTEN) as client:
        editor = ToolEditor(client)
        editor.answers.append({"decision": "deny"})
        fake.script_tool_call("run_command", {"command": "touch ran"})
        fake.script_text("Denied.")
        await chat(client, project, "touch it")
    assert len(editor.approvals) == 1
    assert not (project.workspace / "ran").exists()


@pytest.mark.parametrize(("tool", "arguments"), [
    ("create_file", {"path": "../evil.txt", "content": "x"}),
    ("edit_file", {"path": "escape/secret.txt", "old_text": "hunter2", "new_text": "x"}),
    ("create_file", {"path": ".git/hooks/post-checkout", "content": "#!/bin/sh\n"}),
    ("delete_file", {"path": "/etc/hostname"}),
])
async def test_confinement_attacks_are_refused_without_asking(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider,
        tool: str, arguments: dict[str, Any]) -> None:
    client, editor = vscode
    (project.workspace.parent / "secret.txt").write_text("hunter2")
    (project.workspace / "escape").symlink_to(project.workspace.parent)
    (project.workspace / ".git").mkdir()
    fake.script_tool_call(tool, arguments)
    fake.script_text("Refused.")
    await chat(client, project, "try it")
    assert tool_result(fake)["is_error"] is True
    assert editor.approvals == [] and editor.edits == []
    assert (project.workspace.parent / "secret.txt").read_text() == "hunter2"
    assert not (project.workspace.parent / "evil.txt").exists()


async def gone(pid: int) -> bool:
    """Whether ``pid`` ends within 10 s (a kill is delivered asynchronously)."""
    return await ended(pid, 10)


async def test_cancelling_a_turn_kills_the_commands_process_group(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    client, _ = vscode
    fake.script_tool_call("run_command", {
        "command": "sleep 300 & echo $! > child.pid; wait"})
    marker = project.workspace / "child.pid"
    os.mkfifo(marker)
    pending = asyncio.ensure_future(chat(client, project, "start a long job"))
    await client.wait_for(methods.APPROVE)
    child = int(await read_fifo(marker, 20))
    call = await client.wait_for(methods.CHAT_DELTA, lambda d: d["kind"] == "tool_call")
    answer = await client.request(methods.CANCEL, {"turn_id": call["turn_id"]})
    assert answer == {"cancelled": True, "status": "cancelled"}
    assert (await pending)["status"] == "cancelled"
    assert await gone(child)


async def test_a_command_is_stopped_when_the_daemon_is_killed(
        project: Daemon, fake: FakeProvider) -> None:
    """kill -9 of the daemon left an approved command running for good (its timeout and
    the cancel are the daemon's), writing in the workspace after its turn was interrupted."""
    client = SwitchmanClient()
    client.listen(*LISTEN)
    ToolEditor(client)
    await client.start_io(*SERVER_COMMAND, env=project.env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(project.uri, "project")]))
    fake.script_tool_call("run_command", {
        "command": "sleep 300 & echo $! > child.pid; wait; echo late > late.txt"})
    marker = project.workspace / "child.pid"
    os.mkfifo(marker)
    pending = asyncio.ensure_future(chat(client, project, "start a long job"))
    child = int(await read_fifo(marker, 20))
    await kill_9(client, pending)
    assert await gone(child)
    assert not (project.workspace / "late.txt").exists()


async def test_a_commands_output_is_shown_live_and_rebuilt_and_a_denials_is_not(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    client, editor = vscode
    editor.answers += [{"decision": "allow_once"}, {"decision": "deny"}]
    fake.script_tool_call("run_command", {"command": "echo built; echo broke >&2; exit 3"})
    fake.script_tool_call("run_command", {"command": "echo never"})
    fake.script_text("It failed.")
    result = await chat(client, project, "build it")
    ran, denied = (d["tool"] for d in deltas(client, result["turn_id"], "tool_result"))
    assert (ran["summary"], ran["output"]) == ("exit 3", "Exit status 3.\nbuilt\nbroke\n")
    assert "output" not in denied
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    results = [b for m in detail["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [(r["content"], r["output_shown"]) for r in results] == [
        ("Exit status 3.\nbuilt\nbroke\n", True), (results[1]["content"], False)]


async def test_a_command_timeout_kills_its_group(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    client, _ = vscode
    fake.script_tool_call("run_command", {
        "command": "sleep 300 & echo $! > child.pid; trap '' TERM; sleep 300",
        "timeout_seconds": 1})
    fake.script_text("It timed out.")
    result = await chat(client, project, "run the slow thing")
    assert result["status"] == "completed"
    assert "Timed out after 1 s" in str(tool_result(fake)["content"])
    assert await gone(int((project.workspace / "child.pid").read_text()))


async def test_provider_keys_never_reach_a_command(project: Daemon, fake: FakeProvider) -> None:
    (project.config / "models.yaml").write_text(
        models_yaml(fake).replace("anthropic: {", "anthropic: {api_key_env: TEAM_CLAUDE_SECRET, "),
        "utf-8")
    canary = "canary-team-secret-0123456789"
    env = {**project.env, "TEAM_CLAUDE_SECRET": canary}
    async with running_server("visual-studio-code", env, [project.workspace], LISTEN) as client:
        ToolEditor(client)
        fake.script_tool_call("run_command", {"command": "env; echo done"})
        fake.script_text("Printed.")
        result = await chat(client, project, "print the environment")
    assert result["status"] == "completed"
    output = str(tool_result(fake)["content"])
    assert output.rstrip().endswith("done")
    for secret in (canary, ANTHROPIC_KEY, OPENAI_KEY):
        assert secret not in output
    assert "SWITCHMAN_DATA_DIR=" in output  # the rest of the environment is there


async def test_a_provider_key_in_what_a_tool_returns_is_masked(
        vscode: tuple[SwitchmanClient, ToolEditor], project: Daemon, fake: FakeProvider) -> None:
    """A file that holds a provider's key (a script, a note) read by a command or read_file:
    the key reaches neither the model (another provider's key would go to a third party),
    nor the chat, nor the transcript."""
    client, editor = vscode
    editor.answers.append({"decision": "allow_once"})
    (project.workspace / "deploy.sh").write_text(
        f"export OPENAI_API_KEY={OPENAI_KEY}\nexport CLAUDE={ANTHROPIC_KEY}\n", "utf-8")
    for tool, arguments in (("run_command", {"command": "cat deploy.sh"}),
                            ("read_file", {"path": "deploy.sh"}), ("grep", {"pattern": "sk-"})):
        fake.script_tool_call(tool, arguments)
    fake.script_text("Read it.")
    result = await chat(client, project, "show the deploy script")
    assert result["status"] == "completed"
    sent = [json.dumps(tool_result(fake, n)) for n in (1, 2, 3)]
    shown = json.dumps(deltas(client, result["turn_id"], "tool_result"))
    kept = json.dumps(await client.request(methods.SESSION, {"session_id": result["session_id"]}))
    for text in (*sent, shown, kept):
        assert ANTHROPIC_KEY not in text and OPENAI_KEY not in text
    assert all("export OPENAI_API_KEY=[redacted]" in text for text in sent)
    assert "export OPENAI_API_KEY=[redacted]" in shown


@pytest.mark.parametrize("added_later", [False, True])
async def test_a_workspace_opened_through_a_symlink_is_edited_under_its_name(
        project: Daemon, fake: FakeProvider, tmp_path: Path, added_later: bool) -> None:
    """The editor opened the project as a symlink (``~/code/app`` with ``~/code`` linking
    elsewhere): the edit is proposed on, and applied to, the document under that name. It
    went to the real path, a second document to the editor, changed beside the one the
    user had open (whose unsaved text was not the edit's base either)."""
    linked = tmp_path / "linked-project"
    linked.symlink_to(project.workspace, target_is_directory=True)
    named = (linked / "src" / "app.py").as_uri()
    folders = [tmp_path] if added_later else [linked]
    async with running_server("visual-studio-code", project.env, folders, LISTEN) as client:
        editor = ToolEditor(client)
        if added_later:  # workspace/didChangeWorkspaceFolders
            client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(linked.as_uri(), linked.name)], removed=[])))
        unsaved = SOURCE.replace("# café", "# café, unsaved")
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=named, language_id="python", version=1, text=unsaved)))
        editor.buffers[named] = unsaved  # what the editor shows under that name
        fake.script_tool_call("edit_file", EDIT, id="toolu_e")
        fake.script_text("Done.")
        result = await asyncio.wait_for(client.protocol.send_request_async(  # type: ignore[no-untyped-call]
            methods.CHAT, {"workspace": linked.as_uri(), "message": "make main return 43"}),
            TURN_TIMEOUT)
    assert result["status"] == "completed"
    assert editor.approvals[0]["uri"] == named
    assert editor.approvals[0]["original"] == unsaved
    assert [e["documentChanges"][0]["textDocument"]["uri"] for e in editor.edits] == [named]
    assert editor.buffers == {named: unsaved.replace("42", "43")}
