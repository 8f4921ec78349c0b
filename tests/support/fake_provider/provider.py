"""`FakeProvider`: the in-process handle tests use to run and script the fake."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from types import TracebackType

from .script import (
    Disconnect,
    ErrorReply,
    JSONDict,
    Reply,
    Stall,
    Step,
    StreamError,
    ToolCall,
    Usage,
)
from .server import FakeHTTPServer
from .state import ProviderState, RecordedRequest

_SERVE_POLL_SECONDS = 0.05


class FakeProvider:
    """A fake Anthropic + OpenAI endpoint on 127.0.0.1.

    Use as a context manager (or call :meth:`start` / :meth:`stop`), point the
    SDKs at :attr:`anthropic_base_url` / :attr:`openai_base_url`, queue replies
    with the ``script_*`` methods, and inspect :attr:`requests`.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.requested_port = port
        self.state = ProviderState()
        self._server: FakeHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> FakeProvider:
        """Bind the port and serve in a daemon thread."""
        if self._server is not None:
            return self
        self.state.stopping.clear()
        self._server = FakeHTTPServer((self.host, self.requested_port), self.state)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _SERVE_POLL_SECONDS},
            name=f"fake-provider-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop open connections (stalled streams are cut)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self.state.stopping.set()
        server.shutdown()
        server.close_all_connections()
        server.server_close()
        thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses --------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        if self._server is None:
            raise RuntimeError("FakeProvider is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://{self.host}:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for the Anthropic SDK, which appends ``/v1/messages`` itself."""
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        """Base URL for the OpenAI SDK, which appends ``/chat/completions`` to it."""
        return f"{self.base_url}/v1"

    # -- scripting ----------------------------------------------------------------

    def script(self, *steps: Step, model: str | None = None) -> None:
        """Queue steps, for ``model`` only or (default) for any model."""
        self.state.script(list(steps), model)

    def script_text(
        self,
        *chunks: str,
        usage: Usage | None = None,
        stop_reason: str | None = None,
        chunk_delay: float = 0.0,
        model: str | None = None,
    ) -> Reply:
        """Queue a text reply streamed as ``chunks``."""
        reply = Reply(text=chunks, usage=usage, stop_reason=stop_reason, chunk_delay=chunk_delay)
        self.script(reply, model=model)
        return reply

    def script_tool_call(
        self,
        name: str,
        input: JSONDict,
        *,
        id: str | None = None,
        text: Sequence[str] = (),
        usage: Usage | None = None,
        model: str | None = None,
    ) -> Reply:
        """Queue a reply that calls one tool, optionally after some text."""
        return self.script_tool_calls(
            [ToolCall(name=name, input=input, id=id)], text=text, usage=usage, model=model
        )

    def script_tool_calls(
        self,
        calls: Iterable[ToolCall],
        *,
        text: Sequence[str] = (),
        usage: Usage | None = None,
        model: str | None = None,
    ) -> Reply:
        """Queue a reply with several tool calls, optionally after some text."""
        reply = Reply(text=tuple(text), tool_calls=tuple(calls), usage=usage)
        self.script(reply, model=model)
        return reply

    def script_error(
        self,
        status: int,
        message: str = "Scripted error",
        *,
        error_type: str | None = None,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
        model: str | None = None,
    ) -> ErrorReply:
        """Queue an HTTP error response."""
        error = ErrorReply(status, message, error_type, retry_after, tuple((headers or {}).items()))
        self.script(error, model=model)
        return error

    def script_stream_error(
        self,
        *chunks: str,
        after_chunks: int = 0,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        model: str | None = None,
    ) -> Reply:
        """Queue a stream that emits an in-stream error event after some chunks."""
        fault = StreamError(after_chunks=after_chunks, error_type=error_type, message=message)
        reply = Reply(text=chunks, fault=fault)
        self.script(reply, model=model)
        return reply

    def script_disconnect(
        self, *chunks: str, after_chunks: int = 0, reset: bool = False, model: str | None = None
    ) -> Reply:
        """Queue a stream whose connection is dropped after some chunks."""
        reply = Reply(text=chunks, fault=Disconnect(after_chunks=after_chunks, reset=reset))
        self.script(reply, model=model)
        return reply

    def script_stall(
        self,
        *chunks: str,
        after_chunks: int = 0,
        before_headers: bool = False,
        model: str | None = None,
    ) -> Stall:
        """Queue a stream that stalls after some chunks; returns the stall handle."""
        stall = Stall(after_chunks=after_chunks, before_headers=before_headers)
        self.script(Reply(text=chunks, fault=stall), model=model)
        return stall

    def release_stalls(self) -> int:
        """Release every queued or active stall; returns how many."""
        return self.state.stalls.release_all()

    def reset(self) -> None:
        """Clear queued steps and recorded requests; release stalls."""
        self.state.reset()

    # -- inspection -----------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every model request received so far."""
        return self.state.log.snapshot()

    def wait_for_requests(self, count: int, timeout: float = 20.0) -> list[RecordedRequest]:
        """Block until ``count`` requests were received; TimeoutError otherwise."""
        records = self.state.log.wait_for(count, timeout)
        if records is None:
            have = len(self.state.log.snapshot())
            raise TimeoutError(f"expected {count} requests within {timeout}s, got {have}")
        return records

    async def wait_for_requests_async(
        self, count: int, timeout: float = 20.0
    ) -> list[RecordedRequest]:
        """Like :meth:`wait_for_requests`, without blocking the event loop."""
        return await asyncio.to_thread(self.wait_for_requests, count, timeout)
