"""What a call costs when it ends without the provider's usage report: stopped before its
first token, lost mid-request, failed inside its stream (the real SDKs against the HTTP
fake provider). Once the request has left, the provider bills its input, so the turn is
charged an estimate, marked as such; a request refused with an error status, or that
never left, costs nothing (docs/sessions.md, "Costs")."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from switchman.engine.messages import ZERO_USD, Usage, cost_of
from switchman.engine.service import Switchman
from switchman.engine.sessions.records import TurnResult
from switchman.engine.sessions.slash_commands import usd
from tests.sessions.conftest import Engine, Recorder, engine_over
from tests.support.fake_provider import FakeProvider, ToolCall
from tests.support.fake_provider import Usage as FakeUsage
from tests.tools.conftest import ScriptedApprover

MODELS = {"sonnet": ("anthropic:claude-sonnet-4-6", Decimal(3), Decimal(15)),
          "gpt-5": ("openai:gpt-5", Decimal("1.25"), Decimal(10))}


@pytest.fixture
def engine(tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> Iterator[
        Engine]:
    """An engine with keys for both providers (OpenAI reports no usage before the end)."""
    monkeypatch.setenv("SWITCHMAN_RETRY_BASE_SECONDS", "0")
    with engine_over(tmp_path, fake, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"},
                     ScriptedApprover()) as engine:  # allows the delegations that ask
        yield engine


def events(engine: Engine, turn_id: str, kind: str) -> list[dict[str, Any]]:
    return [json.loads(p) for (p,) in engine.service.store.db.execute(
        "SELECT payload FROM events WHERE turn_id = ? AND type = ? ORDER BY id",
        (turn_id, kind))]


def ledger(engine: Engine, turn_id: str) -> list[tuple[int, int, int, int]]:
    return [tuple(r) for r in engine.service.store.db.execute(
        "SELECT input_tokens, output_tokens, cost_micros, estimated FROM cost_ledger "
        "WHERE turn_id = ? ORDER BY id", (turn_id,))]


def price(alias: str, input_tokens: int, output_tokens: int = 0) -> Decimal:
    _, per_in, per_out = MODELS[alias]
    return ((input_tokens * per_in + output_tokens * per_out) / 1_000_000).quantize(
        Decimal("0.000001"))


async def started_turn(engine: Engine) -> str:
    """The id of the turn that has just been routed (its request has left). Its
    ``llm.call_started`` mark is written in the same pass of the loop, right after the
    routing notice, so it is there by the time this wakes."""
    return (await engine.recorder.until(lambda: engine.recorder.notices[-1:]))[0].turn_id


async def assert_costs_add_up(engine: Engine, result: TurnResult, estimated: Decimal) -> None:
    """The turn, its record, the session, /cost and today's spend agree, estimate marked."""
    store, queries = engine.service.store, engine.service.queries
    turn = store.turn(result.turn_id or "")
    assert turn is not None
    assert (turn.cost_usd, turn.estimated_usd) == (result.cost_usd, result.estimated_usd)
    assert result.estimated_usd == estimated
    cost = queries.cost(result.session_id)
    assert (cost.total_usd, cost.estimated_usd) == (result.cost_usd, estimated)
    assert engine.service.sessions.cost_today() == result.cost_usd
    shown = (await engine.service.chat(engine.workspace, result.session_id, "/cost")).text
    # the estimated part is named; a cost all estimated says so once
    if estimated == result.cost_usd > ZERO_USD:
        assert f"This session: ~{usd(estimated)} (estimated)\n" in shown, shown
    else:
        assert (f"(of which ~{usd(estimated)} estimated)" in shown) == (estimated > ZERO_USD), shown


@pytest.mark.parametrize("alias", ["sonnet", "gpt-5"])
async def test_stop_before_the_first_token_charges_the_requests_input(
        engine: Engine, fake: FakeProvider, alias: str) -> None:
    """Stopped while the provider works on the request (no header, no token yet): it cost
    nothing before (the provider bills the input it received)."""
    stall = fake.script_stall("never", before_headers=True)
    pending = asyncio.ensure_future(engine.service.chat(engine.workspace, None,
                                                        f"@{alias} explain this"))
    assert await stall.wait_reached_async()
    turn_id = await started_turn(engine)
    (mark,) = events(engine, turn_id, "llm.call_started")  # marked sent, for a kill -9
    await engine.service.cancel(turn_id)
    result = await pending
    fake.release_stalls()
    assert result.status == "cancelled"
    sent = mark["input_tokens"]
    assert sent > 100  # the system prompt and tool descriptions, and the message
    assert (result.usage.input_tokens, result.usage.output_tokens) == (sent, 0)
    assert result.cost_usd == price(alias, sent) > ZERO_USD
    await assert_costs_add_up(engine, result, result.cost_usd)
    assert ledger(engine, turn_id) == [(sent, 0, int(result.cost_usd * 1_000_000), 1)]
    (completed,) = events(engine, turn_id, "llm.call_completed")
    assert completed["estimated"] is True


