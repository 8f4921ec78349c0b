"""Learning from outcomes end to end: recorded turns, 👍/👎, slot 4 firing, a restart."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from switchman.engine.learning import database
from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon, error_data
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider, ToolCall
from tests.support.lsp import (
    CLIENTS,
    SERVER_COMMAND,
    SwitchmanClient,
    client_capabilities,
    running_server,
)

HAIKU, SONNET = "anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6"
ROUTING = """schema_version: 1
global_default: haiku
rules: []
pattern: {cost_weight: 0.05, min_confidence: 0.05, min_sample_size: 3, neighbors: 10}
"""


async def chat(client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
               message: str) -> Any:
    fake.script_text("an answer")
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message})


async def rate(client: SwitchmanClient, turn_id: str, rating: str) -> Any:
    return await client.request(methods.FEEDBACK, {"turn_id": turn_id, "rating": rating})


async def refused_rating(client: SwitchmanClient, turn_id: str, rating: str,
                         code: int) -> JsonRpcException:
    """The error a rating is refused with (its JSON-RPC ``code`` checked)."""
    with pytest.raises(JsonRpcException) as caught:
        await rate(client, turn_id, rating)
    assert caught.value.code == code
    return caught.value


def fill_disk(path: Path) -> None:
    """Make every write to the pattern database ``path`` fail, as on a full disk."""
    disk = sqlite3.connect(path, isolation_level=None)
    for table in ("pattern_turns", "pattern_rescores"):
        for action in ("INSERT", "UPDATE"):
            disk.execute(f"CREATE TRIGGER full_{table}_{action} BEFORE {action} ON {table}"
                         " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    disk.close()


def decision_of(client: SwitchmanClient, turn_id: str) -> dict[str, Any]:
    notice = next(n for n in client.received[methods.ROUTE_DECIDED] if n["turn_id"] == turn_id)
    decision: dict[str, Any] = notice["decision"]
    return decision


def winner(decision: dict[str, Any]) -> dict[str, Any]:
    chosen: dict[str, Any] = decision["chain"][decision["winner_index"]]
    return chosen


@pytest.mark.parametrize("editor", CLIENTS)
async def test_slot_4_learns_from_rated_turns_and_survives_a_restart(
        editor: str, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing(ROUTING)
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        first = await chat(client, daemon, fake, "refactor the billing parser module")
        assert first["model"] == HAIKU
        assert winner(decision_of(client, first["turn_id"]))["reason"] == "global default"
        await rate(client, first["turn_id"], "down")
        for i in range(2):  # the user dislikes haiku's answers to this kind of request...
            turn = await chat(client, daemon, fake, f"refactor the billing parser part {i}")
            assert turn["model"] == HAIKU
            assert (await rate(client, turn["turn_id"], "down"))["success"] == 0.0
        for i in range(3):  # ...re-routes it to sonnet and likes that
            turn = await chat(client, daemon, fake, f"@sonnet refactor the billing parser step {i}")
            assert (await rate(client, turn["turn_id"], "up"))["success"] == 1.0
        liked = turn["turn_id"]
        learned = await chat(client, daemon, fake, "refactor the billing parser again")
        assert learned["model"] == SONNET
        chosen = winner(decision_of(client, learned["turn_id"]))
        assert chosen["policy"] == "PATTERN_RECOMMENDATION"
        assert chosen["sample_size"] == 3 and chosen["confidence"] > 0.5
        why = await client.request(methods.EXPLAIN, {"turn_id": learned["turn_id"]})
        assert f"also scored: {HAIKU}" in why["text"]
        stats = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                    "message": "/patterns"})
        assert f"{SONNET}: 4 turns" in stats["text"] and "refactor" not in stats["text"]
        same = await client.request(methods.CHAT, {"workspace": daemon.uri,  # as in the CLI
                                                   "message": "/patterns stats"})
        assert same["text"] == stats["text"]
        with pytest.raises(JsonRpcException) as caught:
            await rate(client, "no-such-turn", "up")
        assert error_data(caught.value)["code"] == "unknown_turn"
        assert "cannot be rated" in str(caught.value)  # not a bare "No turn": it may exist

    async with running_server(editor, daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as restarted:
        # The transcript a new editor window loads carries the ratings, for pressed buttons.
        detail = await restarted.request(methods.SESSION, {"session_id": first["session_id"]})
        ratings = detail["ratings"]
        assert (ratings[first["turn_id"]], ratings[liked]) == ("down", "up")
        assert learned["turn_id"] not in ratings and len(ratings) == 6
        again = await chat(restarted, daemon, fake, "refactor the billing parser once more")
        assert again["model"] == SONNET
        assert winner(decision_of(restarted, again["turn_id"]))["policy"] \
            == "PATTERN_RECOMMENDATION"
    assert b"billing" not in (daemon.data / "patterns.db").read_bytes()


async def test_a_second_window_learns_from_the_first_without_a_restart(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Two editor windows on one workspace, a daemon each, one data folder: the turns one
    window's daemon recorded after the other had read the workspace were not among the
    other's neighbours until it restarted; nor were the 👍/👎 given there later."""
    daemon.write_routing(ROUTING)
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as first, \
            running_server(CLIENTS[1], daemon.env, workspaces=[daemon.workspace],
                           listen=LISTEN) as second:
        await chat(second, daemon, fake, "write the release notes")  # it has read the store
        taught = []
        for i in range(3):  # the first window learns that sonnet does these well
            turn = await chat(first, daemon, fake, f"@sonnet refactor the billing parser {i}")
            await rate(first, turn["turn_id"], "up")
            taught.append(turn["turn_id"])
        learned = await chat(second, daemon, fake, "refactor the billing parser again")
        assert winner(decision_of(second, learned["turn_id"]))["policy"] \
            == "PATTERN_RECOMMENDATION"
        assert learned["model"] == SONNET
        for turn_id in taught:  # the first window changes its mind
            await rate(first, turn_id, "down")
        again = await chat(second, daemon, fake, "refactor the billing parser once more")
        assert again["model"] == HAIKU  # it kept their 👍: sonnet, "score 0.879, 4 samples"


