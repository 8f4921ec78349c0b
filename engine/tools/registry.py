"""The tools of one turn: what the model is offered, and who runs each call.

The turn loop consults a :class:`ToolRegistry` and nothing else. A registry is
built per turn from *tool sets* (anything with ``definitions()`` and
``run(name, arguments)``, such as :class:`WorkspaceTools`) and single
:class:`ToolEntry` objects (the ``delegate`` tool, a worker's
``_request_context``), so new kinds of tools plug in without the turn loop
knowing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from switchman.engine.providers.base import INVALID_ARGUMENTS, ToolSpec
from switchman.engine.tools.arguments import ToolOutcome


class ToolSet(Protocol):
    """Several tools behind one object."""

    def definitions(self) -> list[ToolSpec]:
        """The definitions sent to the model."""
        ...

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one call; failures are error outcomes, never exceptions."""
        ...


@dataclass(frozen=True)
class ToolCallRequest:
    """One call the model made."""

    id: str
    name: str
    arguments: dict[str, Any]


Handler = Callable[[ToolCallRequest], Awaitable[ToolOutcome]]


@dataclass(frozen=True)
class ToolEntry:
    """One tool: its definition and how a call runs.

    ``concurrent`` tools run alongside the other calls of the same assistant
    message (``delegate``); the others run one after another, in order.
    ``ends_turn``: a successful call is the turn's last step (a worker's
    ``_request_context``). ``internal`` tools are offered but left out of the tools a
    refused call lists (a worker's ``_request_context``: its prompt says when to call it).
    """

    spec: ToolSpec
    handler: Handler
    concurrent: bool = False
    ends_turn: bool = False
    internal: bool = False


@dataclass(frozen=True)
class ToolContext:
    """Whose calls a turn's tools run (what a tool factory is given)."""

    workspace: str
    """The workspace URI."""
    folder: Path
    session_id: str
    turn_id: str
    model: str
    is_worker: bool = False


class ToolRegistry:
    """The tools offered in one turn, in the order they are offered."""

    def __init__(self, entries: Iterable[ToolEntry] = ()) -> None:
        self._entries: dict[str, ToolEntry] = {}
        self._withheld: dict[str, str] = {}
        """Tools taken away by :meth:`keep`, with why (for a model that calls one anyway)."""
        for entry in entries:
            self.add(entry)

    def add(self, entry: ToolEntry) -> None:
        """Offer one tool (replacing one of the same name)."""
        self._entries[entry.spec.name] = entry

    def add_set(self, tools: ToolSet) -> None:
        """Offer every tool of a set."""
        for spec in tools.definitions():
            self.add(ToolEntry(spec, _set_handler(tools, spec.name)))

    def names(self) -> list[str]:
        """The names of the tools offered."""
        return list(self._entries)

    def definitions(self) -> list[ToolSpec]:
        """The definitions sent to the model."""
        return [e.spec for e in self._entries.values()]

    def get(self, name: str) -> ToolEntry | None:
        """The tool called ``name``, if offered."""
        return self._entries.get(name)

    def withhold(self, name: str, why: str) -> None:
        """Say why ``name``, a tool this turn is not offered, is not (for a model that calls
        it anyway: a worker's ``delegate``, or one seen in the session's history)."""
        if name not in self._entries:
            self._withheld.setdefault(name, why)

    def keep(self, names: Iterable[str], why: str) -> None:
        """Offer only the tools named (in their current order); a call of one taken away is
        answered with ``why`` (``the profile 'reviewer' does not allow it``)."""
        wanted = set(names)
        self._withheld.update((n, why) for n in self._entries if n not in wanted)
        self._entries = {n: e for n, e in self._entries.items() if n in wanted}

    async def run(self, call: ToolCallRequest) -> ToolOutcome:
        """Run one call; a tool that is not offered is an error result the model can read."""
        entry = self._entries.get(call.name)
        if entry is None:
            listed = [n for n, e in self._entries.items() if not e.internal]
            offered = f"Available tools: {', '.join(listed) or 'none'}."
            why = self._withheld.get(call.name)
            if why is not None:  # the user reads why on the call's line, not "unknown tool"
                return ToolOutcome(f"'{call.name}' is not available here: {why}. {offered}",
                                   is_error=True, summary=f"not available: {why}")
            return ToolOutcome(f"Unknown tool '{call.name}'. {offered}", is_error=True,
                               summary="unknown tool")
        if set(call.arguments) == {INVALID_ARGUMENTS}:
            return _not_json(call.name, str(call.arguments[INVALID_ARGUMENTS]))
        return await entry.handler(call)


def _not_json(name: str, sent: str) -> ToolOutcome:
    """The answer to a call whose arguments did not parse as a JSON object."""
    shown = sent if len(sent) <= 200 else sent[:200] + "…"
    return ToolOutcome(f"The arguments of this {name} call are not a JSON object: '{shown}'. "
                       "Send them again as one JSON object, as the tool's schema describes.",
                       is_error=True, summary="arguments not JSON")


def _set_handler(tools: ToolSet, name: str) -> Handler:
    async def handler(call: ToolCallRequest) -> ToolOutcome:
        return await tools.run(name, call.arguments)
    return handler