async def test_a_connection_lost_mid_request_is_charged_and_its_retry_too(
        engine: Engine, fake: FakeProvider) -> None:
    """The connection drops after the request left, before any answer text (OpenAI sends no
    usage before its end): that attempt is charged an estimate; the retry that answers is
    charged what the provider reported."""
    fake.script_disconnect("lost", after_chunks=0)
    fake.script_text("recovered", usage=FakeUsage(input_tokens=700, output_tokens=3))
    result = await engine.service.chat(engine.workspace, None, "@gpt-5 explain this")
    assert result.status == "completed"
    assert result.turn_id is not None
    marks = events(engine, result.turn_id, "llm.call_started")
    assert len(marks) == 2 and len(fake.requests) == 2
    lost = price("gpt-5", marks[0]["input_tokens"])
    assert ledger(engine, result.turn_id) == [
        (marks[0]["input_tokens"], 0, int(lost * 1_000_000), 1),
        (700, 3, int(price("gpt-5", 700, 3) * 1_000_000), 0)]
    assert result.cost_usd == lost + price("gpt-5", 700, 3)
    await assert_costs_add_up(engine, result, lost)


async def test_an_error_inside_the_stream_before_any_text_is_charged(
        engine: Engine, fake: FakeProvider) -> None:
    """The provider accepted the request (200) and then failed inside its stream before any
    text: the turn fails, charged for the input it sent."""
    for _ in range(3):  # the call and its two retries
        fake.script_stream_error(after_chunks=0, error_type="api_error", message="boom")
    result = await engine.service.chat(engine.workspace, None, "@gpt-5 explain this")
    assert result.status == "failed"
    assert result.turn_id is not None
    marks = [m["input_tokens"] for m in events(engine, result.turn_id, "llm.call_started")]
    assert len(marks) == 3
    assert [row[0] for row in ledger(engine, result.turn_id)] == marks
    assert result.cost_usd == sum((price("gpt-5", n) for n in marks), ZERO_USD) > ZERO_USD
    await assert_costs_add_up(engine, result, result.cost_usd)


async def test_refused_requests_cost_nothing(engine: Engine, fake: FakeProvider) -> None:
    """An HTTP error status (rate limited, server error) means the provider did not take the
    request: the attempts are marked refused and not charged; the retry that answers is."""
    fake.script_error(429, "slow down", error_type="rate_limit_error")
    fake.script_error(500, "boom")
    fake.script_text("fine", usage=FakeUsage(input_tokens=400, output_tokens=2))
    result = await engine.service.chat(engine.workspace, None, "@sonnet explain this")
    assert result.status == "completed"
    assert result.turn_id is not None
    assert [e["status"] for e in events(engine, result.turn_id, "llm.call_refused")] == \
        [429, 500]
    assert ledger(engine, result.turn_id) == [(400, 2, int(price("sonnet", 400, 2) * 10**6),
                                               0)]
    assert result.cost_usd == price("sonnet", 400, 2)
    await assert_costs_add_up(engine, result, ZERO_USD)