DISAGREEING = """schema_version: 1
global_default: haiku
rules:
  - name: cheap for invoices
    when: {message_matches: 'invoice'}
    use: haiku
pattern: {cost_weight: 0.05, min_confidence: 0.05, min_sample_size: 3, neighbors: 10}
pattern_disagreement: {surface: true, min_confidence: 0.5, min_sample_size: 3}
"""


@pytest.mark.parametrize("editor", CLIENTS[:1])
async def test_a_learned_pattern_disagrees_with_a_rule_and_the_override_is_learned(
        editor: str, daemon: Daemon, fake: FakeProvider) -> None:
    """§5.7 on the real store: a rule outranks what the store learned, the suggestion
    is surfaced, and `/route override` reruns on it and counts against the rule's model."""
    daemon.write_routing(DISAGREEING)
    async with running_server(editor, daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        for i in range(2):
            turn = await chat(client, daemon, fake, f"refactor the billing parser part {i}")
            await rate(client, turn["turn_id"], "down")
        for i in range(3):
            turn = await chat(client, daemon, fake, f"@sonnet refactor the billing parser step {i}")
            await rate(client, turn["turn_id"], "up")
        ruled = await chat(client, daemon, fake, "refactor the billing parser invoice code")
        assert ruled["model"] == HAIKU
        decision = decision_of(client, ruled["turn_id"])
        assert winner(decision)["reason"] == 'rule "cheap for invoices" matched'
        deferred = decision["chain"][-1]
        assert (deferred["policy"], deferred["verdict"], deferred["candidate_model"]) == (
            "PATTERN_RECOMMENDATION", "deferred", SONNET)
        assert f"Pattern store suggests {SONNET}" in "\n".join(decision["banners"])
        fake.script_text("the answer again")
        rerun = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                    "message": "/route override"})
        assert rerun["model"] == SONNET
    connection = database.connect(daemon.data / database.FILE_NAME)
    overridden = database.by_turn(connection, ruled["turn_id"])
    assert overridden is not None and overridden.evidence.next_action == "overridden"
    assert overridden.success <= 0.1  # the rule's model lost to the suggestion
    assert database.by_turn(connection, rerun["turn_id"]) is not None


