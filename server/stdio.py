"""stdin and stdout as asyncio pipes, so talking to the editor never blocks the event loop.

pygls reads stdin through a thread pool (a thread hop per header line and per
body) and writes stdout with a blocking ``write`` and ``flush``. Under load
both stall the loop: each hop waits for the GIL behind whatever thread holds
it, and a write blocks outright while the editor is slow to read and the
pipe is full. Here both ends are non-blocking pipe transports on the loop:
messages are handled as their bytes arrive (:class:`FrameReader`) and writes
are buffered by the transport, up to a limit: an editor that stops reading what the
daemon sends (hung, or a broken client) makes the daemon stop reading its requests
until it reads again (:class:`_StdoutProtocol`), so the answers waiting for it cannot
grow without bound.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from switchman.server.frames import FrameReader

if TYPE_CHECKING:
    from pygls.io_ import AsyncWriter
    from pygls.server import JsonRPCServer

    from switchman.server.protocol import SwitchmanProtocol


log = logging.getLogger(__name__)

OUTPUT_HIGH_WATER = 1 << 20
"""Bytes waiting for the editor to read at which the daemon stops reading its requests."""
OUTPUT_LOW_WATER = 1 << 18
"""Bytes still waiting at which it reads them again."""

IDLE_SECONDS = 0.002
"""A frame written after this long without a write leaves at once (see :class:`PipeWriter`)."""


class PipeWriter:
    """pygls' writer interface over a non-blocking stdout transport.

    Frames written during one pass of the event loop go out in one ``write``, in
    order. With twenty chats streaming, a system call per delta was three quarters
    of the time spent sending them (each call also wakes the editor's reader).
    A frame written after :data:`IDLE_SECONDS` without a write leaves at once: nothing
    is coming to share its write, and the editor is waiting for it (a turn's first
    delta, the answer to a request), so it does not wait for the end of the pass.
    Frames written soon after it are queued again, so a burst still leaves in few writes.
    """

    def __init__(self, transport: asyncio.WriteTransport, closed: asyncio.Future[None],
                 clock: Callable[[], float] | None = None) -> None:
        self._transport = transport
        self._closed = closed
        self._loop = closed.get_loop()
        self._clock = clock or self._loop.time
        self._pending: list[bytes] = []
        self._last_write = -math.inf

    def write(self, data: bytes) -> None:
        """Write ``data`` now if the pipe has been idle, else queue it for the end of this
        pass of the event loop."""
        if self._transport.is_closing():
            return
        if not self._pending:
            now = self._clock()
            if now - self._last_write >= IDLE_SECONDS:
                self._last_write = now
                self._transport.write(data)
                return
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        """Hand what is queued to the transport, which writes it as the pipe accepts it."""
        if not self._pending:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._last_write = self._clock()
        if not self._transport.is_closing():
            self._transport.write(data)

    async def close(self) -> None:
        """Flush what is queued, then close stdout."""
        self.flush()
        self._transport.close()
        await self._closed


def hold_requests(requests: asyncio.ReadTransport | None, logger: logging.Logger) -> None:
    """Stop reading the editor's requests (``requests``, once open): more than
    :data:`OUTPUT_HIGH_WATER` bytes wait for it to read. Said in ``logger``, the server's."""
    # INFO: a large answer (a long transcript) pauses a reading editor for a moment too.
    logger.info("over a megabyte waits for the editor to read it; its requests are read "
                "again once it has")
    if requests is not None:
        requests.pause_reading()


def read_requests_again(requests: asyncio.ReadTransport | None, logger: logging.Logger) -> None:
    """Read the editor's requests again: it has read what waited for it."""
    logger.debug("the editor has read what waited; reading its requests")
    if requests is not None and not requests.is_closing():
        requests.resume_reading()


class _StdoutProtocol(asyncio.Protocol):
    """Flow control for stdout: while more than :data:`OUTPUT_HIGH_WATER` bytes wait for the
    editor to read them, stdin is not read, so a client that sends requests and never reads
    the answers stops being served instead of filling the daemon's memory with them."""

    def __init__(self, closed: asyncio.Future[None]) -> None:
        self.closed = closed
        self.requests: asyncio.ReadTransport | None = None  # stdin, once it is open
        self.paused = False

    def pause_writing(self) -> None:
        self.paused = True
        hold_requests(self.requests, log)

    def resume_writing(self) -> None:
        self.paused = False
        read_requests_again(self.requests, log)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        if self.paused and self.requests is not None:  # so stdin's end is seen
            self.paused = False
            self.requests.resume_reading()


class _StdinProtocol(asyncio.Protocol):
    """Hands stdin's bytes to a :class:`FrameReader` as they arrive."""

    def __init__(self, frames: FrameReader, stop: threading.Event,
                 ended: asyncio.Future[None]) -> None:
        self._frames = frames
        self._stop = stop
        self._ended = ended

    def data_received(self, data: bytes) -> None:
        self._frames.feed(data)
        if self._stop.is_set() and not self._ended.done():  # the server is stopping
            self._ended.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._ended.done():
            self._ended.set_result(None)


async def _serve(server: JsonRPCServer, closing: Callable[[], None]) -> None:
    loop = asyncio.get_running_loop()
    closed: asyncio.Future[None] = loop.create_future()
    transport, output = await loop.connect_write_pipe(lambda: _StdoutProtocol(closed),
                                                      sys.stdout.buffer)
    transport.set_write_buffer_limits(high=OUTPUT_HIGH_WATER, low=OUTPUT_LOW_WATER)
    # pygls awaits close() and calls write() as it is: both shapes are handled at run time.
    writer = PipeWriter(transport, closed)
    server.protocol.set_writer(cast("AsyncWriter", writer))
    ended: asyncio.Future[None] = loop.create_future()  # the editor closed stdin
    stop = server._stop_event or threading.Event()
    frames = FrameReader(cast("SwitchmanProtocol", server.protocol), stop)
    stdin, _ = await loop.connect_read_pipe(lambda: _StdinProtocol(frames, stop, ended),
                                            sys.stdin.buffer)
    output.requests = stdin
    if output.paused:
        stdin.pause_reading()
    try:
        await ended
        closing()  # before asyncio.run cancels what is left
    finally:
        stdin.close()
        if not transport.is_closing():
            await writer.close()


def stdin_is_pipe() -> bool:
    """Whether stdin is a pipe or socket, as when an editor starts the daemon."""
    mode = os.fstat(sys.stdin.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def serve_stdio(server: JsonRPCServer, closing: Callable[[], None] = lambda: None) -> None:
    """Serve JSON-RPC over stdin/stdout until the editor exits or closes the pipe; ``closing``
    is called then, in the event loop, before the tasks still running are cancelled."""
    server._stop_event = threading.Event()  # as pygls' own start_io does
    try:
        asyncio.run(_serve(server, closing))
    except BrokenPipeError:
        pass  # the editor went away
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
