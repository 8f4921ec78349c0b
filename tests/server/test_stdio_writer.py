"""Frames sent to the editor in one pass of the event loop leave in one write, in order."""

from __future__ import annotations

import asyncio

from switchman.server.stdio import PipeWriter


class RecordingTransport(asyncio.WriteTransport):
    """Records each write the daemon makes to stdout."""

    def __init__(self, closed: asyncio.Future[None]) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = closed

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed.done()

    def close(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def next_pass() -> None:
    """Return after the callbacks already scheduled on the loop have run."""
    done = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_soon(done.set_result, None)
    await done


async def test_frames_of_one_pass_are_one_write_in_order() -> None:
    closed = asyncio.get_running_loop().create_future()
    transport = RecordingTransport(closed)
    writer = PipeWriter(transport, closed)
    for frame in (b"one;", b"two;", b"three;"):
        writer.write(frame)
    assert transport.writes == []  # nothing is written while the pass is running
    await next_pass()
    writer.write(b"four;")
    await next_pass()
    assert transport.writes == [b"one;two;three;", b"four;"]


async def test_closing_flushes_what_is_queued_first() -> None:
    closed = asyncio.get_running_loop().create_future()
    transport = RecordingTransport(closed)
    writer = PipeWriter(transport, closed)
    writer.write(b"last words;")
    await writer.close()
    assert transport.writes == [b"last words;"]
    writer.write(b"after close;")
    await next_pass()
    assert transport.writes == [b"last words;"]
