"""Slash commands typed in chat (spec §10). They are answered by Switchman, never a model.

Only the commands below are intercepted; any other message starting with
``/`` (such as ``/commit fix the bug``) is an ordinary message, so rules can
match it — unless its first word is a bare ``/word`` one slip away from a
command (``/modle``, ``/cots``, ``/Help``, ``/mod``: :func:`mistyped`), which fails with
``unknown_command`` instead of paying for a model's answer to a typo.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.config.problems import Problem, sort_problems
from switchman.engine.config.report import format_in_force, format_problems, format_rules
from switchman.engine.config.skill_names import unknown_skills_in_files
from switchman.engine.config.store import ConfigStore
from switchman.engine.delegation.focus import COMMAND, is_delegate_message
from switchman.engine.errors import (
    CommandUsage,
    OverrideUnusable,
    UnknownCommand,
    UnknownModel,
    UnknownProfile,
)
from switchman.engine.events import PatternOverrideDismissed, RouteOverridden
from switchman.engine.messages import AttachmentBlock, ImageBlock
from switchman.engine.profiles.listing import profile_text
from switchman.engine.routing.chain import surfaced_suggestion
from switchman.engine.routing.decision import PolicyEvaluation
from switchman.engine.routing.explain import render
from switchman.engine.routing.overrides import ROUTE_OVERRIDE_REASON, Override
from switchman.engine.sessions.records import (
    ChatDelta,
    CostBreakdown,
    ErrorInfo,
    TurnInfo,
    TurnResult,
)
from switchman.engine.slips import near_misses
from switchman.engine.tools.approval import TrustStore
from switchman.engine.wording import counted

if TYPE_CHECKING:
    from switchman.engine.sessions.lifecycle import TurnLifecycle
    from switchman.engine.sessions.live import LiveSession
    from switchman.engine.sessions.manager import SessionManager
    from switchman.engine.sessions.queries import SessionQueries

COMMANDS = ("/model", "/profile", "/rules", "/cost", "/route", "/patterns", "/trust", "/delegate",
            "/help")

HELP = """Commands:
  /model <id or alias>   use this model for the session (skips your rules)
  /model -               clear the sticky model; routing follows your rules again
  /model show            the active and sticky model, and why the last turn used its model
  /profile               the agent profiles, and the one this session uses
  /profile <name>        use this profile in this session (from its next turn)
  /profile clear         go back to the workspace's or the global default profile
  /rules check           validate routing.yaml and models.yaml
  /rules show            the active rules, in the order they are tried
  /rules reload          re-read the configuration files now
  /cost                  this session's cost by model, and today's total
  /route override        run the last message again on the model the pattern store suggested
  /route ignore          dismiss that suggestion
  /route retry           try the providers and models marked unavailable again now
  /patterns              what the pattern store remembers for this workspace
  /trust                 the tools that run without asking in this workspace
  /trust revoke <tool>   ask again before <tool> runs (/trust revoke all: every tool)
  /delegate [tier] <task>  hand a task to a worker (a tier or a profile first; with a
                         selection attached: that selection; with no task: your last
                         request). "delegate that" too
Start a message with @alias (e.g. @haiku) to use a model for that message only."""


def patterns_usage(folder: str) -> str:
    """``/patterns``' usage line, with the terminal commands for this folder written out."""
    return ("Usage: /patterns [stats] (in the chat it only shows what was learned here; to "
            f"forget or export it, run `switchman patterns forget --workspace "
            f"{shlex.quote(folder)}` or `switchman patterns export` in a terminal)")

ROUTE_USAGE = ("Usage: /route override (run the last message again on the suggested model) | "
               "/route ignore (dismiss the suggestion) | /route retry (try the providers "
               "marked unavailable again now)")

_BARE_WORD = re.compile(r"/[A-Za-z]+")
_MIN_STARTED = 4
"""A command cut short counts as mistyped from three letters on (``/mod``): shorter ones
(``/pr``, ``/co``) are too likely to be a word of the user's own that a rule matches."""


