"""switchman/chat end to end: streaming, routing notices, tools, cancel, failures."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from switchman.engine.store.database import _MIGRATIONS
from switchman.server import methods
from tests.lsp.conftest import Daemon, deltas, error_data
from tests.support.fake_provider import FakeProvider, Usage
from tests.support.lsp import CLIENTS, SwitchmanClient, running_server
from tests.support.rawrpc import RawDaemon, frame

HAIKU, SONNET, OPUS = ("anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6",
                       "anthropic:claude-opus-4-7")


async def chat(client: SwitchmanClient, daemon: Daemon, message: str, **extra: Any) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message,
                                               **extra})


async def test_a_turn_streams_and_resolves_with_its_outcome(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    fake.script_text("Hel", "lo ", "there", usage=Usage(input_tokens=1000, output_tokens=200))
    result = await chat(client, daemon, "write a commit message for the login fix")
    assert result["kind"] == "turn"
    assert result["status"] == "completed"
    assert result["model"] == HAIKU  # built-in rule "fast for commits"
    assert result["text"] == "Hello there"
    assert result["usage"]["input_tokens"] == 1000
    assert result["cost_usd"] == "0.002000"  # 1000 * $1/M + 200 * $5/M
    assert result["summary"] == "rule: fast for commits"
    texts = [d["text"] for d in deltas(client, result["turn_id"])]
    assert texts == ["Hel", "lo ", "there"]
    notices = [n for n in client.received[methods.ROUTE_DECIDED]
               if n["turn_id"] == result["turn_id"]]
    assert len(notices) == 1
    assert notices[0]["decision"]["chosen_model"] == HAIKU
    sent = fake.requests[0]
    assert sent.model == "claude-haiku-4-5"
    assert "coding assistant" in str(sent.body["system"])
    assert {t["name"] for t in sent.body["tools"]} == {
        "read_file", "list_files", "grep", "skill_load", "edit_file", "create_file", "delete_file",
        "run_command", "memory_add", "memory_replace"}


async def test_a_long_user_md_leaves_room_for_the_workspace_memory(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """USER.md and MEMORY.md share the memory budget: a USER.md longer than all of it used to
    take it all, and MEMORY.md's facts about the project never reached the model, without a
    note saying it was left out."""
    folder = daemon.workspace / ".switchman"
    folder.mkdir(exist_ok=True)
    (folder / "USER.md").write_text("".join(f"- preference {i}\n" for i in range(3000)))
    (folder / "MEMORY.md").write_text("- tests run with make check\n")
    fake.script_text("Noted.")
    await chat(client, daemon, "how do I run the tests?")
    system = str(fake.requests[0].body["system"])
    assert "## Workspace memory (MEMORY.md)\n- tests run with make check" in system
    assert "- preference 0\n" in system
    assert "[… the rest of USER.md is left out to save space]" in system


async def test_override_and_unknown_alias(client: SwitchmanClient, daemon: Daemon,
                                          fake: FakeProvider) -> None:
    fake.script_text("short answer")
    result = await chat(client, daemon, "@opus   what's a good name?")
    assert result["model"] == OPUS
    assert result["summary"] == "override @opus"
    assert fake.requests[0].body["messages"][0]["content"][0]["text"] == "what's a good name?"
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "@opsu hello")
    assert caught.value.code == 1003
    assert error_data(caught.value)["code"] == "unknown_alias"
    assert error_data(caught.value)["suggestions"] == ["opus"]
    assert len(fake.requests) == 1  # nothing was sent


async def test_a_lone_at_or_slash_goes_to_no_model(client: SwitchmanClient, daemon: Daemon,
                                                  fake: FakeProvider) -> None:
    """A message of just ``@`` or ``/`` is the start of an alias or a command, sent by a slip
    of Enter: it was sent to the model (and paid for). ``@`` is an unknown alias offering the
    aliases; ``/`` answers as /help does."""
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, " @ ")
    assert error_data(caught.value)["code"] == "unknown_alias"
    assert "haiku" in error_data(caught.value)["suggestions"]
    help_text = (await chat(client, daemon, "/help"))["text"]
    answered = await chat(client, daemon, "/")
    assert (answered["kind"], answered["text"]) == ("command", help_text)
    assert fake.requests == []


@pytest.mark.parametrize("editor", CLIENTS)
async def test_the_transcript_keeps_the_alias_typed_and_the_model_never_reads_it(
        editor: str, daemon: Daemon, fake: FakeProvider) -> None:
    """Spec 000 §11: the model is sent the message without its ``@alias``; the session's
    record (its history, its title) shows the message as the user typed it — also after the
    daemon restarts, when the next turn's history comes from the database."""
    typed = "@opus   what's a good name?"
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace]) as client:
        fake.script_text("short answer")
        first = await chat(client, daemon, typed)
        fake.script_text("shorter")
        await chat(client, daemon, "and a shorter one?")
        detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
    assert [m["content"] for m in detail["messages"] if m["role"] == "user"] == [
        [{"type": "text", "text": typed}], [{"type": "text", "text": "and a shorter one?"}]]
    assert "typed" not in detail["messages"][0]
    assert detail["session"]["title"] == "what's a good name?"  # the alias is no title word
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace]) as client:
        fake.script_text("done")
        await chat(client, daemon, "thanks", session_id=first["session_id"])
    for sent in fake.requests:  # this turn's message, then the history, without the alias
        assert sent.body["messages"][0]["content"][0]["text"] == "what's a good name?"
    assert [m["content"][0]["text"] for m in fake.requests[2].body["messages"]
            if m["role"] == "user"] == ["what's a good name?", "and a shorter one?", "thanks"]


