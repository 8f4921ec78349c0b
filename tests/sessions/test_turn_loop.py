"""The turn loop with the in-memory adapter: what a turn returns, the tool sources a turn is
built from, and the turn-ended hook (the extension points other features plug into)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from switchman.engine.providers.base import ToolSpec
from switchman.engine.service import Switchman
from switchman.engine.sessions import manager
from switchman.engine.sessions.lifecycle import TurnEnded
from switchman.engine.tools.arguments import ToolOutcome
from switchman.engine.tools.registry import (
    ToolCallRequest,
    ToolContext,
    ToolEntry,
    ToolRegistry,
)
from tests.sessions.conftest import Recorder
from tests.support.scripted_adapter import ScriptedAdapter, ScriptedReply

SONNET = "anthropic:claude-sonnet-4-6"


@pytest.fixture
def service(tmp_path: Path, adapter: ScriptedAdapter) -> Iterator[Switchman]:
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    (tmp_path / "workspace" / "notes.md").write_text("remember the milk\n")
    engine = Switchman(Recorder(), config_folder=tmp_path / "config",
                       data_folder=tmp_path / "data", environ={"ANTHROPIC_API_KEY": "k"},
                       adapters=adapter)
    engine.open_workspace(str(tmp_path / "workspace"))
    yield engine
    engine.store.db.close()


async def test_a_turn_returns_what_it_added(service: Switchman, adapter: ScriptedAdapter) -> None:
    ended: list[TurnEnded] = []
    service.lifecycle.turn_ended.append(ended.append)
    adapter.calls(("t1", "read_file", {"path": "notes.md"}))
    adapter.text("You wanted milk.")
    (workspace,) = list(service.workspaces)
    result = await service.chat(workspace, None, "@sonnet what did I note?")
    assert result.text == "You wanted milk."
    (event,) = ended
    assert [m.role for m in event.outcome.added] == ["assistant", "tool", "assistant"]
    assert event.outcome.touched == ["notes.md"]
    assert event.outcome.stop_reason == "end_turn"
    assert event.session.history[-3:] == event.outcome.added  # the session remembered it
    assert "remember the milk" in str(adapter.requests[1].messages)


async def test_a_bug_during_a_turn_is_told_in_fixed_words(service: Switchman,
                                                          adapter: ScriptedAdapter) -> None:
    """No Python exception text in a response (protocol.md): the turn fails with
    ``internal_error`` and a fixed message; the exception stays in the log."""
    adapter.script(ScriptedReply(error=KeyError("content_block_delta /home/me/secret-path")))
    (workspace,) = list(service.workspaces)
    result = await service.chat(workspace, None, "@sonnet hello")
    assert result.status == "failed"
    assert result.error is not None and result.error.code == "internal_error"
    assert result.error.message == ("Switchman failed during this turn (a bug; its log has the "
                                    "details). Your message is saved; send it again to retry.")


async def test_tool_sources_add_tools_the_loop_runs(service: Switchman,
                                                    adapter: ScriptedAdapter) -> None:
    seen: list[ToolContext] = []

    async def clock(call: ToolCallRequest) -> ToolOutcome:
        return ToolOutcome(f"it is noon ({call.arguments['zone']})", summary="noon")

    def source(context: ToolContext, tools: ToolRegistry) -> None:
        seen.append(context)
        tools.add(ToolEntry(ToolSpec("clock", "The time.", {"type": "object"}), clock))

    service.lifecycle.tool_sources.append(source)
    adapter.calls(("t1", "clock", {"zone": "UTC"}), ("t2", "nope", {}))
    adapter.text("Noon.")
    (workspace,) = list(service.workspaces)
    await service.chat(workspace, None, "@sonnet what time is it?")
    assert "clock" in [t.name for t in adapter.requests[0].tools]
    assert (seen[0].model, seen[0].is_worker) == (SONNET, False)
    tool_message = adapter.requests[1].messages[-1]
    assert getattr(tool_message.content[0], "content", "") == "it is noon (UTC)"
    assert "Unknown tool 'nope'" in getattr(tool_message.content[1], "content", "")


async def test_a_call_of_a_tool_the_profile_takes_away_says_so(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """Found in Neovim: a read-only profile's model that called edit_file anyway read
    "Unknown tool", and the user's line said `✗ edit_file: unknown tool`."""
    (tmp_path / "config" / "profiles.yaml").write_text(
        "default: reviewer\nprofiles:\n  reviewer:\n    description: Reviews\n"
        "    tools: [read_file, edit_file]\n    approval: read_only\n", "utf-8")
    adapter.calls(("t1", "edit_file", {"path": "notes.md", "old_text": "milk",
                                       "new_text": "tea"}),
                  ("t2", "grep", {"pattern": "milk"}), ("t3", "nope", {}))
    adapter.text("I may not.")
    (workspace,) = list(service.workspaces)
    await service.chat(workspace, None, "@sonnet change milk to tea")
    results = adapter.requests[1].messages[-1].content
    because = "the profile 'reviewer' does not allow it"
    assert [getattr(r, "content", "") for r in results] == [
        f"'edit_file' is not available here: {because}. Available tools: read_file.",
        f"'grep' is not available here: {because}. Available tools: read_file.",
        "Unknown tool 'nope'. Available tools: read_file."]
    assert [getattr(r, "summary", "") for r in results] == [
        f"not available: {because}", f"not available: {because}", "unknown tool"]
    assert (tmp_path / "workspace" / "notes.md").read_text() == "remember the milk\n"


