"""Waiting on processes a test did not start, without polling: pidfds and FIFOs."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path


def running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def ended(pid: int, timeout: float) -> bool:
    """Whether ``pid`` ends within ``timeout`` s: waits on its pidfd becoming readable."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not exited.done():
            exited.set_result(None)

    loop.add_reader(fd, readable)
    try:
        if running(pid):  # a zombie counts as ended: its pidfd may never signal before reaping
            await asyncio.wait_for(exited, timeout)
        return True
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def read_fifo(path: Path, timeout: float) -> str:
    """What a process writes to the FIFO at ``path`` (opening blocks until it writes)."""
    return await asyncio.wait_for(asyncio.to_thread(path.read_text), timeout)
