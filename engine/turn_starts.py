"""When a chat's turn starts: in turn with the other chats, and after an answer the editor
is waiting for.

A turn start (routing, the durable record, the turn's tools and prompt) runs on the event
loop without yielding, a few milliseconds each. Twenty chats sent at once are twenty of
them, and the editor's own work waits behind them; so starts take turns, one per pass of
the loop, and what the editor sent meanwhile runs between two starts.

The editor's interactive work also wins over bulk work: while the diagnostics of a
configuration edit are being checked (in the check process), turn starts give way, so
that the check has the CPU and its answer finds the loop free. The hold is bounded: a
start waits for the answers that are out when its turn comes, and for at most
:data:`GIVE_WAY_SECONDS`; then it starts whatever the editor does, so a start is never
starved by continuous edits (each start waits at most once).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

GIVE_WAY_SECONDS = 0.05
"""The longest a turn start waits for the editor's answers (a 3,000-line routing.yaml is
checked in 12-20 ms alone, 25-50 ms on a busy machine; a 1,000-rule file's check takes
longer, and a start does not wait for all of it)."""


class TurnStarts:
    """The order of turn starts in one daemon (see the module docstring)."""

    def __init__(self, give_way_seconds: float = GIVE_WAY_SECONDS) -> None:
        self.give_way_seconds = give_way_seconds
        self._lock = asyncio.Lock()
        """Held by the chat whose turn starts next."""
        self._in_this_pass = False
        """Whether a turn started in this pass of the event loop."""
        self._waiting = 0
        """How many answers the editor is waiting for."""
        self._answered = asyncio.Event()
        """Set when the editor waits for no answer."""
        self._answered.set()

    def editor_waits(self) -> Callable[[], None]:
        """The editor waits for an answer (an edit's diagnostics) until the returned function
        is called; calling it again does nothing. Turn starts give way meanwhile."""
        self._waiting += 1
        self._answered.clear()
        done = False

        def answered() -> None:
            nonlocal done
            if not done:
                done = True
                self._waiting -= 1
                if not self._waiting:
                    self._answered.set()

        return answered

    async def take_turn(self) -> None:
        """Wait for this turn's start: after the starts before it, each a pass of the loop
        apart, and after the editor's answers that are out (at most
        :attr:`give_way_seconds`).

        A chat sent alone while the editor waits for nothing starts at once: it would
        otherwise wait a pass of the loop (about 30 µs) with nothing to let through.
        """
        if self._lock.locked() or self._in_this_pass or self._waiting:
            async with self._lock:
                await asyncio.sleep(0)
                if self._waiting:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.give_way_seconds):
                            await self._answered.wait()
        if not self._in_this_pass:
            self._in_this_pass = True
            asyncio.get_running_loop().call_soon(self._pass_ended)

    def _pass_ended(self) -> None:
        self._in_this_pass = False