async def test_a_tool_a_workspace_default_cannot_have_says_whose_bound_it_is(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """A repository's `default: default` is bounded by the user's read-only default: a call
    of a tool taken away names both profiles (the built-in default itself allows it)."""
    (tmp_path / "config" / "profiles.yaml").write_text(
        "default: reviewer\nprofiles:\n  reviewer:\n    tools: [read_file, grep]\n"
        "    approval: read_only\n", "utf-8")
    (tmp_path / "workspace" / ".switchman").mkdir(exist_ok=True)
    (tmp_path / "workspace" / ".switchman" / "profiles.yaml").write_text(
        "default: default\n", "utf-8")
    adapter.calls(("t1", "edit_file", {"path": "notes.md", "old_text": "milk",
                                       "new_text": "tea"}))
    adapter.text("I may not.")
    (workspace,) = list(service.workspaces)
    await service.chat(workspace, None, "@sonnet change milk to tea")
    assert [t.name for t in adapter.requests[0].tools] == ["read_file", "grep"]
    [result] = adapter.requests[1].messages[-1].content
    assert getattr(result, "summary", "") == (
        "not available: the workspace's default profile 'default' gets only what your "
        "default profile 'reviewer' allows")
    assert (tmp_path / "workspace" / "notes.md").read_text() == "remember the milk\n"


async def test_a_tool_a_workspace_profile_lists_but_your_profile_bounds_says_so(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    """Found in the audit: a repository's `yolo` listing run_command, bounded by the user's
    default, refused it with "the profile 'yolo' does not allow it" though yolo lists it.
    A tool the workspace's profile does not list itself is still its own refusal, and a
    same-named profile of yours bounds it by name."""
    (tmp_path / "config" / "profiles.yaml").write_text(
        "default: careful\nprofiles:\n  careful:\n    tools: [read_file, grep, edit_file]\n"
        "  reviewer:\n    tools: [read_file]\n", "utf-8")
    (tmp_path / "workspace" / ".switchman").mkdir(exist_ok=True)
    (tmp_path / "workspace" / ".switchman" / "profiles.yaml").write_text(
        "default: yolo\nprofiles:\n  yolo:\n    tools: [read_file, edit_file, run_command]\n"
        "  reviewer:\n    tools: [read_file, grep]\n", "utf-8")
    adapter.calls(("t1", "run_command", {"command": "ls"}), ("t2", "grep", {"pattern": "x"}))
    adapter.text("I may not.")
    (workspace,) = list(service.workspaces)
    await service.chat(workspace, None, "@sonnet list the files")
    assert [t.name for t in adapter.requests[0].tools] == ["read_file", "edit_file"]
    assert [getattr(r, "summary", "") for r in adapter.requests[1].messages[-1].content] == [
        "not available: the workspace's profile 'yolo' is bounded by your default 'careful', "
        "which does not allow it",
        "not available: the profile 'yolo' does not allow it"]
    await service.set_profile(workspace, None, "reviewer")
    adapter.calls(("t3", "grep", {"pattern": "x"}))
    adapter.text("I may not.")
    await service.chat(workspace, None, "@sonnet grep")
    assert [getattr(r, "summary", "") for r in adapter.requests[3].messages[-1].content] == [
        "not available: the workspace's profile 'reviewer' is bounded by your profile "
        "'reviewer', which does not allow it"]


async def test_a_long_first_line_makes_a_title_cut_at_a_word_with_a_mark(
        service: Switchman, adapter: ScriptedAdapter) -> None:
    """Found in Neovim's session picker: the title was the first 60 characters, cut mid-word
    without a mark ("… that goes on and o"), read as the whole message."""
    adapter.text("ok")
    (workspace,) = list(service.workspaces)
    line = "please refactor the authentication module so that every handler goes through it"
    result = await service.chat(workspace, None, f"@sonnet {line}\nand more")
    info = service.store.session(result.session_id)
    assert info is not None
    assert info.title == "please refactor the authentication module so that every…"
    assert len(info.title) <= 60 and line.startswith(info.title[:-1])


async def test_turns_running_is_true_only_while_a_turn_is_in_flight(
        service: Switchman, adapter: ScriptedAdapter) -> None:
    during: list[bool] = []

    async def probe(call: ToolCallRequest) -> ToolOutcome:
        during.append(service.turns_running())
        return ToolOutcome("probed", summary="probed")

    service.lifecycle.tool_sources.append(lambda context, tools: tools.add(
        ToolEntry(ToolSpec("probe", "Probe.", {"type": "object"}), probe)))
    adapter.calls(("t1", "probe", {}))
    adapter.text("Done.")
    (workspace,) = list(service.workspaces)
    assert not service.turns_running()
    await service.chat(workspace, None, "@sonnet probe")
    assert during == [True]  # the idle garbage collection waits for this
    assert not service.turns_running()


async def test_idle_sessions_beyond_the_cap_are_dropped_from_memory_and_reload(
        service: Switchman, adapter: ScriptedAdapter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manager, "MAX_IDLE_LOADED", 2)
    (workspace,) = list(service.workspaces)
    first = await service.chat(workspace, None, "@sonnet the first chat")
    ids = [first.session_id]
    for n in range(3):
        ids.append(service.new_session(workspace).id)
        adapter.text(f"answer {n}")
        await service.chat(workspace, ids[-1], f"chat {n}")
    assert [service.sessions.loaded(i) is not None for i in ids] == [False, False, True, True]
    adapter.text("still here")
    again = await service.chat(workspace, ids[0], "and again")  # reloads with its history
    assert again.session_id == ids[0]
    assert "the first chat" in str(adapter.requests[-1].messages)


async def test_a_skill_written_while_the_session_is_open_is_used_by_its_next_turn(
        service: Switchman, adapter: ScriptedAdapter, tmp_path: Path) -> None:
    # The skill index was read when the session was loaded and kept: a skill added (or
    # edited) meanwhile was "No skill named …" for skill_load and missing from the prompt.
    (workspace,) = list(service.workspaces)
    adapter.text("Noted.")
    await service.chat(workspace, None, "@sonnet hello")
    skills = tmp_path / "workspace" / ".switchman" / "skills"
    skills.mkdir(parents=True)
    (skills / "style.md").write_text("---\nname: python-style\ndescription: Type hints "
                                     "everywhere\n---\nUse type hints.\n")
    adapter.calls(("t1", "skill_load", {"name": "python-style"}))
    adapter.text("Loaded.")
    await service.chat(workspace, None, "@sonnet load the style")
    assert "python-style: Type hints everywhere" in (adapter.requests[1].system or "")
    loaded = adapter.requests[2].messages[-1].content[0]
    assert "Use type hints." in getattr(loaded, "content", ""), loaded
    (skills / "style.md").write_text("---\nname: python-style\ndescription: Short names "
                                     "please\n---\nUse short names.\n")
    adapter.text("Noted again.")
    await service.chat(workspace, None, "@sonnet and now?")
    assert "python-style: Short names please" in (adapter.requests[3].system or "")
