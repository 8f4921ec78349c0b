"""Frames sent to the editor in one pass of the event loop leave in one write, in order; what
the editor waits on leaves at once."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, cast

from switchman.server.app import build_server
from switchman.server.protocol import SwitchmanProtocol
from switchman.server.stdio import PipeWriter

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


async def test_what_the_editor_waits_on_leaves_at_once_after_what_was_queued() -> None:
    """Diagnostics are written as they are sent, not at the end of the pass (when, under
    twenty streams, the next pass can be a whole turn start away); the deltas queued before
    them leave first, in the same write."""
    closed = asyncio.get_running_loop().create_future()
    transport = RecordingTransport(closed)
    protocol = build_server().protocol
    assert isinstance(protocol, SwitchmanProtocol)
    protocol.set_writer(cast("AsyncWriter", PipeWriter(transport, closed)))
    protocol.notify_json("switchman/chatDelta", {"text": "queued"})
    protocol.notify_json("textDocument/publishDiagnostics", {"diagnostics": []}, now=True)

    [written] = transport.writes
    assert written.index(b"queued") < written.index(b"publishDiagnostics")
    protocol.notify_json("switchman/chatDelta", {"text": "later"})
    assert len(transport.writes) == 1  # a delta still waits for the end of the pass
    await next_pass()
    assert b"later" in transport.writes[1]
