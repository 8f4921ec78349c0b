"""Read-only answers about sessions and routing: status, models, explain, preview, listings."""

from __future__ import annotations

from typing import Any

import msgspec

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.store import IN_FORCE_BUILTIN, IN_FORCE_FILE
from switchman.engine.delegation import envelope, history
from switchman.engine.errors import (
    EmptyMessage,
    NoModelAvailable,
    RoutingError,
    SwitchmanError,
    UnknownCommand,
    UnknownSession,
    UnknownTurn,
)
from switchman.engine.keys import KeyRing, missing_key_hint
from switchman.engine.messages import (
    ZERO_USD,
    ApprovalRecord,
    AttachmentBlock,
    ImageBlock,
    Message,
    ToolResultBlock,
)
from switchman.engine.plain import to_plain
from switchman.engine.profiles.listing import profile_in_force, profile_list
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.explain import render, short_reason
from switchman.engine.sessions import slash_commands
from switchman.engine.sessions.manager import SessionManager
from switchman.engine.sessions.records import (
    AppliedCode,
    CostBreakdown,
    DelegationRecord,
    ErrorInfo,
    Explanation,
    ModelInfo,
    ModelList,
    PendingSwapInfo,
    Preview,
    ProfileList,
    SessionDetail,
    SessionInfo,
    SessionList,
    StatusSnapshot,
    TurnInfo,
)


