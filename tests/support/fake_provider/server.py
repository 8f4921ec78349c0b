"""The threaded HTTP server: routing, model exchanges and control requests."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from .anthropic_wire import AnthropicWire
from .control import handle_control
from .openai_wire import OpenAIWire
from .script import (
    STATUS_FOR_ERROR_TYPE,
    Disconnect,
    ErrorReply,
    Reply,
    Stall,
    StreamError,
    echo_reply,
)
from .state import ProviderState
from .streaming import ChunkedSink, StreamPlayer, abort_socket, wait_for_release
from .wire import ReplyContext, WireFormat

WIRES: dict[str, WireFormat] = {
    "/v1/messages": AnthropicWire(),
    "/v1/chat/completions": OpenAIWire(),
    "/chat/completions": OpenAIWire(),
}

_CORS_HEADERS = {
    "access-control-allow-origin": "*",
    "access-control-allow-headers": "*",
    "access-control-allow-methods": "GET, POST, OPTIONS",
}

_REASONS = {529: "Overloaded"}


class FakeHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that tracks open connections for a clean stop."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], state: ProviderState) -> None:
        self.state = state
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, FakeRequestHandler)

    def track(self, conn: socket.socket) -> None:
        """Remember an open client connection."""
        with self._connections_lock:
            self._connections.add(conn)

    def untrack(self, conn: socket.socket) -> None:
        """Forget a closed client connection."""
        with self._connections_lock:
            self._connections.discard(conn)

    def close_all_connections(self) -> None:
        """Shut down every open client connection (unblocks idle handlers)."""
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            abort_socket(conn, reset=False)


class FakeRequestHandler(BaseHTTPRequestHandler):
    """Serves model APIs and the ``/_fake/`` control API."""

    protocol_version = "HTTP/1.1"
    server_version = "FakeProvider/1.0"

    @property
    def fake(self) -> FakeHTTPServer:
        """The owning server, typed."""
        return cast(FakeHTTPServer, self.server)

    @property
    def state(self) -> ProviderState:
        """The shared provider state."""
        return self.fake.state

    # -- socketserver hooks -------------------------------------------------

    def setup(self) -> None:
        """Register the connection with the server."""
        super().setup()
        # Like real API front ends, send small writes (SSE events) at once: without this,
        # Nagle's algorithm meets the client's delayed ACK on reused keep-alive connections
        # and every streamed response stalls for ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.fake.track(self.connection)

    def finish(self) -> None:
        """Close the connection quietly, even if it was aborted."""
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.fake.untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    # -- HTTP verbs ---------------------------------------------------------

    def do_POST(self) -> None:
        """Model requests and control commands."""
        raw = self._read_body()
        parts = urlsplit(self.path)
        if parts.path.startswith("/_fake/"):
            self._control("POST", parts.path, parts.query, raw)
            return
        wire = WIRES.get(parts.path)
        if wire is None:
            self.record("unknown", parts.path, _try_json(raw), None, False)
            self.send_json(
                404, {"error": {"type": "not_found_error", "message": f"no route {parts.path}"}}
            )
            return
        ModelExchange(self, wire, parts.path).serve(raw)

    def do_GET(self) -> None:
        """Control queries."""
        parts = urlsplit(self.path)
        if parts.path.startswith("/_fake/"):
            self._control("GET", parts.path, parts.query, b"")
            return
        self.send_json(
            404, {"error": {"type": "not_found_error", "message": f"no route {parts.path}"}}
        )

    def do_OPTIONS(self) -> None:
        """CORS preflight, so browser-based tests can call the fake."""
        self.send_response(204)
        for name, value in _CORS_HEADERS.items():
            self.send_header(name, value)
        self.send_header("content-length", "0")
        self.end_headers()

    # -- helpers ------------------------------------------------------------

    def _read_body(self) -> bytes:
        """Read the request body (Content-Length or chunked)."""
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            return self._read_chunked()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        """Decode a chunked request body."""
        data = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(data)
            data += self.rfile.read(size)
            self.rfile.readline()

    def _control(self, method: str, path: str, query: str, raw: bytes) -> None:
        """Run a control command and send its JSON result."""
        status, body = handle_control(method, path, parse_qs(query), raw, self.state)
        self.send_json(status, body)

    def record(self, api: str, path: str, body: Any, model: str | None, stream: bool) -> None:
        """Append this request to the request log."""
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.state.log.add(
            api=api,
            method=self.command,
            path=path,
            model=model,
            stream=stream,
            body=body,
            headers=headers,
        )

    def send_status(self, status: int) -> None:
        """Send the status line (with a reason for non-standard codes)."""
        self.send_response(status, _REASONS.get(status))
        for name, value in _CORS_HEADERS.items():
            self.send_header(name, value)

    def send_json(self, status: int, body: object, headers: dict[str, str] | None = None) -> None:
        """Send a complete JSON response."""
        payload = json.dumps(body).encode()
        self.send_status(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class ModelExchange:
    """Answers one model API request according to the script."""

    def __init__(self, handler: FakeRequestHandler, wire: WireFormat, path: str) -> None:
        self.handler = handler
        self.wire = wire
        self.path = path
        self.state = handler.state
        self.seq = self.state.next_seq()

    def serve(self, raw: bytes) -> None:
        """Record the request, pick the step and answer it."""
        body = _try_json(raw)
        if not isinstance(body, dict):
            self.handler.record(self.wire.name, self.path, body, None, False)
            self._send_error(ErrorReply(400, "request body must be a JSON object"))
            return
        model = body.get("model") if isinstance(body.get("model"), str) else None
        stream = body.get("stream") is True
        self.handler.record(self.wire.name, self.path, body, model, stream)
        step = self.state.queue.pop(model) or echo_reply(self.wire.last_user_text(body))
        ctx = ReplyContext(
            model=model or "fake-model", seq=self.seq, created=int(time.time()), body=body
        )
        if isinstance(step, ErrorReply):
            self._send_error(step)
        else:
            self._reply(step, ctx, stream)

    def _reply(self, reply: Reply, ctx: ReplyContext, stream: bool) -> None:
        """Answer with a (possibly faulty) successful reply."""
        fault = reply.fault
        if isinstance(fault, Stall) and fault.before_headers:
            if not self._stall(fault):
                return
            reply = dataclasses.replace(reply, fault=None)
        if stream:
            self._stream(reply, ctx)
        else:
            self._complete(reply, ctx)

    def _stall(self, stall: Stall) -> bool:
        """Stall until released; if the client or server gives up, drop the connection."""
        state = self.state
        released = wait_for_release(stall, self.handler.connection, state.stopping, state.stalls)
        if not released:
            self._drop()
        return released

    def _stream(self, reply: Reply, ctx: ReplyContext) -> None:
        """Send SSE headers and play the stream."""
        handler = self.handler
        handler.send_status(200)
        handler.send_header("content-type", "text/event-stream; charset=utf-8")
        handler.send_header("cache-control", "no-cache")
        handler.send_header("transfer-encoding", "chunked")
        handler.send_header(*self.wire.request_id(self.seq))
        handler.end_headers()
        sink = ChunkedSink(handler.connection, handler.wfile, self.state.stopping)
        StreamPlayer(sink, self.wire, ctx, self.state.stalls).play(reply)
        if not sink.completed:
            self._drop()

    def _complete(self, reply: Reply, ctx: ReplyContext) -> None:
        """Send a non-streamed reply, honouring faults where they make sense."""
        fault = reply.fault
        if isinstance(fault, Disconnect):
            abort_socket(self.handler.connection, fault.reset)
            self.handler.close_connection = True
            return
        if isinstance(fault, Stall) and not self._stall(fault):
            return
        if isinstance(fault, StreamError):
            status = STATUS_FOR_ERROR_TYPE.get(fault.error_type, 500)
            self._send_error(ErrorReply(status, fault.message, fault.error_type))
            return
        headers = dict([self.wire.request_id(self.seq)])
        self.handler.send_json(200, self.wire.complete_body(reply, ctx), headers)

    def _send_error(self, error: ErrorReply) -> None:
        """Send an HTTP error in the wire's JSON shape."""
        name, request_id = self.wire.request_id(self.seq)
        headers = {name: request_id}
        if error.retry_after is not None:
            headers["retry-after"] = _format_seconds(error.retry_after)
        headers.update(dict(error.headers))
        self.handler.send_json(error.status, self.wire.error_body(error, request_id), headers)

    def _drop(self) -> None:
        """Close the connection after an unfinished response."""
        self.handler.close_connection = True
        abort_socket(self.handler.connection, reset=False)


def _format_seconds(value: float) -> str:
    """Render a retry-after value (integers without a decimal point)."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _try_json(raw: bytes) -> object:
    """Decode JSON, or return the raw text when it is not JSON."""
    try:
        result: object = json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")
    return result
