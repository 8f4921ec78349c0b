"""``switchman serve --tcp``: one editor at a time on a TCP connection, for debugging.

The connection is served as stdin and stdout are (:mod:`switchman.server.stdio`): its
bytes go to a :class:`FrameReader` as they arrive, what the daemon sends leaves through
a :class:`PipeWriter`, and while more than :data:`OUTPUT_HIGH_WATER` bytes wait for the
editor to read them the connection is not read, so an editor that sends requests and
never reads the answers cannot grow the daemon's memory (pygls' TCP server read on and
buffered every answer). A second connection is closed at once while the first is open:
pygls gave it the first one's session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from switchman.server.frames import FrameReader
from switchman.server.stdio import (
    OUTPUT_HIGH_WATER,
    OUTPUT_LOW_WATER,
    PipeWriter,
    hold_requests,
    read_requests_again,
)

if TYPE_CHECKING:
    from pygls.io_ import AsyncWriter
    from pygls.server import JsonRPCServer

    from switchman.server.protocol import SwitchmanProtocol

log = logging.getLogger(__name__)


class _Connection(asyncio.Protocol):
    """One editor's connection: frames in as they arrive, flow control on what goes out."""

    def __init__(self, server: JsonRPCServer, served: Callable[[], bool],
                 ended: Callable[[], None]) -> None:
        self._server = server
        self._served = served
        self._ended = ended
        self._transport: asyncio.Transport | None = None
        self._frames: FrameReader | None = None
        self._closed: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast("asyncio.Transport", transport)
        if not self._served():
            log.warning("refused a second TCP connection: one editor at a time")
            transport.close()
            return
        self._transport = transport
        transport.set_write_buffer_limits(high=OUTPUT_HIGH_WATER, low=OUTPUT_LOW_WATER)
        self._closed = asyncio.get_running_loop().create_future()
        # pygls awaits close() and calls write() as it is: both shapes are handled at run time.
        self._server.protocol.set_writer(cast("AsyncWriter", PipeWriter(transport, self._closed)))
        stop = self._server._stop_event or threading.Event()
        self._frames = FrameReader(cast("SwitchmanProtocol", self._server.protocol), stop)

    def data_received(self, data: bytes) -> None:
        if self._frames is not None:
            self._frames.feed(data)

    def pause_writing(self) -> None:
        hold_requests(self._transport, log)

    def resume_writing(self) -> None:
        read_requests_again(self._transport, log)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._closed is None:  # a refused connection
            return
        if not self._closed.done():
            self._closed.set_result(None)
        self._ended()


def serve_tcp(server: JsonRPCServer, host: str, port: int,
              closing: Callable[[], None] = lambda: None) -> None:
    """Listen at ``host:port`` and serve the first editor that connects until it hangs up or
    says ``exit``; ``closing`` is called then, in the event loop, before the tasks still
    running are cancelled. Raises OSError when the address cannot be listened on."""
    server._stop_event = threading.Event()
    connected = False

    def served() -> bool:
        nonlocal connected
        first, connected = not connected, True
        return first

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        hung_up: asyncio.Future[None] = loop.create_future()

        def ended() -> None:
            if not hung_up.done():
                hung_up.set_result(None)

        listening = await loop.create_server(lambda: _Connection(server, served, ended),
                                             host, port)
        server._server = listening  # pygls' shutdown closes it
        names = ", ".join(str(s.getsockname()) for s in listening.sockets)
        log.info("listening on %s", names)
        async with listening:
            await hung_up
            closing()  # before asyncio.run cancels what is left

    try:
        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(serve())
    except (KeyboardInterrupt, SystemExit):  # pygls' exit ends the process with sys.exit
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
