"""Slash commands, sessions, explain / preview, crash recovery, secrets, multi-root."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from switchman.engine.sessions.slash_commands import patterns_usage
from switchman.server import methods
from tests.lsp.conftest import ANTHROPIC_KEY, LISTEN, OPENAI_KEY, Daemon, deltas, error_data
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider, ToolCall
from tests.support.lsp import (
    CLIENTS,
    SERVER_COMMAND,
    SwitchmanClient,
    client_capabilities,
    kill_9,
    running_server,
)

HAIKU, SONNET, OPUS = ("anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6",
                       "anthropic:claude-opus-4-7")


async def chat(client: SwitchmanClient, daemon: Daemon, message: str, **extra: Any) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message,
                                               **extra})


# -- slash commands ---------------------------------------------------------------------


async def test_model_commands(client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    result = await chat(client, daemon, "/model opus")
    assert result["kind"] == "command"
    assert result["turn_id"] is None
    assert result["text"] == f"Sticky model set: {OPUS}. Your rules are skipped until you run " \
                             "/model -."
    streamed = await client.wait_for(methods.CHAT_DELTA, lambda d: d["kind"] == "command_output")
    assert streamed["text"] == result["text"]
    fake.script_text("ok")
    await chat(client, daemon, "hello")
    shown = (await chat(client, daemon, "/model show"))["text"]
    assert f"Active model: {OPUS}" in shown
    assert f"Sticky model: {OPUS}" in shown
    assert "[2] MANUAL_STICKY" in shown
    cleared = await chat(client, daemon, "/model -")
    assert cleared["text"] == "Sticky model cleared; routing follows your rules again."
    failed = await chat(client, daemon, "/model opsu")
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == "unknown_model"
    assert len(fake.requests) == 1  # commands never reach a model


async def test_rules_and_cost_commands(client: SwitchmanClient, daemon: Daemon,
                                       fake: FakeProvider) -> None:
    daemon.write_routing("rules:\n  - name: sql\n    when: {file_extensions_in_context: [sql]}\n"
                         "    use: gpt-5\n")
    shown = (await chat(client, daemon, "/rules show"))["text"]
    assert "1. sql: file_extensions_in_context [.sql] -> openai:gpt-5" in shown
    checked = (await chat(client, daemon, "/rules check"))["text"]
    assert checked.startswith("ok: ")
    daemon.write_routing("rules:\n  - use: opsu\n")
    broken = (await chat(client, daemon, "/rules check"))["text"]
    assert "error [unknown-model]" in broken
    reloaded = (await chat(client, daemon, "/rules reload"))["text"]
    assert reloaded.startswith("Reloaded: ")
    fake.script_text("answer")
    await chat(client, daemon, "/commit fix the login bug")  # not a command: a routed turn
    cost = (await chat(client, daemon, "/cost"))["text"]
    assert cost.splitlines()[0].startswith("This session: $0.0000")
    assert SONNET in cost  # the broken file left the last valid rules (no commit rule) in force
    assert "Today, all sessions: $" in cost
    help_text = (await chat(client, daemon, "/help"))["text"]
    assert "/rules reload" in help_text


async def test_rules_check_in_chat_reports_what_the_cli_does(client: SwitchmanClient,
                                                              daemon: Daemon) -> None:
    """/rules check left out the unknown-skill warnings that `switchman rules check` and the
    editor give: the same files now get the same lines (and reload counts them)."""
    for folder, name in ((daemon.config / "skills", "system_design"),
                         (daemon.workspace / ".switchman" / "skills", "db-migrations")):
        folder.mkdir(parents=True)
        (folder / f"{name}.md").write_text(f"---\nname: {name}\ndescription: x\n---\n", "utf-8")
    daemon.write_routing("rules:\n  - name: a\n    when: {skills_matching_message_includes: "
                         "sytem_design}\n    use: opus\n")
    (daemon.workspace / ".switchman" / "profiles.yaml").write_text(
        "profiles:\n  reviewer:\n    skills: [db-migrations, db-migration]\n", "utf-8")
    checked = (await chat(client, daemon, "/rules check"))["text"]
    assert checked.count("warning [unknown-skill]") == 2, checked
    assert "No skill named 'sytem_design'" in checked and "'db-migration'" in checked
    cli = subprocess.run(
        [sys.executable, "-m", "switchman.server.cli", "rules", "check", "--workspace",
         str(daemon.workspace)], env=daemon.env, capture_output=True, text=True, check=True)
    assert checked.splitlines()[:-1] == cli.stdout.splitlines()[:-1]  # the files' summary aside
    reloaded = (await chat(client, daemon, "/rules reload"))["text"]
    assert reloaded == "Reloaded: 1 rule active (2 problems; run /rules check)."


async def test_command_keywords_are_read_in_any_case(client: SwitchmanClient, daemon: Daemon,
                                                     fake: FakeProvider) -> None:
    for message, starts in (("/model SHOW", "Active model: none yet"), ("/rules CHECK", "ok: "),
                            ("/rules Show", "Rules for "),
                            ("/rules RELOAD", "Reloaded: "),
                            ("/patterns STATS", "No turns remembered yet"),
                            ("/trust REVOKE All", "No tool was always allowed here"),
                            ("/route IGNORE", "There is no pattern suggestion")):
        result = await chat(client, daemon, message)
        assert result["kind"] == "command", message
        assert result["text"].startswith(starts), (message, result["text"])
    assert fake.requests == []


async def test_a_command_given_arguments_it_does_not_take_fails_with_its_usage(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    rules_usage = "Usage: /rules check | /rules show | /rules reload"
    for message, usage in (("/rules delete", rules_usage),
                           ("/rules show all", rules_usage), ("/rules check now", rules_usage),
                           ("/trust revoke", "Usage: /trust | /trust revoke <tool> | /trust "
                                             "revoke all"),
                           ("/profile a b", "Usage: /profile | /profile <name> | /profile clear"),
                           ("/patterns forget", patterns_usage(str(daemon.workspace))),
                           ("/patterns export", patterns_usage(str(daemon.workspace))),
                           # these answered as if the words were not there
                           ("/cost today", "Usage: /cost"), ("/help model", "Usage: /help"),
                           ("/model show opus", "Usage: /model <id or alias> | /model - | "
                                                "/model show")):
        result = await chat(client, daemon, message)
        assert (result["kind"], result["status"], result["text"]) == ("command", "failed", usage)
        assert result["error"] == {"code": "command_usage", "message": usage}
    assert fake.requests == []  # answered by Switchman, never a model
    assert f"switchman patterns forget --workspace {daemon.workspace}`" in patterns_usage(
        str(daemon.workspace))  # the folder itself, ready to paste (no "<this folder>")
    assert "--workspace '/home/me/my project'`" in patterns_usage("/home/me/my project")


async def test_a_mistyped_command_fails_without_a_model_and_paths_still_reach_one(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    for message, meant in (("/modle opus", "/model"), ("/cots", "/cost"),
                           ("/Help", "/help"), ("/delgate fast tidy the parser", "/delegate"),
                           ("/mod opus", "/model")):
        result = await chat(client, daemon, message)
        typed = message.split()[0]
        text = (f"Unknown command {typed} — did you mean {meant}? Nothing was sent to a model "
                f"(/help lists the commands).")
        assert (result["kind"], result["status"], result["text"]) == ("command", "failed", text)
        assert result["error"] == {"code": "unknown_command", "message": text}
        # the draft's preview says so before it is sent, instead of "command /modle"
        draft = await client.request(methods.PREVIEW, {"workspace": daemon.uri,
                                                        "message": message})
        assert (draft["command"], draft["model"]) == (None, None)
        assert draft["error"] == {"code": "unknown_command", "message": (  # nothing sent yet
            f"Unknown command {typed} — did you mean {meant}? Sent like this, it would go to no "
            f"model (/help lists the commands).")}
    assert fake.requests == []  # a typo costs nothing
    for message in ("/etc/hosts is wrong, why?", "/usr/bin/env python3 fails", "/post this",
                    "/commit fix the login bug"):  # paths and words no slip from a command
        fake.script_text("answer")
        result = await chat(client, daemon, message)
        assert (result["kind"], result["status"]) == ("turn", "completed"), message
        assert fake.requests[-1].body["messages"][-1]["content"][0]["text"] == message
    assert len(fake.requests) == 4


# -- sessions, explain, preview ------------------------------------------------------------


async def test_sessions_explain_and_preview(client: SwitchmanClient, daemon: Daemon,
                                           fake: FakeProvider) -> None:
    fake.script_text("done")
    first = await chat(client, daemon, "write a commit message for the retry fix")
    listing = await client.request(methods.SESSIONS, {"workspace": daemon.uri})
    assert listing["current_session_id"] == first["session_id"]
    session = listing["sessions"][0]
    assert session["title"] == "write a commit message for the retry fix"
    assert session["turn_count"] == 1
    assert "workers" not in session
    detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
    assert [m["role"] for m in detail["messages"]] == ["user", "assistant"]
    turn = detail["turns"][0]
    assert (turn["status"], turn["model"], turn["summary"]) == ("completed", HAIKU,
                                                               "rule: fast for commits")
    assert turn["decision"]["chosen_model"] == HAIKU
    assert detail["cost"]["by_model"][0]["model"] == HAIKU
    explained = await client.request(methods.EXPLAIN, {"workspace": daemon.uri})
    assert explained["turn_id"] == first["turn_id"]
    assert f'Chose: {HAIKU} (rule "fast for commits")' in explained["text"]
    preview = await client.request(methods.PREVIEW, {"workspace": daemon.uri,
                                                     "message": "@opus review this"})
    assert (preview["model"], preview["message"], preview["error"]) == (OPUS, "review this", None)
    bad = await client.request(methods.PREVIEW, {"workspace": daemon.uri, "message": "@nope x"})
    assert bad["error"] == {"code": "unknown_alias", "message": (  # a draft: not sent, not yet
        "Unknown model alias '@nope': sent like this, the message would be refused. Did you "
        "mean @opus? Start it with \\@ to send a literal @.")}
    command = await client.request(methods.PREVIEW, {"workspace": daemon.uri,
                                                     "message": "/model show"})
    assert command["command"] == "/model"
    assert len(fake.requests) == 1  # previews call no provider
    assert len(client.received[methods.ROUTE_DECIDED]) == 1  # and record no decision


WIRE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
"""How the protocol writes every time: ISO 8601 UTC to the millisecond, with ``Z``."""


def wire_times(value: Any) -> list[str]:
    """Every time (a field named ``…_at`` or ``timestamp``) anywhere in a message."""
    if isinstance(value, list):
        return [t for item in value for t in wire_times(item)]
    if not isinstance(value, dict):
        return []
    return [t for key, item in value.items()
            for t in ([item] if (key.endswith("_at") or key == "timestamp") and item is not None
                      else wire_times(item))]


async def test_every_time_on_the_wire_is_written_to_the_millisecond(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    fake.script_text("done")
    first = await chat(client, daemon, "hello")
    detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
    explained = await client.request(methods.EXPLAIN, {"turn_id": first["turn_id"]})
    listing = await client.request(methods.SESSIONS, {"workspace": daemon.uri})
    routed = client.received[methods.ROUTE_DECIDED]
    times = wire_times([detail, explained, listing, routed])
    # the session (listed and fetched), its two messages, the turn, its decision three times
    assert len(times) == 11
    assert [t for t in times if not WIRE_TIME.fullmatch(t)] == []


async def test_new_session_inherits_the_sticky_model(client: SwitchmanClient,
                                                     daemon: Daemon) -> None:
    await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "haiku"})
    old = (await client.request(methods.SESSIONS, {"workspace": daemon.uri}))
    created = await client.request(methods.NEW_SESSION, {"workspace": daemon.uri})
    assert created["session"]["sticky_model"] == HAIKU
    assert created["session"]["id"] != old["current_session_id"]
    listing = await client.request(methods.SESSIONS, {"workspace": daemon.uri})
    assert listing["current_session_id"] == created["session"]["id"]
    with pytest.raises(JsonRpcException) as caught:
        await client.request(methods.SESSION, {"session_id": "nope"})
    assert error_data(caught.value)["code"] == "unknown_session"


async def test_resume_session_continues_an_older_session(client: SwitchmanClient, daemon: Daemon,
                                                          fake: FakeProvider) -> None:
    await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "haiku"})
    fake.script_text("first answer")
    old = (await chat(client, daemon, "first question"))["session_id"]
    await client.request(methods.NEW_SESSION, {"workspace": daemon.uri})
    await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "sonnet"})
    client.received[methods.STATUS].clear()
    resumed = await client.request(methods.RESUME_SESSION, {"workspace": daemon.uri,
                                                            "session_id": old})
    assert (resumed["session"]["id"], resumed["session"]["sticky_model"]) == (old, HAIKU)
    status = await client.wait_for(methods.STATUS, lambda s: s["session_id"] == old)
    assert status["sticky_model"] == HAIKU  # the status bar shows the resumed session's model
    listing = await client.request(methods.SESSIONS, {"workspace": daemon.uri})
    assert listing["current_session_id"] == old
    fake.script_text("second answer")
    second = await chat(client, daemon, "second question")  # no session_id: the current one
    assert second["session_id"] == old
    sent = fake.requests[-1]
    assert sent.body["model"] == HAIKU.split(":")[1]  # its sticky model, not the new one's
    texts = [b.get("text") for m in sent.body["messages"] for b in m["content"]]
    assert texts == ["first question", "first answer", "second question"]
    for bad, code in (("nope", "unknown_session"),):
        with pytest.raises(JsonRpcException) as caught:
            await client.request(methods.RESUME_SESSION, {"workspace": daemon.uri,
                                                          "session_id": bad})
        assert error_data(caught.value)["code"] == code


# -- crash recovery ------------------------------------------------------------------------


async def start(editor: str, daemon: Daemon) -> SwitchmanClient:
    client = SwitchmanClient()
    client.listen(*LISTEN)
    await client.start_io(*SERVER_COMMAND, env=daemon.env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(editor),
        workspace_folders=[types.WorkspaceFolder(uri=daemon.uri, name="project")]))
    return client


@pytest.mark.parametrize("editor", CLIENTS)
async def test_kill_9_mid_stream_keeps_the_transcript(editor: str, daemon: Daemon,
                                                      fake: FakeProvider) -> None:
    client = await start(editor, daemon)
    await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "sonnet"})
    fake.script_text("first answer")
    first = await chat(client, daemon, "first question")
    stall = fake.script_stall("partial out", "put", after_chunks=1)
    pending = asyncio.ensure_future(chat(client, daemon, "second question"))
    assert await stall.wait_reached_async()
    await client.wait_for(methods.CHAT_DELTA, lambda d: d.get("text") == "partial out")
    await kill_9(client, pending)
    fake.release_stalls()

    restarted = await start(editor, daemon)
    try:
        detail = await restarted.request(methods.SESSION, {"session_id": first["session_id"]})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    texts = [(m["role"], m["content"][0].get("text")) for m in detail["messages"]]
    assert texts == [("user", "first question"), ("assistant", "first answer"),
                     ("user", "second question"), ("assistant", "partial out")]
    statuses = [t["status"] for t in detail["turns"]]
    assert statuses == ["completed", "interrupted"]
    # Editors show it above the turn's messages (Neovim's transcript) or below (VS Code):
    # it must not say where they are ("the messages above").
    assert detail["turns"][1]["error"]["message"] == (
        "Switchman stopped while this turn was running (the daemon exited or was killed). "
        "Your message and the answer written by then are kept; send your message again to "
        "continue.")
    assert detail["session"]["sticky_model"] == SONNET


async def test_kill_9_once_the_route_is_shown_keeps_the_question(daemon: Daemon,
                                                                 fake: FakeProvider) -> None:
    """The turn's start is written while the provider works on the request; whatever the
    editor was shown of a turn (here its routing, before any answer) survives kill -9."""
    client = await start("visual-studio-code", daemon)
    stall = fake.script_stall("never shown", before_headers=True)
    pending = asyncio.ensure_future(chat(client, daemon, "the question"))
    notice = await client.wait_for(methods.ROUTE_DECIDED)
    assert await stall.wait_reached_async()
    await kill_9(client, pending)
    fake.release_stalls()

    restarted = await start("visual-studio-code", daemon)
    try:
        detail = await restarted.request(methods.SESSION, {"session_id": notice["session_id"]})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    assert [(m["role"], m["content"][0].get("text")) for m in detail["messages"]] == [
        ("user", "the question")]
    assert [t["status"] for t in detail["turns"]] == ["interrupted"]


# -- secrets -------------------------------------------------------------------------------


async def test_api_keys_never_leave_the_daemon(client: SwitchmanClient, daemon: Daemon,
                                               fake: FakeProvider,
                                               capfd: pytest.CaptureFixture[str]) -> None:
    fake.script_error(401, f"Incorrect API key provided: {ANTHROPIC_KEY}")
    failed = await chat(client, daemon, "hello")
    fake.script_text("fine")
    await chat(client, daemon, "@gpt-5 hello")
    detail = await client.request(methods.SESSION, {"session_id": failed["session_id"]})
    listing = await client.request(methods.MODELS, {"workspace": daemon.uri})
    assert_no_key(repr([failed, detail, listing, dict(client.received)]), daemon, capfd)
    assert "[redacted]" in failed["error"]["message"]


def assert_no_key(seen: str, daemon: Daemon, capfd: pytest.CaptureFixture[str]) -> None:
    """Neither key is in ``seen`` (what the editor got), the logs or the database."""
    logs = capfd.readouterr()
    database = b"".join(p.read_bytes() for p in Path(daemon.data).glob("switchman.db*"))
    for key in (ANTHROPIC_KEY, OPENAI_KEY):
        assert key not in seen
        assert key not in logs.out + logs.err
        assert key.encode() not in database


async def test_a_key_a_provider_echoes_in_its_answer_is_masked(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A provider (a proxy, a local server) that streams the key it was sent back as answer
    text, split across deltas: the daemon masks it in the deltas, the result, the
    transcript and the database, as it does in error messages."""
    half = len(ANTHROPIC_KEY) // 2
    fake.script_text("Your key: ", ANTHROPIC_KEY[:half], ANTHROPIC_KEY[half:], " and ",
                     ANTHROPIC_KEY, ". Prefix only: sk-ant-")
    result = await chat(client, daemon, "hello")
    assert result["text"] == "Your key: [redacted] and [redacted]. Prefix only: sk-ant-"
    streamed = "".join(d["text"] for d in deltas(client, result["turn_id"]))
    assert streamed == result["text"]
    fake.script_text("sk-openai-", OPENAI_KEY[len("sk-openai-"):])
    other = await chat(client, daemon, "@gpt-5 hello")
    assert other["text"] == "[redacted]"
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    assert_no_key(repr([result, other, detail, dict(client.received)]), daemon, capfd)


