"""A session loaded in memory, and what makes a session a worker."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from switchman.engine.messages import Message, Usage, transcript_key
from switchman.engine.profiles.profile import ActiveProfile
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.sticky import StickyModel
from switchman.engine.sessions.records import ChatDelta, RouteNotice
from switchman.engine.skills import SkillIndex
from switchman.engine.tokens import estimate_messages
from switchman.engine.tools.registry import ToolEntry

if TYPE_CHECKING:
    from switchman.engine.sessions.turn_setup import TurnOutcome


class TurnSink(Protocol):
    """Where a turn's notices, output and charges go."""

    def route_decided(self, notice: RouteNotice) -> None:
        """The turn was routed."""

    def delta(self, delta: ChatDelta) -> None:
        """Streamed output."""

    def charged(self, usage: Usage, cost: Decimal, estimated: bool = False) -> None:
        """One LLM call was charged (``estimated``: Switchman's estimate of a call cut
        short, not the provider's report)."""


@dataclass
class RunningTurn:
    """A turn in flight."""

    turn_id: str
    model: str
    task: asyncio.Task[TurnOutcome]


@dataclass
class WorkerRole:
    """What makes a session a worker (spec 001 §5): its planner, and the handoff its
    turn runs with. A worker is otherwise a session like any other."""

    parent_session_id: str
    parent_tool_use_id: str
    tier: str
    system_prompt: Callable[[str, list[str]], str]
    """The worker prompt for (model id, tool names), built when the model is known."""
    allowed_tools: frozenset[str]
    """The planner's tools the worker may use (already intersected and filtered)."""
    extra_tools: list[ToolEntry]
    """Tools only workers have (``_request_context``)."""
    sink: TurnSink
    max_output_tokens: int | None = None
    """The planner's cap on the worker's output, over all its calls."""
    requires_structured_output: bool = False
    complexity: str | None = None
    complexity_source: str | None = None
    """``given`` (the planner named the complexity) or ``estimated``."""
    tier_floor: str | None = None
    """The planner's tier when the tier floor is on: the worker's tier never exceeds it."""
    reasoning_effort: str | None = None
    """Replaces the tier's reasoning effort (for example a profile's); None keeps it."""
    profile: ActiveProfile | None = None
    """The profile the planner delegated to (``subagent`` unless it named one)."""
    decision: RouteDecided | None = None
    """Its routing, decided before its start was asked about (the question names its model):
    its turn runs on it rather than routing again. Used once."""


@dataclass
class LiveSession:
    """A session loaded in memory."""

    id: str
    workspace: str
    folder: Path
    sticky: StickyModel
    history: list[Message]
    touched: list[str]
    skills: SkillIndex
    running: RunningTurn | None = None
    last_model: str | None = None
    turn_count: int = 0
    """The index of the session's latest turn when it was loaded or last ran here."""
    ended: dict[str, str] = field(default_factory=dict)
    """Status of turns that ended while this daemon ran, by turn id."""
    history_tokens: int = 0
    """Estimated tokens of ``history`` (kept up to date as messages are added)."""
    has_tool_calls: bool = False
    """Whether an assistant message in ``history`` called a tool."""
    worker: WorkerRole | None = None
    profile: str | None = None
    """The session's own profile choice (None: the workspace's or the global default)."""
    swap_queued_over: str | None = None
    """The stored sticky model when this daemon's pending swap was queued: stored otherwise
    when the turn ends, another window set it since, and that later request wins."""

    @property
    def is_worker(self) -> bool:
        """Whether this session runs a delegated sub-task."""
        return self.worker is not None

    def remember(self, messages: list[Message]) -> None:
        """Add messages to the history, updating the running estimates."""
        earlier = len(self.history)
        self.history.extend(messages)
        if messages and earlier and \
                transcript_key(messages[0]) < transcript_key(self.history[earlier - 1]):
            # a turn ending after a /delegate sent while it ran: the turn goes first
            self.history.sort(key=transcript_key)
        self.history_tokens += estimate_messages(messages)
        self.has_tool_calls = self.has_tool_calls or any(
            m.role == "assistant" and m.tool_uses() for m in messages)