async def killable(daemon: Daemon) -> SwitchmanClient:
    """A daemon started and initialised by hand, for a test that kills it."""
    client = SwitchmanClient()
    client.listen(*LISTEN)
    await client.start_io(*SERVER_COMMAND, env=daemon.env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(CLIENTS[0]),
        workspace_folders=[types.WorkspaceFolder(uri=daemon.uri, name="project")]))
    return client


async def killed(client: SwitchmanClient, daemon: Daemon,
                 turn_id: str) -> database.PatternRow | None:
    """Kill the daemon at once (SIGKILL: no chance to flush or close anything), then read
    the turn's row from patterns.db."""
    process = client._server
    assert process is not None
    process.kill()
    await process.wait()
    await client.stop()
    return database.by_turn(database.connect(daemon.data / database.FILE_NAME), turn_id)


async def test_a_rating_is_taken_back_with_none(client: SwitchmanClient, daemon: Daemon,
                                               fake: FakeProvider) -> None:
    """A pressed 👍 pressed again takes it back: the turn is unrated, as if never rated (a
    toggle button that did nothing once pressed)."""
    turn = await chat(client, daemon, fake, "refactor the billing parser module")
    implicit = (await rate(client, turn["turn_id"], "down"))["success"]
    assert implicit == 0.0
    taken = await rate(client, turn["turn_id"], "none")
    assert taken["rating"] == "none" and taken["success"] > 0.0  # its own signals again
    detail = await client.request(methods.SESSION, {"session_id": turn["session_id"]})
    assert turn["turn_id"] not in detail["ratings"]
    assert (await rate(client, turn["turn_id"], "up"))["success"] == 1.0


async def test_rows_and_ratings_survive_kill_9(daemon: Daemon, fake: FakeProvider) -> None:
    """A turn's row and its 👍 are in patterns.db as soon as the requests return."""
    daemon.write_routing(ROUTING)
    client = await killable(daemon)
    turn = await chat(client, daemon, fake, "refactor the billing parser module")
    await rate(client, turn["turn_id"], "up")
    row = await killed(client, daemon, turn["turn_id"])
    assert row is not None and row.model == HAIKU
    assert row.evidence.feedback == 1 and row.success == 1.0


async def test_a_turn_is_answered_once_its_row_is_on_disk(
        daemon: Daemon, fake: FakeProvider) -> None:
    """The answer to a chat message waits for the turn's row: a `kill -9` right after the
    answer lost the row about one time in three (it was written on a thread after the answer),
    though the transcript kept the turn. Here patterns.db is locked while the turn ends: the
    answer is held until the lock is released, then the row is there."""
    daemon.write_routing(ROUTING)
    client = await killable(daemon)
    await chat(client, daemon, fake, "write the release notes")  # patterns.db exists now
    blocker = sqlite3.connect(daemon.data / database.FILE_NAME, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
    decided = len(client.received[methods.ROUTE_DECIDED])
    answer = asyncio.ensure_future(chat(client, daemon, fake, "refactor the billing parser"))
    await client.wait_until(lambda: len(client.received[methods.ROUTE_DECIDED]) > decided)
    started = len(client.received[methods.STATUS])  # a status sent after the turn started...
    await client.wait_until(lambda: any(not s["turn_in_flight"]  # ...says when it has ended
                                        for s in client.received[methods.STATUS][started:]))
    cost = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "/cost"})
    assert cost["status"] == "completed"
    assert not answer.done()  # its row waits for the lock, and the answer for its row
    blocker.execute("ROLLBACK")
    blocker.close()
    turn = await answer
    row = await killed(client, daemon, turn["turn_id"])
    assert row is not None and row.model == HAIKU