async def test_another_providers_key_in_an_answer_is_masked(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A model that was shown another provider's key (a file it read, a log) and repeats it:
    only the answering provider's own key was masked in answer text and tool calls, so
    Anthropic's answer carried OpenAI's key to the chat, the transcript and the database."""
    editor = ToolEditor(client)
    half = len(OPENAI_KEY) // 2
    fake.script_tool_calls([ToolCall("run_command", {"command": f"echo {OPENAI_KEY}"},
                                     id="toolu_k")],
                           text=("Their key is ", OPENAI_KEY[:half], OPENAI_KEY[half:], "."))
    fake.script_text("Done.")
    result = await chat(client, daemon, "hello")
    assert result["status"] == "completed"
    streamed = "".join(d["text"] for d in deltas(client, result["turn_id"]))
    assert streamed == "Their key is [redacted].Done."
    [call] = [d["tool"] for d in deltas(client, result["turn_id"], "tool_call")]
    assert call["input"] == {"command": "echo [redacted]"}
    fake.script_text("Yours: ", ANTHROPIC_KEY[:half], ANTHROPIC_KEY[half:], model="gpt-5")
    other = await chat(client, daemon, "@gpt-5 hello")
    assert other["text"] == "Yours: [redacted]"
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    assert "Their key is [redacted]." in repr(detail)
    assert_no_key(repr([result, other, detail, dict(client.received), editor.approvals]),
                  daemon, capfd)


async def test_a_key_a_provider_echoes_in_a_tool_call_is_masked(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A provider that echoes its key into a tool call's input (a command line, a file's
    content): only answer text was masked, so the key reached the chat's tool line, the
    approval question, the transcript and the database. The input is masked where it
    arrives, so the tool also runs with what the user was shown and approved."""
    editor = ToolEditor(client)
    fake.script_tool_calls([
        ToolCall("run_command", {"command": f"echo {ANTHROPIC_KEY} > key.txt"}, id="toolu_r"),
        ToolCall("create_file", {"path": "notes.txt", "content": f"key={ANTHROPIC_KEY}\n"},
                 id="toolu_w")])
    fake.script_text("Done.")
    result = await chat(client, daemon, "save my notes")
    assert result["status"] == "completed"
    asked = [a["title"] + " " + repr(a) for a in editor.approvals]
    assert len(asked) == 2 and all("[redacted]" in a for a in asked)
    calls = [d["tool"] for d in deltas(client, result["turn_id"], "tool_call")]
    assert calls[0]["input"] == {"command": "echo [redacted] > key.txt"}
    assert calls[1]["input"]["content"] == "key=[redacted]\n"
    assert (daemon.workspace / "key.txt").read_text("utf-8") == "[redacted]\n"
    assert editor.buffer(daemon.workspace / "notes.txt") == "key=[redacted]\n"
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    assert "echo [redacted] > key.txt" in repr(detail)
    assert_no_key(repr([result, detail, dict(client.received), editor.approvals,
                        editor.edits]), daemon, capfd)


async def test_a_key_the_user_types_stays_in_their_message_and_out_of_the_logs(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        capfd: pytest.CaptureFixture[str]) -> None:
    """The user's own text is kept as typed (docs/sessions.md): it is theirs, and the model
    was sent it. It is never logged."""
    fake.script_text("Noted.")
    result = await chat(client, daemon, f"my other key is {OPENAI_KEY}, keep it")
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    typed = next(m for m in detail["messages"] if m["role"] == "user")
    assert typed["content"] == [{"type": "text", "text": f"my other key is {OPENAI_KEY}, keep it"}]
    logs = capfd.readouterr()
    assert OPENAI_KEY not in logs.out + logs.err


E2E_OLD_KEY = "anth-e2e-old-5b7c9d1e3f"
E2E_NEW_KEY = "anth-e2e-new-8a6b4c2d0e"
E2E_OPENAI_KEY = "opai-e2e-key-1f2e3d4c5b"
"""Keys that look like no key (short, no ``sk-``): only the daemon's knowing them masks them."""
E2E_OLD_START = E2E_OLD_KEY[:20]
"""A model's echo of the key's start (its public ``anth-e2e-old-`` and 7 characters more)."""
E2E_OPENAI_SHOWN = f"{E2E_OPENAI_KEY[:8]}****{E2E_OPENAI_KEY[-4:]}"
"""The key as OpenAI quotes it in a 401: its start, stars, its last 4 characters."""


async def test_no_key_reaches_the_editor_the_logs_or_the_database_across_a_rotation(
        daemon: Daemon, fake: FakeProvider, tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    """Keys echoed everywhere a provider or a tool can put them — answer text, a tool call's
    input, a command's output, a file read, a 401 quoting the key, another provider's error
    quoting it — before and after the key file is rotated, whole, by their first 20
    characters, or as OpenAI's 401 quotes one (``opai-e2e****4c5b``): none of it, nor a key's
    first 12 characters, is in any message the daemon sent, its log, or any file of its data
    folder. After the rotation only the new key was masked."""
    keys = tmp_path / "keys"
    keys.mkdir()
    key_file = keys / "anthropic.key"
    key_file.write_text(E2E_OLD_KEY, "utf-8")
    (daemon.config / "models.yaml").write_text(
        f"providers:\n  anthropic: {{base_url: '{fake.anthropic_base_url}', "
        f"api_key_env: null, api_key_file: '{key_file}'}}\n"
        f"  openai: {{base_url: '{fake.openai_base_url}', api_key_env: E2E_OPENAI_KEY}}\n",
        "utf-8")
    (daemon.config / "routing.yaml").write_text("global_default: sonnet\n", "utf-8")
    (daemon.workspace / "keys.txt").write_text(
        f"ANTHROPIC_API_KEY={E2E_OLD_KEY}\nOPENAI_API_KEY={E2E_OPENAI_KEY}\n"
        f"# starts {E2E_OLD_START}…, shown as {E2E_OPENAI_SHOWN}\n", "utf-8")
    env = {k: v for k, v in daemon.env.items() if not k.endswith("_API_KEY")}
    env["E2E_OPENAI_KEY"] = E2E_OPENAI_KEY
    async with running_server("visual-studio-code", env, [daemon.workspace], LISTEN,
                              wire=True) as client:
        editor = ToolEditor(client)
        fake.script_tool_calls(
            [ToolCall("run_command", {"command": f"echo {E2E_OLD_KEY} {E2E_OLD_START}; "
                                                 "cat keys.txt"}, id="toolu_c"),
             ToolCall("read_file", {"path": "keys.txt"}, id="toolu_r")],
            text=("Your key is ", E2E_OLD_KEY[:9], E2E_OLD_KEY[9:], "."))
        fake.script_text("And the other one: ", E2E_OPENAI_KEY, ". It starts ",
                         E2E_OLD_START[:11], E2E_OLD_START[11:], ", shown as ",
                         E2E_OPENAI_SHOWN[:10], E2E_OPENAI_SHOWN[10:], ".")
        first = await chat(client, daemon, "@sonnet show me my keys")
        assert first["status"] == "completed"
        assert first["text"] == "Your key is [redacted].And the other one: [redacted]. It " \
            "starts [redacted], shown as [redacted]."
        fake.script_error(401, f"invalid x-api-key: {E2E_OLD_KEY}")
        refused = await chat(client, daemon, "@sonnet again")
        assert "the API key was refused" in refused["error"]["message"]
        rotated = keys / "rotated.key"
        rotated.write_text(E2E_NEW_KEY, "utf-8")
        os.replace(rotated, key_file)
        fake.script_tool_calls(
            [ToolCall("grep", {"pattern": E2E_OLD_KEY}, id="toolu_g"),
             ToolCall("read_file", {"path": "keys.txt"}, id="toolu_k")],
            text=("It was ", E2E_OLD_KEY, " and is ", E2E_NEW_KEY, "."))
        fake.script_text("Still ", E2E_OLD_KEY[:5], E2E_OLD_KEY[5:], ".")
        rotated_turn = await chat(client, daemon, "@sonnet what was it?")
        assert rotated_turn["status"] == "completed"
        assert rotated_turn["text"] == "It was [redacted] and is [redacted].Still [redacted]."
        assert fake.requests[-1].headers["authorization"] == f"Bearer {E2E_NEW_KEY}"
        fake.script_error(400, f"the gateway refused the key {E2E_OLD_KEY}", model="gpt-5")
        failed = await chat(client, daemon, "@gpt-5 hello")
        assert "[redacted]" in failed["error"]["message"]
        fake.script_error(401, f"Incorrect API key provided: {E2E_OPENAI_SHOWN}. You can find "
                          "your API key at https://platform.openai.com/account/api-keys.",
                          model="gpt-5")
        shortened = await chat(client, daemon, "@gpt-5 once more")
        assert "the API key was refused" in shortened["error"]["message"]
        routing = daemon.config / "routing.yaml"
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            routing.as_uri(), "yaml", 1, routing.read_text("utf-8"))))
        hovered = await client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(routing.as_uri()), types.Position(0, 18)))
        assert hovered is not None and isinstance(hovered.contents, types.MarkupContent)
        assert f"API key from key file `{key_file}` is set" in hovered.contents.value
        listed = await client.request(methods.MODELS, {"workspace": daemon.uri})
        assert all(m["configured"] for m in listed["models"])
        sessions = await client.request(methods.SESSIONS, {"workspace": daemon.uri})
        for session in sessions["sessions"]:
            await client.request(methods.SESSION, {"session_id": session["id"]})
        sent = [r.body for r in fake.requests]
    logs = capfd.readouterr()
    stored = b"".join(p.read_bytes() for p in Path(daemon.data).rglob("*") if p.is_file())
    wire = "\n".join(client.wire)
    assert "[redacted]" in wire and len(client.wire) > 20
    for key in (E2E_OLD_KEY, E2E_NEW_KEY, E2E_OPENAI_KEY):
        for part in (key, key[:12], key[:20], f"*{key[-4:]}"):
            assert part not in wire
            assert part not in repr(editor.approvals)
            assert part not in logs.out + logs.err
            assert part.encode() not in stored
    assert E2E_OLD_KEY not in repr(sent[-4:])  # what the model was sent after the rotation
    assert E2E_OLD_START not in repr(sent) and E2E_OPENAI_SHOWN not in repr(sent)