async def test_a_request_that_never_left_costs_nothing(tmp_path: Path, fake: FakeProvider,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The provider cannot be reached (connection refused): nothing was sent, nothing is
    charged, and nothing is marked sent."""
    monkeypatch.setenv("SWITCHMAN_RETRY_BASE_SECONDS", "0")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    (tmp_path / "config" / "models.yaml").write_text(
        f"providers:\n  anthropic: {{base_url: 'http://127.0.0.1:{port}', "
        "timeout_seconds: 5}\n")
    service = Switchman(Recorder(), config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ={"ANTHROPIC_API_KEY": "k"})
    try:
        workspace = service.open_workspace(str(tmp_path / "workspace"))
        result = await service.chat(workspace, None, "@sonnet explain this")
        assert result.status == "failed"
        assert (result.cost_usd, result.estimated_usd) == (ZERO_USD, ZERO_USD)
        assert service.store.events(kind="llm.call_started") == []
        assert service.store.events(kind="llm.call_completed") == []
    finally:
        service.store.db.close()


async def test_a_worker_stopped_before_its_first_token_rolls_up_once(
        engine: Engine, fake: FakeProvider) -> None:
    """A worker stopped while its provider works on the request: the worker is charged the
    estimate, its delegation's usage summary says so, and the planner's session total counts
    it once, marked estimated."""
    opus_api, haiku_api = "claude-opus-4-7", "claude-haiku-4-5"
    (engine.folder.parent / "config" / "routing.yaml").write_text(
        "tiers: {fast: haiku, balanced: sonnet, deep: opus}\n")
    fake.script_tool_calls([ToolCall("delegate", {"tier": "fast", "task": "look into it",
                                                  "context": {"mode": "minimal"}},
                                     id="toolu_w")], model=opus_api,
                           usage=FakeUsage(input_tokens=1000, output_tokens=50))
    stall = fake.script_stall("never", before_headers=True, model=haiku_api)
    fake.script_text("done without it", model=opus_api,
                     usage=FakeUsage(input_tokens=1200, output_tokens=10))
    pending = asyncio.ensure_future(engine.service.chat(engine.workspace, None, "@opus go"))
    assert await stall.wait_reached_async()
    # the worker's routing sends this update; its call's mark follows in the same pass
    started = await engine.recorder.until(
        lambda: [u for u in engine.recorder.delegations if u.worker_turn_id])
    worker_turn = started[0].worker_turn_id or ""
    assert await engine.service.cancel(worker_turn) == (True, "cancelled")
    result = await pending
    fake.release_stalls()
    assert result.status == "completed"
    worker = started[0].worker_session_id
    (mark,) = events(engine, worker_turn, "llm.call_started")
    estimate = cost_of(Usage(input_tokens=mark["input_tokens"]),
                       _pricing(engine, "anthropic:claude-haiku-4-5"))
    assert estimate > ZERO_USD
    assert engine.service.session(worker).session.estimated_usd == estimate
    (failed,) = engine.service.store.events(kind="delegate.failed")
    assert Decimal(failed["usage_summary"]["cost_usd"]) == estimate
    assert Decimal(failed["usage_summary"]["estimated_usd"]) == estimate
    assert Decimal(failed["worker_total_cost_usd"]) == estimate
    ended = [u for u in engine.recorder.delegations if u.phase == "ended"]
    assert (ended[-1].cost_usd, ended[-1].estimated_usd) == (estimate, estimate)
    opus = _pricing(engine, "anthropic:claude-opus-4-7")
    planner = cost_of(Usage(1000, 50), opus) + cost_of(Usage(1200, 10), opus)
    cost = engine.service.queries.cost(result.session_id)
    assert cost.planner_usd == planner
    assert (cost.workers_usd, cost.estimated_usd) == (estimate, estimate)
    assert cost.total_usd == planner + estimate  # once
    assert engine.service.sessions.cost_today() == planner + estimate


def _pricing(engine: Engine, model: str) -> Any:
    return engine.service.store.pricing(model)


async def test_todays_total_in_cost_says_what_part_is_estimated(
        engine: Engine, fake: FakeProvider) -> None:
    """/cost's "Today, all sessions" counts the estimated charges of every session, so it
    says how much of it is estimated, also in a session with none of its own."""
    stall = fake.script_stall("never", before_headers=True)
    pending = asyncio.ensure_future(engine.service.chat(engine.workspace, None,
                                                        "@sonnet explain this"))
    assert await stall.wait_reached_async()
    await engine.service.cancel(await started_turn(engine))
    stopped = await pending
    fake.release_stalls()
    assert stopped.estimated_usd > ZERO_USD
    engine.service.new_session(engine.workspace)
    fake.script_text("fine", usage=FakeUsage(input_tokens=400, output_tokens=2))
    answered = await engine.service.chat(engine.workspace, None, "@sonnet and this")
    assert answered.session_id != stopped.session_id and answered.estimated_usd == ZERO_USD
    shown = (await engine.service.chat(engine.workspace, answered.session_id, "/cost")).text
    today = stopped.cost_usd + answered.cost_usd
    assert f"Today, all sessions: {usd(today)} (of which ~{usd(stopped.cost_usd)} " \
        "estimated)" in shown, shown
    assert "Estimated: calls stopped" in shown  # the note says what the estimate is
    assert "This session: " + usd(answered.cost_usd) + "\n" in shown
    # the status bars' "today" (switchman/status) splits it the same way
    status = engine.service.status(engine.workspace)
    assert (status.cost_today_usd, status.estimated_today_usd) == (today, stopped.cost_usd)
