"""The outcome recorder: session events become pattern rows and late evidence."""

from __future__ import annotations

from array import array

from switchman.engine.clock import ManualClock
from switchman.engine.learning import database
from switchman.engine.learning.fingerprint import DIMENSIONS
from switchman.engine.learning.recorder import ENDED_TURNS_KEPT, OutcomeRecorder
from switchman.engine.learning.store import LearnedPatternStore
from switchman.engine.routing.context import TurnContext


def end(recorder: OutcomeRecorder, turn_id: str) -> None:
    recorder.turn_ended(TurnContext(message=f"task {turn_id}", workspace_path="/w"),
                        turn_id=turn_id, session_id=f"s-{turn_id}", model="fast",
                        status="completed", cost_usd=0)  # type: ignore[arg-type]


async def test_a_workers_flag_whose_planner_never_gets_a_row_is_not_kept_for_good() -> None:
    """A worker's success flag waits for its planner's turn to end (its row is written then).
    A planner turn that never ended (never started), or that ended so long before the worker
    (more than ENDED_TURNS_KEPT turns ago: it left the list of ended turns) that the flag
    cannot tell, kept its flags in memory for as long as the daemon ran: one entry per such
    planner, for good. A flag waits while at most ENDED_TURNS_KEPT turns end; one whose
    planner ends within that window still reaches its row."""
    same = array("d", [1.0] + [0.0] * (DIMENSIONS - 1))  # no fingerprinting: 1,026 turns
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False,
                                fingerprinter=lambda ctx: same)
    recorder = OutcomeRecorder(store)
    recorder.worker_done("never-started", success=False)
    recorder.worker_done("planner", success=True)
    for i in range(ENDED_TURNS_KEPT - 1):
        end(recorder, f"other-{i}")
    end(recorder, "planner")  # within the window: its flag reaches its row
    await recorder.written()
    row = database.by_turn(store.connection, "planner")
    assert row is not None and row.evidence.delegations == 1
    assert "never-started" in recorder._delegations  # still within the window
    end(recorder, "one-more")
    assert recorder._delegations == {}  # what waits in memory is bounded


async def test_a_running_planners_flags_outlive_the_window() -> None:
    """A planner turn that runs while more than ENDED_TURNS_KEPT other turns end (a long
    planner turn; other windows' and its workers' turns ending meanwhile) kept its earlier
    workers' flags in the window's count only: they were dropped as if the planner had been
    abandoned, and its row learned only the workers that ended last. Only planner turns not
    running are let go."""
    same = array("d", [1.0] + [0.0] * (DIMENSIONS - 1))
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False,
                                fingerprinter=lambda ctx: same)
    running = {"planner"}
    recorder = OutcomeRecorder(store, running=running.__contains__)
    recorder.worker_done("planner", success=True)
    recorder.worker_done("gone", success=True)  # a planner turn that is not running
    for i in range(2 * ENDED_TURNS_KEPT + 1):
        end(recorder, f"other-{i}")
    assert "gone" not in recorder._delegations  # the bound still holds for the rest
    recorder.worker_done("planner", success=False)
    running.clear()
    end(recorder, "planner")
    await recorder.written()
    row = database.by_turn(store.connection, "planner")
    assert row is not None and row.evidence.delegations == 2
    assert row.evidence.delegations_failed == 1
    assert recorder._delegations == {}
