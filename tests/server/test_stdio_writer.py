"""Frames sent to the editor in one pass of the event loop leave in one write, in order; what
the editor waits on, and a frame after a quiet spell, leave at once."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from switchman.server.app import build_server
from switchman.server.protocol import SwitchmanProtocol
from switchman.server.stdio import IDLE_SECONDS, PipeWriter

if TYPE_CHECKING:
    from pygls.io_ import AsyncWriter


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


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_frames_of_one_pass_are_one_write_in_order() -> None:
    closed = asyncio.get_running_loop().create_future()
    transport = RecordingTransport(closed)
    writer = PipeWriter(transport, closed, clock := Clock())
    writer.write(b"zero;")  # the first frame: the pipe was idle, so it leaves at once
    for frame in (b"one;", b"two;", b"three;"):
        writer.write(frame)
    assert transport.writes == [b"zero;"]  # the rest wait for the end of the pass
    await next_pass()
    clock.now += IDLE_SECONDS / 2
    writer.write(b"four;")  # soon after a write: queued again
    assert transport.writes == [b"zero;", b"one;two;three;"]
    await next_pass()
    assert transport.writes == [b"zero;", b"one;two;three;", b"four;"]


async def test_a_frame_after_a_quiet_spell_leaves_at_once() -> None:
    """A turn's first delta or a request's answer does not wait for the end of the pass
    when nothing has been written lately: nothing is coming to share its write."""
    closed = asyncio.get_running_loop().create_future()
    transport = RecordingTransport(closed)
    writer = PipeWriter(transport, closed, clock := Clock())
    writer.write(b"first;")
    await next_pass()
    clock.now += 2 * IDLE_SECONDS
    writer.write(b"after a pause;")
    writer.write(b"right after;")
    assert transport.writes == [b"first;", b"after a pause;"]
    await next_pass()
    assert transport.writes == [b"first;", b"after a pause;", b"right after;"]


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


async def test_what_the_editor_waits_on_leaves_at_once_after_what_was_queued() -> None:
    """Diagnostics are written as they are sent, not at the end of the pass (when, under
    twenty streams, the next pass can be a whole turn start away); the deltas queued before
    them leave first, in the same write."""
    closed = asyncio.get_running_loop().create_future()
    transport = RecordingTransport(closed)
    protocol = build_server().protocol
    assert isinstance(protocol, SwitchmanProtocol)
    protocol.set_writer(cast("AsyncWriter", PipeWriter(transport, closed, Clock())))
    protocol.notify_json("switchman/chatDelta", {"text": "streaming"})  # the pipe is busy now
    protocol.notify_json("switchman/chatDelta", {"text": "queued"})
    protocol.notify_json("textDocument/publishDiagnostics", {"diagnostics": []}, now=True)

    [_, written] = transport.writes
    assert written.index(b"queued") < written.index(b"publishDiagnostics")
    protocol.notify_json("switchman/chatDelta", {"text": "later"})
    assert len(transport.writes) == 2  # a delta still waits for the end of the pass
    await next_pass()
    assert b"later" in transport.writes[2]
