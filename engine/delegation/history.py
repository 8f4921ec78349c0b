"""A session's delegations as its history keeps them, for editors rebuilding their cards.

The ``delegate.started`` / ``delegate.completed`` / ``delegate.failed`` events of a
session (the planner's, or the user's own ``/delegate``) are folded into one
:class:`~switchman.engine.sessions.records.DelegationRecord` each: the requested
tier and the tier the worker ran on after the tier floor, the task, the model and
how it ended. A planner's cards could be rebuilt from its ``delegate`` tool calls,
but not the floor's effect; a user's delegation has no tool call at all, so
without these its card could not come back after a reload.

A delegation that ended before its worker was routed (approval denied, stopped
while it waited for approval or for a free worker slot, no model for its tier) has
only its ``delegate.failed``: its record comes from that, with no model. One still
waiting for a free worker slot has only its ``delegate.queued``: ``queued``, or
``failed`` with ``interrupted`` once its planner's turn was interrupted. One that got its
slot and whose start waits for the user's approval also has a ``delegate.awaiting_approval``:
``awaiting_approval``, or — its planner's turn interrupted — never started, as a queued one.

A delegation with no ending whose worker's turn did end is ``running`` only while the
daemon that ran it lives (it writes the ending a moment after the turn's). Once that
daemon is gone, it never will: the delegation is ``failed`` with ``interrupted``, as a
worker whose turn the daemon's death cut short. Daemons before f56a51c could leave such
delegations behind when they exited.

Records are in the order the delegations were asked for (``requested_at``; older events
without it by when they started or ended).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import msgspec

from switchman.engine.delegation.contract import INVALID_ARGUMENTS
from switchman.engine.events import DelegateFailed, DelegateQueued, DelegateStarted
from switchman.engine.sessions.records import DelegationRecord, DelegationStatus
from switchman.engine.store.repository import INTERRUPTED_MESSAGE

CANCELLED_BY_USER = "cancelled_by_user"
INTERRUPTED = "interrupted"
STARTED, COMPLETED, FAILED = "delegate.started", "delegate.completed", "delegate.failed"
QUEUED, AWAITING_APPROVAL = "delegate.queued", "delegate.awaiting_approval"
"""The stored event types this module reads."""
NEVER_STARTED_MESSAGE = ("Switchman stopped (the daemon exited or was killed) while this "
                         "delegation waited for a free worker; it never started, and nothing "
                         "was charged for it.")
NEVER_APPROVED_MESSAGE = ("Switchman stopped (the daemon exited or was killed) while this "
                          "delegation waited for your approval to start; it never started, and "
                          "nothing was charged for it.")
"""A waiting delegation's detail once its planner's turn was found interrupted (waiting for a
slot, or then for approval): the turn's own message (its answer kept, send it again) does not
fit a call that never ran."""
AWAITING_APPROVAL_DETAIL = "waiting for your approval to start"
"""The detail of a delegation whose start waits for the user's approval (live and listed)."""
END_LOST_MESSAGE = ("Switchman stopped (the daemon exited or was killed) before this "
                    "delegation's end was recorded; what its worker did is kept in its "
                    "transcript.")
"""The detail of a delegation whose worker's turn ended but whose daemon died (or, before
f56a51c, exited) without recording how the delegation ended."""


