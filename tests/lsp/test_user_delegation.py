"""``/delegate`` and "delegate that" end to end: the real daemon over LSP, the real SDKs
and the HTTP fake provider (spec 003: the focused task, one question when ambiguous)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from switchman.engine.providers.base import UNANSWERED_DELEGATION
from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon
from tests.lsp.test_delegation import killed_mid_worker
from tests.lsp.test_sessions_and_commands import start
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider, Usage
from tests.support.lsp import SwitchmanClient, running_server
from tests.support.rawrpc import RawDaemon

HAIKU_API, OPUS_API = "claude-haiku-4-5", "claude-opus-4-7"
HAIKU = "anthropic:claude-haiku-4-5"


async def chat(client: SwitchmanClient, daemon: Daemon, message: str,
               attachments: list[dict[str, Any]] | None = None, **extra: Any) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message,
                                               "attachments": attachments or [], **extra})


async def test_delegate_a_selection(client: SwitchmanClient, daemon: Daemon,
                                    fake: FakeProvider) -> None:
    editor = ToolEditor(client)  # the worker may edit, so the editor is asked first
    fake.script_text("main returns 42.", model=HAIKU_API,
                     usage=Usage(input_tokens=500, output_tokens=10))
    selection = {"kind": "selection", "uri": (daemon.workspace / "src" / "app.py").as_uri(),
                 "text": "def main():\n    return 42", "start_line": 1, "end_line": 2}
    # VS Code sends the command without its #selection token, and the text as typed
    typed = "/delegate fast explain this #selection"
    result = await chat(client, daemon, "/delegate fast explain this", [selection], typed=typed)
    assert (result["kind"], result["status"], result["text"], result["model"]) == (
        "command", "completed", "main returns 42.", HAIKU)
    (request,) = fake.requests
    sent = request.body["messages"][0]["content"][0]["text"]
    assert sent.startswith("explain this\n\nAttached selection src/app.py (lines 1-2):")
    (approval,) = editor.approvals
    assert (approval["tool"], approval["tier"], approval["task"]) == (
        "delegate", "fast", "explain this")
    seen = client.received[methods.DELEGATION]
    assert seen[0]["phase"] == "started" and seen[-1]["status"] == "completed"
    assert approval["tool_use_id"] == seen[0]["tool_use_id"]  # its delegation's own id
    assert {(u["source"], u["turn_id"], u["session_id"]) for u in seen} == {
        ("user", None, result["session_id"])}
    assert seen[-1]["handoff"]["reason"] == "user_delegate"
    listing = await client.request(methods.SESSIONS, {"workspace": daemon.uri,
                                                      "include_workers": True})
    # a session whose only exchange is a /delegate is titled by it as typed (not "New chat")
    assert listing["sessions"][0]["title"] == typed
    assert listing["sessions"][0]["updated_at"] > listing["sessions"][0]["created_at"]
    # the status bar's "today" includes the worker's cost once it has ended
    assert result["cost_usd"] != "0.000000"
    await client.wait_for(methods.STATUS, lambda s: s["cost_today_usd"] == result["cost_usd"])
    (worker,) = listing["sessions"][0]["workers"]
    assert worker["parent_tool_use_id"] == seen[0]["tool_use_id"]
    detail = await client.request(methods.SESSION, {"session_id": worker["id"]})
    assert detail["messages"][-1]["content"][0]["text"] == "main returns 42."
    assert detail["handoff"]["source"]["tool_use_id"] == seen[0]["tool_use_id"]
    # The user's session keeps the delegation (it has no tool call), for a reloaded chat's card.
    mine = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    (stored,) = mine["delegations"]
    assert (stored["tool_use_id"], stored["worker_session_id"], stored["source"]) == (
        seen[0]["tool_use_id"], worker["id"], "user")
    assert (stored["tier"], stored["worker_tier"], stored["floor_applied"]) == ("fast", "fast",
                                                                               False)
    assert (stored["task"], stored["status"], stored["model"]) == ("explain this", "completed",
                                                                   HAIKU)
    user, answer = (m for m in mine["messages"] if m["turn_id"] is None)
    # the command is stored before its worker starts, the answer when it ends
    assert user["created_at"] <= stored["started_at"] <= answer["created_at"]
    assert answer["role"] == "assistant"
    assert user["content"][0] == {"type": "text", "text": typed}


async def test_kill_9_while_the_worker_runs_keeps_the_command(daemon: Daemon,
                                                              fake: FakeProvider) -> None:
    """The user's /delegate is durable once its worker starts, as a turn's message is; after
    kill -9 the reopened session has it, and the delegation shows interrupted."""
    update, restarted = await killed_mid_worker(daemon, fake, "/delegate fast tidy the parser")
    try:
        mine = await restarted.request(methods.SESSION, {"session_id": update["session_id"]})
        worker = await restarted.request(methods.SESSION,
                                         {"session_id": update["worker_session_id"]})
        listing = await restarted.request(methods.SESSIONS, {"workspace": daemon.uri,
                                                             "include_workers": False})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    assert [(m["role"], m["content"][0]["text"]) for m in mine["messages"]] == [
        ("user", "/delegate fast tidy the parser")]
    assert [t["status"] for t in worker["turns"]] == ["interrupted"]
    (stored,) = mine["delegations"]
    assert (stored["status"], stored["error"]) == ("failed", "interrupted")
    assert "stopped while this turn was running" in (stored["detail"] or "")
    assert listing["sessions"][0]["title"] == "/delegate fast tidy the parser"


async def test_after_kill_9_the_cut_off_command_is_not_read_as_part_of_the_next_message(
        daemon: Daemon, fake: FakeProvider) -> None:
    """The reopened session's next turn: the model reads the /delegate as its own message,
    then a note that its worker did not finish, then the new message (it used to get the
    command and the new message as one user message, with no word of the worker)."""
    update, restarted = await killed_mid_worker(daemon, fake, "/delegate fast tidy the parser")
    fake.script_text("I will tidy it myself.", model=OPUS_API)
    try:
        result = await restarted.request(methods.CHAT, {
            "workspace": daemon.uri, "session_id": update["session_id"],
            "message": "@opus what happened?"})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    assert (result["status"], result["text"]) == ("completed", "I will tidy it myself.")
    sent = fake.requests[-1].body["messages"]
    assert [(m["role"], [b.get("text") for b in m["content"]]) for m in sent] == [
        ("user", ["/delegate fast tidy the parser"]),
        ("assistant", [UNANSWERED_DELEGATION]),
        ("user", ["what happened?"])]


async def test_delegate_that_takes_the_last_request(client: SwitchmanClient, daemon: Daemon,
                                                    fake: FakeProvider) -> None:
    ToolEditor(client)
    fake.script_text("It is sunny.", model=OPUS_API)
    fake.script_text("Dear Bob, …", model=OPUS_API)
    await chat(client, daemon, "@opus check the weather in Oslo")
    await chat(client, daemon, "@opus draft an email to Bob about the launch")
    fake.script_text("Dear Bob, the launch is on.", model=HAIKU_API)
    result = await chat(client, daemon, "do that via a fast sub-agent")
    assert (result["status"], result["text"]) == ("completed", "Dear Bob, the launch is on.")
    worker_request = fake.requests[-1]
    assert worker_request.model == HAIKU_API
    assert worker_request.body["messages"][0]["content"][0]["text"] == \
        "draft an email to Bob about the launch"


async def test_an_ambiguous_reference_gets_one_question(client: SwitchmanClient,
                                                        daemon: Daemon,
                                                        fake: FakeProvider) -> None:
    first = await chat(client, daemon, "/delegate")
    assert first["kind"] == "command"
    assert first["text"].startswith("What should the worker do?")
    fake.script_text("Sure.", model=OPUS_API)
    await chat(client, daemon, "@opus two things:\n1. check the weather\n2. draft the email")
    which = await chat(client, daemon, "delegate that")
    assert which["text"].startswith("Delegate which one: “check the weather” or "
                                    "“draft the email”?")
    shown = [d["text"] for d in client.received[methods.CHAT_DELTA]
             if d["kind"] == "command_output"]
    assert shown[-1] == which["text"]
    assert len(fake.requests) == 1  # no worker ran
    assert methods.DELEGATION not in client.received or \
        client.received[methods.DELEGATION] == []


async def test_a_tier_with_no_usable_model_fails_with_its_failure_mode(
        daemon: Daemon, fake: FakeProvider) -> None:
    """`/delegate` fails with the failure mode as its error code and says why no worker ran
    (the code was "no model available for tier fast", the start of the explanation)."""
    daemon.write_routing("tiers: {fast: gpt-5-mini, balanced: gpt-5, deep: gpt-5}\n")
    env = {k: v for k, v in daemon.env.items() if k != "OPENAI_API_KEY"}
    async with running_server("visual-studio-code", env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        ToolEditor(client)  # the worker may edit: its start is approved first
        result = await chat(client, daemon, "/delegate fast tidy the parser")
        assert (result["kind"], result["status"], result["error"]["code"]) == (
            "command", "failed", "no_model_available_for_tier")
        assert result["text"].startswith(
            "The worker did not finish (no_model_available_for_tier).\n\n"
            "no model available for tier fast: ")
        assert "OPENAI_API_KEY" in result["text"]
        (ended,) = [u for u in client.received[methods.DELEGATION] if u["phase"] == "ended"]
        assert (ended["error"], ended["source"]) == ("no_model_available_for_tier", "user")
    assert fake.requests == []


async def test_a_mistyped_tier_is_refused_naming_the_tiers(client: SwitchmanClient,
                                                           daemon: Daemon,
                                                           fake: FakeProvider) -> None:
    fake.script_text("Sure.", model=OPUS_API)
    await chat(client, daemon, "@opus tidy the parser")  # a latest request "ultra" could mean
    known = "Tiers: fast, balanced, deep; profiles: "
    lone = await chat(client, daemon, "/delegate ultra")
    assert (lone["kind"], lone["status"], lone["error"]["code"]) == (
        "command", "failed", "unknown_tier")
    assert lone["text"].startswith(f"'ultra' is not a tier or profile. {known}")
    assert lone["text"].endswith("Nothing was delegated; write the task after the tier: "
                                 "/delegate [tier] <task>.")
    slip = await chat(client, daemon, "/delegate fsat tidy the parser")
    assert (slip["status"], slip["error"]["code"]) == ("failed", "unknown_tier")
    assert slip["text"].startswith(f"Unknown tier or profile 'fsat' — did you mean fast? {known}")
    assert slip["error"]["message"] == slip["text"]
    shown = [d["text"] for d in client.received[methods.CHAT_DELTA]
             if d["kind"] == "command_output"]
    assert shown[-2:] == [lone["text"], slip["text"]]
    assert len(fake.requests) == 1  # no worker ran
    assert client.received.get(methods.DELEGATION, []) == []
    mine = await client.request(methods.SESSION, {"session_id": lone["session_id"]})
    assert [m["turn_id"] for m in mine["messages"]].count(None) == 0  # nothing kept
    # A task that starts with an ordinary word, and a one-word instruction on a selection,
    # are delegated as before.
    ToolEditor(client)
    fake.script_text("Tidied.")
    selection = {"kind": "selection", "uri": (daemon.workspace / "src" / "app.py").as_uri(),
                 "text": "def main():\n    return 42", "start_line": 1, "end_line": 2}
    done = await chat(client, daemon, "/delegate refactor", [selection])
    assert (done["status"], done["text"]) == ("completed", "Tidied.")


def test_a_delegate_cancelled_while_asking_for_approval_is_answered_and_kept(
        daemon: Daemon, fake: FakeProvider, tmp_path: Path) -> None:
    """$/cancelRequest while the user is asked to approve the worker: the chat request still
    resolves (it was answered with a "request cancelled" error and the command was left in the
    transcript with no answer), the card ends, and the editor's late answer is ignored quietly
    (it was a traceback in the log)."""
    raw = RawDaemon(daemon.env, tmp_path / "stderr.log")
    raw.initialize(daemon.workspace)
    chat_id = raw.new_id()
    raw.send({"jsonrpc": "2.0", "id": chat_id, "method": methods.CHAT,
              "params": {"workspace": daemon.uri, "message": "/delegate fast tidy src/app.py"}})
    approval = raw.wait_until(lambda: next(
        (m for m in raw.received if m.get("method") == methods.APPROVE), None))
    raw.notify("$/cancelRequest", {"id": chat_id})
    answer = raw.response(chat_id)["result"]
    text = "No worker was started: the delegation was cancelled while it waited for approval."
    assert (answer["kind"], answer["status"], answer["text"]) == ("command", "failed", text)
    assert answer["error"]["code"] == "cancelled_by_user"
    raw.wait_until(lambda: any(m.get("method") == "$/cancelRequest"
                               and m["params"]["id"] == approval["id"] for m in raw.received))
    raw.send({"jsonrpc": "2.0", "id": approval["id"], "result": {"decision": "allow_once"}})
    detail = raw.request(methods.SESSION, {"session_id": answer["session_id"]})["result"]
    assert [m["content"][0]["text"] for m in detail["messages"]] == [
        "/delegate fast tidy src/app.py", text]
    updates = [m["params"] for m in raw.received if m.get("method") == methods.DELEGATION]
    assert [(u["phase"], u["status"], u["error"]) for u in updates] == [
        ("ended", "cancelled", "cancelled_by_user")]
    # its card comes back in a reopened chat: the session's record has it, as it ended
    (stored,) = detail["delegations"]
    assert (stored["tool_use_id"], stored["source"], stored["worker_session_id"]) == (
        updates[0]["tool_use_id"], "user", "")
    assert (stored["tier"], stored["task"], stored["model"], stored["worker_tier"]) == (
        "fast", "tidy src/app.py", None, None)
    assert (stored["status"], stored["error"], stored["detail"]) == (
        "cancelled", "cancelled_by_user", "cancelled while waiting for approval")
    assert fake.requests == []
    raw.close()
    assert raw.process.returncode == 0
    assert "Traceback" not in raw.stderr()


async def test_a_shutdown_while_the_users_worker_runs_answers_the_command_first(
        daemon: Daemon, fake: FakeProvider) -> None:
    """``:Switchman restart`` while a ``/delegate`` worker ran: the daemon ended only planners'
    turns (a worker goes with its planner, and this one has none), so ``shutdown`` waited for a
    command that never ended, and the editor saw the daemon exit mid-command."""
    client = await start("neovim", daemon)
    ToolEditor(client)  # allows the worker to start
    stall = fake.script_stall("worker output ", "never", after_chunks=1, model=HAIKU_API)
    pending = asyncio.ensure_future(chat(client, daemon, "/delegate fast tidy the parser"))
    try:
        assert await stall.wait_reached_async()
        await client.wait_for(methods.DELEGATION, lambda u: u["phase"] == "started")
        await client.shutdown_session()
        assert pending.done(), "the command was not answered before the shutdown"
        result = pending.result()
        assert (result["kind"], result["status"]) == ("command", "failed")
        assert "Switchman stopped while this worker ran" in result["text"]
    finally:
        pending.cancel()
        fake.release_stalls()
        await client.stop()
