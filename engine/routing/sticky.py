"""The session's sticky model, set with ``/model`` (spec §3.3 and §4.2).

A swap requested while a turn is in flight is queued and applies at the next
turn boundary; of several queued swaps only the last counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SwapOutcome(StrEnum):
    """What a set or clear request did."""

    APPLIED = "applied"
    CLEARED = "cleared"
    QUEUED = "queued"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class PendingSwap:
    """A queued change; ``model`` None means "clear the sticky model"."""

    model: str | None


class StickyModel:
    """The sticky model of one session."""

    def __init__(self, active: str | None = None) -> None:
        self.active = active
        self.pending: PendingSwap | None = None
        self.turn_in_flight = False

    def request(self, model: str | None) -> SwapOutcome:
        """Set (a model id) or clear (None) the sticky model, or queue it mid-turn."""
        if self.turn_in_flight:
            if model == self.active:  # back to what is in force: nothing is left to change
                self.pending = None
                return SwapOutcome.UNCHANGED
            self.pending = PendingSwap(model)
            return SwapOutcome.QUEUED
        if model == self.active:
            return SwapOutcome.UNCHANGED
        self.active = model
        return SwapOutcome.APPLIED if model is not None else SwapOutcome.CLEARED

    def begin_turn(self) -> str | None:
        """Mark a turn as started; returns the sticky model routing should use."""
        self._apply_pending()
        self.turn_in_flight = True
        return self.active

    def end_turn(self) -> None:
        """Mark the turn as ended; a queued swap takes effect now."""
        self.turn_in_flight = False
        self._apply_pending()

    def _apply_pending(self) -> None:
        if self.pending is not None:
            self.active, self.pending = self.pending.model, None


def pending_banner(pending: PendingSwap) -> str:
    """Status text for a queued swap."""
    if pending.model is None:
        return "Sticky model will be cleared. Applies to next turn."
    return f"Model swap pending: {pending.model}. Applies to next turn."
