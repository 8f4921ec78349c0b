"""Delegation through the engine with the in-memory adapter: gating, handoff, results,
fan-out, failure modes, cancellation and cost (spec 000 §6, 001)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec
import pytest

from switchman.engine.availability import ErrorClass
from switchman.engine.delegation import history, progress
from switchman.engine.errors import WorkerSession
from switchman.engine.learning import database
from switchman.engine.messages import ApprovalRecord, ToolResultBlock, Usage
from switchman.engine.providers.base import ProviderRequest
from switchman.engine.providers.errors import ProviderError
from switchman.engine.sessions import slash_commands
from switchman.engine.sessions.records import CostBreakdown, DelegationUpdate, WorkerCost
from switchman.engine.store.ownership import DaemonLease
from switchman.engine.tools.approval import ApprovalAnswer, ApprovalRequest
from tests.sessions.conftest import Engine, scripted_engine
from tests.support.scripted_adapter import ScriptedAdapter, ScriptedReply
from tests.tools.conftest import ScriptedApprover

OPUS, HAIKU, SONNET = ("anthropic:claude-opus-4-7", "anthropic:claude-haiku-4-5",
                       "anthropic:claude-sonnet-4-6")


@pytest.fixture
def deleg(tmp_path: Path, adapter: ScriptedAdapter,
          approver: ScriptedApprover) -> Iterator[Engine]:
    started = scripted_engine(tmp_path, adapter, approver,
                              {"auth.py": "".join(f"line {n}\n" for n in range(1, 50))})
    yield started
    started.service.store.db.close()


def delegate(call_id: str, **arguments: Any) -> tuple[str, str, dict[str, Any]]:
    arguments.setdefault("tier", "fast")
    arguments.setdefault("task", "a mechanical task")
    arguments.setdefault("context", {"mode": "minimal"})
    return call_id, "delegate", arguments


def tool_names(request: ProviderRequest) -> list[str]:
    return [t.name for t in request.tools]


def results(engine: Engine, session_id: str) -> dict[str, ToolResultBlock]:
    return {b.tool_use_id: b for m in engine.service.store.messages(session_id)
            for b in m.content if isinstance(b, ToolResultBlock)}


async def test_planner_models_that_can_delegate_are_offered_the_tool(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    service = deleg.service
    await service.chat(deleg.workspace, None, "@opus plan it")
    await service.chat(deleg.workspace, None, "@haiku plan it")  # fast: can_delegate false
    await service.set_model(deleg.workspace, None, "haiku")
    await service.chat(deleg.workspace, None, "plan it")
    await service.set_model(deleg.workspace, None, "sonnet")  # back to a model that may delegate
    await service.chat(deleg.workspace, None, "plan it")
    offered = ["delegate" in tool_names(r) for r in adapter.requests]
    assert offered == [True, False, False, True]


async def test_the_global_switch_turns_delegation_off(deleg: Engine,
                                                      adapter: ScriptedAdapter) -> None:
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\ndelegation: {enabled: false}\n")
    await deleg.service.chat(deleg.workspace, None, "plan it")
    assert "delegate" not in tool_names(adapter.requests[0])


async def test_a_minimal_delegation_runs_a_worker_session(deleg: Engine,
                                                          adapter: ScriptedAdapter) -> None:
    service = deleg.service
    adapter.calls(delegate("tu_a", task="Convert 2024-01-02 to RFC 2822",
                           allowed_tools=["read_file", "delegate", "memory_add"]),
                  model=OPUS, usage=Usage(1000, 100))
    adapter.text("Tue, 02 Jan 2024", model=HAIKU, usage=Usage(400, 20))
    adapter.text("Done: Tue, 02 Jan 2024", model=OPUS, usage=Usage(1200, 50))
    result = await service.chat(deleg.workspace, None, "@opus convert the date")
    assert (result.status, result.text) == ("completed", "Done: Tue, 02 Jan 2024")
    worker_request = adapter.requests[1]
    assert worker_request.model_id == HAIKU
    assert tool_names(worker_request) == ["read_file", "_request_context"]
    assert "You are a worker" in (worker_request.system or "")
    assert f"running on model {HAIKU}" in (worker_request.system or "")
    assert [m.text() for m in worker_request.messages] == ["Convert 2024-01-02 to RFC 2822"]
    # the tools no worker has are dropped silently (spec 001 §5.6): the result is the worker's
    assert results(deleg, result.session_id)["tu_a"].content == "Tue, 02 Jan 2024"
    # the worker is a session of its own, nested under the planner
    (worker,) = service.session_list(deleg.workspace, include_workers=True).sessions[0].workers
    assert (worker.is_worker, worker.parent_session_id, worker.parent_tool_use_id) == (
        True, result.session_id, "tu_a")
    detail = service.session(worker.id)
    assert detail.turns[0].decision is not None
    assert detail.turns[0].decision.winner.policy == "DELEGATE_REQUEST"  # type: ignore[union-attr]
    events = service.store.events(result.session_id)
    started = next(e for e in events if e["type"] == "delegate.started")
    assert (started["resolved_model"], started["allowed_tool_count"], started["dropped_tools"],
            started["context_mode"]) == (HAIKU, 3, ["delegate", "memory_add"], "minimal")
    completed = next(e for e in events if e["type"] == "delegate.completed")
    assert completed["usage_summary"]["cost_usd"] == "0.000500"  # 400 * $1/M + 20 * $5/M
    assert completed["usage_summary"]["turn_count"] == 1
    worker_events = {e["type"] for e in service.store.events(worker.id)}
    assert {"session.created", "session.ended", "route.decided", "llm.call_completed"} <= \
        worker_events
    calls = service.store.events(kind="llm.call_completed")
    assert [c["is_worker"] for c in calls] == [False, True, False]
    # spec 001 §8: a call's cost is read as llm.call_completed.usage.cost_usd
    assert [c["usage"]["cost_usd"] for c in calls] == [c["cost_usd"] for c in calls]
    assert calls[1]["usage"]["cost_usd"] == completed["worker_total_cost_usd"] == "0.000500"
    # cost: the planner's turn is its own; the session totals include the worker
    planner_own = Decimal("0.007500") + Decimal("0.007250")  # opus: 1000/100, 1200/50
    assert result.cost_usd == planner_own
    cost = service.queries.cost(result.session_id)
    assert cost.workers[0].title == "Convert 2024-01-02 to RFC 2822"  # its task
    assert (cost.planner_usd, cost.workers_usd, cost.total_usd) == (
        planner_own, Decimal("0.000500"), planner_own + Decimal("0.000500"))
    assert service.sessions.cost_today() == cost.total_usd
    phases = [(u.phase, u.status) for u in deleg.recorder.delegations]
    assert phases[0] == ("started", "running") and phases[-1] == ("ended", "completed")
    assert all(u.session_id == result.session_id for u in deleg.recorder.delegations)
    shown = await service.chat(deleg.workspace, None, "/cost")
    assert f"Convert 2024-01-02 to RFC 2822 → {HAIKU}: $0.000500, 1 turn" in shown.text
    with pytest.raises(WorkerSession):  # a worker ran one task; it takes no messages
        await service.chat(deleg.workspace, worker.id, "and another thing")
    with pytest.raises(WorkerSession):  # nor can it become the workspace's current session
        service.resume_session(deleg.workspace, worker.id)
    assert service.explain(deleg.workspace, worker.id, None).turn_id == detail.turns[0].id
    # the pattern store has a row for each turn; the worker's success reached its planner
    await service.learning.written()
    rows = {r.session_id: r for r in database.rows(service.patterns.connection)}
    assert (rows[worker.id].model, rows[worker.id].is_worker) == (HAIKU, True)
    planner_row = rows[result.session_id]
    assert (planner_row.model, planner_row.is_worker) == (OPUS, False)
    assert (planner_row.evidence.delegations, planner_row.evidence.delegations_failed) == (1, 0)
    # a planner's waiting flags are kept while its turn runs (the lifecycle's own check)
    assert service.learning.running == service.lifecycle.is_running
    assert not service.learning.running(planner_row.turn_id)  # it has ended


async def test_explicit_context_references_files_and_inlines_the_rest(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    service = deleg.service
    adapter.text("earlier answer", model=OPUS)
    first = await service.chat(deleg.workspace, None, "@opus remember: we use JWT")
    message_id = service.store.messages(first.session_id)[-1].id
    adapter.calls(("tu_read", "grep", {"pattern": "line 4"}), model=OPUS)
    adapter.calls(delegate("tu_b", task="Refactor authenticate()", context={
        "mode": "explicit", "include": [
            {"type": "file", "path": "auth.py"},
            {"type": "file_range", "path": "auth.py", "lines": [40, 45]},
            {"type": "tool_result", "tool_use_id": "tu_read"},
            {"type": "message", "message_id": message_id},
            {"type": "inline", "label": "decision", "text": "tokens expire after 1 h"}]}),
        model=OPUS)
    adapter.text("refactored", model=HAIKU)
    adapter.text("ok", model=OPUS)
    await service.chat(deleg.workspace, None, "@opus go on")
    worker = next(r for r in adapter.requests if r.model_id == HAIKU)
    system, task = worker.system or "", worker.messages[0].text()
    assert "- file auth.py (read it with read_file)" in system
    assert "lines 40-45 of auth.py" in system
    assert "auth.py:4: line 4" in task  # the grep result, inlined
    assert "earlier answer" in task  # the message, inlined
    assert "## Note from the planner: decision\ntokens expire after 1 h" in task
    assert "line 1\n" not in task  # files are references, not inlined
    started = service.store.events(kind="delegate.started")[0]
    assert (started["context_mode"], started["context_reference_count"]) == ("explicit", 5)
    # by default the worker gets the planner's tools; nothing was named, so nothing "dropped"
    # (the memory tools are never a worker's: spec 001 §5.4)
    assert (started["allowed_tool_count"], started["dropped_tools"]) == (8, [])
    assert [t.name for t in worker.tools] == [
        "read_file", "list_files", "grep", "skill_load", "edit_file", "create_file",
        "delete_file", "run_command", "_request_context"]


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"tier": "huge", "task": "x", "context": {"mode": "minimal"}}, "'tier' must be one of"),
    ({"tier": "fast", "task": " ", "context": {"mode": "minimal"}}, "'task' must be"),
    ({"tier": "fast", "task": "x"}, "'context' is required"),
    ({"tier": "fast", "task": "x", "context": {"mode": "explicit", "include": [
        {"type": "tool_result", "tool_use_id": "tu_nope"}]}}, "no tool result with tool_use_id"),
    ({"tier": "fast", "task": "x", "context": {"mode": "explicit", "include": [
        {"type": "file", "path": "../outside.txt"}]}}, "outside the workspace"),
    ({"tier": "fast", "task": "x", "context": {"mode": "explicit", "include": [
        {"type": "file_range", "path": ".git/config", "lines": [1, 3]}]}}, "inside .git/"),
    ({"tier": "fast", "task": "x", "context": {"mode": "explicit", "include": [
        {"type": "file", "path": "src/\u0000.py"}]}}, "is not a path"),
    ({"tier": "fast", "task": "x", "context": {"mode": "minimal"}, "timeout_seconds": -1},
     "'timeout_seconds' must be"),
    ({"tier": "fast", "task": "x", "context": {"mode": "minimal"},
      "output_schema": {"type": "nonsense"}}, "not a valid JSON Schema"),
])
async def test_a_bad_argument_is_an_error_result_the_planner_can_correct(
        deleg: Engine, adapter: ScriptedAdapter, arguments: dict[str, Any], problem: str) -> None:
    adapter.calls(("tu_bad", "delegate", arguments), model=OPUS)
    adapter.text("I will fix my call", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus do it")
    assert result.status == "completed"
    answer = results(deleg, result.session_id)["tu_bad"]
    assert answer.is_error and problem in answer.content
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]  # no worker started
    # The refusal is recorded (it left no trace), once; it is no delegation of the session.
    store = deleg.service.store
    (refused,) = [e for e in store.events(result.session_id)
                  if e["type"].startswith("delegate.")]
    assert (refused["type"], refused["failure_mode"], refused["error"], refused["tool_use_id"],
            refused["worker_session_id"]) == ("delegate.failed", "invalid_arguments",
                                              "invalid_arguments", "tu_bad", "")
    assert problem in refused["detail"] and Decimal(refused["usage_summary"]["cost_usd"]) == 0
    assert refused["tier"] == ("fast" if arguments["tier"] == "fast" else None)
    assert refused["task"] == arguments["task"]
    assert store.db.execute("SELECT turn_id FROM events WHERE type = 'delegate.failed'"
                            ).fetchone()[0] == result.turn_id  # under the planner's turn
    assert deleg.service.session(result.session_id).delegations == []
    assert deleg.recorder.delegations == []  # nothing shown as a delegation either


async def test_a_planner_cannot_hand_a_secret_file_to_a_worker(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    """The worker's read_file would refuse the workspace's .env, so the planner is told at
    once, as for a path inside .git/; nothing of the file reaches anyone."""
    (deleg.folder / ".env").write_text("OPENAI_API_KEY=sk-do-not-leak\n")
    arguments = {"tier": "fast", "task": "x", "context": {"mode": "explicit", "include": [
        {"type": "file", "path": ".env"}]}}
    adapter.calls(("tu_env", "delegate", arguments), model=OPUS)
    adapter.text("I will do without it", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus do it")
    answer = results(deleg, result.session_id)["tu_env"]
    assert answer.is_error and "usually holds secrets" in answer.content
    assert "do-not-leak" not in answer.content
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]  # no worker started


async def test_fan_out_runs_concurrently_up_to_the_cap_and_answers_in_call_order(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\ndelegation: {max_concurrent_workers: 2}\n")
    adapter.calls(*(delegate(f"tu_{n}", task=f"task {n}") for n in (1, 2, 3)), model=OPUS)
    gates = {n: asyncio.Event() for n in (1, 2, 3)}
    replies = {n: adapter.text(f"result {n}", "!", model=HAIKU, match=f"task {n}", gate=gates[n])
               for n in (1, 2, 3)}
    adapter.text("all done", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus fan out"))
    await replies[1].reached.wait()
    await replies[2].reached.wait()
    assert not replies[3].reached.is_set()  # the cap holds the third back
    gates[2].set()
    await replies[3].reached.wait()  # a slot freed up
    gates[1].set()
    gates[3].set()
    result = await pending
    answers = results(deleg, result.session_id)
    tool_message = next(m for m in deleg.service.store.messages(result.session_id)
                        if m.role == "tool")
    assert [b.tool_use_id for b in tool_message.content] == ["tu_1", "tu_2", "tu_3"]  # type: ignore[union-attr]
    assert [answers[f"tu_{n}"].content for n in (1, 2, 3)] == ["result 1!", "result 2!",
                                                               "result 3!"]


async def test_workers_never_get_delegate_even_when_allowed(deleg: Engine,
                                                            adapter: ScriptedAdapter) -> None:
    adapter.calls(delegate("tu_r", tier="deep", task="task r", allowed_tools=["delegate"]),
                  model=OPUS)
    adapter.text("deep work", model=OPUS, match="task r")
    adapter.text("ok", model=OPUS)
    await deleg.service.chat(deleg.workspace, None, "@opus go")
    worker = adapter.requests[1]
    assert worker.messages[0].text() == "task r"
    assert worker.model_id == OPUS and tool_names(worker) == ["_request_context"]
    started = deleg.service.store.events(kind="delegate.started")[0]
    assert started["dropped_tools"] == ["delegate"]
    # it named no tool a worker may have: it ran, as the spec says, dropping it silently
    (answer,) = results(deleg, started["session_id"]).values()
    assert answer.content == "deep work"


async def test_a_workers_refused_call_lists_its_tools_without_the_internal_one(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    """Found in VS Code: a worker's transcript read "Available tools: read_file,
    _request_context" (the worker still has it: it ends its turn with a request)."""
    adapter.calls(delegate("tu_w", tier="deep", task="task w", allowed_tools=["read_file"]),
                  model=OPUS)
    adapter.calls(("w1", "edit_file", {"path": "a.py", "old_text": "a", "new_text": "b"}),
                  model=OPUS, match="task w")
    adapter.text("could not", model=OPUS, match="task w")
    adapter.text("ok", model=OPUS)
    await deleg.service.chat(deleg.workspace, None, "@opus go")
    worker = adapter.requests[2]
    assert worker.messages[0].text() == "task w"
    assert tool_names(worker) == ["read_file", "_request_context"]
    refused = worker.messages[-1].content[0]
    assert isinstance(refused, ToolResultBlock)
    assert refused.content.endswith("Available tools: read_file."), refused.content