def command_name(message: str) -> str | None:
    """The slash command ``message`` invokes (or a mistyped one, as typed: :func:`mistyped`),
    or None for an ordinary message."""
    if is_delegate_message(message):  # "delegate that" is the command in other words
        return COMMAND
    words = message.strip().split()
    if not words:
        return None
    if words == ["/"]:  # the start of a command: the list of them
        return "/help"
    return words[0] if words[0] in COMMANDS or mistyped(words[0]) else None


def mistyped(word: str) -> list[str]:
    """The commands ``word`` is one slip away from, if it is a bare ``/word`` that is not one.

    A slip: a command cut short after three letters or more (``/mod``, ``/patt``), one
    letter wrong, missing or extra, two neighbours swapped, or the case. The
    first letter must match (``/post`` and ``/host`` are not ``/cost``), and anything with
    more than letters after the slash (``/etc/hosts``, ``/usr/bin/env``, ``/re-run``) is a
    message, like every word further from a command (``/commit``, ``/delete``)."""
    if word in COMMANDS or not _BARE_WORD.fullmatch(word):
        return []
    started = [c for c in COMMANDS if len(word) >= _MIN_STARTED and c.startswith(word.lower())]
    return started or near_misses(word, COMMANDS, skip=1)


async def run(manager: SessionManager, lifecycle: TurnLifecycle, queries: SessionQueries,
              live: LiveSession, message: str) -> TurnResult:
    """Answer a slash command in the chat stream."""
    words = message.strip().split()
    name, args = command_name(message) or words[0], words[1:]
    try:
        if name == "/route" and _keywords(args) == ["override"]:
            rerun = await route_override(manager, lifecycle, live, message)
            if rerun is not None:
                return rerun
        if name not in COMMANDS:
            raise UnknownCommand(name, mistyped(name))
        # `forget` must not pass for done
        if name == "/patterns" and _keywords(args) not in ([], ["stats"]):
            raise CommandUsage(patterns_usage(str(live.folder)))
        if name == "/patterns" and manager.learning is not None:  # read after its writes
            text = await manager.learning.stats_text(str(live.folder))
        elif name == "/rules":
            text = await _rules(manager, str(live.folder), args)
        else:
            text = _dispatch(manager, queries, live, name, args)
        error = None
    except (UnknownModel, UnknownProfile, CommandUsage, UnknownCommand, OverrideUnusable) as exc:
        text, error = str(exc), ErrorInfo(exc.code, str(exc))
    manager.observer.delta(ChatDelta(live.id, None, "command_output", text=text))
    return TurnResult(kind="command", session_id=live.id, turn_id=None,
                      status="failed" if error else "completed", model=None, text=text,
                      error=error, summary=name)


def _keywords(args: list[str]) -> list[str]:
    """``args`` as keywords: ``/rules CHECK`` is ``/rules check``, as ``/profile CLEAR``
    clears."""
    return [arg.lower() for arg in args]


def _dispatch(manager: SessionManager, queries: SessionQueries, live: LiveSession, name: str,
              args: list[str]) -> str:
    if name == "/model":
        return _model(manager, queries, live, args)
    if name == "/profile":
        return _profile(manager, live, args)
    if name in ("/cost", "/help") and args:  # no words to take: do not answer as if none came
        raise CommandUsage(f"Usage: {name}")
    if name == "/cost":
        return cost_text(queries.cost(live.id), manager.cost_today(), manager.estimated_today())
    if name == "/route":
        return _route(manager, live, args)
    if name == "/trust":
        return _trust(manager.trust, live.workspace, args)
    return HELP


