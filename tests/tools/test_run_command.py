"""run_command: exit status, capped output, timeouts and cancellation kill the group, no keys."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from switchman.engine.tools.approval import ApprovalAnswer, ToolClass, TrustStore
from switchman.engine.tools.shell import HEAD_BYTES, TAIL_BYTES, CappedOutput
from switchman.engine.tools.toolbox import Toolbox
from tests.support.processes import ended, read_fifo, running
from tests.tools.conftest import ScriptedApprover, make_toolbox


async def stopped(pid: int) -> bool:
    """Whether ``pid`` ends within 5 s (a SIGKILL is delivered asynchronously)."""
    return await ended(pid, 5)


async def test_exit_status_and_output(toolbox: Toolbox, approver: ScriptedApprover,
                                      project: Path) -> None:
    outcome = await toolbox.run("run_command", {"command": "echo hello; echo oops >&2; pwd"})
    assert outcome.content.splitlines() == ["Exit status 0.", "hello", "oops", str(project)]
    assert not outcome.is_error
    request = approver.asked[0]
    assert (request.tool_class, request.command, request.cwd) == (
        ToolClass.EXECUTE, "echo hello; echo oops >&2; pwd", str(project))
    failed = await toolbox.run("run_command", {"command": "exit 3"})
    assert failed.is_error
    assert failed.content.startswith("Exit status 3.")


async def test_long_output_keeps_its_head_and_tail(toolbox: Toolbox) -> None:
    outcome = await toolbox.run("run_command", {
        "command": "echo FIRST; head -c 200000 /dev/zero | tr '\\0' x; echo; echo LAST"})
    assert "FIRST" in outcome.content
    assert outcome.content.rstrip().endswith("LAST")
    assert "bytes of output left out" in outcome.content
    assert len(outcome.content) < HEAD_BYTES + TAIL_BYTES + 200


def test_capped_output_keeps_exact_head_and_tail() -> None:
    output = CappedOutput(head=4, tail=6)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qr"):
        output.add(chunk)
    assert output.text() == "abcd\n[… 8 bytes of output left out …]\nmnopqr"


async def test_a_timeout_kills_the_whole_process_group(toolbox: Toolbox, project: Path) -> None:
    outcome = await toolbox.run("run_command", {
        "command": "sleep 300 & echo $! > child.pid; trap '' TERM; sleep 300",
        "timeout_seconds": 1})
    assert outcome.is_error
    assert "Timed out after 1 s" in outcome.content
    child = int((project / "child.pid").read_text())
    assert await stopped(child)


async def test_finishing_stops_what_the_command_left_running(toolbox: Toolbox,
                                                             project: Path) -> None:
    outcome = await toolbox.run("run_command", {
        "command": "sleep 300 >/dev/null 2>&1 & echo $! > child.pid; echo started"})
    assert outcome.content.splitlines() == ["Exit status 0.", "started"]
    assert await stopped(int((project / "child.pid").read_text()))


async def test_cancelling_the_turn_kills_the_group(toolbox: Toolbox, project: Path) -> None:
    marker = project / "child.pid"
    os.mkfifo(marker)
    task = asyncio.ensure_future(toolbox.run("run_command", {
        "command": "sleep 300 & echo $! > child.pid; wait"}))
    child = int(await read_fifo(marker, 20))  # the command wrote its child's pid: it is running
    assert running(child)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await stopped(child)


async def test_api_keys_are_not_in_the_childs_environment(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    environ = {"PATH": os.environ["PATH"], "HOME": "/home/u", "MY_PROVIDER_KEY": "canary-1",
               "GROQ_API_KEY": "canary-2", "ANTHROPIC_API_KEY": "canary-3"}
    tools = make_toolbox(project, approver, trust, environ=environ,
                         key_variables=("MY_PROVIDER_KEY",))
    outcome = await tools.run("run_command", {"command": "env"})
    assert "HOME=/home/u" in outcome.content
    assert "canary" not in outcome.content


async def test_a_denied_command_does_not_run(project: Path, approver: ScriptedApprover,
                                             trust: TrustStore) -> None:
    approver.answers.append(ApprovalAnswer("deny"))
    outcome = await make_toolbox(project, approver, trust).run(
        "run_command", {"command": "touch ran"})
    assert outcome.is_error
    assert "denied" in outcome.content
    assert not (project / "ran").exists()


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"command": ""}, "'command' is empty"),
    ({"command": ["ls"]}, "'command' must be text"),
    ({"command": "ls", "timeout_seconds": "soon"}, "'timeout_seconds' must be a whole number"),
    ({"command": "ls", "timeout_seconds": 0}, "between 1 and"),
    # whole, but too large: its own limit is named, not the one of any whole number
    ({"command": "ls", "timeout_seconds": 10 ** 12},
     "'timeout_seconds' is too large: it can be at most 1,800, not 1000000000000."),
    ({"command": "ls", "timeout_seconds": 1801}, "it can be at most 1,800, not 1801."),
])
async def test_bad_command_arguments(toolbox: Toolbox, approver: ScriptedApprover,
                                     arguments: dict[str, object], expected: str) -> None:
    outcome = await toolbox.run("run_command", arguments)
    assert outcome.is_error
    assert expected in outcome.content
    assert approver.asked == []


async def test_a_background_process_holding_the_output_is_stopped_when_the_command_ends(
        toolbox: Toolbox, project: Path) -> None:
    """Without a redirection a background process keeps the output pipe open: the tool used
    to wait for it (all of its 300 s here), letting it run to its end, instead of stopping it
    when the command was done."""
    outcome = await asyncio.wait_for(toolbox.run("run_command", {
        "command": "sleep 300 & echo $! > child.pid; echo started"}), 30)
    assert outcome.content.splitlines() == ["Exit status 0.", "started"]
    assert await stopped(int((project / "child.pid").read_text()))
