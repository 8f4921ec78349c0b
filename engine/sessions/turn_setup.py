"""What a turn runs with (:class:`TurnSetup`, fixed at its start, with the
:class:`TurnStart` that records it) and what it returns (:class:`TurnOutcome`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from switchman.engine.config.registry import ModelSpec, ProviderSpec
from switchman.engine.messages import Message
from switchman.engine.providers.base import ProviderAdapter
from switchman.engine.routing.context import TurnContext
from switchman.engine.sessions.live import TurnSink
from switchman.engine.sessions.records import TurnInfo, TurnResult
from switchman.engine.tools.registry import ToolRegistry

StopReason = Literal["end_turn", "max_tokens", "ended_by_tool", "step_limit", "none"]


class TurnStart:
    """Records a turn's start, once: soon after its first request has left for the
    provider, or when the turn first needs it recorded, whichever comes first."""

    def __init__(self, record: Callable[[], None]) -> None:
        self._record: Callable[[], None] | None = record
        self.failure: Exception | None = None
        """Why recording failed (the session's turn lock is held by another daemon)."""

    def soon(self) -> None:
        """Record on the next pass of the event loop: the request is on its way, and the
        turn's task is about to wait for the answer."""
        if self._record is not None:
            asyncio.get_running_loop().call_soon(self._run)

    def ensure(self) -> None:
        """Record now unless done; raises what recording raised (the turn did not start)."""
        self._run()
        if self.failure is not None:
            raise self.failure

    def _run(self) -> None:
        record, self._record = self._record, None
        if record is None:
            return
        try:
            record()
        except Exception as failure:  # raised in the turn's task by ensure()
            self.failure = failure


@dataclass(frozen=True)
class TurnSetup:
    """What a turn runs with, fixed at its start."""

    turn: TurnInfo
    model: ModelSpec
    provider: ProviderSpec
    adapter: ProviderAdapter
    tools: ToolRegistry
    system: str
    history: tuple[Message, ...]
    """The transcript so far, ending with this turn's user message."""
    history_tokens: int
    """The size estimate of ``history`` (the session keeps it as messages are added)."""
    sink: TurnSink
    start: TurnStart
    """Records the turn's start (durably) and tells the sink which model took it."""
    context: TurnContext
    """The turn as routing saw it (learning records the turn with it)."""
    banners: tuple[str, ...] = ()
    is_worker: bool = False
    parent_session_id: str | None = None
    output_budget: int | None = None
    """A cap on output tokens over all the turn's calls (a worker's ``max_tokens``)."""
    reasoning_effort: str | None = None
    """Sent with every call of the turn (a worker's tier effort, when its model takes one)."""


@dataclass(frozen=True)
class TurnOutcome:
    """How a turn ended and what it added."""

    result: TurnResult
    added: list[Message]
    """Messages the turn added to the transcript (assistant and tool messages)."""
    touched: list[str]
    """Paths this turn's tools touched."""
    stop_reason: StopReason
    """Why the last LLM call stopped (``none`` if it never finished)."""
    tool_calls: int