def _model(manager: SessionManager, queries: SessionQueries, live: LiveSession,
           args: list[str]) -> str:
    keyword = _keywords(args[:1])
    if keyword == ["show"] and len(args) > 1:
        raise CommandUsage("Usage: /model <id or alias> | /model - | /model show")
    if not args or keyword == ["show"]:
        decision = queries.last_decision(live.id)
        head = (f"Active model: {live.last_model or 'none yet'}\n"
                f"Sticky model: {live.sticky.active or 'none (routing follows your rules)'}")
        if live.sticky.pending is not None:
            head += f"\nPending: {live.sticky.pending.model or 'clear'} (applies to next turn)"
        return head + ("\n\n" + render(decision) if decision else "\n\nNo turns yet.")
    target = None if args[0] == "-" else " ".join(args)
    return manager.set_model(live.workspace, live.id, target, undo="run /model -").message


def _profile(manager: SessionManager, live: LiveSession, args: list[str]) -> str:
    if not args:
        return profile_text(manager.config.profiles(str(live.folder)), manager.profile(live))
    if len(args) > 1:
        raise CommandUsage("Usage: /profile | /profile <name> | /profile clear")
    if args[0].lower() not in ("clear", "-"):
        return manager.set_profile(live.workspace, live.id, args[0]).message
    message = manager.set_profile(live.workspace, live.id, None).message
    named = [name for name in manager.config.profiles(str(live.folder)).names()
             if name.lower() == "clear"]
    if named:  # the keyword wins; say how to choose that profile
        message += (f" '/profile {args[0]}' always clears the choice (in any case); to use "
                    f"the profile '{named[0]}', choose it in the profile picker.")
    return message


async def _rules(manager: SessionManager, folder: str, args: list[str]) -> str:
    config = manager.config
    action = args[0].lower() if args else "show"
    if action not in ("check", "reload", "show") or len(args) > 1:
        raise CommandUsage("Usage: /rules check | /rules show | /rules reload")
    if action == "reload":
        config.reload()
    policy = config.effective(folder)
    problems, files = await _checked(config, folder) if action != "show" else ([], [])
    # the files were looked at again: the status may turn valid or invalid
    for workspace in manager.workspaces:
        manager.observer.status_changed(workspace)
    if action == "show":
        problems, in_force = config.state(folder)
        return "\n".join([format_rules(folder, policy), *format_in_force(in_force, problems)])
    if action == "check":
        return format_problems(problems, files)
    suffix = "" if not problems else f" ({counted(len(problems), 'problem')}; run /rules check)"
    return f"Reloaded: {counted(len(policy.rules), 'rule')} active{suffix}."


async def _checked(config: ConfigStore, folder: str) -> tuple[list[Problem], list[str]]:
    """The problems of the files ``folder`` uses and those files, as ``switchman rules
    check`` finds them: with the ``unknown-skill`` warnings, which the store's checks leave
    out (they change with the skill files, not with the file). Those read the files and walk
    the skills folders (a ``workspaces:`` block keyed on a parent folder walks the folders
    below it), so they are found on a thread, not on the loop that serves the editor."""
    problems, in_force = config.state(folder)
    files = list(in_force)
    skills = await asyncio.to_thread(unknown_skills_in_files, files, config.directory,
                                     Path(folder))
    return sort_problems(problems + skills), files


def _retry(manager: SessionManager) -> str:
    """``/route retry``: end the outages Switchman noted, so the next turn may use them."""
    tracker = manager.router.availability
    ended = tracker.forget() if isinstance(tracker, AvailabilityTracker) else []
    for workspace in manager.workspaces:  # the status shows outages
        manager.observer.status_changed(workspace)
    if not ended:
        return "No provider or model is marked unavailable; nothing to try again."
    listed = "\n".join(f"  {banner}" for banner in ended)
    return (f"Marked unavailable until now:\n{listed}\nThey are tried again from the next "
            "message (a failure there marks them again).")