def delegation_records(started: list[dict[str, Any]], ended: list[dict[str, Any]],
                       interrupted: Collection[str] = (), queued: Sequence[dict[str, Any]] = (),
                       end_lost: Collection[str] = (),
                       approving: Sequence[dict[str, Any]] = ()) -> list[DelegationRecord]:
    """The delegations of ``started`` events (stored payloads, oldest first) with how each
    ended (``delegate.completed`` / ``delegate.failed`` payloads); none ended: ``running``,
    or — when the worker's turn was interrupted (its session in ``interrupted``: the daemon
    running it died) — ``failed`` with the error ``interrupted``, as the turn shows it.
    ``queued`` (``delegate.queued`` payloads) dates their waits and adds those still waiting;
    ``interrupted`` also holds the planner turns interrupted while they waited. ``end_lost``
    holds the worker sessions whose turn ended under a daemon that is gone, their
    delegation's end unrecorded (:func:`open_workers` names the candidates). ``approving``
    (``delegate.awaiting_approval`` payloads) names the waiting ones whose start is asked
    about."""
    endings = {str(e.get("tool_use_id")): e for e in ended}
    waits = {str(q.get("tool_use_id")): msgspec.convert(q, DelegateQueued) for q in queued}
    asking = {str(a.get("tool_use_id")) for a in approving}
    records: dict[str, DelegationRecord] = {}
    asked: dict[str, datetime] = {}
    for payload in started:
        event = msgspec.convert(payload, DelegateStarted)
        first = records.get(event.tool_use_id)  # a worker routed again keeps its first start
        status, error, detail = _ending(endings.get(event.tool_use_id))
        if status == "running" and event.worker_session_id in interrupted:
            status, error, detail = "failed", INTERRUPTED, INTERRUPTED_MESSAGE
        elif status == "running" and event.worker_session_id in end_lost:
            status, error, detail = "failed", INTERRUPTED, END_LOST_MESSAGE
        wait = waits.get(event.tool_use_id)
        records[event.tool_use_id] = DelegationRecord(
            tool_use_id=event.tool_use_id, worker_session_id=event.worker_session_id,
            source=event.source,
            started_at=first.started_at if first is not None else event.timestamp,
            task=event.handoff.input.task if event.handoff is not None else "",
            tier=event.tier, worker_tier=event.worker_tier, tier_floor=event.tier_floor,
            floor_applied=event.floor_applied, model=event.resolved_model or None,
            routed_by=event.routed_by, status=status, error=error, detail=detail,
            queued_at=wait.timestamp if wait is not None else None,
            ended_at=_ended_at(endings.get(event.tool_use_id)),
            approval=event.approval or (first.approval if first is not None else None),
            superseded_approvals=event.superseded_approvals or (
                first.superseded_approvals if first is not None else []))
        asked.setdefault(event.tool_use_id, event.requested_at or event.timestamp)
    # (a failure recorded before failures named their tier cannot be described: left out;
    # a call refused for its arguments was never a delegation: the planner's tool call shows it)
    for tool_use_id, payload in endings.items():
        if tool_use_id not in records and payload.get("type") == FAILED \
                and payload.get("tier") is not None \
                and payload.get("failure_mode") != INVALID_ARGUMENTS:
            records[tool_use_id], asked[tool_use_id] = _never_routed(payload,
                                                                     waits.get(tool_use_id))
    for tool_use_id, wait in waits.items():
        if tool_use_id not in records:
            records[tool_use_id] = _waiting(wait, interrupted, tool_use_id in asking)
            asked[tool_use_id] = wait.timestamp
    return sorted(records.values(), key=lambda r: asked[r.tool_use_id])


def open_workers(started: list[dict[str, Any]], ended: list[dict[str, Any]]) -> list[str]:
    """The worker sessions of delegations that started and have no recorded end."""
    done = {str(e.get("tool_use_id")) for e in ended}
    return [str(s.get("worker_session_id")) for s in started
            if str(s.get("tool_use_id")) not in done and s.get("worker_session_id")]


def _waiting(wait: DelegateQueued, interrupted: Collection[str],
             asking: bool) -> DelegationRecord:
    """The record of a delegation still waiting for a free worker slot, or (``asking``) for
    the user's approval to start once it got one (its planner's turn interrupted: it never
    will start), dated when it began waiting."""
    if wait.turn_id is not None and wait.turn_id in interrupted:
        status, error = "failed", INTERRUPTED
        detail = NEVER_APPROVED_MESSAGE if asking else NEVER_STARTED_MESSAGE
    elif asking:
        status, error, detail = "awaiting_approval", None, AWAITING_APPROVAL_DETAIL
    else:
        status, error = "queued", None
        detail = f"waiting for a free worker ({wait.limit} may run at once)"
    return DelegationRecord(
        tool_use_id=wait.tool_use_id, worker_session_id="", source=wait.source,
        started_at=wait.timestamp, task=wait.task, tier=wait.tier, worker_tier=None,
        tier_floor=None, floor_applied=False, model=None, status=status,  # type: ignore[arg-type]
        error=error, detail=detail, queued_at=wait.timestamp)


def _never_routed(payload: dict[str, Any],
                  wait: DelegateQueued | None) -> tuple[DelegationRecord, datetime]:
    """The record of a delegation that failed before its worker was routed (it has no
    ``delegate.started``): dated when it ended, with no model; and when it was asked for."""
    failed = msgspec.convert(payload, DelegateFailed)
    status, error, detail = _ending(payload)
    record = DelegationRecord(
        tool_use_id=failed.tool_use_id, worker_session_id=failed.worker_session_id,
        source=failed.source, started_at=failed.timestamp, task=failed.task or "",
        tier=failed.tier or "", worker_tier=None, tier_floor=None, floor_applied=False,
        model=None, status=status, error=error, detail=detail,
        queued_at=wait.timestamp if wait is not None else None, approval=failed.approval,
        superseded_approvals=failed.superseded_approvals)
    return record, failed.requested_at or failed.timestamp


def _ended_at(payload: dict[str, Any] | None) -> datetime | None:
    """When a delegation's ending event (if any) was recorded."""
    if payload is None or payload.get("timestamp") is None:
        return None
    return msgspec.convert(payload["timestamp"], datetime)


def _ending(payload: dict[str, Any] | None) -> tuple[DelegationStatus, str | None, str | None]:
    """(status, error, detail) of a delegation from its ending event, if any."""
    if payload is None:
        return "running", None, None
    if payload.get("type") == COMPLETED:
        return "completed", None, None
    failed = msgspec.convert(payload, DelegateFailed)
    if failed.failure_mode == CANCELLED_BY_USER:
        return "cancelled", failed.failure_mode, failed.detail
    return "failed", failed.error, failed.detail

