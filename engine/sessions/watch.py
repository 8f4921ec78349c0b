"""Noticing what other daemons change in the sessions this daemon's editor shows.

Every editor window has its own daemon, and they share one database (see
``store/ownership.py``). When the other window sends a message, or sets the sticky
model or the profile, in a session this window shows, this daemon tells its editor so
that the chat and the status bar show it too.

The check is cheap enough to run every second on the event loop: SQLite's
``PRAGMA data_version`` changes only when *another* connection committed, so an idle
database costs one pragma per check. Only then is each open workspace's current session
looked at: its id, message and turn counts, last turn status, sticky model and profile
(a few indexed reads).

A 👍/👎 given in another window is no session write: the ratings live in the pattern
store (``patterns.db``). They are watched through its count of re-scored rows (one row
read a check), and only when it moved are the current sessions' ratings read and compared
with those this editor was shown (its own ratings are taken in as they are given).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from switchman.engine.store.repository import SessionStore

POLL_SECONDS_ENV = "SWITCHMAN_SESSION_POLL_SECONDS"
POLL_SECONDS = 1.0
"""How often a daemon looks for other daemons' changes (one pragma when there are none)."""

Mark = tuple[object, ...]
"""What is compared: a session's id, counts and choices (see :meth:`SessionStore.mark`)."""


@dataclass(frozen=True)
class Ratings:
    """Where the 👍/👎 given to sessions' turns are read (the pattern store)."""

    version: Callable[[], int]
    """A count that moves whenever any daemon re-scores a turn (a rating among them)."""
    of_session: Callable[[str], Mapping[str, int]]
    """A session's ratings now, by turn id (+1 / -1); raises when it cannot be read."""


