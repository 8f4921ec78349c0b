"""Writing a scripted SSE stream: chunked encoding, delays and faults."""

from __future__ import annotations

import contextlib
import io
import os
import select
import socket
import struct
import threading

from .script import CutShort, Disconnect, Fault, Reply, Stall, StreamError
from .state import StallRegistry
from .wire import Frame, ReplyContext, WireFormat

#: How often a stalled stream checks whether its client went away (server side only).
STALL_POLL_SECONDS = 0.02


class ClientGone(Exception):
    """The client closed the connection while we were writing."""


def client_disconnected(sock: socket.socket) -> bool:
    """True when the peer has closed its side of ``sock``."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def abort_socket(sock: socket.socket, reset: bool) -> None:
    """Close ``sock`` abruptly: a FIN without finishing the body, or a RST."""
    try:
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            os.close(sock.detach())
        else:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class ChunkedSink:
    """Writes an HTTP/1.1 chunked body to a client socket."""

    def __init__(
        self, sock: socket.socket, wfile: io.BufferedIOBase, stopping: threading.Event
    ) -> None:
        self.sock = sock
        self.wfile = wfile
        self.stopping = stopping
        self.completed = False

    def write(self, data: bytes) -> None:
        """Send ``data`` as one chunk."""
        self._send(b"%x\r\n%s\r\n" % (len(data), data))

    def finish(self) -> None:
        """Send the terminating zero-length chunk."""
        self._send(b"0\r\n\r\n")
        self.completed = True

    def abort(self, reset: bool = False) -> None:
        """Drop the connection without finishing the body."""
        abort_socket(self.sock, reset)

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the server stops; False when stopping."""
        return not self.stopping.wait(seconds)

    def _send(self, raw: bytes) -> None:
        """Write and flush, translating socket errors into :class:`ClientGone`."""
        try:
            self.wfile.write(raw)
            self.wfile.flush()
        except OSError as exc:
            raise ClientGone() from exc


def wait_for_release(
    stall: Stall, sock: socket.socket, stopping: threading.Event, registry: StallRegistry
) -> bool:
    """Stall until released (True) or until the client leaves / server stops (False)."""
    registry.mark_reached(stall)
    while not stall.release.wait(STALL_POLL_SECONDS):
        if stopping.is_set():
            return False
        if client_disconnected(sock):
            stall.client_gone.set()
            return False
    return True


def fault_index(frames: list[Frame], after_chunks: int) -> int:
    """Index of the frame before which a fault fires.

    The fault fires right after the ``after_chunks``-th content frame, or after
    the preamble when ``after_chunks`` is 0, or after the last content frame
    when there are fewer content frames than that.
    """
    position = sum(1 for f in frames if f.kind == "preamble")
    seen = 0
    for index, frame in enumerate(frames):
        if frame.kind != "content":
            continue
        if seen == after_chunks:
            return index
        seen += 1
        position = index + 1
    return position


class StreamPlayer:
    """Plays one scripted reply as an SSE stream onto a :class:`ChunkedSink`."""

    def __init__(
        self, sink: ChunkedSink, wire: WireFormat, ctx: ReplyContext, registry: StallRegistry
    ) -> None:
        self.sink = sink
        self.wire = wire
        self.ctx = ctx
        self.registry = registry

    def play(self, reply: Reply) -> None:
        """Write every frame, applying delay and fault; never raises ClientGone."""
        with contextlib.suppress(ClientGone):
            self._play(reply)

    def _play(self, reply: Reply) -> None:
        """Write frames until done or interrupted by the fault."""
        frames = self.wire.stream_frames(reply, self.ctx)
        fire_at = fault_index(frames, reply.fault.after_chunks) if reply.fault else -1
        for index, frame in enumerate(frames):
            if index == fire_at and reply.fault is not None and not self._apply(reply.fault):
                return
            if (
                frame.kind == "content"
                and reply.chunk_delay > 0
                and not self.sink.pause(reply.chunk_delay)
            ):
                return
            self.sink.write(frame.data)
        self.sink.finish()

    def _apply(self, fault: Fault) -> bool:
        """Carry out a fault; True when the stream should continue."""
        if isinstance(fault, Disconnect):
            self.sink.abort(fault.reset)
            return False
        if isinstance(fault, StreamError):
            self.sink.write(self.wire.stream_error_frame(fault, self.ctx).data)
            self.sink.finish()
            return False
        if isinstance(fault, CutShort):
            if fault.frame:
                self.sink.write(fault.frame)
            self.sink.finish()
            return False
        return wait_for_release(fault, self.sink.sock, self.sink.stopping, self.registry)