def failure(engine: Engine, session_id: str, call_id: str) -> tuple[str, str]:
    answer = results(engine, session_id)[call_id]
    event = next(e for e in engine.service.store.events(kind="delegate.failed")
                 if e["tool_use_id"] == call_id)
    assert answer.is_error
    return event["failure_mode"], answer.content


async def test_failure_modes(deleg: Engine, adapter: ScriptedAdapter) -> None:
    service = deleg.service
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    adapter.calls(delegate("tu_err", task="task err"), delegate("tu_max", task="task max",
                                                                max_tokens=5),
                  delegate("tu_ctx", task="task ctx"),
                  delegate("tu_schema", task="task schema", output_schema=schema),
                  delegate("tu_json", task="task json", output_schema=schema), model=OPUS)
    adapter.script(ScriptedReply(model=HAIKU, match="task err", error=ProviderError(
        ErrorClass.BAD_REQUEST, "model refused", model=HAIKU)))
    adapter.text("truncat", model=HAIKU, match="task max", stop_reason="max_tokens")
    adapter.calls(("tu_q", "_request_context", {
        "missing": [{"type": "file", "ref": "src/jwt.ts", "hint": "to see the signing"}],
        "summary": "Need the JWT code."}), model=HAIKU, match="task ctx")
    adapter.text("not json", model=HAIKU, match="task schema")
    adapter.text('```json\n{"n": 3}\n```', model=HAIKU, match="task json")
    adapter.text("handled", model=OPUS)
    result = await service.chat(deleg.workspace, None, "@opus try everything")
    sid = result.session_id
    mode, text = failure(deleg, sid, "tu_err")
    assert mode == "worker_error" and "delegate failed: worker_error: " in text
    assert "model refused" in text and "send it again" not in text  # advice for a person
    assert failure(deleg, sid, "tu_max") == ("max_tokens_exceeded",
                                             "delegate failed: max_tokens_exceeded\n\ntruncat")
    mode, text = failure(deleg, sid, "tu_ctx")
    assert mode == "insufficient_context"
    assert json.loads(text.split("\n\n", 1)[1]) == {"missing": [
        {"type": "file", "ref": "src/jwt.ts", "hint": "to see the signing"}],
        "summary": "Need the JWT code."}
    request = next(e for e in service.store.events(kind="delegate.failed")
                   if e["tool_use_id"] == "tu_ctx")["insufficient_context_request"]
    assert request["summary"] == "Need the JWT code."
    assert failure(deleg, sid, "tu_schema") == (
        "output_schema_validation_failed", "delegate failed: output_schema_validation_failed"
        "\n\nnot json")
    assert json.loads(results(deleg, sid)["tu_json"].content) == {"n": 3}
    max_request = next(r for r in adapter.requests if "task max" in r.messages[0].text())
    assert max_request.max_output_tokens == 5
    # /cost says how each worker ended: a failed one looked finished
    shown = {line.strip().split(" → ")[0]: line.strip() for line in
             (await service.chat(deleg.workspace, sid, "/cost")).text.splitlines()}
    assert shown["task err"] == (f"task err → {HAIKU}: ~$0.000482, 1 turn (estimated) — "
                                 "failed (worker_error)")
    assert shown["task json"] == f"task json → {HAIKU}: $0.000150, 1 turn"
    assert shown["task schema"].endswith(" — failed (output_schema_validation_failed)")


