"""A lean JSON-RPC client for timing the daemon: frames and ``json`` on the event loop.

pytest-lsp's client (pygls) turns every frame it receives into lsprotocol objects and
dispatches it through its own tasks: on this machine that is about 0.2 ms each way on
the benchmark's side of a turn, which a paired "time added by the daemon" counted as
the daemon's. An editor's client reads a frame, parses its JSON and hands it on; this
one does the same and nothing more, so what it measures is the pipe hops and the
daemon.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any


class LeanClient:
    """A daemon started with ``command``, spoken to in JSON-RPC frames over its stdio."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.received: dict[str, list[Any]] = defaultdict(list)
        self._answers: dict[int, asyncio.Future[Any]] = {}
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None

    async def start(self, command: list[str], env: dict[str, str]) -> None:
        """Start the daemon and read what it sends from now on."""
        self.process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, limit=64 * 1024 * 1024)
        self._reader = asyncio.create_task(self._read())

    async def initialize(self, workspace: Path) -> None:
        """``initialize`` and ``initialized``, as an editor opening ``workspace`` sends them."""
        await self.request("initialize", {
            "processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
            "workspaceFolders": [{"uri": workspace.as_uri(), "name": "w"}]})
        self.notify("initialized", {})

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and return its result (raise on an error answer)."""
        return await self.send_request(method, params)

    def send_request(self, method: str, params: Any) -> asyncio.Future[Any]:
        """Send a request now; the future of its result."""
        self._next_id += 1
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._answers[self._next_id] = answer
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return answer

    async def wait_until(self, check: Callable[[], bool]) -> None:
        """Return once ``check()`` holds (checked after every frame received)."""
        if check():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((check, waiter))
        await waiter

    async def stop(self) -> None:
        """``shutdown`` and ``exit``, then wait for the daemon to end."""
        await self.request("shutdown", None)
        self.notify("exit", None)
        process = self._started()
        self._pipes()[0].close()
        await process.wait()
        if self._reader is not None:
            await self._reader

    def _started(self) -> asyncio.subprocess.Process:
        if self.process is None:
            raise RuntimeError("the daemon has not been started")
        return self.process

    def _pipes(self) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
        stdin, stdout = self._started().stdin, self._started().stdout
        if stdin is None or stdout is None:
            raise RuntimeError("the daemon was started without pipes")
        return stdin, stdout

    def _send(self, message: Any) -> None:
        body = json.dumps(message).encode()
        self._pipes()[0].write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read(self) -> None:
        stdout = self._pipes()[1]
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None
            self._handle(json.loads(await stdout.readexactly(length)))

    def _handle(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:  # a request from the daemon: decline it
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            else:
                self.received[message["method"]].append(message.get("params"))
        else:
            answer = self._answers.pop(message["id"], None)
            if answer is not None and not answer.done():
                if "error" in message:
                    answer.set_exception(RuntimeError(message["error"].get("message")))
                else:
                    answer.set_result(message.get("result"))
        still = []
        for check, waiter in self._waiters:
            if waiter.done():
                continue
            if check():
                waiter.set_result(None)
            else:
                still.append((check, waiter))
        self._waiters = still
