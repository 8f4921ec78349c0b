"""Several real daemons on one data folder, as with several editor windows open at once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from switchman.engine.messages import TextBlock
from switchman.engine.store.repository import SessionStore
from switchman.engine.tokens import estimate_messages, estimate_text
from switchman.server import methods
from tests.lsp.conftest import Daemon, error_data
from tests.lsp.test_delegation import HAIKU_API, OPUS_API, delegate
from tests.lsp.test_sessions_and_commands import start
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider, Usage
from tests.support.lsp import SwitchmanClient, kill_9


async def chat(client: SwitchmanClient, daemon: Daemon, message: str,
               session_id: str | None = None) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message,
                                               "session_id": session_id})


async def stalled_turn(client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
                       session_id: str | None = None) -> tuple[asyncio.Future[Any], str, str]:
    """Start a turn that stays running; returns the pending chat, its session and turn ids."""
    stall = fake.script_stall("working", after_chunks=1)
    pending = asyncio.ensure_future(chat(client, daemon, "a long job", session_id))
    assert await stall.wait_reached_async()
    delta = await client.wait_for(methods.CHAT_DELTA, lambda d: d.get("text") == "working"
                                  and d["session_id"] == (session_id or d["session_id"]))
    return pending, delta["session_id"], delta["turn_id"]


async def turns(client: SwitchmanClient, session_id: str) -> list[tuple[int, str]]:
    detail = await client.request(methods.SESSION, {"session_id": session_id})
    return [(t["index"], t["status"]) for t in detail["turns"]]


async def two_windows(daemon: Daemon) -> tuple[SwitchmanClient, SwitchmanClient]:
    """Two editor windows on the workspace (VS Code's, Neovim's), each with its own daemon,
    which look for the other's changes every 0.05 s."""
    daemon.env["SWITCHMAN_SESSION_POLL_SECONDS"] = "0.05"
    return await start("visual-studio-code", daemon), await start("neovim", daemon)


async def stop(*clients: SwitchmanClient) -> None:
    for client in clients:
        await client.shutdown_session()
        await client.stop()


async def test_daemons_share_one_database_and_only_a_dead_ones_turns_end(
        daemon: Daemon, fake: FakeProvider) -> None:
    first = await start("visual-studio-code", daemon)
    second = await start("neovim", daemon)
    try:
        running_first, shared, first_turn = await stalled_turn(first, daemon, fake)

        # The turn lock is in the database: another daemon cannot run a turn of that session.
        with pytest.raises(JsonRpcException) as caught:
            await chat(second, daemon, "me too", shared)
        assert (caught.value.code, error_data(caught.value)["turn_id"]) == (1007, first_turn)

        own = (await second.request(methods.NEW_SESSION, {"workspace": daemon.uri}))["session"]
        running_second, _, _ = await stalled_turn(second, daemon, fake, own["id"])

        # A daemon starting later leaves the live daemons' running turns alone.
        third = await start("visual-studio-code", daemon)
        assert await turns(third, shared) == [(1, "running")]
        assert await turns(third, own["id"]) == [(1, "running")]

        await kill_9(first, running_first)

        # Its turn is interrupted when another daemon needs the session; the next turn is 2.
        fake.script_text("picked up")
        result = await chat(third, daemon, "carry on", shared)
        assert result["status"] == "completed"
        assert await turns(third, shared) == [(1, "interrupted"), (2, "completed")]
        assert await turns(third, own["id"]) == [(1, "running")]  # the live daemon's turn

        fake.release_stalls()
        assert (await running_second)["status"] == "completed"
        assert await turns(third, own["id"]) == [(1, "completed")]

        # The second daemon had the session in memory from before: it continues from the
        # whole transcript, the third daemon's turn included, and numbers its turn 3.
        fake.script_text("all caught up")
        assert (await chat(second, daemon, "and now?", shared))["status"] == "completed"
        assert "picked up" in str(fake.requests[-1].body["messages"])
        assert await turns(third, shared) == [(1, "interrupted"), (2, "completed"),
                                              (3, "completed")]
        await stop(third)
    finally:
        fake.release_stalls()
        await stop(second)


