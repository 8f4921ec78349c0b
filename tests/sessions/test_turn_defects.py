"""Turn-loop defects from trying the product (issue 8: items 5, 7 and 8)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import cast

import pytest

from switchman.engine.errors import InvalidText, NoModelAvailable, UnknownSession
from tests.sessions.conftest import Engine
from tests.support.fake_provider import CutShort, FakeProvider, Reply, Stall, Usage

SONNET = "anthropic:claude-sonnet-4-6"


async def test_a_lone_surrogate_is_refused_and_leaves_the_session_as_it_was(
        engine: Engine, fake: FakeProvider) -> None:
    service = engine.service
    with pytest.raises(InvalidText) as caught:
        await service.chat(engine.workspace, None, "pasted \ud800 text")
    assert "position 7" in str(caught.value)
    swap = service.sessions.set_model(engine.workspace, None, "opus")
    assert swap.outcome == "applied"  # not "queued": no turn is stuck in flight
    assert fake.requests == []


async def test_a_failure_while_recording_the_start_undoes_the_turn_start(
        engine: Engine, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    service = engine.service

    def broken(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(service.store, "begin_turn", broken)
    with pytest.raises(sqlite3.OperationalError):
        await service.chat(engine.workspace, None, "hello")
    monkeypatch.undo()
    assert service.sessions.set_model(engine.workspace, None, "opus").outcome == "applied"
    status = service.queries.status(engine.workspace)
    assert not status.turn_in_flight
    fake.script_text("fine now")
    assert (await service.chat(engine.workspace, None, "hello")).status == "completed"


async def test_a_cancelled_turn_is_charged_for_what_it_used(engine: Engine,
                                                            fake: FakeProvider) -> None:
    service = engine.service
    stall = Stall(after_chunks=2)
    fake.script(Reply(text=("partial ", "answer ", "never sent"),
                      usage=Usage(input_tokens=1200, output_tokens=300), fault=stall))
    pending = asyncio.ensure_future(service.chat(engine.workspace, None, "@sonnet explain"))
    assert await stall.wait_reached_async()
    async with asyncio.timeout(5):  # yield to the turn until the second chunk is processed
        while not any(d.kind == "text" and d.text == "answer " for d in engine.recorder.deltas):
            await asyncio.sleep(0)
    turn_id = engine.recorder.deltas[-1].turn_id
    assert turn_id is not None
    await service.cancel(turn_id)
    result = await pending
    fake.release_stalls()
    # 1,200 input tokens from the stream's start; "partial answer " is ~4 output tokens.
    assert result.status == "cancelled"
    assert result.usage.input_tokens == 1200
    assert result.usage.output_tokens == 4
    expected = Decimal("0.003660")  # 1200 * $3/M + 4 * $15/M
    assert result.cost_usd == expected
    assert service.store.turn(turn_id).cost_usd == expected  # type: ignore[union-attr]
    assert service.queries.cost(result.session_id).total_usd == expected
    assert service.sessions.cost_today() == expected
    # The ledger's event says the charge is an estimate (as an interrupted call's is).
    (payload,) = service.store.db.execute("SELECT payload FROM events WHERE turn_id = ? AND "
                                          "type = 'llm.call_completed'", (turn_id,)).fetchone()
    assert json.loads(payload)["estimated"] is True


async def test_retries_inside_one_call_count_as_one_failure(engine: Engine,
                                                            fake: FakeProvider) -> None:
    service = engine.service
    for _ in range(3):  # first turn: the call and its two retries fail
        fake.script_error(500, "boom")
    for _ in range(2):  # second turn: two failures, then the retry succeeds
        fake.script_error(500, "boom")
    fake.script_text("recovered")
    first = await service.chat(engine.workspace, None, "@sonnet one")
    second = await service.chat(engine.workspace, None, "@sonnet two")
    assert (first.status, second.status) == ("failed", "completed")
    assert len(fake.requests) == 6
    assert service.availability.check("anthropic", SONNET) is None
    for _ in range(3):
        fake.script_error(500, "boom")
    third = await service.chat(engine.workspace, None, "@sonnet three")
    assert third.status == "failed"
    # 2 failed calls in all (5 failed HTTP requests before the fix would have made it unavailable)
    assert service.availability.check("anthropic", SONNET) is None
    assert str(service.availability.health("anthropic", SONNET)) == "degraded"


async def test_a_stream_cut_short_or_unreadable_fails_the_turn_as_the_providers(
        engine: Engine, fake: FakeProvider) -> None:
    """A stream whose body ended before the answer's end used to end the turn "completed" on
    half an answer; a stream frame that is not JSON ended it as Switchman's own bug
    (``internal_error``, with the parser's exception text as the message). Both are the
    provider's failures: retried, then ``provider_error`` with the message saved."""
    service = engine.service
    # cut after some text: not retried (the text was shown), failed with the text kept
    fake.script(Reply(text=("half ", "an answer"), fault=CutShort(after_chunks=1)))
    cut = await service.chat(engine.workspace, None, "@sonnet one")
    assert (cut.status, cut.text) == ("failed", "half ")
    assert cut.error is not None and cut.error.code == "provider_error"
    assert cut.error.message == (f"{SONNET}: could not reach the provider (network error): the "
                                 "stream ended before the answer did. Your message is saved; "
                                 "send it again to retry.")
    garbage = b"event: content_block_delta\ndata: {not json\n\n"
    fake.script(Reply(text=("a",), fault=CutShort(frame=garbage)))
    fake.script_text("read this time")  # before any text: retried
    assert (await service.chat(engine.workspace, None, "@sonnet two")).text == "read this time"
    for _ in range(3):  # the call and its two retries
        fake.script(Reply(text=("a",), fault=CutShort(frame=garbage)))
    unreadable = await service.chat(engine.workspace, None, "@sonnet three")
    assert unreadable.status == "failed"
    assert unreadable.error is not None and unreadable.error.code == "provider_error"
    assert unreadable.error.message == (f"{SONNET}: server error: the provider sent a stream "
                                        "that could not be read. Your message is saved; send "
                                        "it again to retry.")


async def test_a_session_of_another_workspace_is_named_as_such(engine: Engine,
                                                               tmp_path: Path) -> None:
    """Found by QA: a chat sent to another open folder's session said only "No session"."""
    service = engine.service
    other = tmp_path / "other"
    other.mkdir()
    service.open_workspace(str(other))
    session = service.new_session(engine.workspace).id
    with pytest.raises(UnknownSession) as caught:
        await service.chat(str(other), session, "hello")
    assert caught.value.code == "unknown_session"
    assert f"Session '{session}' belongs to another workspace" in str(caught.value)
    with pytest.raises(UnknownSession, match=r"^No session 'nope'\.$"):
        await service.chat(engine.workspace, "nope", "hello")


async def test_why_after_a_message_that_found_no_model_explains_that_attempt(
        engine: Engine, fake: FakeProvider) -> None:
    service = engine.service
    fake.script_text("hello")
    first = await service.chat(engine.workspace, None, "hello")
    keys = cast(dict[str, str], service._environ)  # the engine's own copy
    del keys["ANTHROPIC_API_KEY"]  # the key is gone: the next message finds no model
    with pytest.raises(NoModelAvailable) as caught:
        await service.chat(engine.workspace, None, "and now?")
    why = service.explain(engine.workspace, None, None)  # it explained "hello", the turn before
    assert why.decision is not None and why.decision.turn_id == caught.value.decision.turn_id
    assert why.turn_id is None  # no turn started
    assert why.summary == "no model available"
    assert why.text is not None and "no model available; the turn did not start" in why.text
    keys["ANTHROPIC_API_KEY"] = "k"
    fake.script_text("back")
    again = await service.chat(engine.workspace, None, "again")
    assert service.explain(engine.workspace, None, None).turn_id == again.turn_id != first.turn_id
    assert service.explain(engine.workspace, None, first.turn_id).turn_id == first.turn_id