class SharedSessionWatch:
    """Which open workspaces' current sessions another daemon changed since the last check."""

    def __init__(self, store: SessionStore, workspaces: Callable[[], Iterable[str]],
                 ratings: Ratings | None = None) -> None:
        self.store = store
        self.workspaces = workspaces
        self.ratings = ratings
        self._version = store.data_version()
        self._marks: dict[str, Mark] = {}
        self._noticed: dict[str, str | None] = {}
        """Changes of other daemons found before one of this daemon's own writes, reported by
        the next :meth:`changed` (workspace → its current session)."""
        self._ratings_version: int | None = None
        self._rated: dict[str, tuple[str, dict[str, int]]] = {}
        """Each open workspace's current session and the ratings of it its editor was shown."""
        self._rating: Counter[str] = Counter()
        """Turns this daemon is rating now: left out of the comparison until :meth:`rated`."""
        store.own_writes = self

    def remember(self, workspace: str) -> None:
        """The editor opened ``workspace`` or was told of its session as it is now: note how
        its session looks, unless another daemon wrote since the last check (then the next
        :meth:`changed` compares against the older mark, so that change is not missed)."""
        if workspace not in self._marks or self.store.data_version() == self._version:
            self._marks[workspace] = self._mark(workspace)
        session_id = self.store.current_session(workspace)
        shown = self._rated.get(workspace)
        if self.ratings is not None and session_id and (shown is None or shown[0] != session_id):
            try:
                self._rated[workspace] = (session_id, self._ratings_of(session_id))
            except sqlite3.Error:  # the pattern store cannot be read now: the next check notes them
                self._ratings_version = None

    def rating(self, turn_id: str) -> None:
        """This daemon's editor rates ``turn_id`` (``switchman/feedback``): until :meth:`rated`,
        a change of its rating is this editor's doing, not to be announced back."""
        self._rating[turn_id] += 1

    def rated(self, turn_id: str, session_id: str | None, value: int | None) -> None:
        """The rating :meth:`rating` announced is committed (``value``: +1, -1, 0 taken back)
        or failed (None). The editor shows it: the ratings it was shown take it in, and the
        next check reads the ratings again (another window's rating of the same turn
        committed meanwhile is announced then)."""
        self._rating[turn_id] -= 1
        if self._rating[turn_id] <= 0:
            del self._rating[turn_id]
        for shown_session, shown in self._rated.values():
            if value is not None and shown_session == session_id:
                if value:
                    shown[turn_id] = value
                else:
                    shown.pop(turn_id, None)
        self._ratings_version = None

    def changed(self) -> list[tuple[str, str | None]]:
        """``(workspace, current session id)`` of each open workspace whose current session
        looks different since the last check or :meth:`remember`, when another connection
        has committed since the last check, or whose ratings another daemon changed; []
        otherwise (the common case: one pragma, and one row read for the ratings)."""
        version = self.store.data_version()
        if version != self._version:
            self._compare(version)
        self._compare_ratings()
        ended = self.store.take_ended_for_the_dead()
        if ended:  # a dead daemon's turn this daemon marked interrupted: its editor showed it
            for workspace in self.workspaces():  # running, and no other daemon commits to say so
                session_id = self.store.current_session(workspace)
                if session_id in ended:
                    self._noticed[workspace] = session_id
        out, self._noticed = list(self._noticed.items()), {}
        return out

    def before_own_write(self) -> None:
        """This daemon is about to change a session: what other daemons changed until now is
        noted first, so that the marks can then take in this daemon's own change."""
        version = self.store.data_version()
        if version != self._version:
            self._compare(version)

    def after_own_write(self) -> None:
        """This daemon changed a session (its editor saw it happen: a message, a turn, a
        choice): the marks take it in, so that another daemon's commit elsewhere does not
        make it look like that daemon's change. Unless another daemon committed in between
        (then the next check compares against the marks as they were)."""
        if self.store.data_version() == self._version:
            for workspace in self._marks:
                self._marks[workspace] = self._mark(workspace)

    def _compare(self, version: int) -> None:
        self._version = version
        open_now = list(self.workspaces())
        for closed in self._marks.keys() - set(open_now):
            del self._marks[closed]
        for workspace in open_now:
            mark = self._mark(workspace)
            before = self._marks.get(workspace)
            self._marks[workspace] = mark
            if before is not None and before != mark:
                self._noticed[workspace] = self.store.current_session(workspace)

    def _compare_ratings(self) -> None:
        """Note the workspaces whose current session's ratings another daemon changed (a
        👍/👎 given, changed or taken back in another window): its editor shows them."""
        if self.ratings is None:
            return
        version = self.ratings.version()
        if version == self._ratings_version:
            return
        self._ratings_version = version
        rated: dict[str, tuple[str, dict[str, int]]] = {}
        for workspace in self.workspaces():
            session_id = self.store.current_session(workspace)
            if not session_id:
                continue
            now = self._ratings_of(session_id)
            before = self._rated.get(workspace)
            rated[workspace] = (session_id, now)
            if before is not None and before[0] == session_id and self._others(before[1]) != now:
                self._noticed[workspace] = session_id  # another session: told by its mark
        self._rated = rated

    def _ratings_of(self, session_id: str) -> dict[str, int]:
        assert self.ratings is not None
        return self._others(self.ratings.of_session(session_id))

    def _others(self, ratings: Mapping[str, int]) -> dict[str, int]:
        """``ratings`` without those of turns this daemon is rating now."""
        return {turn: value for turn, value in ratings.items() if turn not in self._rating}

    def _mark(self, workspace: str) -> Mark:
        session_id = self.store.current_session(workspace)
        return (session_id, *self.store.mark(session_id)) if session_id else (None,)


def session_poll_interval(environ: Mapping[str, str]) -> float:
    """Seconds between checks: ``SWITCHMAN_SESSION_POLL_SECONDS`` or one second."""
    try:
        value = float(environ.get(POLL_SECONDS_ENV) or POLL_SECONDS)
    except ValueError:
        return POLL_SECONDS
    return value if value > 0 else POLL_SECONDS
