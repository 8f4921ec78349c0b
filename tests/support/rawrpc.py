"""The real daemon over raw JSON-RPC frames, for tests that send what no client library would.

pytest-lsp (tests/support/lsp.py) only sends well-formed messages. :class:`RawDaemon`
writes arbitrary bytes as frames, reads every frame the daemon sends on a
thread, and lets a test wait for the answer to a request id, or for a
condition over everything received, without sleeping.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tests.support.lsp import SERVER_COMMAND, TIMEOUT

__all__ = ["RawDaemon", "frame", "read_frame"]


def frame(body: bytes) -> bytes:
    """``body`` with the LSP base-protocol header."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class RawDaemon:
    """``switchman serve`` as a subprocess, spoken to in raw frames."""

    def __init__(self, env: dict[str, str], stderr_path: Path, *, reading: bool = True) -> None:
        """``reading=False``: nothing the daemon sends is read until :meth:`start_reading`
        (an editor that stopped reading)."""
        self._stderr = stderr_path.open("wb")
        self.stderr_path = stderr_path
        self.process = subprocess.Popen(SERVER_COMMAND, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.received: list[Any] = []
        self.logged: list[str] = []  # the daemon's stderr lines, as they come
        self._changed = threading.Condition()
        self._logger = threading.Thread(target=self._log, name="raw-rpc-stderr", daemon=True)
        self._logger.start()
        self._next_id = 0
        self._reading = threading.Event()
        if reading:
            self._reading.set()
        self._reader = threading.Thread(target=self._read, name="raw-rpc-reader", daemon=True)
        self._reader.start()

    def start_reading(self) -> None:
        """Read what the daemon sends, from now on (see ``reading``)."""
        self._reading.set()

    # -- sending ------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        """Write raw bytes to the daemon's stdin."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def send(self, message: Any) -> None:
        """Send ``message`` as a JSON frame."""
        self.send_bytes(frame(json.dumps(message).encode()))

    def new_id(self) -> int:
        """A request id not used before in this connection."""
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any = None) -> dict[str, Any]:
        """Send a request and return the daemon's response (result or error)."""
        msg_id = self.new_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.response(msg_id)

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, workspace: Path) -> dict[str, Any]:
        """The LSP handshake, with ``workspace`` as the only folder."""
        answer = self.request("initialize", {
            "processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}]})
        self.notify("initialized", {})
        return answer

    # -- receiving ----------------------------------------------------------------------

    def response(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The daemon's response to request ``msg_id``."""
        found: dict[str, Any] = self.wait_until(lambda: next(
            (m for m in self.received if _is_response(m) and m.get("id") == msg_id), None),
            timeout)
        return found

    def responses(self) -> list[dict[str, Any]]:
        """Every response received so far."""
        with self._changed:
            return [m for m in self.received if _is_response(m)]

    def wait_until(self, check: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
        """Wait until ``check()`` is truthy and return it; fails after ``timeout`` seconds."""
        with self._changed:
            if not self._changed.wait_for(check, timeout):
                raise TimeoutError(f"the daemon did not answer in {timeout} s "
                                   f"(exit code {self.process.poll()})")
            return check()

    def stderr(self) -> str:
        """What the daemon wrote to stderr so far."""
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text("utf-8", errors="replace")

    def close(self) -> None:
        """Shut the daemon down properly (kill it if it does not stop)."""
        if self.process.poll() is None:
            try:
                self.request("shutdown", None)
                self.notify("exit", None)
                self.process.wait(TIMEOUT)
            except (OSError, TimeoutError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self._reading.set()
        self._reader.join(TIMEOUT)
        self._logger.join(TIMEOUT)
        self._stderr.close()

    def _log(self) -> None:
        """Copy stderr to ``stderr_path`` line by line, keeping each line in ``logged``."""
        stderr = self.process.stderr
        assert stderr is not None
        for line in stderr:
            self._stderr.write(line)
            self._stderr.flush()
            with self._changed:
                self.logged.append(line.decode("utf-8", errors="replace"))
                self._changed.notify_all()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        self._reading.wait()
        while (message := read_frame(stdout)) is not None:
            with self._changed:
                self.received.append(message)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()


def read_frame(stream: IO[bytes]) -> Any | None:
    """The next message read from ``stream``; None at its end."""
    length = None
    while line := stream.readline():
        if line == b"\r\n" and length is not None:
            return json.loads(stream.read(length))
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return None


def _is_response(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message
