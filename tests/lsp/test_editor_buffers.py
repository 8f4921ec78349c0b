"""The tools read and edit what the editor shows: the shared text of its open file buffers.

The editor shares a workspace file (``didOpen``) whose buffer holds changes the user has
not saved; the model's ``read_file``, ``grep`` and ``edit_file`` (scripted in the fake
provider) work on that text, not the disk's, until the editor closes the document.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from switchman.server import methods
from tests.lsp.conftest import Daemon
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import SwitchmanClient
from tests.support.rawrpc import frame

DISK = "def main():\n    return 42\n"
UNSAVED = "def main():\n    # typed, not saved\n    return 42\n"
TURN_TIMEOUT = 90.0


def app(daemon: Daemon) -> Path:
    return daemon.workspace / "src" / "app.py"


def open_buffer(client: SwitchmanClient, path: Path, text: str, version: int = 1) -> str:
    """Share ``path`` with the daemon as the editor does when the user opens it."""
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=text)))
    return uri


def type_text(client: SwitchmanClient, uri: str, version: int, text: str) -> None:
    """The user types ``text`` at the start of the buffer (an incremental change)."""
    start = types.Position(0, 0)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [types.TextDocumentContentChangePartial(range=types.Range(start, start), text=text)]))


async def chat(client: SwitchmanClient, daemon: Daemon, message: str) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.CHAT, {"workspace": daemon.uri, "message": message}), TURN_TIMEOUT)


async def edit_turn(client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, old: str,
                    new: str) -> None:
    """A turn whose model replaces ``old`` with ``new`` in src/app.py."""
    fake.script_tool_call("edit_file", {"path": "src/app.py", "old_text": old, "new_text": new})
    fake.script_text("Done.")
    result = await chat(client, daemon, f"replace {old}")
    assert result["status"] == "completed"


def results(fake: FakeProvider) -> list[str]:
    """The text of every tool result the model was sent, in order."""
    found = []
    for request in fake.requests:
        last = request.body["messages"][-1]
        if isinstance(last["content"], list):
            found += [str(part["content"]) for part in last["content"]
                      if part.get("type") == "tool_result"]
    return found


async def test_read_file_and_grep_see_the_unsaved_buffer(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    open_buffer(client, app(daemon), UNSAVED)
    fake.script_tool_call("read_file", {"path": "src/app.py"})
    fake.script_tool_call("grep", {"pattern": "typed, not saved"})
    fake.script_tool_call("grep", {"pattern": "typed", "path": "src/app.py"})
    fake.script_text("Read.")
    result = await chat(client, daemon, "what does app.py hold?")
    assert result["status"] == "completed"
    read, grep_folder, grep_file = results(fake)
    assert read == UNSAVED.rstrip("\n")
    assert grep_folder == "src/app.py:2:     # typed, not saved"
    assert grep_file == "src/app.py:2:     # typed, not saved"
    assert app(daemon).read_text("utf-8") == DISK


async def test_a_folder_grep_finds_a_file_created_in_the_editor_and_never_saved(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    new = daemon.workspace / "src" / "draft" / "new.py"
    open_buffer(client, new, "def draft():\n    # typed, not saved\n")
    fake.script_tool_call("grep", {"pattern": "typed, not saved"})
    fake.script_text("Found.")
    assert (await chat(client, daemon, "where did I type that?"))["status"] == "completed"
    assert results(fake) == ["src/draft/new.py:2:     # typed, not saved"]
    assert not new.exists()


async def test_an_edit_is_made_from_the_buffer_and_names_its_version(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """The edit's base is what the user sees; its ``version`` lets the editor refuse it if
    the buffer changes before it arrives. No "save first" any more."""
    editor = ToolEditor(client)
    uri = open_buffer(client, app(daemon), DISK)
    type_text(client, uri, 2, "# a header\n")
    edited = "# a header\n" + DISK
    editor.buffers[uri] = edited
    await edit_turn(client, daemon, fake, "# a header", "# the header")
    assert editor.approvals[0]["original"] == edited
    [edit] = editor.edits
    if "documentChanges" in edit:  # the clients declare it (Neovim's plugin adds it)
        assert edit["documentChanges"][0]["textDocument"] == {"uri": uri, "version": 2}
    else:  # a client without versioned edits gets plain changes
        assert list(edit["changes"]) == [uri]
    assert editor.buffers[uri] == edited.replace("# a header", "# the header")
    assert "Edited src/app.py in the editor" in results(fake)[0]


async def test_a_buffer_changed_during_the_approval_is_not_edited(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """The user types while the approval card is shown: the change was made from the text
    before, so it is not applied, and the model is told to read the file again."""
    editor = ToolEditor(client)
    uri = open_buffer(client, app(daemon), UNSAVED)
    editor.while_asked = lambda _request: type_text(client, uri, 2, "# typed while asked\n")
    await edit_turn(client, daemon, fake, "return 42", "return 43")
    assert editor.approvals[0]["original"] == UNSAVED
    assert editor.edits == []
    assert "changed while this change waited for approval" in results(fake)[0]


async def test_a_closed_document_is_read_from_the_disk_again(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    uri = open_buffer(client, app(daemon), UNSAVED)
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        types.TextDocumentIdentifier(uri=uri)))
    fake.script_tool_call("read_file", {"path": "src/app.py"})
    fake.script_text("Read.")
    await chat(client, daemon, "what does app.py hold?")
    assert results(fake) == [DISK.rstrip("\n")]


@pytest.mark.parametrize("tool", ["read_file", "grep"])
async def test_an_open_secret_file_stays_refused(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, tool: str) -> None:
    secret = daemon.workspace / ".env"
    secret.write_text("TOKEN=on-disk\n", "utf-8")
    open_buffer(client, secret, "TOKEN=typed-in-the-buffer\n")
    args = {"path": ".env"} if tool == "read_file" else {"pattern": "TOKEN", "path": ".env"}
    fake.script_tool_call(tool, args)
    fake.script_text("Refused.")
    await chat(client, daemon, "show the token")
    [answer] = results(fake)
    assert "usually hold" in answer and "TOKEN" not in answer


async def test_a_code_file_gets_no_diagnostics(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """Only Switchman's configuration files are checked: a shared code file, even one that
    is not YAML at all, is never published diagnostics (not even an empty list)."""
    uri = open_buffer(client, app(daemon), "key: [unclosed\n")
    routing = daemon.workspace / ".switchman" / "routing.yaml"
    routing.parent.mkdir()
    routing_uri = open_buffer(client, routing, "rules: [unclosed\n")
    await client.wait_for(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                          lambda p: p.uri == routing_uri and p.diagnostics)
    published = [p.uri for p in client.received[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]]
    assert uri not in published



async def test_an_edit_after_characters_outside_the_bmp_lands_on_its_text(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """The edit's range counts columns as the editor does (UTF-16 code units for VS Code, where
    😀 is two and é one; UTF-8 bytes where Neovim asks for them), in a CRLF buffer with a BOM."""
    editor = ToolEditor(client)
    text = '\ufeffs = "😀𝄞é"; y = 1\r\nx = 1\r\n'
    uri = open_buffer(client, app(daemon), text)
    editor.buffers[uri] = text
    fake.script_tool_call("edit_file", {"path": "src/app.py", "old_text": "y = 1",
                                        "new_text": "y = 2"})
    fake.script_text("Done.")
    await chat(client, daemon, "make y 2")
    assert "Edited src/app.py in the editor" in results(fake)[0]
    assert editor.buffers[uri] == text.replace("y = 1", "y = 2")


@pytest.mark.parametrize("escapes", ["upper", "lower"])  # VS Code's %C3%AF, Neovim's %c3%af
async def test_a_file_whose_path_is_percent_encoded_is_shared_too(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, escapes: str) -> None:
    """A space, a non-ASCII letter or a ``#`` in the path made the daemon miss the shared
    buffer (pygls keys documents by the decoded URI): read_file read the disk, and the edit,
    made from the disk and naming no version, landed at the wrong place of the buffer."""
    path = daemon.workspace / "my notes" / "naïve #1.py"
    path.parent.mkdir()
    path.write_text(DISK, "utf-8")
    uri = path.as_uri()
    if escapes == "lower":
        uri = re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), uri)
    editor = ToolEditor(client)
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=UNSAVED)))
    editor.buffers[uri] = UNSAVED
    fake.script_tool_call("read_file", {"path": "my notes/naïve #1.py"})
    fake.script_tool_call("edit_file", {"path": "my notes/naïve #1.py",
                                        "old_text": "return 42", "new_text": "return 43"})
    fake.script_text("Done.")
    assert (await chat(client, daemon, "read and edit it"))["status"] == "completed"
    assert results(fake)[0] == UNSAVED.rstrip("\n")
    assert editor.approvals[0]["original"] == UNSAVED
    [edit] = editor.edits  # to the document as the editor named it, with its version
    if "documentChanges" in edit:
        assert edit["documentChanges"][0]["textDocument"] == {"uri": uri, "version": 1}
    else:
        assert list(edit["changes"]) == [uri]
    assert editor.buffers[uri] == UNSAVED.replace("return 42", "return 43")
    assert path.read_text("utf-8") == DISK


async def test_a_byte_that_is_not_utf8_in_a_buffer_reaches_the_tools_as_one_replacement_character(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """Found in Neovim, which sends a buffer's bytes as they are: a Latin-1 é (one byte) in
    the shared text reached read_file and grep as three U+FFFD, where a file's bad byte is
    one (the daemon reads such a byte as a lone surrogate, whose UTF-8 form is three bytes)."""
    body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": app(daemon).as_uri(), "languageId": "python", "version": 1,
                         "text": "name = 'caf@'\n"}}}).encode()
    assert client.protocol.writer is not None
    sent = client.protocol.writer.write(frame(body.replace(b"caf@", b"caf\xe9")))
    if inspect.isawaitable(sent):
        await sent
    fake.script_tool_call("read_file", {"path": "src/app.py"})
    fake.script_tool_call("grep", {"pattern": "name", "path": "src/app.py"})
    fake.script_text("Read.")
    assert (await chat(client, daemon, "what does app.py hold?"))["status"] == "completed"
    assert results(fake) == ["name = 'caf\ufffd'", "src/app.py:1: name = 'caf\ufffd'"]
