"""The daemon's configuration check process: checks run outside the daemon's interpreter, and
a process that dies is reported and replaced, never waited on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.config.checking import CHECKS
from switchman.engine.config.problems import Code
from switchman.engine.config.store import IN_FORCE_FILE, IN_FORCE_LAST_GOOD, ConfigStore
from switchman.engine.errors import CheckStopped
from switchman.engine.events import Event, EventBus, PolicyInvalid
from tests.engine.test_store import write

HAIKU = "global_default: anthropic:claude-haiku-4-5\n"
OPUS = "global_default: anthropic:claude-opus-4-7\n"


def exit_when_told(fifo: str) -> None:
    """In the check process: wait until the test opens ``fifo``, then die (work queued behind
    this is then lost with the process, whatever the timing)."""
    with open(fifo) as told:
        told.read()
    os._exit(1)


class Crash:
    """A crash of the check process that the test triggers when it is ready."""

    def __init__(self, folder: Path) -> None:
        self.fifo = folder / "crash"
        os.mkfifo(self.fifo)
        CHECKS.submit(exit_when_told, str(self.fifo))

    def now(self) -> None:
        """Let the process die (this returns once it has been told)."""
        with open(self.fifo, "w"):
            pass


async def test_work_runs_in_another_process() -> None:
    assert await CHECKS.run(os.getpid) != os.getpid()


async def test_a_process_that_dies_during_a_check_is_reported_then_replaced() -> None:
    before = await CHECKS.run(os.getpid)

    with pytest.raises(CheckStopped):
        await CHECKS.run(os._exit, 3)

    after = await CHECKS.run(os.getpid)
    assert after not in (before, os.getpid())


async def test_the_store_keeps_its_last_good_value_when_the_check_process_dies(
        config_dir: Path) -> None:
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    store = ConfigStore(config_dir, bus=bus, clock=ManualClock(), background=True)
    routing = config_dir / "routing.yaml"
    write(routing, HAIKU)
    store.policy()
    await store.settle()

    write(routing, OPUS)
    crash = Crash(config_dir.parent)
    store.policy()  # its check waits behind the crash
    crash.now()
    await store.settle()

    assert store.policy().global_default == "anthropic:claude-haiku-4-5"
    assert store.in_force() == {str(routing): IN_FORCE_LAST_GOOD}
    [problem] = store.problems()
    assert problem.code is Code.CHECK_STOPPED and problem.file == str(routing)
    assert [type(e) for e in events] == [PolicyInvalid]

    write(routing, OPUS.replace("opus-4-7", "sonnet-4-6"))  # the next save: a new process
    store.policy()
    await store.settle()
    assert store.policy().global_default == "anthropic:claude-sonnet-4-6"
    assert store.in_force() == {str(routing): IN_FORCE_FILE} and store.problems() == []
    store.close()