def _trust(trust: TrustStore, workspace: str, args: list[str]) -> str:
    args = _keywords(args)  # tool names are lower case too
    if args[:1] == ["revoke"] and len(args) == 2:
        revoked = trust.revoke(workspace, None if args[1] == "all" else args[1])
        if not revoked and args[1] == "all":
            return "No tool was always allowed here; nothing changed."
        if not revoked:
            trusted = trust.trusted(workspace)
            meant = near_misses(args[1], trusted) or [t for t in trusted if t.startswith(args[1])]
            hint = f" Did you mean /trust revoke {meant[0]}?" if len(meant) == 1 else ""
            listed = (f" Always allowed here: {', '.join(trusted)}." if trusted
                      else " No tool is always allowed here.")
            return f"'{args[1]}' was not always allowed here; nothing changed.{hint}{listed}"
        return f"Switchman will ask again before: {', '.join(revoked)}."
    if args:
        raise CommandUsage("Usage: /trust | /trust revoke <tool> | /trust revoke all")
    tools = trust.trusted(workspace)
    problem = f"\n{trust.problem}" if trust.problem is not None else ""
    if not tools:
        return ("No tool is always allowed in this workspace: file changes and commands ask "
                f"first.{problem}")
    return (f"Always allowed in this workspace (no question asked): {', '.join(tools)}.\n"
            f"Kept in {trust.path}. Revoke with /trust revoke <tool> or /trust revoke all."
            f"{problem}")


_ENDED = {"failed": "failed", "cancelled": "stopped", "running": "still running",
          "queued": "waiting for a worker slot", "awaiting_approval": "waiting for approval"}
"""How a worker's delegation went, on its /cost line (nothing said for a completed one)."""


def cost_text(cost: CostBreakdown, today: Decimal, today_estimated: Decimal) -> str:
    """The answer to /cost: every amount with as many decimals as the smallest needs."""
    places = _places([cost.total_usd, cost.planner_usd, cost.workers_usd, today,
                      *(c.cost_usd for c in cost.by_model), *(w.cost_usd for w in cost.workers),
                      cost.estimated_usd, today_estimated])
    amount, note = _estimated(cost.total_usd, cost.estimated_usd, places)
    lines = [f"This session: {amount}{note}"]
    for c in cost.by_model:
        amount, note = _estimated(c.cost_usd, c.estimated_usd, places)
        lines.append(f"  {c.model}: {amount} ({counted(c.turns, 'turn')}, {c.input_tokens} in / "
                     f"{c.output_tokens} out tokens){note}")
    if cost.workers:
        lines.append(f"  planner: {usd(cost.planner_usd, places)}")
        lines.append(f"  workers: {usd(cost.workers_usd, places)} "
                     f"({counted(len(cost.workers), 'delegation')})")
        for w in cost.workers:
            amount, note = _estimated(w.cost_usd, w.estimated_usd, places)
            ended = _ENDED.get(w.status or "")
            why = f" ({w.error.split(':', 1)[0]})" if ended and w.error else ""
            lines.append(f"    {w.title or w.parent_tool_use_id or w.session_id} → "
                         f"{w.model or 'no model'}: {amount}, {counted(w.turns, 'turn')}{note}"
                         + (f" — {ended}{why}" if ended else ""))
    amount, note = _estimated(today, today_estimated, places)
    lines.append(f"Today, all sessions: {amount}{note}")
    if cost.estimated_usd or today_estimated:
        lines.append("Estimated: calls stopped, failed or cut off before the provider reported "
                     "their usage, charged for their input and the output streamed so far.")
    return "\n".join(lines)


def _estimated(total: Decimal, estimated: Decimal, places: int) -> tuple[str, str]:
    """A cost and the note on the part of it that is Switchman's estimate, each said once:
    (``$x``, ``""``) when none is, (``$x``, `` (of which ~$y estimated)``) when part is,
    (``~$x``, `` (estimated)``) when all of it is."""
    if not estimated:
        return usd(total, places), ""
    if estimated >= total:
        return f"~{usd(total, places)}", " (estimated)"
    return usd(total, places), f" (of which ~{usd(estimated, places)} estimated)"


def _places(amounts: list[Decimal]) -> int:
    """Four decimals, or six when an amount is under a cent (so it does not show as 0)."""
    return 6 if any(0 < a < Decimal("0.01") for a in amounts) else 4