async def test_a_daemon_started_after_a_crash_interrupts_the_dead_daemons_turn(
        daemon: Daemon, fake: FakeProvider) -> None:
    survivor = await start("neovim", daemon)
    doomed = await start("visual-studio-code", daemon)
    try:
        _, survivor_session, _ = await stalled_turn(survivor, daemon, fake)
        own = (await doomed.request(methods.NEW_SESSION, {"workspace": daemon.uri}))["session"]
        pending, doomed_session, _ = await stalled_turn(doomed, daemon, fake, own["id"])
        await kill_9(doomed, pending)

        newcomer = await start("neovim", daemon)  # its start-up sweep
        assert await turns(newcomer, doomed_session) == [(1, "interrupted")]
        assert await turns(newcomer, survivor_session) == [(1, "running")]
        await stop(newcomer)
    finally:
        fake.release_stalls()
        await stop(survivor)


async def test_a_turn_is_stopped_only_by_its_own_daemon_and_another_says_where_it_runs(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Each editor window has its own daemon: a stop sent to the wrong one says so."""
    runner = await start("visual-studio-code", daemon)
    other = await start("neovim", daemon)
    try:
        pending, session_id, turn_id = await stalled_turn(runner, daemon, fake)

        with pytest.raises(JsonRpcException) as caught:
            await other.request(methods.CANCEL, {"turn_id": turn_id})
        assert caught.value.code == 1014
        assert error_data(caught.value) == {"code": "turn_elsewhere", "turn_id": turn_id}
        assert "another editor window" in caught.value.message
        assert await turns(other, session_id) == [(1, "running")]  # untouched

        # Its own daemon stops it.
        assert await runner.request(methods.CANCEL, {"turn_id": turn_id}) == {
            "cancelled": True, "status": "cancelled"}
        assert (await pending)["status"] == "cancelled"

        # Once its daemon is gone, a stop elsewhere reports the turn as interrupted.
        stall = fake.script_stall("again", after_chunks=1)
        pending = asyncio.ensure_future(chat(runner, daemon, "once more", session_id))
        assert await stall.wait_reached_async()
        turn_id = (await runner.wait_for(methods.CHAT_DELTA,
                                         lambda d: d.get("text") == "again"))["turn_id"]
        await kill_9(runner, pending)
        assert await other.request(methods.CANCEL, {"turn_id": turn_id}) == {
            "cancelled": False, "status": "interrupted"}
    finally:
        fake.release_stalls()
        await stop(other)


async def test_a_stop_sent_to_a_turn_whose_start_lost_the_race_answers(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Two windows' daemons start a turn in one session at once and this one's start loses
    (the other recorded its turn first). Its turn never starts, and a stop sent meanwhile —
    with the id this daemon's own turn_in_progress named — answers, instead of failing with
    the other daemon's turn_in_progress."""
    winner = await start("visual-studio-code", daemon)
    loser = await start("neovim", daemon)
    try:
        _, session_id, their_turn = await stalled_turn(winner, daemon, fake)
        stall = fake.script_stall(before_headers=True)  # the loser's request: no answer yet
        pending = asyncio.ensure_future(chat(loser, daemon, "mine too", session_id))
        assert await stall.wait_reached_async()
        with pytest.raises(JsonRpcException) as busy:  # a second message in that window
            await chat(loser, daemon, "and this", session_id)
        mine = error_data(busy.value)["turn_id"]
        assert busy.value.code == 1007 and mine != their_turn  # its own turn, not started

        assert await loser.request(methods.CANCEL, {"turn_id": mine}) == {
            "cancelled": True, "status": "cancelled"}
        with pytest.raises(JsonRpcException) as lost:
            await pending
        assert (lost.value.code, error_data(lost.value)["turn_id"]) == (1007, their_turn)
        assert await turns(loser, session_id) == [(1, "running")]  # the winner's, untouched
    finally:
        fake.release_stalls()
        await stop(winner, loser)


async def test_a_sticky_model_or_profile_set_in_one_window_applies_in_the_other(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Both windows have the session loaded; one sets /model and a profile: the other's
    next turn uses them (it used to route with what it had in memory, and its own /model
    reported no sticky model)."""
    first = await start("visual-studio-code", daemon)
    second = await start("neovim", daemon)
    try:
        fake.script_text("one")
        session_id = (await chat(first, daemon, "hello"))["session_id"]
        fake.script_text("two")
        assert (await chat(second, daemon, "hello again", session_id))["model"] == \
            "anthropic:claude-sonnet-4-6"  # the second window has it loaded now

        assert "Sticky model set" in (await chat(first, daemon, "/model haiku",
                                                 session_id))["text"]
        await first.request(methods.SET_PROFILE, {"workspace": daemon.uri,
                                                  "session_id": session_id,
                                                  "profile": "subagent"})
        fake.script_text("three")
        result = await chat(second, daemon, "and now?", session_id)
        assert (result["model"], result["summary"]) == ("anthropic:claude-haiku-4-5",
                                                        "sticky model")
        decided = await second.wait_for(methods.ROUTE_DECIDED,
                                        lambda d: d["turn_id"] == result["turn_id"])
        assert decided["decision"]["profile"] == {"name": "subagent",
                                                  "resolved_from": "session"}

        # Cleared in the second window: the first follows the rules again.
        assert "cleared" in (await chat(second, daemon, "/model -", session_id))["text"]
        fake.script_text("four")
        assert (await chat(first, daemon, "last one", session_id))["summary"] == \
            "global default"
    finally:
        await stop(first, second)


async def test_the_last_sticky_model_request_wins_across_windows(
        daemon: Daemon, fake: FakeProvider) -> None:
    """A /model queued in the window whose turn runs, then another set in the other window:
    the other window's, the later one, is in force after the turn (the queued swap was
    applied as the turn ended and undid it). Queued after the other window's, it wins."""
    first = await start("visual-studio-code", daemon)
    second = await start("neovim", daemon)
    try:
        fake.script_text("one")
        session_id = (await chat(first, daemon, "hello"))["session_id"]

        async def during_a_turn_of_the_first(*requests: tuple[SwitchmanClient, str]) -> None:
            pending, _, _ = await stalled_turn(first, daemon, fake, session_id)
            for client, model in requests:
                await client.request(methods.SET_MODEL, {"workspace": daemon.uri,
                                                         "session_id": session_id,
                                                         "model": model})
            fake.release_stalls()
            assert (await pending)["status"] == "completed"

        async def next_model() -> str:
            fake.script_text("next")
            return str((await chat(second, daemon, "next", session_id))["model"])

        await during_a_turn_of_the_first((first, "opus"), (second, "haiku"))
        assert await next_model() == "anthropic:claude-haiku-4-5"
        await during_a_turn_of_the_first((second, "sonnet"), (first, "opus"))
        assert await next_model() == "anthropic:claude-opus-4-7"
    finally:
        fake.release_stalls()
        await stop(first, second)


async def test_a_sticky_model_set_while_another_windows_turn_runs_says_it_waits(
        daemon: Daemon, fake: FakeProvider) -> None:
    """/model in one window while the other window's turn runs in the session: the change
    waits for that turn (which keeps its model) but was answered "Sticky model set" and
    ``applied``, as if the running turn had taken it (the editors' pickers say "set" for
    ``applied``). It is ``queued``, as behind a turn of this window. Once no turn runs, it
    is set at once as before."""
    first = await start("visual-studio-code", daemon)
    second = await start("neovim", daemon)
    try:
        fake.script_text("one")
        session_id = (await chat(first, daemon, "hello"))["session_id"]
        pending, _, _ = await stalled_turn(first, daemon, fake, session_id)
        assert (await chat(second, daemon, "/model haiku", session_id))["text"] == (
            "Model swap pending: anthropic:claude-haiku-4-5. Applies to next turn: the turn "
            "running in another window keeps its model. Your rules are skipped from then until "
            "you run /model -.")
        picked = await second.request(methods.SET_MODEL, {"workspace": daemon.uri,
                                                          "session_id": session_id,
                                                          "model": "opus"})
        assert (picked["outcome"], picked["sticky_model"], picked["pending_swap"]) == (
            "queued", "anthropic:claude-opus-4-7", {"model": "anthropic:claude-opus-4-7"})
        cleared = await second.request(methods.SET_MODEL, {"workspace": daemon.uri,
                                                           "session_id": session_id,
                                                           "model": None})
        assert (cleared["outcome"], cleared["pending_swap"], cleared["message"]) == (
            "queued", {"model": None}, "Sticky model will be cleared. Applies to next turn: "
            "the turn running in another window keeps its model.")
        fake.release_stalls()
        assert (await pending)["model"] == "anthropic:claude-sonnet-4-6"
        assert (await chat(second, daemon, "/model haiku", session_id))["text"].startswith(
            "Sticky model set: anthropic:claude-haiku-4-5. ")
    finally:
        fake.release_stalls()
        await stop(first, second)


async def test_an_interrupted_turn_keeps_what_its_calls_were_charged(
        daemon: Daemon, fake: FakeProvider) -> None:
    """A turn whose first call finished (charged to the ledger) and whose second call was
    streaming when its daemon was killed: its usage and cost are the first call's plus an
    estimate of the cut-off call, as a cancel would have charged it (input: the estimate its
    ``llm.call_started`` mark kept of the request; output: its saved text), so the turns add
    up to the session's cost (they used to say $0 and 0 calls, and then left the cut-off call
    out)."""
    doomed = await start("neovim", daemon)
    fake.script_tool_call("read_file", {"path": "src/app.py"}, text=["Reading. "],
                          usage=Usage(input_tokens=1000, output_tokens=200))
    pending, session_id, turn_id = await stalled_turn(doomed, daemon, fake)
    await kill_9(doomed, pending)
    fake.release_stalls()

    restarted = await start("neovim", daemon)
    try:
        detail = await restarted.request(methods.SESSION, {"session_id": session_id})
        (turn,) = detail["turns"]
        assert turn["status"] == "interrupted"
        with sqlite3.connect(daemon.data / "switchman.db") as db:
            db.row_factory = sqlite3.Row
            transcript = SessionStore(db).messages(session_id)
            ledger = [tuple(row) for row in db.execute(
                "SELECT input_tokens, output_tokens, cost_micros FROM cost_ledger WHERE "
                "turn_id = ? ORDER BY id", (turn_id,))]
            events = [json.loads(p) for (p,) in db.execute(
                "SELECT payload FROM events WHERE turn_id = ? AND type = "
                "'llm.call_completed' ORDER BY id", (turn_id,))]
            marks = [json.loads(p)["input_tokens"] for (p,) in db.execute(
                "SELECT payload FROM events WHERE turn_id = ? AND type = "
                "'llm.call_started' ORDER BY id", (turn_id,))]
        assert transcript[-1].role == "assistant" and \
            transcript[-1].content == [TextBlock("working")]
        assert len(marks) == 2
        sent = marks[-1]  # the system prompt and tools, and user, "Reading. " + call, result
        assert sent > estimate_messages(transcript[:-1])
        assert ledger == [(1000, 200, 6000), (sent, estimate_text("working"),
                                              sent * 3 + estimate_text("working") * 15)]
        assert [e.get("estimated", False) for e in events] == [False, True]
        assert (turn["usage"]["input_tokens"], turn["usage"]["output_tokens"],
                turn["llm_calls"]) == (1000 + sent, 200 + estimate_text("working"), 2)
        total = sum(row[2] for row in ledger)
        assert turn["cost_usd"] == detail["session"]["cost_usd"] == f"{total / 1e6:.6f}"
        assert turn["estimated_usd"] == detail["session"]["estimated_usd"] == \
            f"{ledger[1][2] / 1e6:.6f}"
    finally:
        await stop(restarted)


@pytest.mark.parametrize("model", ["sonnet", "gpt-5"])
async def test_a_call_killed_before_any_text_is_charged_once_as_an_estimate(
        daemon: Daemon, fake: FakeProvider, model: str) -> None:
    """The daemon is killed (kill -9) while the provider works on the request, before any
    answer came back, so nothing of the call was saved but its ``llm.call_started`` mark:
    the next daemon charges the request's input estimate (the provider bills it), marked
    estimated, once, though two daemons look (it used to cost nothing)."""
    doomed = await start("neovim", daemon)
    stall = fake.script_stall("never", before_headers=True)
    pending = asyncio.ensure_future(chat(doomed, daemon, f"@{model} a long job"))
    assert await stall.wait_reached_async()
    decided = await doomed.wait_for(methods.ROUTE_DECIDED)
    session_id, turn_id = decided["session_id"], decided["turn_id"]
    # The mark is written in the pass of the daemon's loop that sends the routing notice;
    # a request answered after that notice is handled in a later pass.
    await doomed.request(methods.SESSION, {"session_id": session_id})
    await kill_9(doomed, pending)
    fake.release_stalls()

    first, second = await start("neovim", daemon), await start("visual-studio-code", daemon)
    try:
        detail = await first.request(methods.SESSION, {"session_id": session_id})
        await second.request(methods.SESSION, {"session_id": session_id})
        (turn,) = detail["turns"]
        assert turn["status"] == "interrupted"
        with sqlite3.connect(daemon.data / "switchman.db") as db:
            (mark,) = [json.loads(p) for (p,) in db.execute(
                "SELECT payload FROM events WHERE turn_id = ? AND type = 'llm.call_started'",
                (turn_id,))]
            ledger = [tuple(row) for row in db.execute(
                "SELECT input_tokens, output_tokens, cost_micros, estimated FROM cost_ledger "
                "WHERE turn_id = ?", (turn_id,))]
        assert mark["input_tokens"] > 100  # the system prompt and tools are counted
        (row,) = ledger
        assert row[:2] == (mark["input_tokens"], 0) and row[2] > 0 and row[3] == 1
        cost = f"{row[2] / 1e6:.6f}"
        assert (turn["usage"]["input_tokens"], turn["llm_calls"]) == (row[0], 1)
        assert turn["cost_usd"] == turn["estimated_usd"] == cost
        assert detail["session"]["cost_usd"] == detail["session"]["estimated_usd"] == cost
        assert detail["cost"]["total_usd"] == detail["cost"]["estimated_usd"] == cost
    finally:
        await stop(first, second)


async def test_another_windows_turn_and_model_reach_this_editor(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Two editor windows on one workspace share its current session: what one window sends,
    or the sticky model it sets, is announced to the other (``switchman/sessionChanged`` and
    ``switchman/status``), whose editor then fetches the transcript with that turn in it."""
    daemon.env["SWITCHMAN_SESSION_POLL_SECONDS"] = "0.05"
    first = await start("visual-studio-code", daemon)
    second = await start("neovim", daemon)
    try:
        fake.script_text("the answer for window one")
        result = await chat(first, daemon, "hello from window one")
        shared = result["session_id"]

        await second.wait_for(methods.SESSION_CHANGED, lambda p: p["session_id"] == shared
                              and p["workspace"] == daemon.uri)
        detail = await second.request(methods.SESSION, {"session_id": shared})
        texts = str([m["content"] for m in detail["messages"]])
        assert "hello from window one" in texts and "the answer for window one" in texts

        # And the other way round.
        fake.script_text("the answer for window two")
        assert (await chat(second, daemon, "and from window two"))["session_id"] == shared
        await first.wait_for(methods.SESSION_CHANGED, lambda p: p["session_id"] == shared)
        announced = len(second.received[methods.SESSION_CHANGED])

        # A sticky model set in the first window shows in the second window's status bar.
        swap = await first.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "opus"})
        status = await second.wait_for(methods.STATUS,
                                       lambda s: s["sticky_model"] == swap["sticky_model"])
        assert status["session_id"] == shared
        await second.wait_until(lambda: second.received[methods.SESSION_CHANGED][announced:])

        # Set while the first window's own turn runs: its status bar shows it at once too.
        pending, _, _ = await stalled_turn(first, daemon, fake, shared)
        swap = await second.request(methods.SET_MODEL, {"workspace": daemon.uri,
                                                        "model": "haiku"})
        await first.wait_for(methods.STATUS, lambda s: s["turn_in_flight"]
                             and s["sticky_model"] == swap["sticky_model"])
        # And so is a profile chosen there meanwhile (the running turn keeps its own).
        chosen = await second.request(methods.SET_PROFILE, {"workspace": daemon.uri,
                                                            "profile": "subagent"})
        assert chosen["profile"] == {"name": "subagent", "resolved_from": "session"}
        await first.wait_for(methods.STATUS, lambda s: s["turn_in_flight"]
                             and s["profile"] == chosen["profile"])
        fake.release_stalls()
        assert (await pending)["status"] == "completed"
        await first.wait_for(methods.STATUS, lambda s: not s["turn_in_flight"]
                             and s["sticky_model"] == swap["sticky_model"]
                             and s["profile"] == chosen["profile"])
    finally:
        fake.release_stalls()
        await stop(first, second)


async def test_a_rating_given_in_one_window_reaches_the_other(
        daemon: Daemon, fake: FakeProvider) -> None:
    """A 👍/👎 given, changed or taken back in one window is announced to the other
    (``switchman/sessionChanged``), whose editor then fetches the session with it in its
    ``ratings``; it is not announced back to the window that gave it. (The ratings live in
    the pattern store, not in the sessions database: nothing was announced, and the other
    window showed the old rating until it was redrawn for something else.) That it is not
    announced back is checked step by step in tests/engine/test_shared_session_watch.py."""
    first, second = await two_windows(daemon)
    try:
        fake.script_text("an answer to rate")
        result = await chat(first, daemon, "hello from window one")
        shared, turn_id = result["session_id"], result["turn_id"]

        def announced(client: SwitchmanClient) -> int:
            return len(client.received[methods.SESSION_CHANGED])

        # The window that ran the turn rates first: the other window may be told of the turn
        # more than once (while it ran, once it ended), all before it is told of the rating.
        for rater, other, rating in ((first, second, "up"), (second, first, "down"),
                                     (first, second, "none")):
            seen, own = announced(other), announced(rater)
            await rater.request(methods.FEEDBACK, {"turn_id": turn_id, "rating": rating})
            await other.wait_until(lambda: announced(other) > seen)  # noqa: B023
            assert other.received[methods.SESSION_CHANGED][-1] == {
                "workspace": daemon.uri, "session_id": shared}, rating
            ratings = (await other.request(methods.SESSION, {"session_id": shared}))["ratings"]
            assert ratings == ({} if rating == "none" else {turn_id: rating})
            assert announced(rater) == own, f"{rating}: announced back to the window that gave it"
    finally:
        await stop(first, second)


async def test_resuming_an_older_session_reaches_the_other_window_and_a_running_turn_goes_on(
        daemon: Daemon, fake: FakeProvider) -> None:
    """``switchman/resumeSession`` in one window makes the older session current in the other
    window too (``switchman/sessionChanged``); a turn running in the session left is neither
    refused nor stopped: it ends in its own session."""
    daemon.env["SWITCHMAN_SESSION_POLL_SECONDS"] = "0.05"
    first = await start("visual-studio-code", daemon)
    second = await start("neovim", daemon)
    try:
        fake.script_text("an old answer")
        old = (await chat(first, daemon, "an old question"))["session_id"]
        new = (await first.request(methods.NEW_SESSION, {"workspace": daemon.uri}))["session"]
        await second.wait_for(methods.SESSION_CHANGED, lambda p: p["session_id"] == new["id"])
        pending, running_in, _ = await stalled_turn(first, daemon, fake)
        assert running_in == new["id"]
        resumed = await first.request(methods.RESUME_SESSION, {"workspace": daemon.uri,
                                                               "session_id": old})
        assert resumed["session"]["id"] == old
        await second.wait_for(methods.SESSION_CHANGED, lambda p: p["session_id"] == old)
        await second.wait_for(methods.STATUS, lambda s: s["session_id"] == old)
        fake.release_stalls()
        finished = await pending
        assert (finished["status"], finished["session_id"]) == ("completed", new["id"])
        listing = await second.request(methods.SESSIONS, {"workspace": daemon.uri})
        assert listing["current_session_id"] == old  # the turn's end did not make its own current
    finally:
        fake.release_stalls()
        await stop(first, second)


async def test_stopping_one_delegation_from_another_window_says_where_it_runs(
        daemon: Daemon, fake: FakeProvider) -> None:
    """A delegation's Stop (switchman/cancel with a tool_use_id) sent to the daemon of a
    window that shows the session but does not run its planner says where it runs, as a
    turn's Stop does, instead of answering that the delegation has ended while it waits for
    a worker slot in the other window; an unknown turn is named so."""
    daemon.write_routing("global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    runner = await start("visual-studio-code", daemon)
    ToolEditor(runner)
    other = await start("neovim", daemon)
    try:
        fake.script_tool_calls([delegate(f"toolu_{n}") for n in (1, 2)], model=OPUS_API)
        stall = fake.script_stall("x ", "never", after_chunks=1, model=HAIKU_API)
        pending = asyncio.ensure_future(chat(runner, daemon, "@opus two, one at a time"))
        assert await stall.wait_reached_async()
        queued = await runner.wait_for(methods.DELEGATION, lambda u: u["phase"] == "queued")
        planner = queued["turn_id"]
        for call in ("toolu_2", "toolu_1"):
            with pytest.raises(JsonRpcException) as caught:
                await other.request(methods.CANCEL, {"turn_id": planner, "tool_use_id": call})
            assert caught.value.code == 1014
            assert error_data(caught.value) == {"code": "turn_elsewhere", "turn_id": planner}
        with pytest.raises(JsonRpcException) as unknown:
            await other.request(methods.CANCEL, {"turn_id": "no-such-turn",
                                                 "tool_use_id": "toolu_2"})
        assert error_data(unknown.value)["code"] == "unknown_turn"
        # the runner's own daemon stops it
        assert await runner.request(methods.CANCEL, {"turn_id": planner,
                                                     "tool_use_id": "toolu_2"}) == {
            "cancelled": True, "status": "cancelled"}
        await runner.request(methods.CANCEL, {"turn_id": planner})
        assert (await pending)["status"] == "cancelled"
        # once the planner has ended, either window answers that the delegation has
        assert await other.request(methods.CANCEL, {"turn_id": planner,
                                                    "tool_use_id": "toolu_2"}) == {
            "cancelled": False, "status": "ended"}
    finally:
        fake.release_stalls()
        await stop(runner, other)