async def test_a_key_pasted_into_routing_yaml_is_never_repeated(
        client: SwitchmanClient, daemon: Daemon) -> None:
    """`global_default: <the key>` was answered "Unknown model '<the key>'" in /rules check and
    the editor's diagnostics, and stored verbatim in the routing.policy_invalid event."""
    pasted = "sk-ant-api03-Pasted0Key1By2Mistake3Zz9"
    daemon.write_routing(f"global_default: {pasted}\n")
    checked = (await chat(client, daemon, "/rules check"))["text"]
    assert "error [unknown-model] Unknown model '[redacted]'" in checked

    def stored() -> list[str]:
        with sqlite3.connect(daemon.data / "switchman.db") as db:
            return [row[0] for row in db.execute(
                "SELECT payload FROM events WHERE type = 'routing.policy_invalid'")]

    events = await client.wait_until(stored)
    assert all("unknown-model" in e and pasted[:12] not in e for e in events), events
    assert pasted not in repr(dict(client.received))


# -- multi-root workspaces -----------------------------------------------------------------


@pytest.mark.parametrize("editor", CLIENTS)
async def test_workspace_folders_come_and_go(editor: str, daemon: Daemon, tmp_path: Path,
                                             fake: FakeProvider) -> None:
    second = tmp_path / "second"
    second.mkdir()
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace, second],
                              listen=LISTEN) as client:
        fake.script_text("hi from two")
        result = await client.request(methods.CHAT, {"workspace": second.as_uri(),
                                                     "message": "hello"})
        assert result["status"] == "completed"
        third = tmp_path / "third"
        third.mkdir()
        client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=third.as_uri(), name="third")],
                removed=[types.WorkspaceFolder(uri=daemon.uri, name="project")])))
        await client.wait_for(methods.STATUS, lambda s: s["workspace"] == third.as_uri())
        with pytest.raises(JsonRpcException) as caught:
            await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hi"})
        assert error_data(caught.value)["code"] == "unknown_workspace"
        sessions = await client.request(methods.SESSIONS, {"workspace": second.as_uri()})
        assert len(sessions["sessions"]) == 1
        with pytest.raises(JsonRpcException) as caught:  # a session is its own folder's
            await client.request(methods.RESUME_SESSION, {"workspace": third.as_uri(),
                                                          "session_id": result["session_id"]})
        assert error_data(caught.value)["code"] == "unknown_session"
