"""User-initiated delegation through the engine (``/delegate``, "delegate that"; spec 003):
which task is handed over, the clarifying question, approval, and what is recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from switchman.engine.errors import InvalidAttachment
from switchman.engine.messages import AttachmentRequest, ImageBlock, Usage
from switchman.engine.tools.approval import ApprovalAnswer
from tests.sessions.conftest import Engine, scripted_engine
from tests.support.scripted_adapter import ScriptedAdapter
from tests.tools.conftest import ScriptedApprover

HAIKU, SONNET, OPUS = ("anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6",
                       "anthropic:claude-opus-4-7")


@pytest.fixture
def user(tmp_path: Path, adapter: ScriptedAdapter, approver: ScriptedApprover) -> Iterator[Engine]:
    started = scripted_engine(tmp_path, adapter, approver,
                              {"app.py": "def f():\n    return 1\n"})
    yield started
    started.service.store.db.close()


def selection(engine: Engine, text: str) -> AttachmentRequest:
    return AttachmentRequest(uri=(engine.folder / "app.py").as_uri(), kind="selection",
                             text=text, start_line=1, end_line=2)


async def test_delegating_a_selection_hands_it_to_a_worker(
        user: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    adapter.text("f returns 1.", model=HAIKU, usage=Usage(300, 10))
    result = await user.service.chat(user.workspace, None, "/delegate fast explain this", [],
                                     [selection(user, "def f():\n    return 1")])
    assert (result.kind, result.status, result.text, result.model) == (
        "command", "completed", "f returns 1.", HAIKU)
    (request,) = adapter.requests
    first = request.messages[0].text()
    assert first.startswith("explain this\n\nAttached selection app.py (lines 1-2):")
    assert "    return 1" in first
    assert "the user handed you one task directly" in (request.system or "")
    assert "the user's selection app.py lines 1-2" in (request.system or "")
    # the worker may edit (the session's tools): so the user approved it first
    (asked,) = approver.asked
    assert (asked.tool, asked.tier, asked.task) == ("delegate", "fast", "explain this")
    started = user.service.store.events(kind="delegate.started")[0]
    assert (started["source"], started["focus"], started["tier"], started["context_mode"]) == (
        "user", "selection", "fast", "explicit")
    assert started["session_id"] == result.session_id
    envelope = started["handoff"]
    assert (envelope["reason"], envelope["target"]["profile"]["name"],
            envelope["input"]["task"]) == ("user_delegate", "subagent", "explain this")
    assert envelope["source"]["tool_use_id"] == envelope["trace"]["trace_id"]
    assert envelope["source"]["tool_use_id"].startswith("user_")
    updates = user.recorder.delegations
    assert {(u.source, u.turn_id) for u in updates} == {("user", None)}
    assert updates[-1].status == "completed"
    (worker,) = user.service.session_list(user.workspace, True).sessions[0].workers
    assert worker.parent_tool_use_id == updates[0].tool_use_id
    assert worker.parent_tool_use_id.startswith("user_")
    # the user's session has no turn for it (no model was routed), only the exchange
    assert user.service.store.turns(result.session_id) == []
    assert [(m.role, m.text()) for m in user.service.store.messages(result.session_id)] == [
        ("user", "/delegate fast explain this"), ("assistant", "f returns 1.")]
    # nor a tool result to keep the question of its start with: its record keeps it, so a
    # rebuilt chat shows the card the live chat had
    (record,) = user.service.session(result.session_id).delegations
    assert record.approval is not None
    assert (record.approval.id, record.approval.outcome, record.approval.tier,
            record.approval.worker_tools) == (asked.id, "allowed_once", "fast", asked.worker_tools)


async def test_a_selection_alone_is_the_task(user: Engine, adapter: ScriptedAdapter) -> None:
    adapter.text("done", model=SONNET)
    result = await user.service.chat(user.workspace, None, "/delegate", [],
                                     [selection(user, "# TODO: add a docstring to f")])
    assert result.text == "done"  # no tier named: balanced
    assert "Do what the selected text below asks" in adapter.requests[0].messages[0].text()


async def test_delegate_that_hands_over_the_latest_request(
        user: Engine, adapter: ScriptedAdapter) -> None:
    adapter.text("checked", model=OPUS)
    adapter.text("drafted", model=OPUS)
    await user.service.chat(user.workspace, None, "@opus check the weather in Oslo")
    await user.service.chat(user.workspace, None, "@opus draft an email to Bob")
    adapter.text("the draft, by a worker", model=HAIKU)
    result = await user.service.chat(user.workspace, None, "Do that via a fast sub-agent.")
    assert result.text == "the draft, by a worker"
    assert adapter.requests[-1].messages[0].text() == "draft an email to Bob"
    assert user.service.store.events(kind="delegate.started")[0]["focus"] == "latest_request"


async def test_ambiguous_references_get_one_question_and_no_worker(
        user: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    nothing = await user.service.chat(user.workspace, None, "delegate that")
    assert nothing.kind == "command" and nothing.text.startswith("What should the worker do?")
    assert nothing.cost_usd == 0 and nothing.model is None
    adapter.text("ok", model=OPUS)
    await user.service.chat(user.workspace, None, "@opus please:\n- fix the login bug\n"
                                                  "- write release notes")
    both = await user.service.chat(user.workspace, None, "/delegate")
    assert both.text.startswith("Delegate which one: “fix the login bug” or "
                                "“write release notes”?")
    assert len(adapter.requests) == 1 and approver.asked == []
    assert user.service.store.events(kind="delegate.started") == []
    assert user.recorder.delegations == []


async def test_a_denied_delegation_starts_no_worker(
        user: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    approver.answers.append(ApprovalAnswer("deny"))
    result = await user.service.chat(user.workspace, None, "/delegate deep rewrite app.py")
    assert (result.status, result.text) == (
        "failed", "No worker was started: the delegation was not approved.")
    assert result.error is not None and result.error.code == "approval_denied"
    assert adapter.requests == []
    assert user.service.session_list(user.workspace, True).sessions[0].workers == []
    (record,) = user.service.session(result.session_id).delegations
    assert (record.status, record.error) == ("failed", "approval_denied")
    assert record.approval is not None and record.approval.outcome == "denied"
    assert record.approval.id == approver.asked[0].id


async def test_a_first_word_that_is_no_tier_starts_the_task(
        user: Engine, adapter: ScriptedAdapter) -> None:
    adapter.text("renamed", model=SONNET)
    preview = await user.service.preview(user.workspace, None, "delegate that", False)
    assert preview.command == "/delegate"
    await user.service.chat(user.workspace, None, "/delegate rename f to g")
    assert adapter.requests[0].messages[0].text() == "rename f to g"


async def test_the_tier_floor_does_not_cap_the_users_own_choice(
        user: Engine, adapter: ScriptedAdapter) -> None:
    adapter.text("hi", model=HAIKU)
    await user.service.chat(user.workspace, None, "@haiku hello")  # a fast model last
    adapter.text("deep answer", model=OPUS)
    result = await user.service.chat(user.workspace, None, "/delegate deep prove it")
    assert (result.text, result.model) == ("deep answer", OPUS)
    started = user.service.store.events(kind="delegate.started")[0]
    assert (started["tier_floor"], started["floor_applied"]) == (None, False)


async def test_a_profile_named_first_runs_the_worker_with_it(
        user: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover) -> None:
    (user.folder.parent / "config" / "profiles.yaml").write_text(
        "profiles:\n  reviewer:\n    description: Reviews without editing\n"
        "    system_prompt: You are a meticulous reviewer.\n"
        "    tools: [read_file, grep]\n    model: haiku\n    approval: read_only\n")
    adapter.text("looks fine", model=HAIKU)
    result = await user.service.chat(user.workspace, None, "/delegate reviewer check app.py")
    assert (result.text, result.model) == ("looks fine", HAIKU)
    (request,) = adapter.requests
    assert request.messages[0].text() == "check app.py"
    assert sorted(t.name for t in request.tools) == ["_request_context", "grep", "read_file"]
    assert "You are a meticulous reviewer." in (request.system or "")
    assert approver.asked == []  # a read-only worker starts without asking
    (worker,) = user.service.session_list(user.workspace, True).sessions[0].workers
    assert worker.profile == "reviewer"
    envelope = user.service.store.events(kind="delegate.started")[0]["handoff"]
    assert (envelope["target"]["profile"]["name"], envelope["capability_scope"]["tools"],
            envelope["capability_scope"]["approval_required"]) == (
        "reviewer", ["grep", "read_file"], False)


async def test_images_are_refused_rather_than_dropped(user: Engine,
                                                      adapter: ScriptedAdapter) -> None:
    with pytest.raises(InvalidAttachment, match="Images cannot be handed to a worker"):
        await user.service.chat(user.workspace, None, "/delegate describe this",
                                [ImageBlock("image/png", "iVBORw0KGgo=")])
    assert adapter.requests == [] and user.recorder.delegations == []


@pytest.mark.parametrize("message", ["/delegate fast list the files", "delegate that"])
async def test_with_delegation_turned_off_delegate_is_refused_saying_where(
        user: Engine, adapter: ScriptedAdapter, approver: ScriptedApprover, message: str) -> None:
    """``delegation: {enabled: false}`` turns delegation off everywhere: the planner is not
    offered ``delegate`` (test_delegation.py) and the user's own ``/delegate`` is refused,
    naming the setting and the file it is set in."""
    routing = user.folder.parent / "config" / "routing.yaml"
    routing.write_text("delegation: {enabled: false}\n")
    adapter.text("the files are a, b and c")  # what a worker would answer
    result = await user.service.chat(user.workspace, None, message)
    assert (result.kind, result.status) == ("command", "failed")
    assert result.error is not None and result.error.code == "delegation_disabled"
    assert result.text == (f"Delegation is turned off: `delegation: {{enabled: false}}` in "
                           f"{routing}. Nothing was delegated; set it to true there (or remove "
                           "it) to use /delegate.")
    assert adapter.requests == [] and approver.asked == [] and user.recorder.delegations == []
    assert user.service.store.events(kind="delegate.started") == []
    assert user.service.store.messages(result.session_id) == []  # nothing kept in the session


async def test_the_workers_answer_joins_the_conversation_the_next_turn_sees(
        user: Engine, adapter: ScriptedAdapter) -> None:
    adapter.text("checked", model=OPUS)
    await user.service.chat(user.workspace, None, "@opus check the weather in Oslo")
    adapter.text("Oslo: rain all week", model=HAIKU)
    done = await user.service.chat(user.workspace, None, "/delegate fast look up Oslo")
    adapter.text("take an umbrella", model=OPUS)
    await user.service.chat(user.workspace, None, "@opus so what should I pack?")
    sent = [(m.role, m.text()) for m in adapter.requests[-1].messages]
    assert sent[2:4] == [("user", "/delegate fast look up Oslo"),
                         ("assistant", "Oslo: rain all week")]
    # kept in the store too: the transcript shows it, and a reloaded session remembers it
    stored = user.service.store.messages(done.session_id)
    assert [(m.role, m.turn_id is None, m.model) for m in stored[2:4]] == [
        ("user", True, None), ("assistant", True, HAIKU)]
    # "delegate that" now means the request before, not the earlier delegation
    adapter.text("again", model=HAIKU)
    await user.service.chat(user.workspace, None, "delegate that")
    assert adapter.requests[-1].messages[0].text() == "so what should I pack?"


async def test_a_delegation_sent_while_a_turn_runs_follows_that_turn_in_the_history(
        user: Engine, adapter: ScriptedAdapter) -> None:
    """The turn's messages stay together (tool call, its result, the answer); the /delegate
    and its answer come after them — in the next turn's history and in the stored transcript
    alike. (The next model read "/delegate …" merged into the turn's message and the worker's
    answer merged into the planner's tool call.)"""
    adapter.calls(("tu_r", "read_file", {"path": "app.py"}), model=OPUS)
    gate = asyncio.Event()
    waiting = adapter.text("f returns 1", " — done", model=OPUS, gate=gate)
    running = asyncio.create_task(user.service.chat(user.workspace, None, "@opus read app.py"))
    await waiting.reached.wait()  # the second call streams its first words, then waits
    adapter.text("a summary", model=HAIKU)
    await user.service.chat(user.workspace, None, "/delegate fast summarise app.py")
    gate.set()
    turn = await running
    adapter.text("fine", model=OPUS)
    await user.service.chat(user.workspace, None, "@opus next")
    expected = [("user", "read app.py"), ("assistant", ""), ("tool", ""),
                ("assistant", "f returns 1 — done"), ("user", "/delegate fast summarise app.py"),
                ("assistant", "a summary"), ("user", "next")]
    assert [(m.role, m.text()) for m in adapter.requests[-1].messages] == expected
    stored = user.service.store.messages(turn.session_id)
    assert [(m.role, m.text()) for m in stored] == [*expected, ("assistant", "fine")]
