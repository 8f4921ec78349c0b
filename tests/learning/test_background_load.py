"""A large workspace's learned rows are read on a worker thread: slot 4 never stalls a
decision, and turns recorded meanwhile reach the index exactly once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from sqlite3 import Connection
from typing import TYPE_CHECKING

import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.config.policy import PatternSettings, effective_policy
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.learning import database
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.patterns import PatternRecommendation, PatternsLoading
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import Policy, RouteDecided, Verdict
from switchman.engine.routing.explain import render
from switchman.engine.routing.validation import CandidateValidator

if TYPE_CHECKING:
    from switchman.engine.learning.store import LoadedWorkspace

WS = "/code/app"
OPUS, HAIKU = "anthropic:claude-opus-4-7", "anthropic:claude-haiku-4-5"
SETTINGS = PatternSettings(cost_weight=0.05, min_confidence=0.05, min_sample_size=2, neighbors=6)
WAIT = 30.0  # seconds: a bound on waiting for an event, never a sleep


class BlockedStore(LearnedPatternStore):
    """A store whose loader thread stops at ``release`` (before or after reading the rows)."""

    def __init__(self, path: Path, *, before_read: bool) -> None:
        super().__init__(database.connect(path), ManualClock(), background=False,
                         sync_load_rows=3)
        self.before_read = before_read
        self.started, self.release = threading.Event(), threading.Event()
        self.loader_threads: list[threading.Thread] = []

    def _load(self, key: str, connection: Connection) -> LoadedWorkspace:
        self.loader_threads.append(threading.current_thread())
        self.started.set()
        if self.before_read:
            assert self.release.wait(WAIT)
        space = super()._load(key, connection)
        if not self.before_read:
            assert self.release.wait(WAIT)
        return space


def record(store: LearnedPatternStore, turn: str, message: str, model: str) -> None:
    store.record(TurnRecord(context=TurnContext(message=message, workspace_path=WS),
                            turn_id=turn, session_id=f"s-{turn}", model=model,
                            status="completed", cost_usd=0.01))


@pytest.fixture
def taught(tmp_path: Path) -> Path:
    """A pattern database where SQL questions went well on opus and badly on haiku."""
    path = tmp_path / database.FILE_NAME
    store = LearnedPatternStore(database.connect(path), ManualClock(), background=False)
    for i in range(4):
        record(store, f"opus-{i}", f"optimise this SQL join query number {i}", OPUS)
        record(store, f"haiku-{i}", f"optimise the SQL join query {i} please", HAIKU)
        store.feedback(f"haiku-{i}", -1)
    store.connection.close()
    return path


@pytest.fixture
def blocked(taught: Path, request: pytest.FixtureRequest) -> Iterator[BlockedStore]:
    store = BlockedStore(taught, before_read=request.param)
    yield store
    store.release.set()
    store.wait_loaded(WS, WAIT)
    store.connection.close()


def decide(store: LearnedPatternStore, registry: ModelRegistry) -> RouteDecided:
    policy, problems = check_routing_text("global_default: haiku\n", "routing.yaml", registry)
    assert policy is not None, problems
    effective = replace(effective_policy(policy, WS, None), pattern=SETTINGS)
    validator = CandidateValidator(registry, lambda provider: True,
                                   lambda provider, model: None)
    chain = PolicyChain(registry, effective, validator, ManualClock(), store)
    context = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    return chain.decide(RouteRequest(context=context, turn_id="t1", session_id="s1"))


def slot4(decision: RouteDecided) -> tuple[Verdict, str]:
    evaluation = next(e for e in decision.chain if e.policy is Policy.PATTERN_RECOMMENDATION)
    return evaluation.verdict, evaluation.reason


@pytest.mark.parametrize("blocked", [True, False], indirect=True,
                         ids=["recorded-before-the-read", "recorded-after-the-read"])
def test_a_decision_during_the_load_goes_on_without_slot_4(
        blocked: BlockedStore, registry: ModelRegistry) -> None:
    blocked.prepare(WS)  # the editor opened the folder: returns at once, the read starts
    assert blocked.started.wait(WAIT)
    assert blocked.loader_threads != [threading.current_thread()]

    during = decide(blocked, registry)  # returns while the loader is still blocked
    assert during.chosen_model == HAIKU
    assert slot4(during) == (Verdict.NOT_APPLICABLE, "learned patterns for this workspace are "
                                                     "still loading (8 turns)")
    assert "still loading (8 turns)" in render(during)
    assert isinstance(blocked.recommend(TurnContext(message="x", workspace_path=WS), SETTINGS),
                      PatternsLoading)

    # turns ending and feedback arriving meanwhile: durable at once
    record(blocked, "opus-new", "optimise this SQL join query again", OPUS)
    record(blocked, "opus-new", "optimise this SQL join query again", OPUS)  # ends once
    blocked.feedback("opus-0", 1)
    assert database.by_turn(blocked.connection, "opus-new") is not None

    blocked.release.set()
    assert blocked.wait_loaded(WS, WAIT)
    after = decide(blocked, registry)
    assert after.chosen_model == OPUS
    assert after.winner is not None and after.winner.policy is Policy.PATTERN_RECOMMENDATION

    space = blocked._workspaces[WS]
    stored = [r.turn_id for r in database.rows(blocked.connection, WS)]
    assert len(stored) == 9 and len(space.index) == 9  # every row once, none twice
    assert sorted(space.turn_ids) == sorted(stored)
    assert space.success[space.position["opus-0"]] == 1.0  # the feedback given meanwhile
    assert len(blocked.loader_threads) == 1  # one read, on one worker thread


def test_a_small_workspace_is_read_at_once(taught: Path) -> None:
    """At or below ``sync_load_rows`` no thread is started: the first decision reads."""
    store = LearnedPatternStore(database.connect(taught), ManualClock(), background=False,
                                sync_load_rows=8)
    store.prepare(WS)
    rec = store.recommend(TurnContext(message="optimise my SQL join query", workspace_path=WS),
                          SETTINGS)
    assert isinstance(rec, PatternRecommendation) and rec.model == OPUS
    store.connection.close()


@pytest.mark.parametrize("blocked", [True], indirect=True)
def test_forgetting_during_the_load_installs_nothing(blocked: BlockedStore) -> None:
    blocked.prepare(WS)
    assert blocked.started.wait(WAIT)
    assert blocked.forget(WS) == 8
    blocked.release.set()
    blocked.loader_threads[0].join(WAIT)
    assert blocked.recommend(TurnContext(message="optimise SQL", workspace_path=WS),
                             SETTINGS) is None
    space = blocked._workspace(WS)  # read again: nothing is left
    assert space is not None and len(space.index) == 0
