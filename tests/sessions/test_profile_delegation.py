"""Workers with agent profiles, through the engine with the in-memory adapter: tools stay
within the planner's, a planner's profile can withhold delegation, the envelope is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from switchman.engine.errors import UnknownProfile
from switchman.engine.messages import ToolResultBlock
from tests.sessions.conftest import Engine
from tests.sessions.test_delegation import (
    HAIKU,
    OPUS,
    deleg,  # noqa: F401 - a fixture (adapter and approver come from conftest)
    delegate,
    tool_names,
)
from tests.support.scripted_adapter import ScriptedAdapter

PROFILES = """\
profiles:
  planner:
    tools: [read_file, grep, delegate]
  solo:
    tools: [read_file, grep]
  runner:
    system_prompt: You run things.
    tools: [read_file, run_command, list_files]
"""


def write_profiles(engine: Engine) -> None:
    config: Path = engine.service.config.directory
    (config / "profiles.yaml").write_text(PROFILES, "utf-8")


async def test_a_workers_tools_stay_within_its_planners(deleg: Engine,  # noqa: F811
                                                        adapter: ScriptedAdapter
                                                        ) -> None:
    write_profiles(deleg)
    service = deleg.service
    await service.set_profile(deleg.workspace, None, "planner")
    adapter.calls(delegate("tu_r", profile="runner"), model=OPUS)
    adapter.text("ran nothing", model=HAIKU)
    adapter.text("ok", model=OPUS)
    result = await service.chat(deleg.workspace, None, "@opus go")
    assert tool_names(adapter.requests[0]) == ["read_file", "grep", "delegate"]
    worker = adapter.requests[1]
    # runner allows run_command and list_files, but the planner has neither
    assert tool_names(worker) == ["read_file", "_request_context"]
    assert "You run things." in (worker.system or "")
    started = next(u for u in deleg.recorder.delegations if u.phase == "started")
    assert started.profile == "runner" and started.handoff is not None
    assert started.handoff.capability_scope.tools == ["read_file"]
    assert started.handoff.capability_scope.approval_required is False  # no write tool left
    assert started.handoff.source.profile.name == "planner"
    stored = service.session(started.worker_session_id)
    assert stored.handoff == started.handoff
    assert stored.session.profile == "runner"
    assert result.status == "completed"


async def test_a_worker_of_a_bounded_workspace_default_gets_no_more_than_it(
        deleg: Engine, adapter: ScriptedAdapter) -> None:  # noqa: F811
    """A repository's `default: default` runs its sessions bounded by the user's default
    (planner here): its planner's worker delegated to the wider built-in `default` gets only
    what the planner has, as any worker does."""
    config: Path = deleg.service.config.directory
    (config / "profiles.yaml").write_text("default: planner\n" + PROFILES, "utf-8")
    (deleg.folder / ".switchman").mkdir(exist_ok=True)
    (deleg.folder / ".switchman" / "profiles.yaml").write_text("default: default\n", "utf-8")
    adapter.calls(delegate("tu_d", profile="default"), model=OPUS)
    adapter.text("looked", model=HAIKU)
    adapter.text("ok", model=OPUS)
    await deleg.service.chat(deleg.workspace, None, "@opus go")
    assert tool_names(adapter.requests[0]) == ["read_file", "grep", "delegate"]
    assert tool_names(adapter.requests[1]) == ["read_file", "grep", "_request_context"]


async def test_a_profile_without_delegate_never_offers_it(deleg: Engine,  # noqa: F811
                                                          adapter: ScriptedAdapter
                                                          ) -> None:
    write_profiles(deleg)
    await deleg.service.set_profile(deleg.workspace, None, "solo")
    adapter.text("done alone", model=OPUS)
    await deleg.service.chat(deleg.workspace, None, "@opus go")
    assert tool_names(adapter.requests[0]) == ["read_file", "grep"]


async def test_an_unknown_worker_profile_starts_nothing(deleg: Engine,  # noqa: F811
                                                        adapter: ScriptedAdapter
                                                        ) -> None:
    write_profiles(deleg)
    adapter.calls(delegate("tu_x", profile="ghost"), model=OPUS)
    adapter.text("fine", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    [block] = [b for m in deleg.service.store.messages(result.session_id) for b in m.content
               if isinstance(b, ToolResultBlock)]
    assert block.is_error
    assert "unknown profile 'ghost'. The registered profiles are default, planner, runner, " \
        "solo, subagent." in block.content
    assert deleg.recorder.delegations == []
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]


async def test_an_unknown_profile_among_a_thousand_lists_the_closest_then_a_count(
        deleg: Engine, adapter: ScriptedAdapter) -> None:  # noqa: F811
    names = [f"profile_number_{i:04d}_with_a_rather_long_descriptive_name" for i in range(1000)]
    (deleg.service.config.directory / "profiles.yaml").write_text(
        "profiles:\n" + "".join(f"  {n}: {{tools: [read_file]}}\n" for n in names), "utf-8")
    adapter.calls(delegate("tu_x", profile="profile_number_0042_with_a_rather_long_descriptiv"),
                  model=OPUS)
    adapter.text("fine", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    [block] = [b for m in deleg.service.store.messages(result.session_id) for b in m.content
               if isinstance(b, ToolResultBlock)]
    assert block.is_error and len(block.content) < 1000
    assert "Did you mean 'profile_number_0042_with_a_rather_long_descriptive_name'?" \
        in block.content
    assert "The registered profiles are profile_number_0042_" in block.content
    assert "and 992 more. Nothing was started" in block.content  # 1,002 with the built-ins
    with pytest.raises(UnknownProfile) as refused:
        await deleg.service.set_profile(deleg.workspace, None, "profile_number_0007")
    assert len(str(refused.value)) < 1000 and str(refused.value).endswith("and 992 more.")
    assert len(refused.value.known) == 1002  # the error's data still names every one


async def test_a_session_whose_profile_was_removed_says_so_and_uses_the_default(
        deleg: Engine) -> None:  # noqa: F811
    write_profiles(deleg)
    service = deleg.service
    await service.set_profile(deleg.workspace, None, "solo")
    chosen = service.status(deleg.workspace).profile
    assert chosen is not None and chosen.resolved_from == "session"
    (service.config.directory / "profiles.yaml").write_text("profiles: {}\n", "utf-8")
    service.status(deleg.workspace)  # notices the saved file; it is checked off the loop
    await service.config.settle(str(deleg.folder))
    status = service.status(deleg.workspace)
    assert status.profile is not None
    assert (status.profile.name, status.profile.resolved_from) == ("default", "global")
    assert "Profile 'solo' chosen for this session no longer exists; using default (the " \
        "global default)." in status.banners


async def test_a_new_session_keeps_the_current_ones_profile(deleg: Engine) -> None:  # noqa: F811
    write_profiles(deleg)
    service = deleg.service
    first = await service.set_profile(deleg.workspace, None, "solo")
    second = service.new_session(deleg.workspace)
    assert second.id != first.session_id and second.profile == "solo"
    chosen = service.status(deleg.workspace).profile
    assert chosen is not None and (chosen.name, chosen.resolved_from) == ("solo", "session")


def tool_result(engine: Engine, session_id: str) -> ToolResultBlock:
    [block] = [b for m in engine.service.store.messages(session_id) for b in m.content
               if isinstance(b, ToolResultBlock)]
    return block


@pytest.mark.parametrize(("planner", "call", "withheld", "could"), [
    ("planner", delegate("tu_x", allowed_tools=["run_command", "edit_file", "delegate"]),
     "run_command (you do not have it); edit_file (you do not have it)", "grep, read_file"),
    (None, delegate("tu_x", allowed_tools=["run_command"], profile="solo"),
     "run_command (the worker's profile 'solo' does not permit it)", "grep, read_file"),
], ids=["tools the planner lacks", "tools the worker's profile does not permit"])
async def test_allowed_tools_that_leave_the_worker_none_of_them_are_refused(
        deleg: Engine, adapter: ScriptedAdapter,  # noqa: F811
        planner: str | None, call: tuple[str, str, dict[str, Any]], withheld: str,
        could: str) -> None:
    """Such a call started a worker with no tools (only ``_request_context``), and the
    planner was not told: its worker then guessed, or gave up, on a task it could not do."""
    write_profiles(deleg)
    if planner is not None:
        await deleg.service.set_profile(deleg.workspace, None, planner)
    adapter.calls(call, model=OPUS)
    adapter.text("I will do it myself", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    block = tool_result(deleg, result.session_id)
    assert block.is_error and block.content == (
        "delegate refused: 'allowed_tools' leaves the worker none of the tools you named: "
        f"{withheld}. The worker could have {could}; name those you mean, or leave "
        "allowed_tools out to give it all of them. Nothing was started; correct the call and "
        "try again.")
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]  # no worker started
    assert deleg.recorder.delegations == []
    (failed,) = deleg.service.store.events(kind="delegate.failed")
    assert failed["failure_mode"] == "invalid_arguments" and withheld in failed["detail"]


async def test_the_planner_is_told_which_named_tools_its_worker_did_not_have(
        deleg: Engine, adapter: ScriptedAdapter) -> None:  # noqa: F811
    write_profiles(deleg)
    await deleg.service.set_profile(deleg.workspace, None, "planner")
    adapter.calls(delegate("tu_r", allowed_tools=["read_file", "run_command", "memory_add"]),
                  model=OPUS)
    adapter.text("read it", model=HAIKU)
    adapter.text("ok", model=OPUS)
    result = await deleg.service.chat(deleg.workspace, None, "@opus go")
    assert tool_names(adapter.requests[1]) == ["read_file", "_request_context"]
    block = tool_result(deleg, result.session_id)
    assert not block.is_error and block.content == (  # memory_add: dropped silently (§5.6)
        "read it\n\n[The worker did not have these tools you named: run_command (you do not "
        "have it).]")
    (started,) = deleg.service.store.events(kind="delegate.started")
    assert (started["allowed_tool_count"], started["dropped_tools"]) == (3, ["memory_add"])
    # The handoff records what the planner was told, not only the silent drops.
    assert started["handoff"]["capability_scope"]["withheld_tools"] == {
        "run_command": "you do not have it"}