class SessionQueries:
    """Queries over the session manager's state and the store."""

    def __init__(self, manager: SessionManager, availability: AvailabilityTracker,
                 keys: KeyRing) -> None:
        self.manager = manager
        self.availability = availability
        self.keys = keys
        """The daemon's key reader (whether a provider has a key; never the key itself)."""

    def status(self, workspace: str) -> StatusSnapshot:
        """What the workspace's status bar shows now."""
        m = self.manager
        uri = m.workspaces.resolve(workspace)
        session_id = m.store.current_session(uri)
        live = m.load(session_id) if session_id else None
        running = live.running if live else None
        pending = live.sticky.pending if live else None
        problems, in_force = m.config.state(str(m.workspaces.folder(uri)))
        errors = sum(p.severity is Severity.ERROR for p in problems)
        banners = self.availability.banners() + _config_banners(in_force, problems) \
            + _no_key_banner(m.router.registry(), self.keys)
        sticky = live.sticky.active if live else None
        chosen = live.profile if live else None
        if live is not None and running is not None \
                and (stored := m.store.choices(live.id)) is not None:
            # Another editor window's daemon may have set them during this turn: the next turn
            # uses the stored choices (see SessionManager.load), so the status bar shows them.
            _, stored_sticky, chosen = stored
            if pending is None:  # else this window's own swap, applied when the turn ends
                sticky = stored_sticky
        profiles = m.config.profiles(str(m.workspaces.folder(uri)))
        active = m.profile_with(live, chosen) if live else profiles.resolve(None)
        if chosen is not None and active.resolved_from != "session":
            banners.append(f"Profile '{chosen}' chosen for this session no longer exists; "
                           f"using {active.name} (the {active.resolved_from} default).")
        return StatusSnapshot(
            workspace=uri, session_id=session_id,
            active_model=running.model if running else (live.last_model if live else None),
            sticky_model=sticky,
            pending_swap=PendingSwapInfo(pending.model) if pending else None,
            turn_in_flight=running is not None, banners=banners,
            cost_today_usd=m.cost_today(), estimated_today_usd=m.estimated_today(),
            config_errors=errors,
            profile=profile_in_force(active, profiles))

    def profiles(self, workspace: str, session_id: str | None) -> ProfileList:
        """Every profile usable in the workspace, and the session's active one."""
        m = self.manager
        live = m.live(workspace, session_id)
        return profile_list(m.config.profiles(str(live.folder)), m.profile(live))

    def models(self, workspace: str) -> ModelList:
        """Every model with whether it can be used now."""
        m = self.manager
        live = m.live(workspace)
        registry = m.router.registry()
        models = []
        for model in registry.models.values():
            provider = registry.providers[model.provider]
            models.append(ModelInfo(
                id=model.id, display_name=model.display_name, provider=model.provider,
                aliases=list(model.aliases), tier=model.tier, can_delegate=model.can_delegate,
                configured=self.keys.present(provider),
                availability=self._availability(model.provider, model.id),
                capabilities=model.capabilities, pricing=model.pricing))
        return ModelList(live.sticky.active, models)

    def _availability(self, provider: str, model: str) -> str:
        tracker = self.availability
        worst = max(tracker.health(provider), tracker.health(provider, model),
                    key=["healthy", "degraded", "unavailable"].index)
        return str(worst)

    def explain(self, workspace: str | None, session_id: str | None,
                turn_id: str | None) -> Explanation:
        """The decision of a turn (default: the session's last one, or a later message's that
        found no model: ``turn_id`` None, as that turn never started), rendered."""
        store = self.manager.store
        if turn_id is not None:
            turn = store.turn(turn_id)
            if turn is None:
                raise UnknownTurn(turn_id)
        else:
            session = self.manager.live(workspace or "", session_id) if workspace \
                else self.manager.load(session_id or "")
            turn = store.last_turn(session.id)
            last = store.last_decision(session.id)
            if last is not None and last.chosen_model is None and (
                    turn is None or last.turn_id != turn.id):
                return Explanation(None, last, short_reason(last), render(last))
        if turn is None or turn.decision is None:
            return Explanation(None, None, "no turns yet", None)
        return Explanation(turn.id, turn.decision, short_reason(turn.decision),
                           render(turn.decision))

    def preview(self, workspace: str, session_id: str | None, message: str,
                has_images: bool, attachments: list[AttachmentBlock] | None = None) -> Preview:
        """Route a draft without sending it or recording anything."""
        m = self.manager
        live = m.live(workspace, session_id)
        command = slash_commands.command_name(message)
        if command is not None and command not in slash_commands.COMMANDS:  # /modle
            typo = UnknownCommand(command, slash_commands.mistyped(command))
            return Preview(None, typo.code, message, None, None,
                           ErrorInfo(typo.code, typo.as_draft()), None)
        if command is not None:
            return Preview(None, f"command {command}", message, None, None, None, command)
        try:
            text, override = m.router.parse(message)
            if override is not None and not text.strip() and not has_images \
                    and not attachments:  # as the message would be refused
                raise EmptyMessage(override.token)
            context = m.turn_context(live, text, int(has_images), attachments)
            decision = m.router.chain(str(live.folder)).decide(RouteRequest(
                context=context, turn_id="preview", session_id=live.id, override=override,
                sticky_model=live.sticky.pending.model if live.sticky.pending
                else live.sticky.active, profile=m.profile(live)))
        except NoModelAvailable as failure:
            return Preview(None, "no model available", message, failure.decision,
                           render(failure.decision), ErrorInfo(failure.code, str(failure)), None)
        except RoutingError as error:
            return Preview(None, error.code, message, None, None,
                           ErrorInfo(error.code, error.as_draft()), None)
        return Preview(decision.chosen_model, short_reason(decision), text, decision,
                       render(decision), None, None)

    def likely_model(self, workspace: str) -> str | None:
        """The model the workspace's next turn most likely takes, before any draft exists:
        the current session's sticky or last model, else the workspace's default (None when
        it cannot tell: this only decides which SDK to import early)."""
        m = self.manager
        try:
            uri = m.workspaces.resolve(workspace)
            session_id = m.store.current_session(uri)
            live = m.load(session_id) if session_id else None
        except SwitchmanError:
            return None
        if live is not None and (live.sticky.active or live.last_model):
            return live.sticky.active or live.last_model
        policy = m.config.effective(str(m.workspaces.folder(uri)))
        return m.router.registry().resolve(policy.workspace_default or policy.global_default)

    def sessions(self, workspace: str, include_workers: bool) -> SessionList:
        """The workspace's sessions, newest first."""
        uri = self.manager.workspaces.resolve(workspace)
        store = self.manager.store
        sessions = store.sessions(uri, include_workers=include_workers)
        for info in sessions:
            live = self.manager.loaded(info.id)
            if live is not None and live.sticky.pending is not None:
                info.pending_swap = PendingSwapInfo(live.sticky.pending.model)
            self._went(info)
        return SessionList(store.current_session(uri), sessions)

    def _went(self, planner: SessionInfo) -> None:
        """Set how each of ``planner``'s workers' delegations went (a failed one is listed
        so), from its planner's record: a worker's own workers' from that worker's."""
        if not planner.workers:
            return
        ran = {d.worker_session_id: d.status for d in self.delegations(
            planner.id, planner.workers, self.manager.store.turns(planner.id))}
        for worker in planner.workers:
            worker.delegation_status = ran.get(worker.id)
            self._went(worker)

    def delegations(self, session_id: str, workers: list[SessionInfo],
                    turns: list[TurnInfo]) -> list[DelegationRecord]:
        """A session's delegations from its recorded events (``workers`` and ``turns``: its
        worker sessions and turns, whose interruptions end them)."""
        store = self.manager.store
        started = store.events(session_id, history.STARTED)
        ended = store.events(session_id, history.COMPLETED) + store.events(session_id,
                                                                           history.FAILED)
        interrupted = {w.id for w in workers
                       if (last := store.last_turn(w.id)) is not None
                       and last.status == "interrupted"}
        interrupted.update(t.id for t in turns if t.status == "interrupted")
        # ended turns, no recorded end: lost only once the daemon that ran them is gone
        end_lost = {w for w in history.open_workers(started, ended)
                    if (last := store.last_turn(w)) is not None
                    and last.status not in ("running", "interrupted") and store.owner_gone(last.id)}
        return history.delegation_records(started, ended, interrupted,
                                          store.events(session_id, history.QUEUED), end_lost,
                                          store.events(session_id, history.AWAITING_APPROVAL))

    def session(self, session_id: str) -> SessionDetail:
        """One session's transcript, turns and costs."""
        store = self.manager.store
        info = self.manager.info(session_id)
        info.workers = store.workers(session_id)
        turns = store.turns(session_id)
        delegations = [msgspec.structs.replace(d, approvals=self._questions(d.worker_session_id))
                       for d in self.delegations(session_id, info.workers, turns)]
        messages = [transcript_entry(m) for m in store.messages(session_id)]
        _put_back_start_questions(messages, delegations)
        return SessionDetail(info, messages,
                             turns, self.cost(session_id),
                             envelope.decode(store.handoff(session_id)), delegations,
                             applies=[msgspec.convert({"turn_id": e["turn_id"],
                                                       "approval": e["approval"]}, AppliedCode)
                                      for e in store.events(session_id, "apply.answered")])

    def _questions(self, session_id: str) -> list[ApprovalRecord]:
        """The questions a session's tool calls asked and their answers, oldest first (none
        for a delegation that never started a worker session)."""
        if not session_id:
            return []
        return [b.approval for m in self.manager.store.messages(session_id) for b in m.content
                if isinstance(b, ToolResultBlock) and b.approval is not None]

    def cost(self, session_id: str) -> CostBreakdown:
        """A session's spend by model, planner and workers."""
        store = self.manager.store
        info = store.session(session_id)
        if info is None:
            raise UnknownSession(session_id)
        by_model = store.costs_by_model(session_id)
        planner = sum((c.cost_usd for c in by_model), ZERO_USD)
        ran = {d.worker_session_id: d for d in self.delegations(
            session_id, store.workers(session_id), store.turns(session_id))}
        workers = [msgspec.structs.replace(w, status=d.status, error=d.error)
                   if (d := ran.get(w.session_id)) is not None else w
                   for w in store.worker_costs(session_id)]
        worker_total = sum((w.cost_usd for w in workers), ZERO_USD)
        return CostBreakdown(info.cost_usd, by_model, planner, worker_total, workers,
                             info.estimated_usd)

    def last_decision(self, session_id: str) -> RouteDecided | None:
        """The latest turn's decision in a session."""
        turn = self.manager.store.last_turn(session_id)
        return turn.decision if turn else None


