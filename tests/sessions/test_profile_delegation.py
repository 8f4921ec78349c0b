"""Workers with agent profiles, through the engine with the in-memory adapter: tools stay
within the planner's, a planner's profile can withhold delegation, the envelope is kept."""

from __future__ import annotations

from pathlib import Path

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
    assert "unknown profile 'ghost'; the registered profiles are default, planner, runner, " \
        "solo, subagent" in block.content
    assert deleg.recorder.delegations == []
    assert [r.model_id for r in adapter.requests] == [OPUS, OPUS]


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