async def test_a_model_change_is_answered_once_its_judgement_is_on_disk(
        daemon: Daemon, fake: FakeProvider) -> None:
    """`switchman/setModel` right after a turn counts against the model that answered
    ("model changed"); a `kill -9` right after its answer could lose that judgement, written
    on a thread after the answer. Here patterns.db is locked when the model is changed: the
    answer (and the status showing the change, which must not come before it) waits for the
    lock, the daemon answers other requests meanwhile, and the judgement survives a kill."""
    daemon.write_routing(ROUTING)
    client = await killable(daemon)
    turn = await chat(client, daemon, fake, "write the release notes")
    blocker = sqlite3.connect(daemon.data / database.FILE_NAME, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
    swap = asyncio.ensure_future(client.request(methods.SET_MODEL, {
        "workspace": daemon.uri, "model": "sonnet"}))
    cost = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "/cost"})
    assert cost["status"] == "completed"  # the daemon is not held...
    assert not swap.done()  # ...but the answer is, until the judgement is written
    assert all(s["sticky_model"] != SONNET for s in client.received[methods.STATUS])
    blocker.execute("ROLLBACK")
    blocker.close()
    assert (await swap)["sticky_model"] == SONNET
    await client.wait_for(methods.STATUS, lambda s: s["sticky_model"] == SONNET)  # then sent
    row = await killed(client, daemon, turn["turn_id"])
    assert row is not None and row.evidence.next_action == "model_changed"


async def test_a_model_change_waiting_for_its_judgement_holds_only_its_workspaces_status(
        daemon: Daemon, fake: FakeProvider, tmp_path: Path) -> None:
    """While `switchman/setModel` waits for patterns.db (up to 2 s, another daemon holding
    its write lock), the status of that workspace is held so it never overtakes the answer;
    every other open folder's status was held too (a new session there showed late)."""
    daemon.write_routing(ROUTING)
    second = tmp_path / "second"
    second.mkdir()
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace, second],
                              listen=LISTEN) as client:
        await chat(client, daemon, fake, "write the release notes")
        blocker = sqlite3.connect(daemon.data / database.FILE_NAME, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
        try:
            swap = asyncio.ensure_future(client.request(methods.SET_MODEL, {
                "workspace": daemon.uri, "model": "sonnet"}))
            other = await client.request(methods.NEW_SESSION, {"workspace": second.as_uri()})
            await client.wait_for(methods.STATUS, lambda s: s["workspace"] == second.as_uri()
                                  and s["session_id"] == other["session"]["id"])
            assert not swap.done()  # the other folder's status came while this one waits
            assert all(s["sticky_model"] != SONNET for s in client.received[methods.STATUS])
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert (await swap)["sticky_model"] == SONNET
        await client.wait_for(methods.STATUS, lambda s: s["sticky_model"] == SONNET)


async def test_a_slow_patterns_commit_does_not_hold_the_daemon(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Another connection holds patterns.db's write lock while a turn ends: the turn's row
    waits on the writer thread, not on the event loop, so the daemon answers meanwhile; a 👍
    sent after the turn waits its turn and applies to that row once the lock is released."""
    daemon.write_routing(ROUTING)
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        await chat(client, daemon, fake, "write the release notes")  # patterns.db exists now
        blocker = sqlite3.connect(daemon.data / database.FILE_NAME, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
        try:
            turn = await chat(client, daemon, fake, "refactor the billing parser module")
            rating = asyncio.ensure_future(rate(client, turn["turn_id"], "up"))
            cost = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                       "message": "/cost"})
            assert cost["status"] == "completed"
            assert not rating.done()  # queued behind the turn's row, which waits for the lock
            assert blocker.execute("SELECT COUNT(*) FROM pattern_turns WHERE turn_id = ?",
                                   (turn["turn_id"],)).fetchone()[0] == 0
        finally:
            blocker.execute("ROLLBACK")
        assert (await rating)["success"] == 1.0
        blocker.close()
    row = database.by_turn(database.connect(daemon.data / database.FILE_NAME), turn["turn_id"])
    assert row is not None and row.evidence.feedback == 1


async def test_a_worker_that_completed_with_a_failed_delegation_counts_as_failed(
        daemon: Daemon, fake: FakeProvider) -> None:
    """The planner's row learned "its worker succeeded" from the worker's turn completing,
    even when the delegation failed (here: an answer that is not the JSON the planner asked
    for), so the planner's score never took the failed-worker penalty."""
    async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        fake.script_tool_call("delegate", {
            "tier": "fast", "task": "list the endpoints as JSON", "context": {"mode": "minimal"},
            "allowed_tools": ["read_file"], "output_schema": {"type": "object"}},
            id="toolu_schema", model="claude-opus-4-7")
        fake.script_text("GET /users and POST /users", model="claude-haiku-4-5")
        fake.script_text("The worker's answer was not JSON.", model="claude-opus-4-7")
        planner = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                      "message": "@opus list the endpoints"})
        await rate(client, planner["turn_id"], "up")  # answered once every write is committed
    row = database.by_turn(database.connect(daemon.data / database.FILE_NAME),
                           planner["turn_id"])
    assert row is not None
    assert (row.evidence.delegations, row.evidence.delegations_failed) == (1, 1)


