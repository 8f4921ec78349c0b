"""A lean LSP client over a server's stdio: frames and ``json`` on the event loop.

An editor's client reads a frame, parses its JSON and hands it on; this one does
the same and nothing more, so what a benchmark measures through it is the pipe
hops and the server. pytest-lsp's client (pygls) turns every frame it receives
into lsprotocol objects and dispatches it through its own tasks: about 0.2 ms
each way on the benchmark's side of a chat turn, which a paired "time added by
the daemon" counted as the daemon's. ``bench_daemon.py`` and ``bench_editing.py``
(Switchman and yaml-language-server alike) speak through it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

Arrival = tuple[float, dict[str, Any]]
"""When a notification arrived (perf_counter seconds) and its params."""


class LeanClient:
    """A language server subprocess: requests, notifications, and answers to its requests
    (``workspace/configuration`` from ``settings``, anything else with null)."""

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        self.settings = settings or {}
        self.process: asyncio.subprocess.Process | None = None
        self.received: dict[str, list[Any]] = defaultdict(list)
        """Every notification's params, by method."""
        self._answers: dict[int, asyncio.Future[Any]] = {}
        self._waiters: list[tuple[Callable[[], bool], asyncio.Future[None]]] = []
        self._expected: list[tuple[str, Callable[[dict[str, Any]], bool],
                                   asyncio.Future[Arrival]]] = []
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None

    async def start(self, command: list[str], env: dict[str, str]) -> None:
        """Start the server and read what it sends from now on."""
        self.process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, limit=64 * 1024 * 1024)
        self._reader = asyncio.create_task(self._read())

    async def initialize(self, params: dict[str, Any]) -> None:
        """``initialize`` with ``params``, then ``initialized``."""
        await self.request("initialize", params)
        self.notify("initialized", {})

    def notify(self, method: str, params: Any) -> None:
        """Send a notification."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and return its result (raise on an error answer)."""
        return await asyncio.wait_for(self.send_request(method, params), 60)

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

    def expect(self, method: str,
               where: Callable[[dict[str, Any]], bool]) -> asyncio.Future[Arrival]:
        """A future for the next ``method`` notification whose params satisfy ``where``,
        with its arrival time."""
        arrival: asyncio.Future[Arrival] = asyncio.get_running_loop().create_future()
        self._expected.append((method, where, arrival))
        return arrival

    async def stop(self) -> None:
        """``shutdown`` and ``exit``, then wait for the server to end (killed after 10 s)."""
        await self.request("shutdown", None)
        self.notify("exit", None)
        process = self._started()
        self._pipes()[0].close()
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
        if self._reader is not None:
            self._reader.cancel()

    def _started(self) -> asyncio.subprocess.Process:
        if self.process is None:
            raise RuntimeError("the server has not been started")
        return self.process

    def _pipes(self) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
        stdin, stdout = self._started().stdin, self._started().stdout
        if stdin is None or stdout is None:
            raise RuntimeError("the server was started without pipes")
        return stdin, stdout

    def _send(self, message: Any) -> None:
        body = json.dumps(message).encode()
        self._pipes()[0].write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def _read(self) -> None:
        stdout = self._pipes()[1]
        while True:
            length = 0
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(await stdout.readexactly(length))
            self._handle(message, time.perf_counter())

    def _handle(self, message: dict[str, Any], arrived: float) -> None:
        if "method" in message and "id" in message:  # a request from the server
            self._answer(message)
        elif "method" in message:
            self._notified(message["method"], message.get("params"), arrived)
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

    def _notified(self, method: str, params: Any, arrived: float) -> None:
        self.received[method].append(params)
        for expected in list(self._expected):
            name, where, arrival = expected
            if name == method and not arrival.done() and where(params):
                arrival.set_result((arrived, params))
                self._expected.remove(expected)

    def _answer(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [self.settings.get(item.get("section", ""))
                      for item in message["params"]["items"]]
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})


if __name__ == "__main__":
    raise SystemExit("lean_client.py is the client bench_daemon.py and bench_editing.py drive "
                     "servers with; it measures nothing itself (see docs/performance.md)")
