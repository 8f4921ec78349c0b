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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from switchman.engine.store.repository import SessionStore

POLL_SECONDS_ENV = "SWITCHMAN_SESSION_POLL_SECONDS"
POLL_SECONDS = 1.0
"""How often a daemon looks for other daemons' changes (one pragma when there are none)."""

Mark = tuple[object, ...]
"""What is compared: a session's id, counts and choices (see :meth:`SessionStore.mark`)."""


class SharedSessionWatch:
    """Which open workspaces' current sessions another daemon changed since the last check."""

    def __init__(self, store: SessionStore, workspaces: Callable[[], Iterable[str]]) -> None:
        self.store = store
        self.workspaces = workspaces
        self._version = store.data_version()
        self._marks: dict[str, Mark] = {}
        self._noticed: dict[str, str | None] = {}
        """Changes of other daemons found before one of this daemon's own writes, reported by
        the next :meth:`changed` (workspace → its current session)."""
        store.own_writes = self

    def remember(self, workspace: str) -> None:
        """The editor opened ``workspace`` or was told of its session as it is now: note how
        its session looks, unless another daemon wrote since the last check (then the next
        :meth:`changed` compares against the older mark, so that change is not missed)."""
        if workspace not in self._marks or self.store.data_version() == self._version:
            self._marks[workspace] = self._mark(workspace)

    def changed(self) -> list[tuple[str, str | None]]:
        """``(workspace, current session id)`` of each open workspace whose current session
        looks different since the last check or :meth:`remember`, when another connection
        has committed since the last check; [] otherwise (the common, one-pragma case)."""
        version = self.store.data_version()
        if version != self._version:
            self._compare(version)
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