async def test_a_failed_worker_lowers_its_planners_score_once(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    """A worker that failed lowered its planner's score twice: as a failed delegation (-0.3 x
    the share failed) and again as a tool call that returned an error (-0.1), the planner's
    ``delegate failed`` result. It counts once, as a failed delegation; a ``delegate`` call
    refused before any worker ran (a bad argument: the planner's own slip) is a tool error."""
    adapter.calls(delegate("tu_ok", task="task ok"), delegate("tu_err", task="task err"),
                  delegate("tu_bad", tier="enormous"), model=OPUS)
    adapter.text("fine", model=HAIKU, match="task ok")
    adapter.script(ScriptedReply(model=HAIKU, match="task err", error=ProviderError(
        ErrorClass.BAD_REQUEST, "model refused", model=HAIKU)))
    adapter.text("one worked", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    assert failure(deleg, result.session_id, "tu_err")[0] == "worker_error"
    assert results(deleg, result.session_id)["tu_bad"].is_error
    await deleg.service.learning.written()
    row = database.by_turn(deleg.service.patterns.connection, result.turn_id or "")
    assert row is not None
    assert (row.evidence.delegations, row.evidence.delegations_failed) == (2, 1)
    assert row.evidence.tool_errors == 1  # tu_bad only
    assert row.success == pytest.approx(0.7 - 0.1 - 0.3 / 2)


async def test_a_workers_own_workers_are_listed_with_how_they_went(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    """The Sessions view listed a worker's own workers (nested under it) with no status: only
    its planner's session's record was read, which does not have their delegations. Workers
    do not delegate today; the store nests them, so a session that has one is made here by
    moving a delegation's record and worker under another worker."""
    adapter.calls(delegate("tu_a", task="task a"), delegate("tu_b", task="task b"), model=OPUS)
    adapter.text("done a", model=HAIKU, match="task a")
    adapter.script(ScriptedReply(model=HAIKU, match="task b", error=ProviderError(
        ErrorClass.BAD_REQUEST, "model refused", model=HAIKU)))
    adapter.text("handled", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus two tasks")
    workers = {w.parent_tool_use_id: w.id for w in deleg.service.store.workers(result.session_id)}
    outer, inner = workers["tu_a"], workers["tu_b"]
    db = deleg.service.store.db
    with db:
        db.execute("UPDATE sessions SET parent_session_id = ? WHERE id = ?", (outer, inner))
        db.execute("UPDATE events SET session_id = ? WHERE type LIKE 'delegate.%' AND "
                   "json_extract(payload, '$.tool_use_id') = 'tu_b'", (outer,))
    (planner,) = deleg.service.session_list(deleg.workspace, include_workers=True).sessions
    (worker,) = planner.workers
    (nested,) = worker.workers
    assert (worker.id, worker.delegation_status) == (outer, "completed")
    assert (nested.id, nested.delegation_status) == (inner, "failed")  # was None
    # the worker's own cost rows say how its workers went too
    (row,) = deleg.service.queries.cost(outer).workers
    assert (row.session_id, row.status, (row.error or "").split(":")[0]) == (inner, "failed",
                                                                    "worker_error")


def test_cost_shows_a_zero_as_precisely_as_the_other_amounts() -> None:
    """`$0.0000` stood beside `$0.000015`, as if it were rounded and the others not."""
    workers = [WorkerCost("W1", "tu_1", HAIKU, Decimal("0.000015"), 1, "cheap"),
               WorkerCost("W2", "tu_2", HAIKU, Decimal("0"), 0, "free")]
    text = slash_commands.cost_text(CostBreakdown(
        Decimal("0.000015"), [], Decimal("0"), Decimal("0.000015"), workers),
        Decimal("1.5"), Decimal("0"))
    assert text.splitlines() == [
        "This session: $0.000015", "  planner: $0.000000",
        "  workers: $0.000015 (2 delegations)", f"    cheap → {HAIKU}: $0.000015, 1 turn",
        f"    free → {HAIKU}: $0.000000, 0 turns", "Today, all sessions: $1.500000"]
    assert slash_commands.cost_text(CostBreakdown(
        Decimal("0.25"), [], Decimal("0.25"), Decimal("0"), []), Decimal("0"), Decimal("0")) \
        .splitlines() == ["This session: $0.2500", "Today, all sessions: $0.0000"]


async def test_no_model_for_the_tier(deleg: Engine, adapter: ScriptedAdapter) -> None:
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\ntiers: {fast: gpt-5-mini, balanced: gpt-5, deep: gpt-5}\n")
    adapter.calls(delegate("tu_none"), model=OPUS)
    adapter.text("I'll do it myself", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    mode, text = failure(deleg, result.session_id, "tu_none")
    assert mode == "no_model_available_for_tier"
    assert text.startswith("delegate failed: no_model_available_for_tier\n\n"
                           "no model available for tier fast: ")
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]


async def test_a_worker_that_runs_too_long_times_out(deleg: Engine,
                                                     adapter: ScriptedAdapter) -> None:
    adapter.calls(delegate("tu_slow", timeout_seconds=0.2), model=OPUS)
    adapter.text("partial", "never", model=HAIKU, gate=asyncio.Event())
    adapter.text("moving on", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    assert failure(deleg, result.session_id, "tu_slow") == (
        "timeout", "delegate failed: timeout\n\npartial")
    worker = deleg.service.store.events(kind="delegate.failed")[0]["worker_session_id"]
    assert deleg.service.session(worker).turns[0].status == "cancelled"


async def test_stopping_one_worker_fails_only_that_delegation(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    adapter.calls(delegate("tu_1", task="task 1"), delegate("tu_2", task="task 2"), model=OPUS)
    stuck = adapter.text("stuck", "never", model=HAIKU, match="task 1", gate=asyncio.Event())
    adapter.text("fine", model=HAIKU, match="task 2")
    adapter.text("one failed, one worked", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus go"))
    await stuck.reached.wait()
    started = next(u for u in deleg.recorder.delegations
                   if u.tool_use_id == "tu_1" and u.worker_turn_id)
    assert await deleg.service.cancel(started.worker_turn_id or "") == (True, "cancelled")
    result = await pending
    assert (result.status, result.text) == ("completed", "one failed, one worked")
    assert failure(deleg, result.session_id, "tu_1")[0] == "cancelled_by_user"
    assert results(deleg, result.session_id)["tu_2"].content == "fine"


async def test_cancelling_the_planner_cancels_every_worker(deleg: Engine,
                                                           adapter: ScriptedAdapter) -> None:
    adapter.calls(delegate("tu_1", task="task 1"), delegate("tu_2", task="task 2"), model=OPUS)
    first = adapter.text("a", "b", model=HAIKU, match="task 1", gate=asyncio.Event())
    second = adapter.text("c", "d", model=HAIKU, match="task 2", gate=asyncio.Event())
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus go"))
    await first.reached.wait()
    await second.reached.wait()
    planner_turn = deleg.recorder.delegations[0].turn_id
    assert planner_turn is not None
    assert await deleg.service.cancel(planner_turn) == (True, "cancelled")
    result = await pending
    assert result.status == "cancelled"
    failed = deleg.service.store.events(kind="delegate.failed")
    assert sorted((e["tool_use_id"], e["failure_mode"]) for e in failed) == [
        ("tu_1", "cancelled_by_user"), ("tu_2", "cancelled_by_user")]
    for event in failed:
        assert deleg.service.session(event["worker_session_id"]).turns[0].status == "cancelled"
    assert len(adapter.requests) == 3  # the planner made no further call
    # the workers ended after their planner's turn (their cancellation comes from its end);
    # their failures still reach its row, once each
    await deleg.service.learning.written()
    rows = {r.turn_id: r for r in database.rows(deleg.service.patterns.connection)}
    evidence = rows[planner_turn].evidence
    assert (evidence.delegations, evidence.delegations_failed) == (2, 2)


async def test_a_finished_worker_is_dropped_from_memory_and_its_record_stays(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    service = deleg.service
    adapter.calls(delegate("tu_a"), model=OPUS)
    adapter.text("worker answer", model=HAIKU)
    adapter.text("planner done", model=OPUS)
    result = await service.chat(deleg.workspace, None, "@opus do it")
    (worker,) = service.session_list(deleg.workspace, include_workers=True).sessions[0].workers
    assert service.sessions.loaded(worker.id) is None
    assert service.sessions.loaded(result.session_id) is not None
    detail = service.session(worker.id)  # still readable, from the store
    assert detail.turns[0].status == "completed"
    with pytest.raises(WorkerSession):  # and still refused as a chat target after reloading
        await service.chat(deleg.workspace, worker.id, "hello")


async def test_text_held_back_by_the_progress_interval_is_sent_when_it_is_over(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    """A worker that streams a few words and then pauses (a slow model, a long tool-less
    think) shows those words on its card while it pauses, not only when it goes on."""
    arrived = asyncio.Event()
    record = deleg.recorder.delegation

    def delegation(update: DelegationUpdate) -> None:
        record(update)
        if update.activity == "thinking about it":
            arrived.set()

    deleg.recorder.delegation = delegation  # type: ignore[method-assign]
    adapter.calls(delegate("tu_1"), model=OPUS)
    gate = asyncio.Event()
    adapter.text("thinking about it", " and done", model=HAIKU, gate=gate)
    adapter.text("the worker finished", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus go"))
    await asyncio.wait_for(arrived.wait(), 10)  # while the worker is still paused
    assert not gate.is_set()
    shown = [u for u in deleg.recorder.delegations if u.activity == "thinking about it"]
    assert [(u.phase, u.status) for u in shown] == [("progress", "running")]
    gate.set()
    assert (await pending).text == "the worker finished"
    phases = [u.phase for u in deleg.recorder.delegations if u.tool_use_id == "tu_1"]
    assert phases[-1] == "ended" and phases.count("ended") == 1


def updates_of(engine: Engine, call_id: str) -> list[DelegationUpdate]:
    return [u for u in engine.recorder.delegations if u.tool_use_id == call_id]


async def test_a_delegation_over_the_cap_is_queued_then_runs_and_its_wait_is_recorded(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    """The third call of a cap of two is announced waiting, with why and its place, listed
    in the session as queued, and moves to running when a slot frees up."""
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\ndelegation: {max_concurrent_workers: 2}\n")
    adapter.calls(*(delegate(f"tu_{n}", task=f"task {n}") for n in (1, 2, 3)), model=OPUS)
    gates = {n: asyncio.Event() for n in (1, 2, 3)}
    replies = {n: adapter.text(f"result {n}", model=HAIKU, match=f"task {n}", gate=gates[n])
               for n in (1, 2, 3)}
    adapter.text("all done", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus fan out"))
    await replies[1].reached.wait()
    await replies[2].reached.wait()
    (queued,) = updates_of(deleg, "tu_3")
    assert (queued.phase, queued.status, queued.task, queued.tier) == (
        "queued", "queued", "task 3", "fast")
    assert queued.queue is not None
    assert (queued.queue.position, queued.queue.running, queued.queue.limit) == (1, 2, 2)
    assert queued.detail == "waiting for a free worker: 2 of 2 running"
    assert (queued.worker_session_id, queued.worker_turn_id, queued.model) == ("", None, None)
    assert next(u.phase for u in updates_of(deleg, "tu_1")) == "started"  # never queued
    listed = deleg.service.session(queued.session_id).delegations
    assert [(r.tool_use_id, r.status) for r in listed] == [
        ("tu_1", "running"), ("tu_2", "running"), ("tu_3", "queued")]
    assert (listed[2].task, listed[2].tier, listed[2].model, listed[2].worker_session_id) == (
        "task 3", "fast", None, "")
    assert listed[2].queued_at is not None and listed[0].queued_at is None
    gates[2].set()
    await replies[3].reached.wait()
    phases = [(u.phase, u.status) for u in updates_of(deleg, "tu_3")]
    assert phases[:3] == [("queued", "queued"), ("awaiting_approval", "awaiting_approval"),
                          ("started", "running")]  # its worker may edit: the user was asked
    assert updates_of(deleg, "tu_3")[1].queue is None
    gates[1].set()
    gates[3].set()
    result = await pending
    assert result.text == "all done"
    detail = deleg.service.session(result.session_id)
    assert [(r.tool_use_id, r.status) for r in detail.delegations] == [
        (f"tu_{n}", "completed") for n in (1, 2, 3)]
    store = deleg.service.store
    (wait,) = store.events(kind="delegate.queued")
    assert (wait["tool_use_id"], wait["position"], wait["running"], wait["limit"]) == (
        "tu_3", 1, 2, 2)
    started = {e["tool_use_id"]: e for e in store.events(kind="delegate.started")}
    assert started["tu_3"]["queued_seconds"] >= 0 and started["tu_1"]["queued_seconds"] == 0
    assert all(e["requested_at"] for e in started.values())
    # waiting costs nothing, and nothing is counted twice: the session's total is its
    # planner's calls plus its three workers' calls, each once
    assert len(detail.cost.workers) == 3
    assert detail.cost.total_usd == detail.cost.planner_usd + detail.cost.workers_usd
    assert detail.cost.workers_usd == sum((w.cost_usd for w in detail.cost.workers),
                                          Decimal(0))


async def test_the_line_moves_and_a_waiting_delegation_can_be_stopped_alone(
        deleg: Engine, adapter: ScriptedAdapter) -> None:
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    adapter.calls(*(delegate(f"tu_{n}", task=f"task {n}") for n in (1, 2, 3)), model=OPUS)
    gates = {n: asyncio.Event() for n in (1, 3)}
    replies = {n: adapter.text(f"result {n}", model=HAIKU, match=f"task {n}", gate=gates[n])
               for n in (1, 3)}
    adapter.text("two of three", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus in turn"))
    await replies[1].reached.wait()
    assert [(u.queue.position, u.detail) for u in updates_of(deleg, "tu_3")
            if u.queue is not None] == [
        (2, "waiting for a free worker: 1 of 1 running; 1 ahead of it")]
    turn = updates_of(deleg, "tu_1")[0].turn_id
    assert turn is not None
    # Stop on the second's card: only it ends, unstarted, and the third moves up
    assert await deleg.service.cancel(turn, "tu_2") == (True, "cancelled")
    ended = updates_of(deleg, "tu_2")[-1]
    assert (ended.phase, ended.status, ended.error, ended.detail, ended.queue) == (
        "ended", "cancelled", "cancelled_by_user", "the user stopped it before it started", None)
    assert [u.queue.position for u in updates_of(deleg, "tu_3") if u.queue is not None] == [2, 1]
    assert await deleg.service.cancel(turn, "tu_2") == (False, "ended")
    gates[1].set()
    await replies[3].reached.wait()  # the third ran
    gates[3].set()
    result = await pending
    assert (result.status, result.text) == ("completed", "two of three")
    answers = results(deleg, result.session_id)
    assert (answers["tu_2"].content, answers["tu_2"].is_error) == (
        "delegate failed: cancelled_by_user", True)
    assert answers["tu_3"].content == "result 3"
    assert len([r for r in adapter.requests if r.model_id == HAIKU]) == 2
    listed = deleg.service.session(result.session_id).delegations
    assert [(r.tool_use_id, r.status) for r in listed] == [
        ("tu_1", "completed"), ("tu_2", "cancelled"), ("tu_3", "completed")]
    assert listed[1].queued_at is not None and listed[1].model is None
    # dated when they ended, those whose worker started (the second never did)
    assert [r.ended_at is not None for r in listed] == [True, False, True]
    assert all(r.ended_at >= r.started_at for r in listed if r.ended_at is not None)


def test_a_delegation_still_waiting_when_its_planner_was_interrupted_never_started() -> None:
    """The daemon died while a call waited for a slot: its planner's turn is marked
    interrupted when the next daemon starts, and the call is listed as interrupted, not
    waiting for ever."""
    wait = {"type": "delegate.queued", "timestamp": "2026-11-24T12:00:00Z", "session_id": "s",
            "tool_use_id": "tu_q", "turn_id": "turn_p", "tier": "fast", "task": "tidy",
            "position": 1, "running": 1, "limit": 1}
    (waiting,) = history.delegation_records([], [], (), [wait])
    wait_at = waiting.queued_at
    assert waiting.ended_at is None
    assert (waiting.status, waiting.error, waiting.model, waiting.task) == (
        "queued", None, None, "tidy")
    (stuck,) = history.delegation_records([], [], {"turn_p"}, [wait])
    assert (stuck.status, stuck.error) == ("failed", "interrupted")
    assert stuck.detail is not None and "never started" in stuck.detail
    assert "answer written by then" not in stuck.detail  # the turn's message, not this call's
    # got its slot, its start asked about: listed so, and never started once interrupted
    asked = {"type": "delegate.awaiting_approval", "timestamp": "2026-11-24T12:01:00Z",
             "session_id": "s", "tool_use_id": "tu_q", "turn_id": "turn_p"}
    (waiting,) = history.delegation_records([], [], (), [wait], approving=[asked])
    assert (waiting.status, waiting.detail, waiting.queued_at) == (
        "awaiting_approval", history.AWAITING_APPROVAL_DETAIL, wait_at)
    (stuck,) = history.delegation_records([], [], {"turn_p"}, [wait], approving=[asked])
    assert (stuck.status, stuck.error, stuck.detail) == (
        "failed", "interrupted", history.NEVER_APPROVED_MESSAGE)


@pytest.mark.parametrize("passes", range(8))
async def test_a_worker_cancelled_twice_as_the_daemon_exits_still_records_its_end(
        deleg: Engine, adapter: ScriptedAdapter, passes: int) -> None:
    """At exit the daemon cancels every turn, then asyncio cancels every task left, so a
    delegation's task may be cancelled a second time while it waits for its worker's turn to
    end: the delegation is still recorded as ended (it stayed 'running' in switchman/session
    for good, one exit in six)."""
    adapter.calls(delegate("tu_1", task="task 1"), model=OPUS)
    stuck = adapter.text("a", "b", model=HAIKU, gate=asyncio.Event())
    before = asyncio.all_tasks()
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus go"))
    await stuck.reached.wait()
    deleg.service.cancel_all()  # the exit notification
    for _ in range(passes):  # the stop reaches the worker's turn through a few steps
        await asyncio.sleep(0)
    others = asyncio.all_tasks() - before - {asyncio.current_task()}
    for task in others:  # what asyncio.run does to the tasks left when the server stops
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    assert pending.done()
    (failed,) = deleg.service.store.events(kind="delegate.failed")
    assert (failed["tool_use_id"], failed["failure_mode"]) == ("tu_1", "cancelled_by_user")
    assert deleg.service.session(failed["worker_session_id"]).turns[0].status == "cancelled"
    planner = deleg.service.session(deleg.recorder.delegations[0].session_id)
    assert [(d.tool_use_id, d.status) for d in planner.delegations] == [("tu_1", "cancelled")]
    # why: the daemon stopped (the editor closed or restarted it), not "the planner's turn
    # was cancelled", which reads as the user's Stop
    assert planner.delegations[0].detail == progress.EXITED_DETAIL
    # its failure reaches the planner's row once, also when it ended after the planner's turn
    # (passes 1 and 2: the planner's row was written first and never learned it)
    await deleg.service.learning.written()
    row = next(r for r in database.rows(deleg.service.patterns.connection) if not r.is_worker)
    assert (row.evidence.delegations, row.evidence.delegations_failed) == (1, 1)


async def test_stopping_one_delegation_while_its_start_is_asked_about_stops_it(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """A delegation whose worker may change files waits for the user's approval before it
    starts (after its wait for a slot, if it had one): its Stop (the planner's turn and its
    tool_use_id) stops it there, instead of answering 'starting' and leaving it to start once
    approved."""
    asked = asyncio.Event()

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked.set()
        await asyncio.Event().wait()  # the user has not answered
        raise AssertionError("never answered")

    approver.ask = ask  # type: ignore[method-assign]
    adapter.calls(delegate("tu_w", allowed_tools=["read_file", "edit_file"]), model=OPUS)
    adapter.text("it was stopped", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus go"))
    await asyncio.wait_for(asked.wait(), 10)
    turn = deleg.recorder.notices[0].turn_id
    assert await deleg.service.cancel(turn, "tu_w") == (True, "cancelled")
    result = await pending
    assert (result.status, result.text) == ("completed", "it was stopped")
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]  # no worker ran
    (failed,) = deleg.service.store.events(kind="delegate.failed")
    assert (failed["tool_use_id"], failed["failure_mode"], failed["detail"]) == (
        "tu_w", "cancelled_by_user", "the user stopped it before it started")
    assert await deleg.service.cancel(turn, "tu_w") == (False, "ended")


async def test_a_queued_delegation_whose_start_is_asked_about_says_it_waits_for_approval(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """A call that waited for a slot and may change files then waits for the user's answer:
    its card said 'queued — waiting for a free worker' all along. It is now told as waiting
    for approval (a call that never waited is not announced before it starts, as before),
    and its Stop still stops it there."""
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\ndelegation: {max_concurrent_workers: 1}\n")
    asked: list[ApprovalRequest] = []
    answer: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
    second_asked = asyncio.Event()

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        if len(asked) == 1:
            return ApprovalAnswer("allow_once")
        second_asked.set()
        return await answer

    approver.ask = ask  # type: ignore[method-assign]
    adapter.calls(delegate("tu_1", task="task 1", allowed_tools=["edit_file"]),
                  delegate("tu_2", task="task 2", allowed_tools=["edit_file"]), model=OPUS)
    gate = asyncio.Event()
    first = adapter.text("result 1", model=HAIKU, match="task 1", gate=gate)
    adapter.text("one of two", model=OPUS)
    pending = asyncio.create_task(deleg.service.chat(deleg.workspace, None, "@opus go"))
    await first.reached.wait()
    assert [u.status for u in updates_of(deleg, "tu_2")] == ["queued"]
    gate.set()
    await asyncio.wait_for(second_asked.wait(), 10)
    waiting = updates_of(deleg, "tu_2")[-1]
    assert (waiting.phase, waiting.status, waiting.detail, waiting.queue) == (
        "awaiting_approval", "awaiting_approval", "waiting for your approval to start", None)
    assert (waiting.worker_session_id, waiting.model) == ("", None)
    turn = updates_of(deleg, "tu_1")[0].turn_id
    assert turn is not None
    assert await deleg.service.cancel(turn, "tu_2") == (True, "cancelled")
    result = await pending
    assert result.text == "one of two"
    assert [u.status for u in updates_of(deleg, "tu_2")] == [
        "queued", "awaiting_approval", "cancelled"]
    assert len(asked) == 2  # the first was asked about too, yet never shown waiting for it
    assert "awaiting_approval" not in [u.status for u in updates_of(deleg, "tu_1")]


async def test_a_delegation_whose_end_a_gone_daemon_never_recorded_is_interrupted(
        deleg: Engine, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """A database from before f56a51c can hold a delegation whose worker's turn ended (it was
    cancelled as its daemon exited) with no delegate.completed or delegate.failed: it was
    listed as running for good. Once the daemon that ran it is gone it is interrupted; while
    that daemon (this one, or another window's on the same database) lives, it may be about
    to record the end, so it is left running."""
    adapter.calls(delegate("tu_1", task="tidy"), model=OPUS)
    adapter.text("tidied", model=HAIKU)
    adapter.text("done", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    store = deleg.service.store
    store.db.execute("DELETE FROM events WHERE type = 'delegate.completed'")  # as the bug left it

    def listed() -> list[tuple[str, str, str | None, str | None]]:
        return [(r.tool_use_id, r.status, r.error, r.detail)
                for r in deleg.service.session(result.session_id).delegations]

    assert listed() == [("tu_1", "running", None, None)]  # its daemon (this one) lives
    other = DaemonLease(tmp_path / "data")  # another editor window's daemon, alive
    worker = store.events(kind="delegate.started")[0]["worker_session_id"]
    store.db.execute("UPDATE turns SET owner = ? WHERE session_id = ?", (other.id, worker))
    assert listed() == [("tu_1", "running", None, None)]
    other.release()  # what the operating system does when that daemon dies
    assert listed() == [("tu_1", "failed", "interrupted", history.END_LOST_MESSAGE)]
    assert deleg.service.session(worker).turns[0].status == "completed"  # its turn is as it was


async def test_a_planners_start_question_is_stored_once_and_read_back_in_its_result(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """The question a planner's delegation asked before its worker started was stored twice:
    in the delegate call's result and in delegate.started (delegate.failed when denied). It
    is stored with the delegation's event alone; a session read still gives it in the call's
    result (the chat rebuilt in either editor reads it there) and in delegations[].approval."""
    approver.answers.append(ApprovalAnswer("deny", "not that one"))
    tools = ["read_file", "edit_file"]
    adapter.calls(delegate("tu_no", allowed_tools=tools), model=OPUS)
    adapter.calls(delegate("tu_yes", allowed_tools=tools), model=OPUS)
    adapter.text("done it", model=HAIKU)
    adapter.text("finished", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    assert result.text == "finished"
    stored = results(deleg, result.session_id)
    assert (stored["tu_no"].approval, stored["tu_yes"].approval) == (None, None)
    (started,) = deleg.service.store.events(kind="delegate.started")
    (failed,) = deleg.service.store.events(kind="delegate.failed")
    assert (started["approval"]["outcome"], failed["approval"]["outcome"]) == (
        "allowed_once", "denied")
    detail = deleg.service.session(result.session_id)
    read = {b["tool_use_id"]: b["approval"] for m in detail.messages for b in m["content"]
            if b["type"] == "tool_result"}
    asked = {d.tool_use_id: msgspec.to_builtins(d.approval) for d in detail.delegations}
    assert read == asked
    assert (read["tu_no"]["reason"], read["tu_yes"]["tier"]) == ("not that one", "fast")
    # a session an older daemon kept has it in both places: read as before, each once
    store = deleg.service.store
    for message in store.messages(result.session_id):
        if message.role == "tool":
            store.add_message(msgspec.structs.replace(message, content=[
                msgspec.structs.replace(b, approval=msgspec.convert(asked[b.tool_use_id],
                                                                    ApprovalRecord))
                if isinstance(b, ToolResultBlock) else b for b in message.content]))
    assert results(deleg, result.session_id)["tu_yes"].approval is not None  # as it was kept
    again = deleg.service.session(result.session_id)
    assert [(b["tool_use_id"], b["approval"]) for m in again.messages for b in m["content"]
            if b["type"] == "tool_result"] == [(k, asked[k]) for k in ("tu_no", "tu_yes")]
    assert [msgspec.to_builtins(d.approval) for d in again.delegations] == [
        asked["tu_no"], asked["tu_yes"]]