@pytest.mark.parametrize("editor", CLIENTS)
async def test_the_typed_text_of_a_message_with_tokens_is_shown_and_never_sent(
        editor: str, daemon: Daemon, fake: FakeProvider) -> None:
    """VS Code takes ``#file`` out of the message and sends the file as an attachment; with
    ``typed`` the session shows the message as typed (tokens and alias) and titles it by its
    words, while the model reads neither, then or in a later turn's history after a restart.
    The typed text holds the token, not the file: its content is stored once."""
    app = daemon.workspace / "src" / "app.py"
    typed = "@opus explain #file"
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace]) as client:
        fake.script_text("It returns 42.")
        first = await chat(client, daemon, "@opus explain", typed=typed,
                           attachments=[{"kind": "file", "uri": app.as_uri()}])
        detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
    assert first["model"] == OPUS
    user = next(m for m in detail["messages"] if m["role"] == "user")
    assert user["content"][0] == {"type": "text", "text": typed}
    assert [(b["type"], b["path"]) for b in user["content"][1:]] == [("attachment", "src/app.py")]
    assert detail["session"]["title"] == "explain #file"
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace]) as client:
        fake.script_text("done")
        await chat(client, daemon, "thanks", session_id=first["session_id"])
    for sent in fake.requests:  # this turn's message, then the history: no alias, no token
        said = sent.body["messages"][0]["content"]
        assert said[0]["text"] == "explain"
        assert "#file" not in json.dumps(sent.body) and "@opus" not in json.dumps(sent.body)
        assert "return 42" in json.dumps(said)
    database = sqlite3.connect(daemon.data / "switchman.db")
    rows = database.execute("SELECT content, typed FROM messages WHERE role = 'user'").fetchall()
    assert [typed for _, typed in rows] == [typed, None]
    assert sum(content.count("return 42") for content, _ in rows) == 1  # not copied into typed


async def test_an_alias_with_only_attachments_sends_them_to_that_model(
        daemon: Daemon, fake: FakeProvider) -> None:
    """``@opus`` with a file attached (VS Code's ``@opus #file``, Neovim's ``:Switchman add``
    then ``@opus``) is a message: the attachment is what is sent, to the alias's model, and
    the session is titled by the file's path. An alias alone is still nothing to send, in
    the chat and in a preview."""
    app = daemon.workspace / "src" / "app.py"
    attached = [{"kind": "file", "uri": app.as_uri()}]
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace]) as client:
        preview = await client.request(methods.PREVIEW, {"workspace": daemon.uri,
                                                         "message": "@opus",
                                                         "attachments": attached})
        assert (preview["model"], preview["error"]) == (OPUS, None)
        fake.script_text("It returns 42.")
        first = await chat(client, daemon, "@opus", attachments=attached)
        detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
        alone = await client.request(methods.PREVIEW, {"workspace": daemon.uri,
                                                       "message": "@opus "})
        with pytest.raises(JsonRpcException) as caught:
            await chat(client, daemon, "@opus ")
    assert (first["status"], first["model"]) == ("completed", OPUS)
    assert "return 42" in json.dumps(fake.requests[0].body["messages"][0])
    assert detail["session"]["title"] == "src/app.py"
    assert alone["error"]["code"] == "empty_message"
    assert error_data(caught.value)["code"] == "empty_message"