async def test_a_daemon_starting_while_another_holds_the_patterns_write_lock_answers(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Another daemon on the data folder holds patterns.db's write lock (a long commit) as
    this one starts: opening the store took that lock on the event loop, so the first request
    waited 5 s and then failed ("database is locked"; the data folder said unusable). The
    daemon starts and answers at once; a turn's row is written once the lock is released."""
    daemon.write_routing(ROUTING)
    path = daemon.data / database.FILE_NAME
    database.connect(path).close()  # the store the other daemon made
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
    try:
        async with running_server(CLIENTS[0], daemon.env, workspaces=[daemon.workspace],
                                  listen=LISTEN) as client:
            cost = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                       "message": "/cost"})
            assert cost["status"] == "completed"
            blocker.execute("ROLLBACK")
            turn = await chat(client, daemon, fake, "write the release notes")
    finally:
        if blocker.in_transaction:
            blocker.execute("ROLLBACK")
        blocker.close()
    row = database.by_turn(database.connect(path), turn["turn_id"])
    assert row is not None


@pytest.mark.parametrize("answered", [False, True])
async def test_a_turn_that_failed_before_answering_cannot_be_rated(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, answered: bool) -> None:
    """Both editors hide 👍 / 👎 on a turn that failed before any text or tool call, but the
    daemon took one (a raw client, a stale button): the pattern store learned that the model
    did well on a turn it never answered. It is refused, ``nothing_to_rate``; a turn that
    failed part-way through its answer is rated as before, and ``none`` is always taken."""
    if answered:
        fake.script_disconnect("half an answer", after_chunks=1)
    else:
        fake.script_error(400, "prompt is too long", error_type="invalid_request_error")
    failed = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                 "message": "refactor the billing parser"})
    assert failed["status"] == "failed" and bool(failed["text"]) is answered
    if answered:
        assert (await rate(client, failed["turn_id"], "up"))["success"] == 1.0
    else:
        for rating in ("up", "down"):
            refused = await refused_rating(client, failed["turn_id"], rating, 1017)
            assert error_data(refused) == {"code": "nothing_to_rate",
                                           "turn_id": failed["turn_id"]}
            assert "failed before it answered" in str(refused)
        assert (await rate(client, failed["turn_id"], "none"))["rating"] == "none"
    detail = await client.request(methods.SESSION, {"session_id": failed["session_id"]})
    assert detail["ratings"] == ({failed["turn_id"]: "up"} if answered else {})


