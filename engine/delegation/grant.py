"""Which tools a worker gets from a ``delegate`` call's ``allowed_tools`` (spec 001 §5.6).

A worker gets the tools the planner named (by default: the planner's own), narrowed to the
planner's tools, less those no worker ever has, and less those its profile does not permit.
A named tool left out that way is *withheld*, with the reason, and the planner is told so
with the delegation's result (it asked for something it did not get and can correct
itself), except the tools no worker gets: the spec drops those silently, recording them as
``dropped_tools``. A call whose named tools (other than those) are all withheld
would start a worker with none of what it was asked to have: it is refused instead, as an
argument for the planner to correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from switchman.engine.delegation.contract import (
    DELEGATE,
    FORBIDDEN_FOR_WORKERS,
    REQUEST_CONTEXT,
    ArgumentProblem,
)
from switchman.engine.profiles.apply import permitted
from switchman.engine.profiles.profile import ActiveProfile


@dataclass(frozen=True)
class WorkerTools:
    """The tools of one worker, and what became of the ones the planner named."""

    wanted: list[str]
    """The names asked for: ``allowed_tools``, or by default the planner's tools a worker
    may have (their count is ``delegate.started``'s ``allowed_tool_count``)."""
    allowed: frozenset[str]
    """What the worker gets (besides ``_request_context``, which every worker has)."""
    dropped: list[str] = field(default_factory=list)
    """Named tools no worker gets (``dropped_tools``)."""
    withheld: dict[str, str] = field(default_factory=dict)
    """Every named tool the worker does not get, with why, in the order named."""

    def told(self) -> dict[str, str]:
        """The withheld tools the planner is told of (and the handoff records as
        ``withheld_tools``): all but those no worker has, which go silently."""
        return {n: why for n, why in self.withheld.items() if n not in FORBIDDEN_FOR_WORKERS}

    def note(self) -> str:
        """For the planner, after the worker's result: the tools it named and the worker did
        not have, and why; empty when it had them all. The tools no worker has are left out
        (spec 001 §5.6 drops them silently: the result is the worker's alone, and they are
        recorded as ``dropped_tools``)."""
        told = self.told()
        if not told:
            return ""
        listed = "; ".join(f"{name} ({why})" for name, why in told.items())
        return f"[The worker did not have these tools you named: {listed}.]"


def worker_tools(named: list[str] | None, planner_tools: list[str],
                 profile: ActiveProfile) -> WorkerTools:
    """The tools a worker of ``profile`` gets when the planner has ``planner_tools`` and
    named ``named`` (None: its own)."""
    wanted = named if named is not None else \
        [n for n in planner_tools if n not in FORBIDDEN_FOR_WORKERS]
    allowed = frozenset(n for n in wanted
                        if n in planner_tools and n not in FORBIDDEN_FOR_WORKERS
                        and permitted(profile.profile, n))
    if named is None:  # only tools the planner named count as dropped or withheld
        return WorkerTools(wanted, allowed)
    withheld = {n: _why_withheld(n, planner_tools, profile) for n in named
                if n not in allowed and n != REQUEST_CONTEXT}
    return WorkerTools(wanted, allowed, [n for n in named if n in FORBIDDEN_FOR_WORKERS],
                       withheld)


def check_worker_tools(tools: WorkerTools, planner_tools: list[str],
                       profile: ActiveProfile) -> None:
    """Refuse a call that named tools a worker may have and would get none of them."""
    asked = [n for n in tools.withheld if n not in FORBIDDEN_FOR_WORKERS]
    given = [n for n in tools.wanted if n in tools.allowed]
    if not asked or given:
        return
    listed = "; ".join(f"{n} ({tools.withheld[n]})" for n in asked)
    could = sorted(n for n in planner_tools
                   if n not in FORBIDDEN_FOR_WORKERS and permitted(profile.profile, n))
    raise ArgumentProblem(
        f"'allowed_tools' leaves the worker none of the tools you named: {listed}. The worker "
        f"could have {', '.join(could) if could else 'no tools'}; name those you mean, or "
        "leave allowed_tools out to give it all of them")


def _why_withheld(name: str, planner_tools: list[str], profile: ActiveProfile) -> str:
    if name == DELEGATE:
        return "workers cannot delegate"
    if name in FORBIDDEN_FOR_WORKERS:
        return "workers cannot change memory or skills"
    if name not in planner_tools:
        return "you do not have it"
    return f"the worker's profile '{profile.name}' does not permit it"