async def test_a_blank_typed_text_is_ignored(daemon: Daemon, fake: FakeProvider) -> None:
    """A client that sends ``typed`` empty (or only spaces) beside a message has typed
    nothing else: the session shows and titles the message itself, not a blank line."""
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace]) as client:
        fake.script_text("Hi.")
        first = await chat(client, daemon, "hello there", typed="  ")
        detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
    user = next(m for m in detail["messages"] if m["role"] == "user")
    assert user["content"][0] == {"type": "text", "text": "hello there"}
    assert detail["session"]["title"] == "hello there"


async def test_a_database_from_before_typed_texts_shows_its_messages_as_stored(
        daemon: Daemon, fake: FakeProvider) -> None:
    """A version-3 database (no ``typed`` column) is upgraded on opening; its messages have
    no typed text and show as stored, and their sessions go on."""
    database = sqlite3.connect(daemon.data / "switchman.db")
    old_turn = "00A1"  # an older daemon's ids (made before any of today's)
    database.executescript("".join(_MIGRATIONS[v] for v in (1, 2, 3)) + "PRAGMA user_version=3;")
    text = json.dumps([{"type": "text", "text": "explain the login flow"}])
    database.executemany("INSERT INTO messages (id, session_id, turn_id, role, created_at, content)"
                         " VALUES (?, 's1', ?, ?, '2026-11-01T10:00:00Z', ?)",  # ids sort by time
                         [("00A2", old_turn, "user", text),
                          ("00A3", old_turn, "assistant", text.replace("explain", "I read"))])
    database.execute("INSERT INTO sessions (id, workspace, title, created_at, updated_at) VALUES "
                     "('s1', ?, 'explain the login flow', '2026-11-01T10:00:00Z', "
                     "'2026-11-01T10:00:01Z')", (daemon.uri,))
    database.execute("INSERT INTO turns (id, session_id, idx, status, model, started_at) VALUES "
                     "(?, 's1', 1, 'completed', ?, '2026-11-01T10:00:00Z')", (old_turn, SONNET))
    database.commit()
    database.close()
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace]) as client:
        detail = await client.request(methods.SESSION, {"session_id": "s1"})
        assert [m["content"][0]["text"] for m in detail["messages"]] == [
            "explain the login flow", "I read the login flow"]
        fake.script_text("done")
        await chat(client, daemon, "@haiku and the logout?", session_id="s1")
        detail = await client.request(methods.SESSION, {"session_id": "s1"})
    assert [m["content"][0]["text"] for m in detail["messages"] if m["role"] == "user"] == [
        "explain the login flow", "@haiku and the logout?"]
    assert detail["session"]["title"] == "explain the login flow"


async def test_tool_calls_read_the_workspace(client: SwitchmanClient, daemon: Daemon,
                                             fake: FakeProvider) -> None:
    fake.script_tool_call("read_file", {"path": "src/app.py"}, id="toolu_1",
                          text=["Let me read it."])
    fake.script_text("It returns 42.")
    result = await chat(client, daemon, "what does main return?")
    assert result["status"] == "completed"
    assert result["text"] == "Let me read it.It returns 42."
    call = deltas(client, result["turn_id"], "tool_call")[0]["tool"]
    assert (call["name"], call["input"], call["status"]) == ("read_file",
                                                             {"path": "src/app.py"}, "running")
    done = deltas(client, result["turn_id"], "tool_result")[0]["tool"]
    assert done["status"] == "done"
    second = fake.requests[1].body["messages"]
    assert "return 42" in str(second)  # the tool result went back to the model
    assert fake.requests[1].model == fake.requests[0].model  # the turn stays on its model


