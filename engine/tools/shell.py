"""The execute tool: ``run_command``, a shell command in the workspace folder.

The command runs in its own process group (``start_new_session``), so on a
timeout or a cancelled turn the whole group is killed, grandchildren
included, and nothing is left running. Output (stdout and stderr together) is
read as it comes and capped: the first and last parts are kept, because the
start of a build log and its final error are what matter. The child's
environment has every variable a configured provider reads its API key from
removed, so a command cannot print or send the user's keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from switchman.engine.providers.base import ToolSpec
from switchman.engine.tools.arguments import (
    ToolOutcome,
    ToolRefused,
    text_argument,
    whole_number_argument,
)

DEFAULT_TIMEOUT_SECONDS = 120
MAX_TIMEOUT_SECONDS = 1800
HEAD_BYTES = 8 * 1024
TAIL_BYTES = 24 * 1024
KILL_GRACE_SECONDS = 2.0
LEFTOVER_GRACE_SECONDS = 0.5
KEY_SUFFIXES = ("_API_KEY", "_API_TOKEN", "_ACCESS_TOKEN", "_SECRET_KEY")
"""Variables with these endings are removed too, whatever the configuration says."""

DEFINITION = ToolSpec(
    "run_command",
    "Run a shell command (sh -c) in the workspace folder and get its exit status and output "
    "(stdout and stderr together; long output keeps its start and end). The user approves "
    "each command.", {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "timeout_seconds": {"type": "integer",
                                "description": f"Stop after this many seconds (default "
                                               f"{DEFAULT_TIMEOUT_SECONDS}, at most "
                                               f"{MAX_TIMEOUT_SECONDS})."}},
        "required": ["command"]})


def child_environment(environ: Mapping[str, str], key_variables: Iterable[str]) -> dict[str, str]:
    """``environ`` without the API-key variables (those named, and any key-shaped name)."""
    named = set(key_variables)
    return {k: v for k, v in environ.items()
            if k not in named and not k.upper().endswith(KEY_SUFFIXES)}


def command_arguments(args: dict[str, Any]) -> tuple[str, int]:
    """The command line and timeout of a ``run_command`` call."""
    command = text_argument(args, "command", required=True) or ""
    if not command.strip():
        raise ToolRefused("'command' is empty.")
    if "\0" in command:
        raise ToolRefused("'command' contains a NUL character.")
    timeout = whole_number_argument(args, "timeout_seconds", maximum=MAX_TIMEOUT_SECONDS)
    timeout = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
    if not 1 <= timeout <= MAX_TIMEOUT_SECONDS:
        raise ToolRefused(f"'timeout_seconds' must be between 1 and {MAX_TIMEOUT_SECONDS}.")
    return command, timeout


TITLE_COMMAND_CHARS = 80
"""How much of a command a question's one-line title shows (the question carries it whole)."""


def command_title(command: str) -> str:
    """The one-line title of the question before ``command`` runs: ``Run `make test```, a
    command of several lines or a long one cut to its first line's start and ``…`` (the
    whole command goes with the question, and the editors show it in full). Only a line
    break ends its first line: a carriage return or another of Python's line boundaries
    (``\v``, ``\u2028``) is part of it, shown by the editors as in the question (``^M``,
    ``␍``); cut there, ``touch x #\rls -la`` read as ``touch x # …``."""
    lines = command.strip().split("\n")
    first = lines[0].rstrip() if lines else ""
    if len(lines) > 1 or len(first) > TITLE_COMMAND_CHARS:
        first = first[:TITLE_COMMAND_CHARS].rstrip() + " …"
    return f"Run `{first}`"


