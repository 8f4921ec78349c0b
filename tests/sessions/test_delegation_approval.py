"""Approval before a delegation whose worker may write or execute (spec 003, 001 §13),
through the engine with the in-memory adapter and a scripted user."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.sessions.records import DelegationRecord
from switchman.engine.tools.approval import ApprovalAnswer, ApprovalRequest, Decision
from tests.sessions.conftest import Engine, scripted_engine
from tests.sessions.test_delegation import HAIKU, OPUS, SONNET, delegate, failure, results
from tests.support.scripted_adapter import ScriptedAdapter
from tests.tools.conftest import ScriptedApprover

CHANGING = ["create_file", "delete_file", "edit_file", "run_command"]


def engine(tmp_path: Path, adapter: ScriptedAdapter, approver: ScriptedApprover | None) -> Engine:
    """An engine whose user is ``approver`` (None: no editor attached)."""
    return scripted_engine(tmp_path, adapter, approver, {"app.py": "x = 1\n"})


@pytest.fixture
def deleg(tmp_path: Path, adapter: ScriptedAdapter,
          approver: ScriptedApprover) -> Iterator[Engine]:
    started = engine(tmp_path, adapter, approver)
    yield started
    started.service.store.db.close()


async def test_a_worker_that_may_change_things_is_approved_once_before_it_starts(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    adapter.calls(delegate("tu_w", task="set x to 2"), model=OPUS)
    adapter.calls(("tu_e", "edit_file", {"path": "app.py", "old_text": "x = 1",
                                         "new_text": "x = 2"}), model=HAIKU)
    adapter.text("edited", model=HAIKU)
    adapter.text("done", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus set x")
    asked, edit = approver.asked
    assert (asked.tool, asked.tool_class, asked.tier, asked.task, asked.worker_tools) == (
        "delegate", "execute", "fast", "set x to 2", CHANGING)
    assert asked.title == "Delegate to a fast worker that may change files and run commands"
    assert (asked.session_id, asked.is_worker) == (result.session_id, False)
    # the worker's own call still goes through the planner's policy, as a worker's
    assert (edit.tool, edit.is_worker) == ("edit_file", True)
    assert (deleg.folder / "app.py").read_text() == "x = 2\n"
    assert results(deleg, result.session_id)["tu_w"].content == "edited"


async def test_a_workers_time_starts_when_it_starts_not_while_its_start_was_asked(
        tmp_path: Path, adapter: ScriptedAdapter) -> None:
    """Found in VS Code: a worker that ran 0.3 s showed 13.8 s, the time its approval took."""
    clock = ManualClock()

    class SlowUser(ScriptedApprover):
        async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
            clock.advance(13.5 if request.tool == "delegate" else 0)
            return await super().ask(request)

    started = scripted_engine(tmp_path, adapter, SlowUser(), {"app.py": "x = 1\n"}, clock)
    adapter.calls(delegate("tu_w", task="set x to 2"), model=OPUS)
    adapter.text("nothing to do", model=HAIKU)
    adapter.text("done", model=OPUS)
    try:
        await started.service.chat(started.workspace, None, "@opus set x")
        updates = [(u.phase, u.elapsed_seconds) for u in started.recorder.delegations]
        assert updates[0] == ("started", 0.0) and updates[-1] == ("ended", 0.0), updates
        ended = started.service.store.events(kind="delegate.completed")[0]
        assert ended["usage_summary"]["wall_time_seconds"] == 0.0
    finally:
        started.service.store.db.close()


async def test_a_denied_delegation_fails_and_starts_no_worker(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    approver.answers.append(ApprovalAnswer("deny", "I'd rather review it myself"))
    adapter.calls(delegate("tu_d", task="rewrite app.py", allowed_tools=["edit_file"]),
                  model=OPUS)
    adapter.text("ok, I will do it", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus rewrite")
    assert result.status == "completed"
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]  # no worker call
    assert approver.asked[0].tool_class == "write"
    assert approver.asked[0].title == "Delegate to a fast worker that may change files"
    mode, text = failure(deleg, result.session_id, "tu_d")
    assert mode == "approval_denied"
    assert text.startswith("delegate failed: approval_denied\n\nThe user denied this delegation;"
                           " no worker was started. Their reason: I'd rather review it myself.")
    event = deleg.service.store.events(kind="delegate.failed")[0]
    assert (event["worker_session_id"], event["detail"]) == ("", "I'd rather review it myself")
    listing = deleg.service.session_list(deleg.workspace, include_workers=True)
    assert listing.sessions[0].workers == []


async def test_read_only_delegations_do_not_ask(deleg: Engine, adapter: ScriptedAdapter,
                                                approver: ScriptedApprover) -> None:
    adapter.calls(delegate("tu_r", allowed_tools=["read_file", "grep", "list_files"]),
                  model=OPUS)
    adapter.text("found it", model=HAIKU)
    adapter.text("thanks", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus look")
    assert approver.asked == []
    assert results(deleg, result.session_id)["tu_r"].content == "found it"


async def test_always_is_remembered_for_delegation_in_the_workspace(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    approver.answers.append(ApprovalAnswer("allow_always"))
    for n in (1, 2):
        adapter.calls(delegate(f"tu_{n}", task=f"task {n}"), model=OPUS)
        adapter.text(f"worker {n}", model=HAIKU, match=f"task {n}")
        adapter.text(f"planner {n}", model=OPUS)
        await deleg.service.chat(deleg.workspace, None, f"@opus go {n}")
    assert [a.tool for a in approver.asked] == ["delegate"]  # the second did not ask
    assert deleg.service.trust.trusted(deleg.workspace) == ["delegate"]


async def test_without_an_editor_a_changing_delegation_is_denied(
        tmp_path: Path, adapter: ScriptedAdapter) -> None:
    started = engine(tmp_path, adapter, None)
    service, workspace = started.service, started.workspace
    adapter.calls(delegate("tu_x", allowed_tools=["run_command"]), model=OPUS)
    adapter.text("fine", model=OPUS)
    try:
        result = await service.chat(workspace, None, "@opus go")
        event = service.store.events(kind="delegate.failed")[0]
        assert (event["failure_mode"], event["detail"]) == (
            "approval_denied", "no editor is attached to approve it")
        assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]
        assert result.status == "completed"
    finally:
        service.store.db.close()


class WaitingUser(ScriptedApprover):
    """A user who has not answered yet: the question is open until the test cancels it."""

    def __init__(self) -> None:
        super().__init__()
        self.open = asyncio.Event()

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        self.open.set()
        await asyncio.Event().wait()  # never answered
        raise AssertionError("unreachable")


async def test_cancelling_the_planner_while_a_delegation_waits_for_approval_ends_it(
        tmp_path: Path, adapter: ScriptedAdapter) -> None:
    """The delegation ends (cancelled_by_user) and is recorded, as when its worker runs."""
    user = WaitingUser()
    started = engine(tmp_path, adapter, user)
    adapter.calls(delegate("tu_w", task="set x to 2"), model=OPUS)
    pending = asyncio.create_task(started.service.chat(started.workspace, None, "@opus set x"))
    await user.open.wait()
    planner_turn = user.asked[0].turn_id
    assert await started.service.cancel(planner_turn) == (True, "cancelled")
    result = await pending
    assert result.status == "cancelled"
    (ended,) = started.recorder.delegations
    assert (ended.phase, ended.status, ended.error, ended.worker_turn_id) == (
        "ended", "cancelled", "cancelled_by_user", None)
    assert failure(started, result.session_id, "tu_w")[0] == "cancelled_by_user"
    assert [r.model_id for r in adapter.requests] == [OPUS]  # no worker, no further call
    started.service.store.db.close()


async def test_the_question_names_the_model_a_rule_routes_the_worker_to(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """The question said 'a fast worker' while a rule matching the task then ran the worker
    on opus: the worker was routed only after the answer. It is routed first (no provider
    called), the question names the model and what chose it, and that model runs."""
    (deleg.folder.parent / "config" / "routing.yaml").write_text(
        "global_default: opus\nrules:\n  - name: migrations\n"
        "    when: {message_matches: '(?i)migration'}\n    use: sonnet\n")
    adapter.calls(delegate("tu_w", task="write the migration"), model=OPUS)
    adapter.text("written", model=SONNET)
    adapter.text("done", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus add a migration")
    (asked,) = approver.asked
    assert (asked.tier, asked.model, asked.routed_by) == ("fast", SONNET, "rule: migrations")
    assert [r.model_id for r in adapter.requests] == [OPUS, SONNET, OPUS]  # none to ask
    stored = deleg.service.session(result.session_id).delegations[0]
    assert (stored.model, stored.routed_by) == (SONNET, "rule: migrations")
    assert stored.approval is not None
    assert (stored.approval.model, stored.approval.routed_by) == (SONNET, "rule: migrations")
    # a worker its tier routes: the tier's model, nothing else chose it
    adapter.calls(delegate("tu_f", task="rename f to g"), model=OPUS)
    adapter.text("renamed", model=HAIKU)
    adapter.text("done again", model=OPUS)
    await deleg.service.chat(deleg.workspace, result.session_id, "@opus rename f")
    assert (approver.asked[1].model, approver.asked[1].routed_by) == (HAIKU, None)


async def fast_tier_changed_while_asked(deleg: Engine, adapter: ScriptedAdapter,
                                        approver: ScriptedApprover, decision: Decision
                                        ) -> tuple[list[ApprovalRequest], DelegationRecord]:
    """A delegation whose first question the user answers with ``decision`` after saving a
    routing.yaml whose fast tier is sonnet (it was haiku): the questions asked and its record."""
    routing = deleg.folder.parent / "config" / "routing.yaml"
    tiers = "global_default: opus\ntiers: {fast: %s, balanced: sonnet, deep: opus}\n"
    routing.write_text(tiers % "haiku")
    asked: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        if request.tool == "delegate" and len(asked) == 1:  # the user edits it meanwhile
            routing.write_text(tiers % "sonnet")
        return ApprovalAnswer(decision)

    approver.ask = ask  # type: ignore[method-assign]
    adapter.calls(delegate("tu_w", task="rename f to g"), model=OPUS)
    adapter.text("renamed", model=SONNET)
    adapter.text("done", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus rename f")
    (stored,) = deleg.service.session(result.session_id).delegations
    return asked, stored


async def test_routing_changed_while_the_question_waited_is_asked_about_again(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """The model the user approved is the one that runs: routing.yaml changed while the
    question waited, so the worker would now run on another model; the user is asked again,
    naming it, and the worker runs on what the last question named."""
    asked, stored = await fast_tier_changed_while_asked(deleg, adapter, approver, "allow_once")
    assert [(a.tool, a.model) for a in asked] == [("delegate", HAIKU), ("delegate", SONNET)]
    assert [r.model_id for r in adapter.requests] == [OPUS, SONNET, OPUS]
    assert stored.model == SONNET
    assert stored.approval is not None
    assert (stored.approval.id, stored.approval.model) == (asked[1].id, SONNET)
    # the first question is kept too, said to be superseded and why
    (earlier,) = stored.superseded_approvals
    assert (earlier.id, earlier.model, earlier.outcome, earlier.superseded) == (
        asked[0].id, HAIKU, "allowed_once",
        "the model changed from haiku to sonnet while the question waited")  # as the editors
    # name models (their first alias); the full ids are the two questions' models
    assert (stored.approval.superseded, stored.approval.model_changed) == (None, None)


async def test_an_always_answer_is_not_asked_again_nor_marked_superseded(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """"Always allow" asks no more: routing that changed while its question waited asks
    nothing again, so its question is the delegation's only one, not a superseded one. The
    worker runs on the new model, and its question says the model changed after it: it named
    the old one only."""
    asked, stored = await fast_tier_changed_while_asked(deleg, adapter, approver,
                                                        "allow_always")
    assert [a.model for a in asked] == [HAIKU]
    assert stored.approval is not None and stored.approval.outcome == "allowed_always"
    assert (stored.approval.superseded, stored.superseded_approvals) == (None, [])
    assert [r.model_id for r in adapter.requests] == [OPUS, SONNET, OPUS]
    assert (stored.model, stored.approval.model) == (SONNET, HAIKU)
    assert stored.approval.model_changed == \
        "the model changed from haiku to sonnet while the question waited"


async def test_the_question_names_the_model_a_worker_profile_runs_on(
        deleg: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    """A worker profile with its own model runs on it whatever the tier: the question that
    said 'a fast worker' names that model too."""
    (deleg.service.config.directory / "profiles.yaml").write_text(
        "profiles:\n  editor:\n    model: sonnet\n", "utf-8")
    adapter.calls(delegate("tu_w", task="rename f to g", profile="editor"), model=OPUS)
    adapter.text("renamed", model=SONNET)
    adapter.text("done", model=OPUS)
    await deleg.service.chat(deleg.workspace, None, "@opus rename f")
    (asked,) = approver.asked
    assert (asked.tier, asked.model) == ("fast", SONNET)
    assert asked.routed_by == "profile: editor"
    assert [r.model_id for r in adapter.requests] == [OPUS, SONNET, OPUS]