async def test_tools_cannot_leave_the_workspace(client: SwitchmanClient, daemon: Daemon,
                                                fake: FakeProvider) -> None:
    (daemon.workspace.parent / "secret.txt").write_text("hunter2")
    fake.script_tool_call("read_file", {"path": "../secret.txt"}, id="toolu_x")
    fake.script_text("I could not read it.")
    result = await chat(client, daemon, "read ../secret.txt")
    assert deltas(client, result["turn_id"], "tool_result")[0]["tool"]["status"] == "error"
    assert "hunter2" not in str(fake.requests[1].body)
    assert "outside the workspace" in str(fake.requests[1].body)


async def test_touched_files_feed_the_next_routing_decision(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("rules:\n  - name: python work\n"
                         "    when: {file_extensions_in_context: [py], "
                         "has_tool_calls_in_history: true}\n    use: opus\n")
    fake.script_tool_call("list_files", {}, id="toolu_l")
    fake.script_text("There is one file.")
    first = await chat(client, daemon, "what files are there?")
    assert first["model"] == SONNET  # global default: nothing touched yet
    fake.script_text("ok")
    second = await chat(client, daemon, "and now?")
    assert second["model"] == OPUS
    assert second["summary"] == "rule: python work"


async def test_images_reach_the_provider(client: SwitchmanClient, daemon: Daemon,
                                         fake: FakeProvider) -> None:
    fake.script_text("A red square.")
    result = await chat(client, daemon, "what is this?",
                        images=[{"media_type": "image/png", "data": "iVBORw0KGgo="}])
    assert result["status"] == "completed"
    assert "iVBORw0KGgo=" in str(fake.requests[0].body["messages"])


@pytest.mark.parametrize(("image", "says"), [
    ({"media_type": "image/png", "data": "!!!not base64"}, "is not base64 data"),
    ({"media_type": "image/png", "data": ""}, "is empty"),
    ({"media_type": "text/html", "data": "iVBORw0KGgo="}, "'text/html' is not an image type"),
])
async def test_an_image_no_provider_can_read_is_refused_before_the_turn(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        image: dict[str, str], says: str) -> None:
    """An image with data that is not base64 (or of a type no API takes) went to the
    provider, whose 400 failed the turn, and stayed in the session's history: every later
    message of the session carried it and failed the same way."""
    with pytest.raises(JsonRpcException) as refused:
        await chat(client, daemon, "what is this?", images=[image])
    assert error_data(refused.value)["code"] == "invalid_attachment"
    assert says in refused.value.message
    assert fake.requests == []
    fake.script_text("Hello.")
    result = await chat(client, daemon, "hello")
    assert result["status"] == "completed"
    assert "image" not in str(fake.requests[0].body["messages"])


async def test_cancel_by_turn_id_keeps_the_partial_text(client: SwitchmanClient, daemon: Daemon,
                                                        fake: FakeProvider) -> None:
    stall = fake.script_stall("partial ", "never", after_chunks=1)
    pending = asyncio.ensure_future(chat(client, daemon, "explain everything"))
    assert await stall.wait_reached_async()
    first = await client.wait_for(methods.CHAT_DELTA, lambda d: d["kind"] == "text")
    answer = await client.request(methods.CANCEL, {"turn_id": first["turn_id"]})
    assert answer == {"cancelled": True, "status": "cancelled"}
    result = await pending
    assert (result["status"], result["text"]) == ("cancelled", "partial ")
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    assert detail["turns"][-1]["status"] == "cancelled"
    assert detail["messages"][-1]["content"] == [{"type": "text", "text": "partial "}]
    fake.release_stalls()


async def test_cancel_request_resolves_the_chat_as_cancelled(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    stall = fake.script_stall("so far", after_chunks=1)
    future = asyncio.ensure_future(client.protocol.send_request_async(  # type: ignore[no-untyped-call]
        methods.CHAT, {"workspace": daemon.uri, "message": "long story please"},
        msg_id="chat-to-cancel"))
    assert await stall.wait_reached_async()
    await client.wait_for(methods.CHAT_DELTA, lambda d: d["kind"] == "text")
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="chat-to-cancel"))
    result = await asyncio.wait_for(future, 20)
    assert result["status"] == "cancelled"
    assert result["text"] == "so far"
    fake.release_stalls()