def usd(amount: Decimal, places: int = 4) -> str:
    """Dollars with ``places`` decimals (six for an amount under a cent, so it does not show
    as 0)."""
    return f"${amount:.{max(places, _places([amount]))}f}"


def pending_suggestion(manager: SessionManager, live: LiveSession) -> PolicyEvaluation | None:
    """The pattern suggestion shown with the session's last turn, if any."""
    turn = manager.store.last_turn(live.id)
    if turn is None or turn.decision is None:
        return None
    settings = manager.config.effective(str(live.folder)).disagreement
    return surfaced_suggestion(turn.decision, settings)


async def route_override(manager: SessionManager, lifecycle: TurnLifecycle,
                         live: LiveSession, command: str) -> TurnResult | None:
    """Run the last message again on the suggested model (None if nothing was suggested);
    raises :class:`OverrideUnusable` if it cannot take the turn (nothing is recorded).
    The re-run's message is recorded as ``command``, as the user typed it."""
    suggestion = pending_suggestion(manager, live)
    last = manager.store.last_turn(live.id)
    # The message of the suggested turn itself: a /delegate typed since is a user message
    # too (of no turn), and must not be what is sent again.
    user = None if last is None else next(
        (m for m in reversed(live.history) if m.role == "user" and m.turn_id == last.id), None)
    if suggestion is None or last is None or user is None or not suggestion.candidate_model:
        return None
    model = suggestion.candidate_model

    def started(turn: TurnInfo) -> None:
        """The re-run has started: only now is the user's choice an event and evidence."""
        manager.store.add_event(RouteOverridden(
            timestamp=manager.clock.now(), session_id=live.id, turn_id=turn.id,
            original_turn_id=last.id, from_model=last.model or "", to_model=model))
        if manager.learning is not None:
            manager.learning.suggestion_answered(last.id, accepted=True)

    images = [b for b in user.content if isinstance(b, ImageBlock)]
    attachments = [b for b in user.content if isinstance(b, AttachmentBlock)]
    token = next(iter(manager.router.registry().models[model].aliases), model)
    override = Override(token, model, required=True, reason=ROUTE_OVERRIDE_REASON)
    outcome = await lifecycle.run(live, user.text(), images, override, attachments,
                                  started=started, typed=command)
    return outcome.result


def _route(manager: SessionManager, live: LiveSession, args: list[str]) -> str:
    args = _keywords(args)
    if args == ["retry"]:
        return _retry(manager)
    if args not in (["override"], ["ignore"]):
        raise CommandUsage(ROUTE_USAGE)
    suggestion = pending_suggestion(manager, live)
    if suggestion is None or args == ["override"]:  # an override that ran returned before
        last = manager.store.last_turn(live.id)
        rerun = None if last is None else next(
            (e for e in manager.store.events(live.id, "route.overridden")
             if e["turn_id"] == last.id), None)
        if rerun is not None:
            return (f"The last message already ran again on {rerun['to_model']} "
                    "(/route override); there is no new suggestion to act on.")
        return ("There is no pattern suggestion to act on. Suggestions are shown when "
                "pattern_disagreement.surface is on in routing.yaml and the suggested model "
                "can take the turn (/model show says why one was not).")
    turn = manager.store.last_turn(live.id)
    assert turn is not None
    if any(e["turn_id"] == turn.id for e in manager.store.events(
            live.id, "pattern.override_dismissed")):  # once per turn: learning counts it once
        return f"The suggestion to use {suggestion.candidate_model} was already dismissed."
    manager.store.add_event(PatternOverrideDismissed(
        timestamp=manager.clock.now(), session_id=live.id, turn_id=turn.id,
        suggested_model=suggestion.candidate_model or ""))
    if manager.learning is not None:
        manager.learning.suggestion_answered(turn.id, accepted=False)
    return f"Dismissed the suggestion to use {suggestion.candidate_model}."
