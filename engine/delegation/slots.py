"""The worker slots of one planner turn: at most ``max_concurrent_workers`` workers run at once.

A ``delegate`` call that finds every slot taken waits in line, in the order of the calls, and
is told its place (:class:`QueuePlace`) when it joins the line and again whenever the line
moves, so the editor can say why the planner seems to hang. A call cancelled while it waits
(its planner's turn was stopped) leaves the line without ever taking a slot; one withdrawn on
its own (the user stopped just that delegation) leaves it too, and those behind move up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from switchman.engine.sessions.records import QueuePlace

Told = Callable[[QueuePlace], None]
"""Called with a waiting call's place in line, each time it changes."""


class _Waiter:
    __slots__ = ("future", "told")

    def __init__(self, future: asyncio.Future[bool], told: Told) -> None:
        self.future = future
        self.told = told


class WorkerSlots:
    """A planner turn's worker slots and the line of calls waiting for one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self._line: list[_Waiter] = []

    async def take(self, told: Told) -> bool:
        """Wait for a free slot and take it (True), telling ``told`` the call's place while
        it waits; False when the call was withdrawn (:meth:`withdraw`) before a slot freed.
        Cancelled while waiting, it leaves the line (and returns any slot it was just given)."""
        if self.running < self.limit and not self._line:
            self.running += 1
            return True
        waiter = _Waiter(asyncio.get_running_loop().create_future(), told)
        self._line.append(waiter)
        told(self._place(len(self._line)))
        try:
            return await waiter.future
        except asyncio.CancelledError:
            if waiter in self._line:
                self._line.remove(waiter)
            elif waiter.future.done() and not waiter.future.cancelled() \
                    and waiter.future.result():
                self.release()  # given a slot in the same moment it was cancelled
            raise

    def withdraw(self, told: Told) -> bool:
        """Take the waiting call whose callback is ``told`` out of the line: its :meth:`take`
        returns False. False when it is not waiting (it started, or never waited)."""
        waiter = next((w for w in self._line if w.told == told), None)  # bound methods: ==
        if waiter is None:
            return False
        self._line.remove(waiter)
        waiter.future.set_result(False)
        self._tell()
        return True

    def release(self) -> None:
        """A worker ended: its slot goes to the first in line, if any."""
        self.running -= 1
        moved = False
        while self.running < self.limit and self._line:
            waiter = self._line.pop(0)
            if waiter.future.done():  # cancelled; its take() has not run its except yet
                continue
            self.running += 1
            waiter.future.set_result(True)
            moved = True
        if moved:
            self._tell()

    def _tell(self) -> None:
        """Tell everyone still in line their (new) place."""
        for position, waiter in enumerate(self._line, 1):
            waiter.told(self._place(position))

    def _place(self, position: int) -> QueuePlace:
        return QueuePlace(position=position, running=self.running, limit=self.limit)