class CappedOutput:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_limit, self.tail_limit = head, tail
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Take in more output."""
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.dropped += len(self.tail[0])
            self.tail_size -= len(self.tail.popleft())
        if self.tail_size > self.tail_limit:  # trim the oldest chunk to the limit
            extra = self.tail_size - self.tail_limit
            self.tail[0] = self.tail[0][extra:]
            self.tail_size -= extra
            self.dropped += extra

    def text(self) -> str:
        """The kept output, with a marker where bytes were left out."""
        tail = b"".join(self.tail)
        middle = f"\n[… {self.dropped} bytes of output left out …]\n".encode() \
            if self.dropped else b""
        return (bytes(self.head) + middle + tail).decode("utf-8", "replace")


class CommandRunner:
    """Runs commands in one folder with a cleaned environment."""

    def __init__(self, folder: Path, environment: dict[str, str]) -> None:
        self.folder = folder
        self.environment = environment

    async def run(self, command: str, timeout: int) -> ToolOutcome:
        """Run ``command``; kills its process group on timeout or cancellation, and (see
        :data:`_GUARDED`) when Switchman itself dies meanwhile."""
        lifeline, held = os.pipe()  # Switchman holds one end until the group is stopped
        try:
            return await self._run(command, timeout, lifeline)
        finally:
            os.close(held)

    async def _run(self, command: str, timeout: int, lifeline: int) -> ToolOutcome:
        spawn = asyncio.ensure_future(_spawn(command, self.folder, self.environment, lifeline))
        output = CappedOutput()
        try:
            process, exited = await asyncio.shield(spawn)
        except asyncio.CancelledError:  # cancelled while starting: it may already run
            process, exited = await spawn
            await _stop_group(process, exited, asyncio.ensure_future(_read(process, output)))
            raise
        reader = asyncio.get_running_loop().create_task(_read(process, output))
        try:
            await asyncio.wait_for(exited.wait(), timeout)
        except TimeoutError:
            await _stop_group(process, exited, reader)
            return ToolOutcome(f"Timed out after {timeout} s; the command and everything it "
                               f"started were stopped.\nOutput so far:\n{output.text()}",
                               is_error=True, summary=f"timed out after {timeout} s",
                               output_shown=True)
        except asyncio.CancelledError:
            await _stop_group(process, exited, reader)
            raise
        # Processes left in the background would outlive the turn unseen: they are stopped.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), LEFTOVER_GRACE_SECONDS)
        await _stop_group(process, exited, reader)
        status = process.returncode or 0
        lead = f"Exit status {status}." if status >= 0 else f"Killed by signal {-status}."
        return ToolOutcome(f"{lead}\n{output.text()}", is_error=status != 0,
                           summary=f"exit {status}", output_shown=True)


class _ShellProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The usual protocol, also noting the moment the shell itself exits.

    ``Process.wait()`` (Python 3.11) returns only once nothing holds the output pipe any
    more, and a process the command left in the background (``sleep 300 &``, without a
    redirection) holds it for as long as it runs: waiting for that would let it run to
    its end instead of stopping it when the command is done.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2 ** 16, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


_GUARDED = ('exec 3<&0; (trap "" TERM; read _ <&3; kill -s TERM 0; sleep 2; kill -s KILL 0) '
            '>/dev/null 2>&1 & exec /bin/sh -c "$0" </dev/null 3<&-')
"""How a command is started: its shell first leaves a watchdog in the command's process
group, then becomes ``sh -c command`` (same process, standard input closed).

The timeout and the cancel that stop a command are Switchman's; killed (``kill -9``, a
crash), it would leave the command running for good, a dev server or a ``sleep 300; …``
going on in the workspace after its turn was marked interrupted. The watchdog reads a
pipe whose other end only Switchman holds; the kernel closes it when Switchman dies, and
the watchdog stops the group (TERM, KILL two seconds later). Stopping the group as usual
kills the watchdog with the rest; its output goes nowhere, so it never holds the
command's output open."""


async def _spawn(command: str, folder: Path, environment: dict[str, str],
                 lifeline: int) -> tuple[asyncio.subprocess.Process, asyncio.Event]:
    """``sh -c command`` in its own session (with its watchdog reading ``lifeline``), and
    the event set when the shell exits."""
    loop = asyncio.get_running_loop()
    protocol = _ShellProtocol(loop)
    try:
        transport, _ = await loop.subprocess_exec(
            lambda: protocol, "/bin/sh", "-c", _GUARDED, command, cwd=folder,
            env=environment, stdin=lifeline, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    finally:
        os.close(lifeline)  # the child has its copy; ours would keep the pipe open
    return asyncio.subprocess.Process(transport, protocol, loop), protocol.exited


async def _read(process: asyncio.subprocess.Process, output: CappedOutput) -> None:
    assert process.stdout is not None
    while chunk := await process.stdout.read(65536):
        output.add(chunk)


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _stop_group(process: asyncio.subprocess.Process, exited: asyncio.Event,
                      reader: asyncio.Task[None]) -> None:
    """Stop the command's whole process group: TERM, then KILL after a grace period."""
    if not reader.done():
        _signal_group(process, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), KILL_GRACE_SECONDS)
    _signal_group(process, signal.SIGKILL)  # whatever is left of the group, leader or not
    await exited.wait()  # not process.wait(): that also waits for the pipe (see _ShellProtocol)
    # A process that left the group (setsid) may still hold the pipe: stop reading then.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(reader, KILL_GRACE_SECONDS)