def _no_key_banner(registry: ModelRegistry, keys: KeyRing) -> list[str]:
    """A notice while no model can be called for want of a key (a first run, say): every
    message will be refused, which the status bar otherwise shows only after one is sent."""
    providers = [registry.providers[p] for p in dict.fromkeys(
        model.provider for model in registry.models.values()) if p in registry.providers]
    if not providers or any(keys.present(p) for p in providers):
        return []
    hints = list(dict.fromkeys(missing_key_hint(p) for p in providers))
    return [f"No provider has an API key, so every message will be refused: set "
            f"{' or '.join(hints)} (see 'switchman models')."]


def _config_banners(in_force: dict[str, str], problems: list[Problem]) -> list[str]:
    linked_out = {p.file for p in problems if p.code is Code.OUTSIDE_WORKSPACE}
    return [f"{path} leads out of the workspace (a symbolic link) and is not read; your own "
            "configuration and the built-in defaults apply." if path in linked_out
            else f"{path} has errors; the built-in defaults are in use."
            if state == IN_FORCE_BUILTIN
            else f"{path} has errors; its last valid version is in use."
            for path, state in in_force.items() if state != IN_FORCE_FILE]


def _put_back_start_questions(messages: list[dict[str, Any]],
                              delegations: list[DelegationRecord]) -> None:
    """Give each planner's ``delegate`` result (``messages``: transcript entries) the question
    its start asked, from its delegation's record: it is stored once, there, but readers find it
    in the result as a tool's question (a result stored with its own copy keeps it); and the
    questions it superseded (``superseded_approvals``: asked again, the model having changed)."""
    planned = {d.tool_use_id: d for d in delegations if d.source == "planner"}
    for block in (b for m in messages for b in m["content"] if b["type"] == "tool_result"):
        record = planned.get(block["tool_use_id"])
        if record is None:
            continue
        if record.approval is not None and block.get("approval") is None:
            block["approval"] = msgspec.to_builtins(record.approval)
        if record.superseded_approvals:
            block["superseded_approvals"] = msgspec.to_builtins(record.superseded_approvals)


def transcript_entry(message: Message) -> dict[str, Any]:
    """A message for transcripts: a user's text as typed (``@alias`` included), images with
    their type but not their data."""
    entry = to_plain(message)
    typed = entry.pop("typed")
    entry["content"] = [{"type": "image", "media_type": b.media_type}
                        if isinstance(b, ImageBlock) else msgspec.to_builtins(b)
                        for b in message.content]
    text = next((b for b in entry["content"] if b["type"] == "text"), None)
    if typed is not None and text is not None:
        text["text"] = typed
    return entry  # type: ignore[no-any-return]
