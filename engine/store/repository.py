"""Reading and writing sessions, messages, turns, events and costs."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Protocol, cast

import msgspec

from switchman.engine.clock import utc_text
from switchman.engine.errors import TurnInProgress
from switchman.engine.events import CallUsage, Event, LlmCallCompleted
from switchman.engine.messages import (
    USD_PLACES,
    ZERO_USD,
    Block,
    Message,
    TextBlock,
    ToolUseBlock,
    Usage,
    cost_of,
    transcript_key,
)
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.sessions.records import (
    ErrorInfo,
    ModelCost,
    SessionInfo,
    TurnInfo,
    WorkerCost,
)
from switchman.engine.store.ownership import Owners, SoleOwner
from switchman.engine.tokens import estimate_messages, estimate_text

_BLOCKS = msgspec.json.Decoder(list[Block])
_MESSAGE_ENCODER = msgspec.json.Encoder()
_DECISION = msgspec.json.Decoder(RouteDecided)
_MICROS = Decimal(1_000_000)
INTERRUPTED_MESSAGE = ("Switchman stopped while this turn was running (the daemon exited or "
                       "was killed). Your message and the answer written by then are kept; send "
                       "your message again to continue.")
"""Shown with the turn, above its messages in some views and below them in others."""


_ts = utc_text


def _dt(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def to_micros(amount: Decimal) -> int:
    """US dollars as whole micro-dollars (exact sums in SQL)."""
    return int((amount * _MICROS).to_integral_value())


def from_micros(micros: int) -> Decimal:
    """Whole micro-dollars as US dollars (six decimal places)."""
    return (Decimal(micros) / _MICROS).quantize(USD_PLACES)


_LEDGER_OF_TURN = ("FROM cost_ledger c WHERE c.session_id = turns.session_id "
                   "AND c.turn_id = turns.id")
_CHARGED_SO_FAR = ", ".join(
    [f"{column} = (SELECT COALESCE(SUM(c.{column}), 0) {_LEDGER_OF_TURN})"
     for column in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                    "cost_micros")]
    + [f"estimated_micros = (SELECT COALESCE(SUM(c.cost_micros * c.estimated), 0) "
       f"{_LEDGER_OF_TURN})", f"llm_calls = (SELECT COUNT(*) {_LEDGER_OF_TURN})"])
"""An interrupted turn's usage, cost and calls: what the ledger charged it before its daemon
died (the turn's own totals are only written when it ends)."""


class OwnWrites(Protocol):
    """Told around each of this connection's writes that changes how a session looks to the
    other daemons (its messages, turns, choices, a workspace's current session): see
    ``sessions/watch.py``, which must never report this daemon's own changes as another's."""

    def before_own_write(self) -> None:
        """A write is about to be made."""
        ...

    def after_own_write(self) -> None:
        """It was made (and committed, unless a transaction around it is still open)."""
        ...


class SessionStore:
    """All durable state, on one SQLite connection used from the event loop."""

    def __init__(self, connection: sqlite3.Connection, owners: Owners | None = None) -> None:
        self.db = connection
        self.owners: Owners = owners or SoleOwner()
        """Who this process is among the daemons sharing the database (see ownership.py)."""
        self._cost_total: tuple[str, int, int, int] = ("", 0, 0, 0)
        """(since, last ledger id summed, micro-dollars, of which estimated): see
        :meth:`cost_since`."""
        self._since: tuple[datetime | None, str] = (None, "")
        self._cost_answer: tuple[int, Decimal] = (0, ZERO_USD)
        """The last spend answered, in micro-dollars and as dollars."""
        self._known: dict[tuple[str, str], Any] = {}
        """Answers read before, exact while no other connection has committed (see
        :meth:`_answers`): a workspace's current session, a session's choices, whether
        :attr:`_cost_total` holds every ledger row."""
        self._known_version: int | None = None
        """``data_version`` when :attr:`_known` was last found valid."""
        self._version_checked = False
        """Whether ``data_version`` was read in this pass of the event loop."""
        self.own_writes: OwnWrites | None = None
        """Told of this connection's writes to sessions (the watch for other daemons')."""
        self._writing = 0
        """How deep in such writes this connection is (one write may make others)."""
        self.pricing: Callable[[str], Any] = lambda model: None
        """A model's prices (None if unknown): what an interrupted turn's cut-off call is
        charged at (see :meth:`_charge_cut_off_call`)."""
        self.ended_for_the_dead: set[str] = set()
        """Sessions whose dead daemon's turns this connection marked interrupted since
        :meth:`take_ended_for_the_dead`: another window's doing that no editor saw happen."""

    @contextmanager
    def _session_write(self) -> Iterator[None]:
        """Around a write that changes how a session looks (:class:`OwnWrites`); the outer
        one of nested writes alone is announced, and only once it succeeded."""
        watch = None if self._writing else self.own_writes
        if watch is not None:
            watch.before_own_write()
        self._writing += 1
        try:
            yield
        finally:
            self._writing -= 1
        if watch is not None:
            watch.after_own_write()

    # -- workspaces --------------------------------------------------------------------

    def _answers(self) -> dict[tuple[str, str], Any]:
        """:attr:`_known`, emptied first if another connection (another daemon, a CLI
        command) committed since it was filled.

        A turn's start asks for its workspace's current session, the session's choices and
        today's spend: three queries, answered from memory while ``PRAGMA data_version``
        (one per pass of the event loop) says nobody else wrote. This connection's own
        writes keep the answers up to date (:meth:`_wrote`).
        """
        if not self._version_checked:
            version = self.data_version()
            if version != self._known_version:
                self._known.clear()
                self._known_version = version
            try:
                asyncio.get_running_loop().call_soon(self._pass_ended)
                self._version_checked = True
            except RuntimeError:  # not on the event loop: look every time
                pass
        return self._known

    def _pass_ended(self) -> None:
        self._version_checked = False

    def _wrote(self, key: tuple[str, str], value: Any) -> None:
        """This connection changed what ``key`` answers to ``value``: kept once committed (a
        write inside a transaction may still be rolled back: forgotten until read again)."""
        if self.db.in_transaction:
            self._known.pop(key, None)
        else:
            self._known[key] = value

    def current_session(self, workspace: str) -> str | None:
        """The id of the workspace's current session, if any."""
        known = self._answers()
        key = ("current", workspace)
        if key in known:
            return cast("str | None", known[key])
        row = self.db.execute("SELECT current_session_id FROM workspaces WHERE uri = ?",
                              (workspace,)).fetchone()
        current: str | None = row[0] if row else None
        known[key] = current
        return current

    def set_current_session(self, workspace: str, session_id: str) -> None:
        """Make ``session_id`` the workspace's current session."""
        with self._session_write():
            self.db.execute("INSERT INTO workspaces (uri, current_session_id) VALUES (?, ?) "
                            "ON CONFLICT (uri) DO UPDATE SET current_session_id = excluded."
                            "current_session_id", (workspace, session_id))
        self._wrote(("current", workspace), session_id)

    # -- sessions ----------------------------------------------------------------------

    def create_session(self, session_id: str, workspace: str, now: datetime, *,
                       sticky_model: str | None = None, parent_session_id: str | None = None,
                       parent_tool_use_id: str | None = None) -> None:
        """Record a new session."""
        with self._session_write():
            self.db.execute(
                "INSERT INTO sessions (id, workspace, created_at, updated_at, sticky_model, "
                "is_worker, parent_session_id, parent_tool_use_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, workspace, _ts(now), _ts(now), sticky_model,
                 int(parent_session_id is not None), parent_session_id, parent_tool_use_id))
        self._wrote(("choices", session_id), (0, sticky_model, None))

    def session(self, session_id: str) -> SessionInfo | None:
        """One session with its totals (workers not attached)."""
        found = self.session_to_load(session_id)
        return found[0] if found is not None else None

    def session_to_load(self, session_id: str) -> tuple[SessionInfo, int] | None:
        """One session (as :meth:`session`) and the index of its latest turn (0 if none),
        whichever daemon ran it: one query."""
        row = self.db.execute(_SESSION_QUERY + " WHERE s.id = ? GROUP BY s.id",
                              (session_id,)).fetchone()
        return (_session(row), int(row["last_index"])) if row else None

    def sessions(self, workspace: str, *, include_workers: bool) -> list[SessionInfo]:
        """The workspace's top-level sessions, newest first, workers nested if asked."""
        rows = self.db.execute(_SESSION_QUERY + " WHERE s.workspace = ? AND s.is_worker = 0 "
                               "GROUP BY s.id ORDER BY s.updated_at DESC, s.id DESC",
                               (workspace,)).fetchall()
        sessions = [_session(r) for r in rows]
        if include_workers:
            for session in sessions:
                session.workers = self.workers(session.id)
        return sessions

    def workers(self, session_id: str) -> list[SessionInfo]:
        """The worker sessions a session spawned, oldest first, nested recursively."""
        rows = self.db.execute(_SESSION_QUERY + " WHERE s.parent_session_id = ? GROUP BY s.id "
                               "ORDER BY s.created_at, s.id", (session_id,)).fetchall()
        workers = [_session(r) for r in rows]
        for worker in workers:
            worker.workers = self.workers(worker.id)
        return workers

    def is_worker(self, session_id: str) -> bool:
        """Whether the session is a worker (spec 001 §5)."""
        row = self.db.execute("SELECT is_worker FROM sessions WHERE id = ?",
                              (session_id,)).fetchone()
        return bool(row and row[0])

    def set_profile(self, session_id: str, profile: str | None) -> None:
        """Persist a session's own profile choice (None: follow the defaults)."""
        with self._session_write():
            self.db.execute("UPDATE sessions SET profile = ? WHERE id = ?",
                            (profile, session_id))
        self._choice_changed(session_id, profile=profile)

    def set_handoff(self, session_id: str, envelope: str) -> None:
        """Keep a worker session's handoff envelope (JSON text)."""
        self.db.execute("UPDATE sessions SET handoff = ? WHERE id = ?", (envelope, session_id))

    def handoff(self, session_id: str) -> str | None:
        """A worker session's handoff envelope (JSON text), if it has one."""
        row = self.db.execute("SELECT handoff FROM sessions WHERE id = ?",
                              (session_id,)).fetchone()
        return row["handoff"] if row else None

    def set_sticky(self, session_id: str, model: str | None) -> None:
        """Persist a session's sticky model."""
        with self._session_write():
            self.db.execute("UPDATE sessions SET sticky_model = ? WHERE id = ?",
                            (model, session_id))
        self._choice_changed(session_id, sticky=model)

    def touch(self, session_id: str, now: datetime, title: str | None = None) -> None:
        """Mark the session as updated (and give it a title if it has none)."""
        self.db.execute("UPDATE sessions SET updated_at = ?, title = CASE WHEN title = '' AND ? "
                        "IS NOT NULL THEN ? ELSE title END WHERE id = ?",
                        (_ts(now), title, title, session_id))

    # -- messages ----------------------------------------------------------------------

    def add_message(self, message: Message, touched: list[str] | None = None) -> None:
        """Store a message (durable once this returns)."""
        with self._session_write():
            self.db.execute(
                "INSERT INTO messages (id, session_id, turn_id, role, created_at, model, "
                "content, touched, typed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) "
                "DO UPDATE SET content = excluded.content, touched = excluded.touched",
                (message.id, message.session_id, message.turn_id, message.role,
                 _ts(message.created_at), message.model,
                 _MESSAGE_ENCODER.encode(message.content).decode(), json.dumps(touched or []),
                 message.typed))

    def messages(self, session_id: str) -> list[Message]:
        """The session's transcript, in order."""
        rows = self.db.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id",
                               (session_id,)).fetchall()
        return sorted((Message(id=r["id"], session_id=r["session_id"], turn_id=r["turn_id"],
                               role=r["role"],
                               created_at=_dt(r["created_at"]) or datetime.now(UTC),
                               model=r["model"], content=_BLOCKS.decode(r["content"]),
                               typed=r["typed"])
                       for r in rows), key=transcript_key)

    def touched_paths(self, session_id: str) -> list[str]:
        """Every path the session's tools touched."""
        rows = self.db.execute("SELECT touched FROM messages WHERE session_id = ? AND touched "
                               "!= '[]'", (session_id,)).fetchall()
        return [path for r in rows for path in json.loads(r[0])]

    # -- turns -------------------------------------------------------------------------

    def begin_turn(self, turn: TurnInfo, user_message: Message, decision: RouteDecided, *,
                   workspace: str, title: str, current: bool = True,
                   touched: list[str] | None = None) -> None:
        """Durably record a turn's start in one transaction: its user message, the turn, its
        route.decided, and the session as updated (and, if ``current``, as the workspace's
        current session; a worker's never is).

        This is the session's turn lock, shared by every daemon on the database: it
        raises :class:`TurnInProgress` while a live daemon runs a turn of the session
        (a dead daemon's turn is marked interrupted instead), and numbers the turn
        after the last one recorded (``turn.index``).
        """
        with self._session_write(), self.db:
            self.db.execute("BEGIN IMMEDIATE")  # the check and the insert see the same state
            running = self.db.execute("SELECT id, owner FROM turns WHERE session_id = ? AND "
                                      "status = 'running'", (turn.session_id,)).fetchone()
            if running is not None:
                if self.owners.alive(running["owner"]):  # another daemon's: another window
                    raise TurnInProgress(running["id"],
                                         elsewhere=running["owner"] != self.owners.id)
                self._interrupt(running["owner"], turn.started_at, turn.session_id)
            turn.index = self.db.execute("SELECT COALESCE(MAX(idx), 0) + 1 FROM turns WHERE "
                                         "session_id = ?", (turn.session_id,)).fetchone()[0]
            if current:
                self.set_current_session(workspace, turn.session_id)
            self.touch(turn.session_id, turn.started_at, title=title)
            self.add_message(user_message, touched)
            self.db.execute(
                "INSERT INTO turns (id, session_id, idx, status, model, started_at, summary, "
                "owner) VALUES (?, ?, ?, 'running', ?, ?, ?, ?)",
                (turn.id, turn.session_id, turn.index, turn.model, _ts(turn.started_at),
                 turn.summary, self.owners.id))
            self.add_event(decision, turn.id)
        # committed: what the transaction's writes made them forget
        if current:
            self._wrote(("current", workspace), turn.session_id)
        choices = self._known.pop(("choices", turn.session_id), None)
        if choices is not None:
            self._wrote(("choices", turn.session_id), (turn.index, *choices[1:]))

    def finish_turn(self, turn: TurnInfo) -> None:
        """Record how a turn ended."""
        with self._session_write():
            self.db.execute(
                "UPDATE turns SET status = ?, ended_at = ?, input_tokens = ?, output_tokens = ?, "
                "cache_read_tokens = ?, cache_write_tokens = ?, cost_micros = ?, "
                "estimated_micros = ?, llm_calls = ?, tool_calls = ?, error_code = ?, "
                "error_message = ? WHERE id = ?",
                (turn.status, _ts(turn.ended_at) if turn.ended_at else None,
                 turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.cache_read_tokens,
                 turn.usage.cache_write_tokens, to_micros(turn.cost_usd),
                 to_micros(turn.estimated_usd), turn.llm_calls,
                 turn.tool_calls, turn.error.code if turn.error else None,
                 turn.error.message if turn.error else None, turn.id))

    def turns(self, session_id: str) -> list[TurnInfo]:
        """The session's turns in order, each with its decision."""
        rows = self.db.execute("SELECT * FROM turns WHERE session_id = ? ORDER BY idx",
                               (session_id,)).fetchall()
        return [self._turn(r) for r in rows]

    def turn(self, turn_id: str) -> TurnInfo | None:
        """One turn."""
        row = self.db.execute("SELECT * FROM turns WHERE id = ?", (turn_id,)).fetchone()
        return self._turn(row) if row else None

    def last_turn(self, session_id: str) -> TurnInfo | None:
        """The session's latest turn."""
        row = self.db.execute("SELECT * FROM turns WHERE session_id = ? ORDER BY idx DESC "
                              "LIMIT 1", (session_id,)).fetchone()
        return self._turn(row) if row else None

    def answered(self, turn_id: str) -> bool:
        """Whether the turn's model answered anything: some text, or a tool call."""
        rows = self.db.execute("SELECT content FROM messages WHERE turn_id = ? AND role = "
                               "'assistant'", (turn_id,)).fetchall()
        return any(isinstance(block, ToolUseBlock)
                   or (isinstance(block, TextBlock) and block.text.strip())
                   for row in rows for block in _BLOCKS.decode(row[0]))

    def data_version(self) -> int:
        """SQLite's ``data_version``: it changes when another connection (another daemon)
        commits, never for this connection's own writes."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def mark(self, session_id: str) -> tuple[object, ...]:
        """What changes when anyone adds to a session or sets its choices: its message count,
        its latest turn's index and status, its sticky model and profile."""
        row = self.db.execute(
            "SELECT (SELECT COUNT(*) FROM messages WHERE session_id = s.id), "
            "(SELECT idx || ':' || status FROM turns WHERE session_id = s.id "
            "ORDER BY idx DESC LIMIT 1), s.sticky_model, s.profile "
            "FROM sessions s WHERE s.id = ?", (session_id,)).fetchone()
        return tuple(row) if row else ()

    def choices(self, session_id: str) -> tuple[int, str | None, str | None] | None:
        """What another daemon may have changed in a session: the index of its latest turn,
        its sticky model and its profile choice (None if there is no such session)."""
        known = self._answers()
        key = ("choices", session_id)
        if key in known:
            return cast("tuple[int, str | None, str | None] | None", known[key])
        row = self.db.execute(
            "SELECT (SELECT COALESCE(MAX(idx), 0) FROM turns WHERE session_id = s.id), "
            "s.sticky_model, s.profile FROM sessions s WHERE s.id = ?", (session_id,)).fetchone()
        found = (int(row[0]), row[1], row[2]) if row else None
        known[key] = found
        return found

    def _choice_changed(self, session_id: str, **changed: Any) -> None:
        """A session's sticky model or profile was written by this connection."""
        key = ("choices", session_id)
        known = self._known.get(key)
        if known is None:
            return
        index, sticky, profile = known
        self._wrote(key, (index, changed.get("sticky", sticky), changed.get("profile", profile)))

    def running_elsewhere(self, turn_id: str) -> bool:
        """Whether ``turn_id`` is running in another daemon that is still alive."""
        row = self.db.execute("SELECT owner FROM turns WHERE id = ? AND status = 'running'",
                              (turn_id,)).fetchone()
        return row is not None and row["owner"] != self.owners.id \
            and self.owners.alive(row["owner"])

    def session_running_elsewhere(self, session_id: str) -> bool:
        """Whether a turn of ``session_id`` runs in another daemon that is still alive."""
        return any(row["owner"] != self.owners.id and self.owners.alive(row["owner"])
                   for row in self.db.execute("SELECT owner FROM turns WHERE session_id = ? "
                                              "AND status = 'running'", (session_id,)))

    def owner_gone(self, turn_id: str) -> bool:
        """Whether the daemon that ran ``turn_id`` (running or ended) is no longer alive: never
        this daemon, nor another live one sharing the database."""
        row = self.db.execute("SELECT owner FROM turns WHERE id = ?", (turn_id,)).fetchone()
        return row is not None and not self.owners.alive(row["owner"])

    def interrupt_orphans(self, now: datetime) -> int:
        """Mark turns whose daemon has died as interrupted (never a live daemon's); how many."""
        owners = [r[0] for r in self.db.execute(
            "SELECT DISTINCT owner FROM turns WHERE status = 'running'").fetchall()]
        count = 0
        for owner in owners:
            if not self.owners.alive(owner):
                with self.db:  # one charge of a cut-off call, though several daemons check
                    self.db.execute("BEGIN IMMEDIATE")
                    count += self._interrupt(owner, now)
        return count

    def _interrupt(self, owner: str | None, now: datetime, session_id: str | None = None) -> int:
        """Mark ``owner``'s running turns interrupted (inside the caller's transaction)."""
        for row in self.db.execute(
                "SELECT id, session_id, model FROM turns WHERE status = 'running' AND owner IS ? "
                "AND (? IS NULL OR session_id = ?)", (owner, session_id, session_id)).fetchall():
            self._charge_cut_off_call(row["session_id"], row["id"], row["model"], now)
            if owner != self.owners.id:
                self.ended_for_the_dead.add(row["session_id"])
        cursor = self.db.execute(
            "UPDATE turns SET status = 'interrupted', ended_at = ?, error_code = 'interrupted', "
            f"error_message = ?, {_CHARGED_SO_FAR} WHERE status = 'running' AND owner IS ? AND "
            "(? IS NULL OR session_id = ?)",
            (_ts(now), INTERRUPTED_MESSAGE, owner, session_id, session_id))
        return cursor.rowcount

    def take_ended_for_the_dead(self) -> set[str]:
        """The sessions of :attr:`ended_for_the_dead`, forgotten as they are returned."""
        taken, self.ended_for_the_dead = self.ended_for_the_dead, set()
        return taken

    def _charge_cut_off_call(self, session_id: str, turn_id: str, model: str,
                             now: datetime) -> None:
        """Charge the call a dead daemon's turn was streaming, as a cancel would have: an
        estimate, from what the database kept of it (docs/sessions.md, "Costs").

        A call whose request had left is marked ``llm.call_started`` (with the estimate of
        its input: system prompt, tools and messages); a call that ended has a
        ``llm.call_completed`` (charged) or ``llm.call_refused`` after its mark. So when the
        turn's last such event is a mark, that call was cut off: its input is the mark's
        estimate, its output estimated from its partial answer if one was saved (an
        assistant message of the turn with no ledger row: each finished call saved its
        message and its charge). Turns from before marks existed (none for the turn) are
        charged only for a saved partial answer, its input estimated from the transcript
        that call was sent (every message before it)."""
        last = self.db.execute(
            "SELECT type, payload FROM events WHERE turn_id = ? AND type IN "
            "('llm.call_started', 'llm.call_completed', 'llm.call_refused') "
            "ORDER BY id DESC LIMIT 1", (turn_id,)).fetchone()
        if last is not None and last["type"] != "llm.call_started":
            return  # every call sent settled before the daemon died
        charged = self.db.execute("SELECT COUNT(*) FROM cost_ledger WHERE session_id = ? AND "
                                  "turn_id = ?", (session_id, turn_id)).fetchone()[0]
        transcript = self.messages(session_id)
        answers = [i for i, m in enumerate(transcript)
                   if m.turn_id == turn_id and m.role == "assistant"]
        partial = transcript[-1] if len(answers) > charged \
            and answers[-1] == len(transcript) - 1 else None
        if last is None and partial is None:
            return  # no mark, no partial answer: nothing tells of a call in flight
        output = estimate_text("".join(b.text for b in partial.content
                                       if isinstance(b, TextBlock))) if partial else 0
        if last is not None:
            input_tokens = int(json.loads(last["payload"])["input_tokens"])
        else:
            input_tokens = estimate_messages(transcript[:-1])
        usage = Usage(input_tokens=input_tokens, output_tokens=output)
        pricing = self.pricing(model)
        cost = cost_of(usage, pricing) if pricing is not None else ZERO_USD
        worker = self.db.execute("SELECT is_worker, parent_session_id FROM sessions WHERE "
                                 "id = ?", (session_id,)).fetchone()
        self.add_cost(now, session_id, turn_id, model, usage, cost, estimated=True)
        self.add_event(LlmCallCompleted(
            timestamp=now, session_id=session_id, turn_id=turn_id, model=model,
            usage=CallUsage.priced(usage, cost), cost_usd=cost,
            is_worker=bool(worker and worker["is_worker"]),
            parent_session_id=worker["parent_session_id"] if worker else None,
            estimated=True), turn_id)

    def _turn(self, row: sqlite3.Row) -> TurnInfo:
        error = ErrorInfo(row["error_code"], row["error_message"] or "") \
            if row["error_code"] else None
        return TurnInfo(
            id=row["id"], session_id=row["session_id"], index=row["idx"], status=row["status"],
            model=row["model"], started_at=_dt(row["started_at"]) or datetime.now(UTC),
            ended_at=_dt(row["ended_at"]),
            usage=Usage(row["input_tokens"], row["output_tokens"], row["cache_read_tokens"],
                        row["cache_write_tokens"]),
            cost_usd=from_micros(row["cost_micros"]),
            estimated_usd=from_micros(row["estimated_micros"]), llm_calls=row["llm_calls"],
            tool_calls=row["tool_calls"], error=error, summary=row["summary"],
            decision=self.decision(row["id"]))

    # -- events ------------------------------------------------------------------------

    def add_event(self, event: Event, turn_id: str | None = None) -> None:
        """Store an event (for example ``route.decided``), under ``turn_id`` or, without it,
        the turn the event itself names (lookups by turn use the column)."""
        if turn_id is None:
            turn_id = getattr(event, "turn_id", None)
        payload = msgspec.json.encode(event).decode()
        kind = json.loads(payload)["type"]
        self.db.execute("INSERT INTO events (ts, type, session_id, turn_id, payload) VALUES "
                        "(?, ?, ?, ?, ?)", (_ts(event.timestamp), kind, event.session_id,
                                            turn_id, payload))

    def decision(self, turn_id: str) -> RouteDecided | None:
        """The ``route.decided`` record of a turn."""
        row = self.db.execute("SELECT payload FROM events WHERE turn_id = ? AND type = "
                              "'route.decided' ORDER BY id LIMIT 1", (turn_id,)).fetchone()
        return _DECISION.decode(row[0]) if row else None

    def last_decision(self, session_id: str) -> RouteDecided | None:
        """The session's latest ``route.decided`` record: its last turn's, or that of a later
        message that found no model (its turn never started)."""
        row = self.db.execute("SELECT payload FROM events WHERE session_id = ? AND type = "
                              "'route.decided' ORDER BY id DESC LIMIT 1", (session_id,)).fetchone()
        return _DECISION.decode(row[0]) if row else None

    def events(self, session_id: str | None = None, kind: str | None = None) -> list[
            dict[str, Any]]:
        """Stored events (optionally of one session and type), oldest first."""
        query, params = "SELECT payload FROM events WHERE 1 = 1", list[str]()
        if session_id is not None:
            query, params = query + " AND session_id = ?", [*params, session_id]
        if kind is not None:
            query, params = query + " AND type = ?", [*params, kind]
        rows = self.db.execute(query + " ORDER BY id", params).fetchall()
        return [json.loads(r[0]) for r in rows]

    # -- costs -------------------------------------------------------------------------

    def add_cost(self, now: datetime, session_id: str, turn_id: str | None, model: str,
                 usage: Usage, cost: Decimal, *, estimated: bool = False) -> None:
        """Record one LLM call's usage and cost (``estimated``: Switchman's estimate, not
        what the provider reported)."""
        ts, micros = _ts(now), to_micros(cost)
        cursor = self.db.execute(
            "INSERT INTO cost_ledger (ts, session_id, turn_id, model, input_tokens, "
            "output_tokens, cache_read_tokens, cache_write_tokens, cost_micros, estimated) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (ts, session_id, turn_id, model, usage.input_tokens, usage.output_tokens,
             usage.cache_read_tokens, usage.cache_write_tokens, micros, int(estimated)))
        start, last_id, total, guessed = self._cost_total
        if ("cost", start) in self._known and cursor.lastrowid == last_id + 1 \
                and not self.db.in_transaction:  # the row right after those summed: add it
            counted = micros if ts >= start else 0
            self._cost_total = (start, last_id + 1, total + counted,
                                guessed + counted if estimated else guessed)
        else:  # another connection's rows came between, or this one may be rolled back
            self._known.pop(("cost", start), None)

    def cost_since(self, since: datetime) -> Decimal:
        """Total spend across all sessions (every daemon's) since ``since``.

        Routing asks on every turn with the same ``since`` (today's start): the total is
        kept, and only ledger rows added since the last answer are summed. The ledger is
        append-only, so this equals summing the day's rows again.
        """
        start = self._since_text(since)
        known_start, last_id, total, guessed = self._cost_total
        known = self._answers()
        if known_start == start and ("cost", start) in known:
            if self._cost_answer[0] != total:
                self._cost_answer = (total, from_micros(total))
            return self._cost_answer[1]  # no other connection wrote; this one's rows added
        if known_start != start:
            last_id, total, guessed = 0, 0, 0
        added, added_guessed, newest = self.db.execute(
            "SELECT COALESCE(SUM(CASE WHEN ts >= ? THEN cost_micros END), 0), "
            "COALESCE(SUM(CASE WHEN ts >= ? AND estimated = 1 THEN cost_micros END), 0), "
            "MAX(id) FROM cost_ledger WHERE id > ?", (start, start, last_id)).fetchone()
        self._cost_total = (start, newest or last_id, total + added, guessed + added_guessed)
        known.pop(("cost", known_start), None)
        known[("cost", start)] = True
        return from_micros(total + added)

    def estimated_since(self, since: datetime) -> Decimal:
        """The estimated part of :meth:`cost_since` (charges of calls cut short), summed with
        it and kept the same way (the status bars show it beside the total)."""
        self.cost_since(since)
        return from_micros(self._cost_total[3])

    def _since_text(self, since: datetime) -> str:
        """``since`` as stored (:func:`_ts`), for the same ``since`` asked at every turn."""
        if self._since[0] != since:
            self._since = (since, _ts(since))
        return self._since[1]

    def costs_by_model(self, session_id: str) -> list[ModelCost]:
        """A session's own spend per model (workers excluded)."""
        rows = self.db.execute(
            "SELECT model, SUM(cost_micros), COUNT(DISTINCT turn_id), SUM(input_tokens), "
            "SUM(output_tokens), SUM(cost_micros * estimated) FROM cost_ledger WHERE "
            "session_id = ? GROUP BY model ORDER BY SUM(cost_micros) DESC",
            (session_id,)).fetchall()
        return [ModelCost(r[0], from_micros(r[1]), r[2], r[3], r[4], from_micros(r[5]))
                for r in rows]

    def worker_costs(self, session_id: str) -> list[WorkerCost]:
        """Spend per worker session (recursively including their own workers)."""
        return [WorkerCost(w.id, w.parent_tool_use_id, w.last_model, w.cost_usd, w.turn_count,
                           w.title or "", w.estimated_usd)
                for w in self.workers(session_id)]