async def test_a_disconnect_fails_the_turn_and_keeps_the_message(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    fake.script_disconnect("half an ans", after_chunks=1)
    result = await chat(client, daemon, "please explain the retry loop", )
    assert result["status"] == "failed"
    assert result["error"]["code"] == "provider_error"
    assert "network error" in result["error"]["message"]
    assert "Your message is saved" in result["error"]["message"]
    assert ".." not in result["error"]["message"]  # the SDK's "…error." then ". Your…"
    assert result["text"] == "half an ans"
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    user = [m for m in detail["messages"] if m["role"] == "user"]
    assert user[-1]["content"] == [{"type": "text", "text": "please explain the retry loop"}]
    assert detail["turns"][-1]["status"] == "failed"
    assert len(client.received[methods.ROUTE_DECIDED]) == 1


async def test_a_second_message_during_a_turn_is_refused(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    stall = fake.script_stall("x", after_chunks=1)
    pending = asyncio.ensure_future(chat(client, daemon, "first"))
    assert await stall.wait_reached_async()
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "second")
    assert error_data(caught.value)["code"] == "turn_in_progress"
    fake.release_stalls()
    assert (await pending)["status"] == "completed"


async def test_bad_params_are_invalid_params(client: SwitchmanClient, daemon: Daemon) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "   ")
    assert error_data(caught.value)["code"] == "empty_message"
    assert caught.value.message == "Nothing to send: the message is empty."
    with pytest.raises(JsonRpcException) as caught:
        await client.request(methods.CHAT, {"message": 3})
    assert caught.value.code == -32602
    with pytest.raises(JsonRpcException) as caught:
        await client.request(methods.CHAT, {"workspace": "file:///nowhere", "message": "hi"})
    assert error_data(caught.value)["code"] == "unknown_workspace"


async def test_a_message_with_a_lone_surrogate_gets_a_clear_error(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "pasted \ud800 text")
    assert caught.value.code == 1009
    assert error_data(caught.value) == {"code": "invalid_text"}
    assert "Traceback" not in str(caught.value)
    swap = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "opus"})
    assert swap["outcome"] == "applied"  # the session is not left "busy"
    assert fake.requests == []


def test_a_cancel_sent_with_the_chat_request_still_ends_a_cancelled_turn(
        daemon: Daemon, fake: FakeProvider, tmp_path: Path) -> None:
    # An editor that cancels at once sends both frames in one write; the daemon reads
    # them in one go. The chat must still be recorded and answered as a cancelled turn
    # (not refused with RequestCancelled before its handler ever ran).
    fake.script_stall("never", after_chunks=1)
    raw = RawDaemon(daemon.env, tmp_path / "stderr.log")
    try:
        raw.initialize(daemon.workspace)
        chat_id = raw.new_id()
        chat_frame = frame(json.dumps({"jsonrpc": "2.0", "id": chat_id, "method": methods.CHAT,
                                       "params": {"workspace": daemon.uri,
                                                  "message": "cancel me at once"}}).encode())
        cancel_frame = frame(json.dumps({"jsonrpc": "2.0", "method": "$/cancelRequest",
                                         "params": {"id": chat_id}}).encode())
        raw.send_bytes(chat_frame + cancel_frame)
        answer = raw.response(chat_id)
        assert "result" in answer, answer
        assert answer["result"]["status"] == "cancelled"
        listed = raw.request(methods.SESSIONS, {"workspace": daemon.uri})
        assert listed["result"]["sessions"][0]["title"] == "cancel me at once"
    finally:
        fake.release_stalls()
        raw.close()


async def test_an_alias_of_a_models_yaml_with_errors_says_the_file_is_not_in_use(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A local model added to models.yaml with a mistake (a misspelt provider): its alias was
    "Unknown model alias '@qwen'" and nothing more, though the file that defines it is not
    in use until it is fixed; the message says so, as `/model qwen` does."""
    models = daemon.config / "models.yaml"
    models.write_text("models:\n  olama:qwen2.5-coder:7b:\n    aliases: [qwen]\n    tier: fast\n",
                      "utf-8")
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "@qwen explain this")
    assert error_data(caught.value)["code"] == "unknown_alias"
    note = f"{models} has errors, so what it adds is not in use until it is fixed"
    assert note in str(caught.value.message)
    answered = await chat(client, daemon, "/model qwen")
    assert note in str(answered.get("text", answered))
    models.write_text("models: {}\n", "utf-8")  # fixed: the note goes
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "@qwen explain this")
    assert "has errors" not in str(caught.value.message)
    assert fake.requests == []
