"""Delegation end to end: the real daemon over LSP, the real SDKs, the HTTP fake provider
scripted so the planner calls ``delegate`` (spec 000 §6, 001)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest

from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon, deltas
from tests.lsp.test_sessions_and_commands import start
from tests.support.editor_tools import NEVER, ToolEditor
from tests.support.fake_provider import FakeProvider, Reply, Stall, ToolCall, Usage
from tests.support.lsp import SwitchmanClient, kill_9, running_server

OPUS_API, HAIKU_API = "claude-opus-4-7", "claude-haiku-4-5"
HAIKU = "anthropic:claude-haiku-4-5"


@pytest.fixture
async def vscode_editor(daemon: Daemon) -> AsyncIterator[tuple[SwitchmanClient, ToolEditor]]:
    """One editor is enough where the editor's capabilities play no part; it allows the
    delegations that ask (workers that may write or execute) unless a test scripts a denial."""
    async with running_server("visual-studio-code", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as started:
        yield started, ToolEditor(started)


@pytest.fixture
def vscode(vscode_editor: tuple[SwitchmanClient, ToolEditor]) -> SwitchmanClient:
    return vscode_editor[0]


async def chat(client: SwitchmanClient, daemon: Daemon, message: str) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message})


def delegate(call_id: str, **arguments: Any) -> ToolCall:
    arguments.setdefault("tier", "fast")
    arguments.setdefault("task", f"sub-task {call_id}")
    arguments.setdefault("context", {"mode": "minimal"})
    return ToolCall("delegate", arguments, id=call_id)


def tool_results(detail: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {b["tool_use_id"]: b for m in detail["messages"] for b in m["content"]
            if b["type"] == "tool_result"}


def updates(client: SwitchmanClient, call_id: str) -> list[dict[str, Any]]:
    return [u for u in client.received[methods.DELEGATION] if u["tool_use_id"] == call_id]


async def test_explicit_delegation_end_to_end(client: SwitchmanClient, daemon: Daemon,
                                              fake: FakeProvider) -> None:
    ToolEditor(client)  # allows the delegation (its worker may edit)
    (daemon.workspace / "src" / "auth.py").write_text("".join(f"line {n}\n" for n in range(60)))
    fake.script_text("We decided on JWT.", model=OPUS_API)
    first = await chat(client, daemon, "@opus which token format?")
    detail = await client.request(methods.SESSION, {"session_id": first["session_id"]})
    message_id = detail["messages"][-1]["id"]
    fake.script_tool_call("grep", {"pattern": "line 5"}, id="toolu_grep", model=OPUS_API,
                          usage=Usage(input_tokens=2000, output_tokens=100))
    fake.script_tool_calls([delegate("toolu_w", task="Refactor authenticate()", context={
        "mode": "explicit", "include": [
            {"type": "file", "path": "src/auth.py"},
            {"type": "file_range", "path": "src/auth.py", "lines": [10, 20]},
            {"type": "tool_result", "tool_use_id": "toolu_grep"},
            {"type": "message", "message_id": message_id},
            {"type": "inline", "label": "decision", "text": "tokens last one hour"}]})],
        model=OPUS_API, usage=Usage(input_tokens=3000, output_tokens=200))
    fake.script_tool_call("read_file", {"path": "src/auth.py", "start_line": 10,
                                        "end_line": 20}, id="toolu_r", model=HAIKU_API,
                          usage=Usage(input_tokens=800, output_tokens=40))
    fake.script_text("authenticate() now verifies the JWT.", model=HAIKU_API,
                     usage=Usage(input_tokens=1200, output_tokens=60))
    fake.script_text("Done: the worker refactored it.", model=OPUS_API,
                     usage=Usage(input_tokens=4000, output_tokens=80))
    result = await chat(client, daemon, "@opus refactor authenticate")
    assert (result["status"], result["text"]) == ("completed", "Done: the worker refactored it.")
    worker_calls = [r for r in fake.requests if r.model == HAIKU_API]
    assert len(worker_calls) == 2
    task = worker_calls[0].body["messages"][0]["content"][0]["text"]
    assert task.startswith("Refactor authenticate()")
    assert "src/auth.py:6: line 5" in task and "We decided on JWT." in task
    assert "tokens last one hour" in task and "line 30" not in task
    system = str(worker_calls[0].body["system"])
    assert "lines 10-20 of src/auth.py" in system and "- file src/auth.py" in system
    assert {t["name"] for t in worker_calls[0].body["tools"]} == {  # never the memory tools
        "read_file", "list_files", "grep", "skill_load", "edit_file", "create_file",
        "delete_file", "run_command", "_request_context"}
    assert "line 12" in str(worker_calls[1].body["messages"])  # the worker read the range
    # the planner got the worker's answer as the tool result
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    assert tool_results(detail)["toolu_w"]["content"] == "authenticate() now verifies the JWT."
    # the record dates its end too: a card rebuilt after a reload shows how long the worker ran
    (record,) = detail["delegations"]
    ran = (datetime.fromisoformat(record["ended_at"])
           - datetime.fromisoformat(record["started_at"])).total_seconds()
    assert 0 <= ran < 60
    # notifications: started, progress, ended — all for the planner's turn
    seen = updates(client, "toolu_w")
    assert seen[0]["phase"] == "started" and seen[0]["model"] == HAIKU
    assert seen[-1]["phase"] == "ended" and seen[-1]["status"] == "completed"
    assert {u["turn_id"] for u in seen} == {result["turn_id"]}
    assert seen[-1]["tool_calls"] == 1 and seen[-1]["llm_calls"] == 2
    # the worker is listed under its planner and has its own transcript
    listing = await client.request(methods.SESSIONS, {"workspace": daemon.uri,
                                                      "include_workers": True})
    planner = next(s for s in listing["sessions"] if s["id"] == result["session_id"])
    (worker,) = planner["workers"]
    assert (worker["is_worker"], worker["parent_tool_use_id"]) == (True, "toolu_w")
    worker_detail = await client.request(methods.SESSION, {"session_id": worker["id"]})
    assert worker_detail["turns"][0]["decision"]["chain"][4]["verdict"] == "chose"
    assert worker_detail["messages"][-1]["content"][0]["text"] == \
        "authenticate() now verifies the JWT."
    # cost roll-up, exact: haiku 800/40 + 1200/60 at $1/$5 per M; opus at $5/$25 per M
    worker_cost = "0.002500"
    assert seen[-1]["cost_usd"] == worker_cost
    assert detail["cost"]["workers_usd"] == worker_cost
    assert detail["cost"]["workers"][0]["parent_tool_use_id"] == "toolu_w"
    assert detail["cost"]["workers"][0]["title"] == "Refactor authenticate()"  # its task
    # planner: turn 1 (10 in / 1 out default usage) + 2000/100 + 3000/200 + 4000/80
    assert result["cost_usd"] == "0.054500"  # this turn's own calls only
    planner_total = float(detail["cost"]["planner_usd"])
    assert float(detail["cost"]["total_usd"]) == pytest.approx(planner_total + 0.0025)
    shown = await chat(client, daemon, "/cost")
    assert f"Refactor authenticate() → {HAIKU}: $0.002500, 1 turn" in shown["text"]
    # today's total includes the worker once the turn is over (a status sent while the turn
    # was still ending may already carry the total, with the turn still in flight)
    await client.wait_for(methods.STATUS, lambda s: s["cost_today_usd"] ==
                          detail["cost"]["total_usd"] and s["turn_in_flight"] is False)


async def test_fan_out_of_three_with_a_cap_of_two(vscode: SwitchmanClient, daemon: Daemon,
                                                  fake: FakeProvider) -> None:
    daemon.write_routing("global_default: opus\ndelegation: {max_concurrent_workers: 2}\n")
    fake.script_tool_calls([delegate(f"toolu_{n}", task=f"task {n}") for n in (1, 2, 3)],
                           model=OPUS_API)
    stalls = [Stall(after_chunks=1), Stall(after_chunks=1)]
    for stall in stalls:
        fake.script(Reply(text=("working ", "done"), fault=stall), model=HAIKU_API)
    fake.script_text("third done", model=HAIKU_API)
    fake.script_text("all three done", model=OPUS_API)
    pending = asyncio.ensure_future(chat(vscode, daemon, "fan out"))
    for stall in stalls:
        assert await stall.wait_reached_async()
    assert len([r for r in fake.requests if r.model == HAIKU_API]) == 2  # the cap holds
    # each worker's start is announced while its provider works on the request
    await vscode.wait_until(lambda: {u["tool_use_id"] for u in vscode.received[
        methods.DELEGATION] if u["phase"] == "started"} == {"toolu_1", "toolu_2"})
    assert [u["phase"] for u in updates(vscode, "toolu_3")] == ["queued"]  # and the third waits
    fake.release_stalls()
    result = await pending
    assert result["text"] == "all three done"
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    tool_message = next(m for m in detail["messages"] if m["role"] == "tool")
    assert [b["tool_use_id"] for b in tool_message["content"]] == ["toolu_1", "toolu_2",
                                                                  "toolu_3"]
    assert sorted(b["content"] for b in tool_message["content"]) == [
        "third done", "working done", "working done"]


async def test_failure_modes_and_dropped_tools(vscode: SwitchmanClient, daemon: Daemon,
                                               fake: FakeProvider) -> None:
    daemon.write_routing("global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fake.script_tool_calls([
        delegate("toolu_drop", allowed_tools=["delegate", "read_file"]),
        delegate("toolu_err"), delegate("toolu_max", max_tokens=3),
        delegate("toolu_ctx"), delegate("toolu_schema", output_schema=schema),
        delegate("toolu_slow", timeout_seconds=1)], model=OPUS_API)
    fake.script_text("read only", model=HAIKU_API)
    fake.script_error(400, "this request is malformed", model=HAIKU_API)
    fake.script_text("trunc", model=HAIKU_API, stop_reason="max_tokens")
    fake.script_tool_call("_request_context", {"missing": [
        {"type": "decision", "ref": "expiry", "hint": "to set the TTL"}],
        "summary": "Need the expiry policy."}, id="toolu_q", model=HAIKU_API)
    fake.script_text("no json here", model=HAIKU_API)
    slow = fake.script_stall("still ", "going", after_chunks=1, model=HAIKU_API)
    fake.script_text("I will handle these myself.", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus delegate everything")
    assert result["status"] == "completed"
    fake.release_stalls()
    assert slow.reached.is_set()
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    answers = tool_results(detail)
    assert answers["toolu_drop"]["content"] == "read only"  # dropped silently (001 §5.6)
    assert [t["name"] for t in fake.requests[1].body["tools"]] == ["read_file",
                                                                    "_request_context"]
    expected = {
        "toolu_err": "delegate failed: worker_error: ",
        "toolu_max": "delegate failed: max_tokens_exceeded\n\ntrunc",
        "toolu_ctx": "delegate failed: insufficient_context\n\n",
        "toolu_schema": "delegate failed: output_schema_validation_failed\n\nno json here",
        "toolu_slow": "delegate failed: timeout\n\nstill ",
    }
    for call_id, start_text in expected.items():
        assert answers[call_id]["is_error"] and answers[call_id]["content"].startswith(
            start_text), call_id
    request = json.loads(answers["toolu_ctx"]["content"].split("\n\n", 1)[1])
    assert request["summary"] == "Need the expiry policy."
    ended = {u["tool_use_id"]: u for u in vscode.received[methods.DELEGATION]
             if u["phase"] == "ended"}
    assert ended["toolu_drop"]["dropped_tools"] == ["delegate"]
    assert ended["toolu_slow"]["error"] == "timeout"
    assert ended["toolu_max"]["error"] == "max_tokens_exceeded"
    # the Sessions view lists each worker with how its delegation went, a failed one as failed
    # (its own turn may read completed: the worker answered, the delegation failed its schema)
    listing = await vscode.request(methods.SESSIONS, {"workspace": daemon.uri,
                                                      "include_workers": True})
    planner = next(s for s in listing["sessions"] if s["id"] == result["session_id"])
    went = {w["parent_tool_use_id"]: w["delegation_status"] for w in planner["workers"]}
    assert went == {"toolu_drop": "completed", "toolu_err": "failed", "toolu_max": "failed",
                    "toolu_ctx": "failed", "toolu_schema": "failed", "toolu_slow": "failed"}
    max_request = next(r for r in fake.requests if r.model == HAIKU_API
                       and r.body.get("max_tokens") == 3)
    assert max_request is not None


async def test_a_tool_a_turn_may_never_have_is_answered_why_not_unknown(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A worker that calls delegate or a memory tool, and a model that may not delegate but
    sees delegate calls in the session's history: each read "Unknown tool", and its chat line
    "unknown tool", for a tool the docs name and the turn was denied for a reason."""
    daemon.write_routing("global_default: opus\n")
    fake.script_tool_calls([delegate("toolu_w")], model=OPUS_API)
    fake.script_tool_calls([ToolCall("delegate", {"tier": "fast", "task": "t", "context": {
        "mode": "minimal"}}, id="toolu_d"), ToolCall("memory_add", {"file": "memory", "text": "x"},
                                                     id="toolu_m")], model=HAIKU_API)
    fake.script_text("done", model=HAIKU_API)
    fake.script_text("planned", model=OPUS_API)
    planner = await chat(vscode, daemon, "@opus hand it over")
    (ended,) = [u for u in updates(vscode, "toolu_w") if u["phase"] == "ended"]
    worker = await vscode.request(methods.SESSION, {"session_id": ended["worker_session_id"]})
    answers = tool_results(worker)
    assert answers["toolu_d"]["content"].startswith(
        "'delegate' is not available here: workers never delegate. Available tools: ")
    assert answers["toolu_m"]["content"].startswith(
        "'memory_add' is not available here: workers never change the workspace memory. ")
    assert answers["toolu_d"]["summary"] == "not available: workers never delegate"
    fake.script_tool_calls([delegate("toolu_h")], model=HAIKU_API)
    fake.script_text("myself then", model=HAIKU_API)
    result = await chat(vscode, daemon, "@haiku hand it over too")
    assert result["session_id"] == planner["session_id"]
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    assert tool_results(detail)["toolu_h"]["content"].startswith(
        f"'delegate' is not available here: {HAIKU} may not delegate (its can_delegate is "
        "false). Available tools: ")