_TREE_LEDGER = """FROM cost_ledger c WHERE c.session_id IN (
            WITH RECURSIVE tree(id) AS (SELECT s.id UNION ALL SELECT w.id FROM sessions w
                                        JOIN tree ON w.parent_session_id = tree.id)
            SELECT id FROM tree)"""
"""The ledger rows of a session and its workers (theirs too, recursively)."""

_SESSION_QUERY = f"""
SELECT s.*, COUNT(DISTINCT t.id) AS turn_count, COALESCE(MAX(t.idx), 0) AS last_index,
       (SELECT model FROM turns WHERE session_id = s.id ORDER BY idx DESC LIMIT 1) AS last_model,
       (SELECT COALESCE(SUM(c.cost_micros), 0) || ' '
               || COALESCE(SUM(c.cost_micros * c.estimated), 0) {_TREE_LEDGER}) AS costs
FROM sessions s LEFT JOIN turns t ON t.session_id = s.id
"""
# ``costs`` is "<micro-dollars> <of which estimated>": both sums from one pass over the tree's
# ledger rows (a second subquery doubled the cost of loading a session).


def _session(row: sqlite3.Row) -> SessionInfo:
    costs = row["costs"].split(" ")
    return SessionInfo(
        id=row["id"], workspace=row["workspace"], title=row["title"],
        created_at=_dt(row["created_at"]) or datetime.now(UTC),
        updated_at=_dt(row["updated_at"]) or datetime.now(UTC),
        sticky_model=row["sticky_model"], last_model=row["last_model"], profile=row["profile"],
        turn_count=row["turn_count"], cost_usd=from_micros(int(costs[0])),
        estimated_usd=from_micros(int(costs[1])),
        is_worker=bool(row["is_worker"]), parent_session_id=row["parent_session_id"],
        parent_tool_use_id=row["parent_tool_use_id"])