async def test_a_turn_whose_row_cannot_be_written_is_still_answered(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """Learning is best effort, but a patterns.db write that failed (a full disk, a file the
    user may not write) answered the chat message with ``internal_error`` ("nothing was
    changed") although the turn had run, been charged and kept in the transcript, and the
    editor lost its answer; a ``/model`` (``switchman/setModel``) was answered the same way
    though the model had changed. They are answered as usual; the failure is logged."""
    await chat(client, daemon, fake, "write the release notes")  # patterns.db exists now
    fill_disk(daemon.data / database.FILE_NAME)
    turn = await chat(client, daemon, fake, "refactor the billing parser module")
    assert (turn["status"], turn["text"]) == ("completed", "an answer")
    swap = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "sonnet"})
    assert swap["sticky_model"] == SONNET
    again = await chat(client, daemon, fake, "refactor the billing parser module")
    assert (again["status"], again["model"]) == ("completed", SONNET)


async def test_a_workers_turn_cannot_be_rated(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A worker's answer goes to its planner, not to the user, and the editors offer no 👍 / 👎
    on it; the daemon took one all the same (``success`` 1.0, set whatever else happened). It
    is refused, ``worker_session``, naming what to rate instead; ``none`` is still taken."""
    ToolEditor(client)
    fake.script_tool_calls([ToolCall("delegate", {
        "tier": "fast", "task": "count the lines of src/app.py", "context": {"mode": "minimal"},
        "allowed_tools": ["read_file"]}, id="toolu_w")], model="claude-opus-4-7")
    fake.script_text("It has 2 lines.", model="claude-haiku-4-5")
    fake.script_text("The worker counted 2 lines.", model="claude-opus-4-7")
    planner = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                  "message": "@opus how long is app.py?"})
    assert planner["status"] == "completed"
    detail = await client.request(methods.SESSION, {"session_id": planner["session_id"]})
    (delegation,) = detail["delegations"]
    worker = await client.request(methods.SESSION,
                                  {"session_id": delegation["worker_session_id"]})
    worker_turn = worker["turns"][0]["id"]
    for rating in ("up", "down"):
        with pytest.raises(JsonRpcException) as caught:
            await rate(client, worker_turn, rating)
        assert caught.value.code == 1010
        assert error_data(caught.value) == {"code": "worker_session", "turn_id": worker_turn}
        assert str(caught.value).startswith(
            f"Turn '{worker_turn}' is a worker's: its answer went to its planner, not to you")
    assert (await rate(client, worker_turn, "none"))["rating"] == "none"
    assert (await rate(client, planner["turn_id"], "up"))["success"] == 1.0  # the planner's is
    worker = await client.request(methods.SESSION,
                                  {"session_id": delegation["worker_session_id"]})
    assert worker["ratings"] == {}


async def test_a_rating_that_cannot_be_written_names_the_pattern_store(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A 👍 whose write to patterns.db failed (a full disk, a read-only file) was answered
    with the generic ``internal_error``: it says what could not be written, and where."""
    turn = await chat(client, daemon, fake, "write the release notes")
    path = daemon.data / database.FILE_NAME
    fill_disk(path)
    for rating in ("up", "none"):
        refused = await refused_rating(client, turn["turn_id"], rating, 1018)
        assert error_data(refused) == {"code": "patterns_not_saved", "turn_id": turn["turn_id"]}
        message = str(refused)
        assert str(path) in message and "database or disk is full" in message
        assert "pattern store" in message and "internal error" not in message
    detail = await client.request(methods.SESSION, {"session_id": turn["session_id"]})
    assert detail["ratings"] == {}  # nothing was rated
