"""Where learning listens to the sessions layer: the lifecycle's turn-ended hook.

A turn's row is written when the turn ends, for top-level and worker turns
alike, with the turn as routing saw it (its message, the files touched before
it, the history's size then): later turns are compared with it as routing sees
them, and the fingerprint routing computed is reused rather than computed again.
"""

from __future__ import annotations

from switchman.engine.learning.evaluator import attached_keys
from switchman.engine.learning.recorder import OutcomeRecorder
from switchman.engine.sessions.lifecycle import TurnEnded, TurnLifecycle
from switchman.engine.sessions.manager import SessionManager


def learn_from_turns(recorder: OutcomeRecorder, sessions: SessionManager,
                     lifecycle: TurnLifecycle) -> None:
    """Record every ended turn, and let slash commands reach the recorder."""
    sessions.learning = recorder
    recorder.running = lifecycle.is_running  # a running planner's waiting flags are kept
    lifecycle.turn_ended.append(lambda ended: record_turn(recorder, sessions, ended))


def record_turn(recorder: OutcomeRecorder, sessions: SessionManager, ended: TurnEnded) -> None:
    """Turn one ended turn into a pattern row (a worker's also counts for its planner)."""
    live, outcome = ended.session, ended.outcome
    result = outcome.result
    asked = next((m for m in reversed(live.history)
                  if m.turn_id == result.turn_id and m.role == "user"), None)
    if result.turn_id is None or result.model is None or asked is None:
        return
    planner = None
    if live.worker is not None:
        parent = sessions.loaded(live.worker.parent_session_id)
        planner = parent.running.turn_id if parent and parent.running else None
    recorder.turn_ended(ended.context, turn_id=result.turn_id, session_id=live.id,
                        model=result.model, status=result.status, cost_usd=result.cost_usd,
                        added=outcome.added, is_worker=live.is_worker, planner_turn_id=planner,
                        attached=attached_keys(asked.content))
