"""Delegation tiers end to end: the real daemon over LSP, the real SDKs, the fake provider.
The tier floor caps a worker at its planner's tier; a tier's second model runs the worker
when the first has no key; the tier's reasoning effort reaches the provider."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon
from tests.lsp.test_delegation import chat, delegate, tool_results, updates
from tests.support.editor_tools import ToolEditor
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import SwitchmanClient, running_server

SONNET_API, OPUS_API, HAIKU_API = "claude-sonnet-4-6", "claude-opus-4-7", "claude-haiku-4-5"
SONNET, HAIKU = "anthropic:claude-sonnet-4-6", "anthropic:claude-haiku-4-5"
READ_ONLY = ["read_file"]  # a read-only worker starts without asking for approval


def delegate_started(daemon: Daemon, tool_use_id: str) -> dict[str, Any]:
    with sqlite3.connect(daemon.data / "switchman.db") as db:
        rows = db.execute("SELECT payload FROM events WHERE type = 'delegate.started'").fetchall()
    found = [json.loads(payload) for (payload,) in rows]
    return next(event for event in found if event["tool_use_id"] == tool_use_id)


async def worker_decision(client: SwitchmanClient, call_id: str) -> dict[str, Any]:
    worker_id = updates(client, call_id)[-1]["worker_session_id"]
    worker = await client.request(methods.SESSION, {"session_id": worker_id})
    decision: dict[str, Any] = worker["turns"][0]["decision"]
    return decision


@pytest.fixture
def daemon_with_tiers(daemon: Daemon) -> Daemon:
    daemon.write_routing("global_default: sonnet\n"
                         "tiers:\n"
                         "  fast: [gpt-5-mini, haiku]\n"
                         "  balanced: sonnet\n"
                         "  deep: opus\n"
                         "  effort: {balanced: medium}\n")
    return daemon


async def test_a_balanced_planner_asking_for_deep_gets_balanced(
        daemon_with_tiers: Daemon, fake: FakeProvider) -> None:
    daemon = daemon_with_tiers
    fake.script_tool_calls([delegate("toolu_deep", tier="deep", task="prove it terminates",
                                     allowed_tools=READ_ONLY)], model=SONNET_API)
    fake.script_text("It terminates: the measure decreases.", model=SONNET_API)
    fake.script_text("Proved.", model=SONNET_API)
    async with running_server("visual-studio-code", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        result = await chat(client, daemon, "@sonnet is the loop finite?")
        assert (result["status"], result["text"]) == ("completed", "Proved.")
        assert not [r for r in fake.requests if r.model == OPUS_API]  # deep never ran
        worker_call = fake.requests[1]
        assert worker_call.model == SONNET_API
        # the balanced tier's effort reached Anthropic as an extended-thinking budget
        assert worker_call.body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
        assert "thinking" not in fake.requests[0].body  # the planner's own calls: no effort
        started = updates(client, "toolu_deep")[0]
        assert (started["phase"], started["tier"], started["worker_tier"]) == (
            "started", "deep", "balanced")
        assert (started["tier_floor"], started["floor_applied"]) == ("balanced", True)
        assert started["reasoning_effort"] == "medium"
        assert started["complexity_source"] == "estimated"
        decision = await worker_decision(client, "toolu_deep")
        chosen = decision["chain"][decision["winner_index"]]
        assert chosen["candidate_model"] == SONNET
        assert "capped from deep by the tier floor" in chosen["reason"]
        assert chosen["tier_choice"]["floor_applied"] is True
        detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
        assert tool_results(detail)["toolu_deep"]["content"] == \
            "It terminates: the measure decreases."
        # the history keeps the cap, so a reloaded chat shows the tier the worker ran on
        (stored,) = detail["delegations"]
        assert (stored["tool_use_id"], stored["source"], stored["status"]) == (
            "toolu_deep", "planner", "completed")
        assert (stored["tier"], stored["worker_tier"], stored["tier_floor"]) == (
            "deep", "balanced", "balanced")
        assert (stored["floor_applied"], stored["model"], stored["task"]) == (
            True, SONNET, "prove it terminates")
    event = delegate_started(daemon, "toolu_deep")
    assert (event["tier"], event["worker_tier"], event["tier_floor"]) == (
        "deep", "balanced", "balanced")
    assert event["floor_applied"] is True
    assert (event["resolved_model"], event["reasoning_effort"]) == (SONNET, "medium")


async def test_the_approval_question_names_the_tier_the_floor_caps_to(
        daemon_with_tiers: Daemon, fake: FakeProvider) -> None:
    """The floor is decided before the user is asked: a balanced planner's deep worker that
    may edit is asked about as a balanced one, as its chain routes it, not as deep."""
    daemon = daemon_with_tiers
    fake.script_tool_calls([delegate("toolu_deep", tier="deep", task="rename f to g",
                                     allowed_tools=["read_file", "edit_file"])],
                           model=SONNET_API)
    fake.script_text("Renamed.", model=SONNET_API)
    fake.script_text("Done.", model=SONNET_API)
    async with running_server("visual-studio-code", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        editor = ToolEditor(client)
        result = await chat(client, daemon, "@sonnet rename f")
        assert (result["status"], result["text"]) == ("completed", "Done.")
        (asked,) = editor.approvals
        title = "Delegate to a balanced worker (deep, capped by the tier floor) that may " \
                "change files"
        assert (asked["title"], asked["tier"]) == (title, "balanced")
        assert asked["requested_tier"] == "deep"
        # routed before asking: the model the worker will run on (the tier chose it)
        assert (asked["model"], asked["routed_by"]) == (SONNET, None)
        started = updates(client, "toolu_deep")[-1]
        assert (started["worker_tier"], started["floor_applied"]) == ("balanced", True)
        # the handoff keeps the tier asked for and the one run on: the worker's Handoff
        # reads "balanced worker (deep, capped by the tier floor)", live and rebuilt
        target = started["handoff"]["target"]
        assert (target["tier"], target["worker_tier"]) == ("deep", "balanced")
        worker = await client.request(methods.SESSION,
                                      {"session_id": started["worker_session_id"]})
        assert worker["handoff"]["target"] == target
        detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
        answer = tool_results(detail)["toolu_deep"]
        assert answer["summary"] == "balanced worker done"
        # the question's record says what the live question said (a rebuilt card shows it)
        assert answer["approval"] | {"id": None} == {
            "id": None, "title": title, "outcome": "allowed_once", "reason": None,
            "command": None, "cwd": None, "path": None, "diff": None, "tier": "balanced",
            "requested_tier": "deep", "model": SONNET, "routed_by": None,
            "worker_tools": ["edit_file"], "superseded": None, "model_changed": None}
        assert detail["delegations"][0]["approval"] == answer["approval"]


async def test_the_tiers_second_model_runs_when_the_first_has_no_key(
        daemon_with_tiers: Daemon, fake: FakeProvider) -> None:
    daemon = daemon_with_tiers
    del daemon.env["OPENAI_API_KEY"]  # gpt-5-mini, fast's first model, cannot be used
    fake.script_tool_calls([delegate("toolu_fast", tier="fast", task="list the files",
                                     allowed_tools=READ_ONLY, complexity="trivial")],
                           model=OPUS_API)
    fake.script_text("src/app.py", model=HAIKU_API)
    fake.script_text("One file.", model=OPUS_API)
    async with running_server("neovim", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        result = await chat(client, daemon, "@opus what files are there?")
        assert (result["status"], result["text"]) == ("completed", "One file.")
        assert [r.model for r in fake.requests] == [OPUS_API, HAIKU_API, OPUS_API]
        started = updates(client, "toolu_fast")[0]
        assert (started["model"], started["worker_tier"]) == (HAIKU, "fast")
        assert (started["complexity"], started["complexity_source"]) == ("trivial", "given")
        assert started["tier_floor"] == "deep" and started["floor_applied"] is False
        decision = await worker_decision(client, "toolu_fast")
        delegated = [e for e in decision["chain"] if e["policy"] == "DELEGATE_REQUEST"]
        assert [(e["candidate_model"], e["verdict"], e["validation_failure"])
                for e in delegated] == [("openai:gpt-5-mini", "rejected", "not_configured"),
                                        (HAIKU, "chose", None)]
        assert delegated[1]["tier_choice"]["candidate"] == 2


async def test_a_bad_complexity_is_an_error_the_planner_can_correct(
        daemon: Daemon, fake: FakeProvider) -> None:
    fake.script_tool_calls([delegate("toolu_bad", complexity="enormous",
                                     allowed_tools=READ_ONLY)], model=OPUS_API)
    fake.script_text("I will do it myself.", model=OPUS_API)
    async with running_server("visual-studio-code", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        result = await chat(client, daemon, "@opus tidy up")
        assert result["status"] == "completed"
        detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
        refused = tool_results(detail)["toolu_bad"]
        assert refused["is_error"] is True
        assert "'complexity' must be one of trivial, small, medium, large" in refused["content"]
        assert not updates(client, "toolu_bad")  # no worker was started


async def test_a_rule_matching_the_workers_task_is_named_on_its_card(
        daemon: Daemon, fake: FakeProvider) -> None:
    """Found by QA: a fast worker whose task matched a rule ran on opus, and its card said
    only "fast · claude-opus-4-7"; the notification and the history now say what chose it."""
    daemon.write_routing("global_default: sonnet\nrules:\n  - name: docs questions\n"
                         "    when: {message_matches: '(?i)readme'}\n    use: opus\n")
    fake.script_tool_calls([delegate("toolu_docs", tier="fast", task="Summarise README.md",
                                     allowed_tools=READ_ONLY)], model=SONNET_API)
    fake.script_text("It is a demo.", model=OPUS_API)
    fake.script_text("Summarised.", model=SONNET_API)
    async with running_server("visual-studio-code", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        result = await chat(client, daemon, "@sonnet what is in the docs?")
        assert result["status"] == "completed"
        started = updates(client, "toolu_docs")[0]
        assert (started["tier"], started["model"]) == ("fast", "anthropic:claude-opus-4-7")
        assert started["routed_by"] == "rule: docs questions"
        assert updates(client, "toolu_docs")[-1]["routed_by"] == "rule: docs questions"
        detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
        (stored,) = detail["delegations"]
        assert stored["routed_by"] == "rule: docs questions"  # a reloaded card says it too
    assert delegate_started(daemon, "toolu_docs")["routed_by"] == "rule: docs questions"


async def test_a_worker_its_tier_chose_has_no_routed_by(
        daemon_with_tiers: Daemon, fake: FakeProvider) -> None:
    fake.script_tool_calls([delegate("toolu_tier", tier="balanced", task="list the files",
                                     allowed_tools=READ_ONLY)], model=SONNET_API)
    fake.script_text("a.py", model=SONNET_API)
    fake.script_text("Listed.", model=SONNET_API)
    async with running_server("visual-studio-code", daemon_with_tiers.env,
                              workspaces=[daemon_with_tiers.workspace], listen=LISTEN) as client:
        await chat(client, daemon_with_tiers, "@sonnet list them")
        assert updates(client, "toolu_tier")[0]["routed_by"] is None