async def test_a_budget_spent_by_a_tool_calling_reply_makes_no_further_call(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("global_default: opus\n")
    fake.script_tool_calls([delegate("toolu_b", max_tokens=40)], model=OPUS_API)
    fake.script_tool_call("read_file", {"path": "src/x.py"}, id="toolu_r", text=("looking ",),
                          model=HAIKU_API, usage=Usage(input_tokens=900, output_tokens=40))
    fake.script_text("the worker ran out", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus delegate on a budget")
    assert (result["status"], result["text"]) == ("completed", "the worker ran out")
    # no call with max_tokens 1 paying for the whole context again
    assert [r.body["max_tokens"] for r in fake.requests if r.model == HAIKU_API] == [40]
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    answer = tool_results(detail)["toolu_b"]
    assert answer["is_error"]
    assert answer["content"] == "delegate failed: max_tokens_exceeded\n\nlooking "
    (ended,) = [u for u in updates(vscode, "toolu_b") if u["phase"] == "ended"]
    assert (ended["status"], ended["error"]) == ("failed", "max_tokens_exceeded")
    assert ended["detail"] == "the worker reached max_tokens (40)"
    worker = await vscode.request(methods.SESSION, {"session_id": ended["worker_session_id"]})
    # the reply arrived whole within the budget: its tool ran, then nothing more was asked
    assert [m["role"] for m in worker["messages"]] == ["user", "assistant", "tool"]
    assert ended["tool_calls"] == 1 and ended["llm_calls"] == 1
    # a budget spent by a request for more context still ends as that request
    fake.script_tool_calls([delegate("toolu_c", max_tokens=40)], model=OPUS_API)
    fake.script_tool_call("_request_context", {"missing": [
        {"type": "file", "ref": "src/y.py", "hint": "the caller"}], "summary": "Need y."},
        id="toolu_q", model=HAIKU_API, usage=Usage(input_tokens=900, output_tokens=40))
    fake.script_text("noted", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus again on a budget")
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    assert tool_results(detail)["toolu_c"]["content"].startswith(
        "delegate failed: insufficient_context\n\n")


async def test_stopping_one_worker_and_cancelling_the_planner(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    fake.script_tool_calls([delegate("toolu_a"), delegate("toolu_b")], model=OPUS_API)
    first, second = Stall(after_chunks=1), Stall(after_chunks=1)
    fake.script(Reply(text=("a ", "never"), fault=first), model=HAIKU_API)
    fake.script(Reply(text=("b ", "never"), fault=second), model=HAIKU_API)
    fake.script_text("carried on without a", model=OPUS_API)
    pending = asyncio.ensure_future(chat(vscode, daemon, "@opus two workers"))
    assert await first.wait_reached_async() and await second.wait_reached_async()
    started = await vscode.wait_until(lambda: len(s := [
        u for u in vscode.received[methods.DELEGATION] if u["phase"] == "started"]) == 2 and s)
    one = next(u for u in started if u["worker_turn_id"])
    answer = await vscode.request(methods.CANCEL, {"turn_id": one["worker_turn_id"]})
    assert answer == {"cancelled": True, "status": "cancelled"}
    fake.release_stalls()
    result = await pending
    assert (result["status"], result["text"]) == ("completed", "carried on without a")
    ended = {u["tool_use_id"]: u for u in vscode.received[methods.DELEGATION]
             if u["phase"] == "ended"}
    assert ended[one["tool_use_id"]]["error"] == "cancelled_by_user"
    assert ended[one["tool_use_id"]]["detail"] == "the user stopped this worker"
    listing = await vscode.request(methods.SESSIONS, {"workspace": daemon.uri,
                                                      "include_workers": True})
    assert {w["parent_tool_use_id"]: w["delegation_status"]
            for w in listing["sessions"][0]["workers"]} == {
        one["tool_use_id"]: "cancelled", ({"toolu_a", "toolu_b"} - {one["tool_use_id"]}).pop():
        "completed"}

    # cancelling the planner cancels every worker in flight
    fake.script_tool_calls([delegate("toolu_c"), delegate("toolu_d")], model=OPUS_API)
    stalls = [Stall(after_chunks=1), Stall(after_chunks=1)]
    for stall in stalls:
        fake.script(Reply(text=("x ", "never"), fault=stall), model=HAIKU_API)
    pending = asyncio.ensure_future(chat(vscode, daemon, "@opus two more"))
    for stall in stalls:
        assert await stall.wait_reached_async()
    planner = await vscode.wait_for(methods.DELEGATION, lambda u: u["tool_use_id"] == "toolu_c")
    answer = await vscode.request(methods.CANCEL, {"turn_id": planner["turn_id"]})
    assert answer == {"cancelled": True, "status": "cancelled"}
    assert (await pending)["status"] == "cancelled"
    fake.release_stalls()
    ended = await vscode.wait_until(lambda: len(e := [
        u for u in updates(vscode, "toolu_c") + updates(vscode, "toolu_d")
        if u["phase"] == "ended"]) == 2 and e)
    assert [(u["status"], u["error"]) for u in ended] == [("cancelled", "cancelled_by_user")] * 2


async def test_cancelling_the_planner_ends_queued_delegations_like_the_running_one(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    fake.script_tool_calls([delegate(f"toolu_{n}") for n in (1, 2, 3)], model=OPUS_API)
    stall = fake.script_stall("x ", "never", after_chunks=1, model=HAIKU_API)
    pending = asyncio.ensure_future(chat(vscode, daemon, "@opus three, one at a time"))
    assert await stall.wait_reached_async()
    running = await vscode.wait_for(methods.DELEGATION, lambda u: u["phase"] == "started")
    waiting = await vscode.wait_until(lambda: len(q := [
        u for u in vscode.received[methods.DELEGATION] if u["phase"] == "queued"]) == 2 and q)
    assert [u["tool_use_id"] for u in waiting] == ["toolu_2", "toolu_3"]  # shown, not hidden
    answer = await vscode.request(methods.CANCEL, {"turn_id": running["turn_id"]})
    assert answer == {"cancelled": True, "status": "cancelled"}
    assert (await pending)["status"] == "cancelled"
    fake.release_stalls()
    assert len([r for r in fake.requests if r.model == HAIKU_API]) == 1  # the queued never ran
    detail = await vscode.request(methods.SESSION, {"session_id": running["session_id"]})
    answers = tool_results(detail)
    assert answers["toolu_1"]["content"] == "delegate failed: cancelled_by_user\n\nx "
    for call_id in ("toolu_2", "toolu_3"):  # was "Cancelled."
        assert (answers[call_id]["content"], answers[call_id]["is_error"]) == (
            "delegate failed: cancelled_by_user", True)
    ended = {u["tool_use_id"]: u for u in vscode.received[methods.DELEGATION]
             if u["phase"] == "ended"}
    assert {k: (u["status"], u["error"]) for k, u in ended.items()} == {
        f"toolu_{n}": ("cancelled", "cancelled_by_user") for n in (1, 2, 3)}
    assert ended["toolu_2"]["detail"] == \
        "the planner's turn was cancelled before this worker started"
    # every one is in the session's record, as it ended, the two that never started too
    assert [(r["tool_use_id"], r["status"], r["error"], r["tier"], r["task"])
            for r in detail["delegations"]] == [
        (f"toolu_{n}", "cancelled", "cancelled_by_user", "fast", f"sub-task toolu_{n}")
        for n in (1, 2, 3)]
    queued = detail["delegations"][1]
    assert (queued["worker_session_id"], queued["model"], queued["detail"]) == (
        "", None, "the planner's turn was cancelled before this worker started")
    assert queued["queued_at"] is not None and detail["delegations"][0]["queued_at"] is None
    with sqlite3.connect(daemon.data / "switchman.db") as db:
        failed = db.execute("SELECT payload FROM events WHERE type = 'delegate.failed'").fetchall()
    modes = sorted((json.loads(p)["tool_use_id"], json.loads(p)["failure_mode"]) for (p,) in failed)
    assert modes == [(f"toolu_{n}", "cancelled_by_user") for n in (1, 2, 3)]


async def test_a_delegation_waiting_for_a_slot_is_announced_listed_and_stoppable(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """With one worker at a time, the second and third calls are announced ``queued`` (why,
    and their place in line), listed so by switchman/session while they wait, the second is
    stopped alone from its card, and the third moves up and then runs."""
    daemon.write_routing("global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    fake.script_tool_calls([delegate(f"toolu_{n}") for n in (1, 2, 3)], model=OPUS_API)
    first, third = Stall(after_chunks=1), Stall(after_chunks=1)
    fake.script(Reply(text=("one ", "done"), fault=first), model=HAIKU_API)
    fake.script(Reply(text=("three ", "done"), fault=third), model=HAIKU_API)
    fake.script_text("two of three ran", model=OPUS_API)
    pending = asyncio.ensure_future(chat(vscode, daemon, "@opus three, one at a time"))
    assert await first.wait_reached_async()
    queued = await vscode.wait_until(lambda: len(q := [
        u for u in vscode.received[methods.DELEGATION] if u["phase"] == "queued"]) == 2 and q)
    assert [(u["tool_use_id"], u["status"], u["queue"], u["detail"]) for u in queued] == [
        ("toolu_2", "queued", {"position": 1, "running": 1, "limit": 1},
         "waiting for a free worker: 1 of 1 running"),
        ("toolu_3", "queued", {"position": 2, "running": 1, "limit": 1},
         "waiting for a free worker: 1 of 1 running; 1 ahead of it")]
    assert all((u["tier"], u["task"], u["worker_session_id"], u["worker_turn_id"], u["model"])
               == ("fast", f"sub-task {u['tool_use_id']}", "", None, None) for u in queued)
    planner = queued[0]
    # the first's record is written when its worker is routed, which a turn does while its
    # provider works (it may stream before that): wait for its start before asking
    await vscode.wait_for(methods.DELEGATION, lambda u: u["tool_use_id"] == "toolu_1"
                          and u["phase"] == "started")
    detail = await vscode.request(methods.SESSION, {"session_id": planner["session_id"]})
    assert [(r["tool_use_id"], r["status"]) for r in detail["delegations"]] == [
        ("toolu_1", "running"), ("toolu_2", "queued"), ("toolu_3", "queued")]
    assert detail["delegations"][1]["queued_at"] is not None
    # Stop on the second's card: a delegation with no worker turn yet is named by its call
    answer = await vscode.request(methods.CANCEL, {"turn_id": planner["turn_id"],
                                                   "tool_use_id": "toolu_2"})
    assert answer == {"cancelled": True, "status": "cancelled"}
    (stopped,) = [u for u in updates(vscode, "toolu_2") if u["phase"] == "ended"]
    assert (stopped["status"], stopped["error"], stopped["detail"], stopped["queue"]) == (
        "cancelled", "cancelled_by_user", "the user stopped it before it started", None)
    moved = await vscode.wait_until(lambda: len(q := [
        u for u in updates(vscode, "toolu_3") if u["phase"] == "queued"]) == 2 and q[-1])
    assert moved["queue"] == {"position": 1, "running": 1, "limit": 1}
    first.release.set()
    assert await third.wait_reached_async()
    started = await vscode.wait_for(methods.DELEGATION, lambda u: u["tool_use_id"] == "toolu_3"
                                    and u["phase"] == "started")
    assert (started["status"], started["queue"], started["model"]) == ("running", None, HAIKU)
    third.release.set()
    result = await pending
    assert (result["status"], result["text"]) == ("completed", "two of three ran")
    assert [r.model for r in fake.requests].count(HAIKU_API) == 2  # the stopped one never ran
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    assert [(r["tool_use_id"], r["status"]) for r in detail["delegations"]] == [
        ("toolu_1", "completed"), ("toolu_2", "cancelled"), ("toolu_3", "completed")]
    assert tool_results(detail)["toolu_2"]["content"] == "delegate failed: cancelled_by_user"
    with sqlite3.connect(daemon.data / "switchman.db") as db:
        waits = [json.loads(p) for (p,) in db.execute(
            "SELECT payload FROM events WHERE type = 'delegate.queued' ORDER BY id")]
        starts = {json.loads(p)["tool_use_id"]: json.loads(p) for (p,) in db.execute(
            "SELECT payload FROM events WHERE type = 'delegate.started'")}
        ledger = db.execute("SELECT COUNT(*) FROM cost_ledger").fetchone()
    assert [(w["tool_use_id"], w["position"]) for w in waits] == [("toolu_2", 1), ("toolu_3", 2)]
    assert starts["toolu_3"]["queued_seconds"] > 0 and starts["toolu_1"]["queued_seconds"] == 0
    # the wait is no charge and nothing is counted twice: two planner calls, two workers
    assert ledger[0] == 4
    assert detail["cost"]["total_usd"] == str(
        sum(Decimal(w["cost_usd"]) for w in detail["cost"]["workers"])
        + Decimal(detail["cost"]["planner_usd"]))


async def killed_mid_worker(daemon: Daemon, fake: FakeProvider,
                            message: str) -> tuple[dict[str, Any], SwitchmanClient]:
    """Send ``message`` (it must start a worker), kill -9 the daemon while the worker's answer
    is held open, and start a new daemon: the delegation's `started` update and its client."""
    client = await start("neovim", daemon)
    ToolEditor(client)
    stall = fake.script_stall("worker output ", "never", after_chunks=1, model=HAIKU_API)
    pending = asyncio.ensure_future(chat(client, daemon, message))
    assert await stall.wait_reached_async()
    update = await client.wait_for(methods.DELEGATION, lambda u: u["phase"] == "started")
    await kill_9(client, pending)
    fake.release_stalls()
    return update, await start("neovim", daemon)


async def test_kill_9_during_a_worker_leaves_both_interrupted(daemon: Daemon,
                                                              fake: FakeProvider) -> None:
    fake.script_tool_calls([delegate("toolu_k")], model=OPUS_API)
    update, restarted = await killed_mid_worker(daemon, fake, "@opus delegate and die")
    try:
        planner = await restarted.request(methods.SESSION, {"session_id": update["session_id"]})
        worker = await restarted.request(methods.SESSION,
                                         {"session_id": update["worker_session_id"]})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    assert [t["status"] for t in planner["turns"]] == ["interrupted"]
    assert [t["status"] for t in worker["turns"]] == ["interrupted"]
    with sqlite3.connect(daemon.data / "switchman.db") as db:
        running = db.execute("SELECT COUNT(*) FROM turns WHERE status = 'running'").fetchone()
    assert running == (0,)


async def test_a_delegation_that_may_write_is_approved_in_the_editor(
        vscode_editor: tuple[SwitchmanClient, ToolEditor], daemon: Daemon,
        fake: FakeProvider) -> None:
    vscode, editor = vscode_editor
    editor.answers.append({"decision": "deny", "reason": "not that one"})
    tools = ["read_file", "edit_file"]
    fake.script_tool_calls([delegate("toolu_no", task="rewrite main", allowed_tools=tools)],
                           model=OPUS_API)
    fake.script_tool_calls([delegate("toolu_yes", task="rewrite main", allowed_tools=tools)],
                           model=OPUS_API)
    fake.script_text("rewritten", model=HAIKU_API)
    fake.script_text("second try worked", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus rewrite main")
    assert (result["status"], result["text"]) == ("completed", "second try worked")
    denied, allowed = editor.approvals
    assert (denied["tool"], denied["tool_class"], denied["tier"], denied["task"],
            denied["worker_tools"], denied["is_worker"]) == (
        "delegate", "write", "fast", "rewrite main", ["edit_file"], False)
    assert denied["title"] == "Delegate to a fast worker that may change files"
    assert (denied["session_id"], denied["turn_id"]) == (result["session_id"], result["turn_id"])
    assert allowed["task"] == "rewrite main"
    # each question names its delegation, so the editor shows it above that worker's card
    assert (denied["tool_use_id"], allowed["tool_use_id"]) == ("toolu_no", "toolu_yes")
    assert [r.model for r in fake.requests] == [OPUS_API, OPUS_API, HAIKU_API, OPUS_API]
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    answers = tool_results(detail)
    assert answers["toolu_no"]["is_error"]
    assert answers["toolu_no"]["content"].startswith(
        "delegate failed: approval_denied\n\n"
        "The user denied this delegation; no worker was started.")
    assert "Their reason: not that one" in answers["toolu_no"]["content"]
    assert answers["toolu_yes"]["content"] == "rewritten"
    ended = {u["tool_use_id"]: u for u in vscode.received[methods.DELEGATION]
             if u["phase"] == "ended"}
    assert (ended["toolu_no"]["error"], ended["toolu_no"]["worker_session_id"]) == (
        "approval_denied", "")
    # a worker's time is its run, from its start: the denied one never ran, so it has none
    # (it was how long its question waited, read as a run time: "· 5.5s")
    assert ended["toolu_no"]["elapsed_seconds"] is None
    assert isinstance(ended["toolu_yes"]["elapsed_seconds"], float)
    assert [(r["tool_use_id"], r["status"], r["error"], r["source"], r["task"])
            for r in detail["delegations"]] == [
        ("toolu_no", "failed", "approval_denied", "planner", "rewrite main"),
        ("toolu_yes", "completed", None, "planner", "rewrite main")]
    assert detail["delegations"][0]["detail"] == "not that one"
    # The start's question is kept with the call's result, as a tool's is (a rebuilt chat)
    title = "Delegate to a fast worker that may change files"
    assert answers["toolu_no"]["approval"] == {
        "id": denied["id"], "title": title, "outcome": "denied", "reason": "not that one",
        "command": None, "cwd": None, "path": None, "diff": None,
        # what the question said of the worker (a rebuilt card shows its "Worker on …" line)
        "tier": "fast", "requested_tier": None, "model": HAIKU, "routed_by": None,
        "worker_tools": ["edit_file"], "superseded": None, "model_changed": None}
    assert answers["toolu_yes"]["approval"]["outcome"] == "allowed_once"
    # asked once: nothing superseded
    assert "superseded_approvals" not in answers["toolu_yes"]
    assert detail["delegations"][1]["superseded_approvals"] == []


async def test_a_question_asked_again_keeps_the_first_marked_superseded(
        vscode_editor: tuple[SwitchmanClient, ToolEditor], daemon: Daemon,
        fake: FakeProvider) -> None:
    """routing.yaml changed while a delegation's question waited, so the user was asked again
    about the new model. Both questions were shown live; the session kept only the second, so a
    reopened chat lost the first. It keeps both: the first marked as superseded, and why."""
    vscode, editor = vscode_editor
    tiers = "global_default: opus\ntiers: {fast: %s, balanced: sonnet, deep: opus}\n"
    daemon.write_routing(tiers % "haiku")

    def save_routing_yaml(_request: dict[str, Any]) -> None:
        if len(editor.approvals) == 1:  # the user edits it while the first card is shown
            daemon.write_routing(tiers % "sonnet")

    editor.while_asked = save_routing_yaml
    fake.script_tool_calls([delegate("toolu_w", task="rename f to g",
                                     allowed_tools=["read_file", "edit_file"])], model=OPUS_API)
    fake.script_text("renamed", model="claude-sonnet-4-6")
    fake.script_text("done", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus rename f")
    assert (result["status"], result["text"]) == ("completed", "done")
    first, second = editor.approvals
    sonnet = "anthropic:claude-sonnet-4-6"
    assert (first["model"], second["model"]) == (HAIKU, sonnet)
    # the question asked again says why as it is shown (the first's note came with the result only)
    # in the models' short names, as the editors show them (the full ids: the questions' models)
    why = "the model changed from haiku to sonnet while the question waited"
    assert (first["asked_again"], second["asked_again"]) == (None, why)
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    (record,) = detail["delegations"]
    assert (record["model"], record["approval"]["id"], record["approval"]["superseded"]) == (
        sonnet, second["id"], None)
    title = "Delegate to a fast worker that may change files"
    assert record["superseded_approvals"] == [{
        "id": first["id"], "title": title, "outcome": "allowed_once", "reason": None,
        "command": None, "cwd": None, "path": None, "diff": None, "tier": "fast",
        "requested_tier": None, "model": HAIKU, "routed_by": None, "worker_tools": ["edit_file"],
        "superseded": why, "model_changed": None}]
    # the planner's call reads both where it reads its question: the earlier one first
    answer = tool_results(detail)["toolu_w"]
    assert answer["approval"] == record["approval"]
    assert answer["superseded_approvals"] == record["superseded_approvals"]
    # and the chat was shown the same with the call's result, live
    (live,) = [d["tool"] for d in deltas(vscode, result["turn_id"], "tool_result")]
    assert (live["approval"], live["superseded_approvals"]) == (
        record["approval"], record["superseded_approvals"])


async def test_an_always_answer_says_the_worker_ran_on_another_model(
        vscode_editor: tuple[SwitchmanClient, ToolEditor], daemon: Daemon,
        fake: FakeProvider) -> None:
    """"Always allow" asks no more: routing.yaml changed while the question (naming haiku)
    waited, the worker ran on sonnet, and the only question recorded named haiku with nothing
    saying otherwise. Its record says the model changed; the worker's updates name sonnet."""
    vscode, editor = vscode_editor
    tiers = "global_default: opus\ntiers: {fast: %s, balanced: sonnet, deep: opus}\n"
    daemon.write_routing(tiers % "haiku")
    editor.default = {"decision": "allow_always"}
    editor.while_asked = lambda _request: daemon.write_routing(tiers % "sonnet")
    fake.script_tool_calls([delegate("toolu_w", task="rename f to g",
                                     allowed_tools=["read_file", "edit_file"])], model=OPUS_API)
    fake.script_text("renamed", model="claude-sonnet-4-6")
    fake.script_text("done", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus rename f")
    (asked,) = editor.approvals
    assert asked["model"] == HAIKU
    why = "the model changed from haiku to sonnet while the question waited"
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    (record,) = detail["delegations"]
    assert (record["model"], record["approval"]["model"]) == ("anthropic:claude-sonnet-4-6", HAIKU)
    assert (record["approval"]["model_changed"], record["superseded_approvals"]) == (why, [])
    (live,) = [d["tool"] for d in deltas(vscode, result["turn_id"], "tool_result")]
    assert live["approval"] == tool_results(detail)["toolu_w"]["approval"] == record["approval"]
    assert {u["model"] for u in updates(vscode, "toolu_w") if u.get("model")} == {
        "anthropic:claude-sonnet-4-6"}


async def test_a_workers_questions_come_with_its_planners_session(
        vscode_editor: tuple[SwitchmanClient, ToolEditor], daemon: Daemon,
        fake: FakeProvider) -> None:
    """A rebuilt chat shows a worker's questions in its planner's turn, as the live one did:
    the planner's session hands them over with the delegation (the worker's results keep them)."""
    vscode, editor = vscode_editor
    editor.answers += [{"decision": "allow_once"}, {"decision": "deny", "reason": "not now"}]
    fake.script_tool_calls([delegate("toolu_w", task="bump the answer",
                                     allowed_tools=["read_file", "edit_file"])], model=OPUS_API)
    fake.script_tool_call("edit_file", {"path": "src/app.py", "old_text": "return 42",
                                        "new_text": "return 43"}, id="toolu_e",
                          model=HAIKU_API)
    fake.script_text("left it", model=HAIKU_API)
    fake.script_text("the worker was told no", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus bump it")
    assert result["text"] == "the worker was told no"
    start, edit = editor.approvals
    assert edit["is_worker"]
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    (record,) = detail["delegations"]
    assert record["approvals"] == [{
        "id": edit["id"], "title": "Edit src/app.py", "outcome": "denied", "reason": "not now",
        "command": None, "cwd": None, "path": "src/app.py",
        "diff": edit["diff"], "tier": None, "requested_tier": None, "model": None,
        # the diff its card showed
        "routed_by": None, "worker_tools": None, "superseded": None, "model_changed": None}]
    # the planner's own question (the delegation's start) stays with its call's result
    assert tool_results(detail)["toolu_w"]["approval"]["id"] == start["id"]


async def test_a_queued_delegation_asked_about_is_listed_so_and_never_started_once_killed(
        daemon: Daemon, fake: FakeProvider) -> None:
    """A call that waited for a slot and whose start is then asked about was listed by
    switchman/session (what a reloaded chat draws) as still queued. It is listed as awaiting
    approval; and once its daemon is killed there, as never started, like a queued one."""
    daemon.write_routing("global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    tools = ["read_file", "edit_file"]
    fake.script_tool_calls([delegate(f"toolu_{n}", allowed_tools=tools) for n in (1, 2)],
                           model=OPUS_API)
    fake.script_text("first done", model=HAIKU_API)
    client = await start("neovim", daemon)
    editor = ToolEditor(client)
    editor.answers.extend([{"decision": "allow_once"}, NEVER])  # the second is never answered
    pending = asyncio.ensure_future(chat(client, daemon, "@opus two, one at a time"))
    asked = await client.wait_for(methods.DELEGATION, lambda u: u["tool_use_id"] == "toolu_2"
                                  and u["phase"] == "awaiting_approval")
    detail = await client.request(methods.SESSION, {"session_id": asked["session_id"]})
    assert [(r["tool_use_id"], r["status"], r["detail"]) for r in detail["delegations"]] == [
        ("toolu_1", "completed", None),
        ("toolu_2", "awaiting_approval", "waiting for your approval to start")]
    assert (detail["delegations"][1]["worker_session_id"], detail["delegations"][1]["model"]
            ) == ("", None)
    await kill_9(client, pending)
    restarted = await start("neovim", daemon)
    try:
        detail = await restarted.request(methods.SESSION, {"session_id": asked["session_id"]})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    lost = detail["delegations"][1]
    assert (lost["tool_use_id"], lost["status"], lost["error"], lost["model"]) == (
        "toolu_2", "failed", "interrupted", None)
    assert "waited for your approval to start; it never started" in lost["detail"]
    assert [r.model for r in fake.requests].count(HAIKU_API) == 1


async def test_a_tier_with_no_usable_model_fails_the_delegation_only(
        daemon: Daemon, fake: FakeProvider) -> None:
    # No OpenAI key, and every tier names an OpenAI model: the tier upgrade (fast ->
    # balanced -> deep) finds nothing and the worker may not fall back to a default, so
    # the call fails and the planner carries on.
    daemon.write_routing("global_default: opus\n"
                         "tiers: {fast: gpt-5-mini, balanced: gpt-5, deep: gpt-5}\n")
    env = {k: v for k, v in daemon.env.items() if k != "OPENAI_API_KEY"}
    fake.script_tool_calls([delegate("toolu_none", allowed_tools=["read_file"])],
                           model=OPUS_API)
    fake.script_text("I will do it myself.", model=OPUS_API)
    async with running_server("visual-studio-code", env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        result = await chat(client, daemon, "@opus hand this off")
        assert result["status"] == "completed"
        detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
        answer = tool_results(detail)["toolu_none"]
        assert answer["is_error"], answer
        # the error is the failure mode itself (spec 000 §6.6, protocol.md), as the editors
        # read it; it used to be "no model available for tier fast: …", which no client (nor
        # the /delegate command's error code) recognised. What was tried is the detail.
        assert answer["content"].startswith(
            "delegate failed: no_model_available_for_tier\n\n"
            "no model available for tier fast: ")
        ended = [u for u in updates(client, "toolu_none") if u["phase"] == "ended"]
        assert (ended[-1]["status"], ended[-1]["error"]) == (
            "failed", "no_model_available_for_tier")
        assert ended[-1]["detail"].startswith("no model available for tier fast: ")
        # routed before it would start: no worker session is made for it
        (stored,) = detail["delegations"]
        assert (stored["tool_use_id"], stored["status"], stored["tier"], stored["model"]) == (
            "toolu_none", "failed", "fast", None)
        assert stored["error"] == "no_model_available_for_tier"
        assert stored["detail"] == ended[-1]["detail"]
        assert stored["worker_session_id"] == ended[-1]["worker_session_id"] == ""
        assert detail["session"]["workers"] == []
    assert [r.model for r in fake.requests] == [OPUS_API, OPUS_API]


async def test_allowed_tools_naming_no_tool_is_an_argument_to_correct(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A misspelt tool in ``allowed_tools`` used to be narrowed away in silence: the worker
    started without the tool the planner meant to give it. It is an error the planner can
    correct; a real tool (even one no worker gets) is still accepted."""
    daemon.write_routing("global_default: opus\n")
    fake.script_tool_calls([delegate("toolu_typo", allowed_tools=["read_fle", "grep"]),
                            delegate("toolu_ok", allowed_tools=["read_file", "delegate"])],
                           model=OPUS_API)
    fake.script_text("read it", model=HAIKU_API)
    fake.script_text("done", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus hand this off")
    assert result["status"] == "completed"
    answers = tool_results(await vscode.request(methods.SESSION,
                                                {"session_id": result["session_id"]}))
    typo = answers["toolu_typo"]
    assert typo["is_error"] and typo["content"].startswith(
        "delegate refused: 'allowed_tools' names no tool called 'read_fle'; your tools are ")
    assert "read_file" in typo["content"] and "delegate," not in typo["content"]
    assert updates(vscode, "toolu_typo") == []  # no worker was started for it
    assert answers["toolu_ok"] == {**answers["toolu_ok"], "is_error": False, "content": "read it"}
    assert [r.model for r in fake.requests] == [OPUS_API, HAIKU_API, OPUS_API]


async def test_a_refused_delegate_call_is_recorded_and_says_which_tools_the_worker_lacks(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """``allowed_tools`` naming only tools the worker's profile does not permit started a
    worker with no tools and the planner never learned why; a refused call left no
    ``delegate.*`` event. Now the call is refused, naming the tools, and recorded."""
    daemon.write_routing("global_default: opus\n")
    (daemon.config / "profiles.yaml").write_text(
        "profiles:\n  reader:\n    tools: [read_file, grep]\n", "utf-8")
    fake.script_tool_calls([delegate("toolu_none", allowed_tools=["edit_file"],
                                     profile="reader"),
                            delegate("toolu_some", allowed_tools=["read_file", "edit_file"],
                                     profile="reader")], model=OPUS_API)
    fake.script_text("read it", model=HAIKU_API)
    fake.script_text("done", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus hand this off")
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    assert updates(vscode, "toolu_none") == []  # no worker, no card
    answers = tool_results(detail)
    assert answers["toolu_none"]["is_error"] and answers["toolu_none"]["content"].startswith(
        "delegate refused: 'allowed_tools' leaves the worker none of the tools you named: "
        "edit_file (the worker's profile 'reader' does not permit it). The worker could have "
        "grep, read_file;")
    assert answers["toolu_some"]["content"] == (
        "read it\n\n[The worker did not have these tools you named: edit_file (the worker's "
        "profile 'reader' does not permit it).]")
    assert [d["tool_use_id"] for d in detail["delegations"]] == ["toolu_some"]
    with sqlite3.connect(daemon.data / "switchman.db") as db:
        rows = db.execute("SELECT type, turn_id, payload FROM events WHERE type LIKE "
                          "'delegate.%' ORDER BY id").fetchall()
    refused = [(kind, turn, json.loads(p)) for kind, turn, p in rows
               if json.loads(p)["tool_use_id"] == "toolu_none"]
    assert [(kind, turn, p["failure_mode"], p["worker_session_id"], p["tier"])
            for kind, turn, p in refused] == [
        ("delegate.failed", result["turn_id"], "invalid_arguments", "", "fast")]


async def test_an_output_schema_whose_ref_leads_nowhere_is_an_argument_to_correct(
        vscode: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A schema whose ``$ref`` cannot be resolved (a pointer to nothing, a remote schema,
    which is never fetched) passed the schema check: the worker ran and was paid, then
    checking its answer raised, and the planner's whole turn failed as an internal error.
    It is refused before any worker starts, as any schema that is not a schema is."""
    daemon.write_routing("global_default: opus\n")
    nowhere = {"type": "object", "properties": {"n": {"$ref": "#/$defs/count"}}}
    remote = {"$ref": "https://example.com/schemas/count.json"}
    usable = {"$defs": {"count": {"type": "integer"}}, "type": "object",
              "properties": {"n": {"$ref": "#/$defs/count"}}, "required": ["n"]}
    fake.script_tool_calls([delegate("toolu_nowhere", output_schema=nowhere,
                                     allowed_tools=["read_file"]),
                            delegate("toolu_remote", output_schema=remote,
                                     allowed_tools=["read_file"]),
                            delegate("toolu_usable", output_schema=usable,
                                     allowed_tools=["read_file"])], model=OPUS_API)
    fake.script_text('{"n": 3}', model=HAIKU_API)
    fake.script_text("done", model=OPUS_API)
    result = await chat(vscode, daemon, "@opus hand this off")
    assert result["status"] == "completed", result["error"]
    detail = await vscode.request(methods.SESSION, {"session_id": result["session_id"]})
    answers = tool_results(detail)
    assert answers["toolu_nowhere"]["content"].startswith(
        "delegate refused: 'output_schema' has a $ref that leads nowhere: '#/$defs/count'")
    assert answers["toolu_remote"]["content"].startswith(
        "delegate refused: 'output_schema' has a $ref that leads nowhere: "
        "'https://example.com/schemas/count.json'")
    assert answers["toolu_usable"]["content"] == '{"n": 3}'
    assert [d["tool_use_id"] for d in detail["delegations"]] == ["toolu_usable"]
    assert [r.model for r in fake.requests].count(HAIKU_API) == 1
