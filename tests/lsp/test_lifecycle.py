"""The daemon starts, shuts down cleanly, and exits quietly even in the middle of a turn."""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from lsprotocol import types

from switchman.engine.sessions.turn import EXITED_MESSAGE
from switchman.server import methods
from tests.lsp.conftest import Daemon
from tests.lsp.test_sessions_and_commands import start
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import CLIENTS, TIMEOUT, running_server, server_env
from tests.support.rawrpc import RawDaemon, frame, read_frame


@pytest.mark.parametrize("editor", CLIENTS)
async def test_initialize_and_shutdown(editor: str, tmp_path: Path) -> None:
    env = server_env(tmp_path / "config", tmp_path / "data")
    async with running_server(editor, env, workspaces=[tmp_path]) as client:
        assert client.error is None
    assert client._server is not None
    assert client._server.returncode == 0


def test_a_daemon_stopped_before_initialized_never_creates_the_engine(tmp_path: Path) -> None:
    # An editor that gives up during start-up must not wait for the engine (its imports,
    # the database) to be created only to be shut down.
    raw = RawDaemon(server_env(tmp_path / "config", tmp_path / "data"), tmp_path / "stderr.log")
    answer = raw.request("initialize", {"processId": None, "capabilities": {},
                                        "rootUri": tmp_path.as_uri()})
    assert "result" in answer
    raw.close()  # shutdown, exit
    assert raw.process.returncode == 0, raw.stderr()
    assert not (tmp_path / "data" / "switchman.db").exists()


def test_a_data_folder_that_cannot_be_written_is_named_in_every_answer(tmp_path: Path) -> None:
    """The editor is told once (window/showMessage) and each request that needs the data
    folder fails saying which folder and why, instead of an internal error (root can write
    any folder, so a data folder under a file stands for one that cannot be written)."""
    (tmp_path / "not-a-folder").write_text("a file\n")
    data = tmp_path / "not-a-folder" / "switchman"
    workspace = tmp_path / "project"
    workspace.mkdir()
    raw = RawDaemon(server_env(tmp_path / "config", data), tmp_path / "stderr.log")
    assert "result" in raw.initialize(workspace)
    shown = raw.wait_until(lambda: [m["params"] for m in raw.received
                                    if m.get("method") == "window/showMessage"])
    assert shown[0]["type"] == types.MessageType.Error
    assert shown[0]["message"].startswith(f"Switchman cannot use its data folder {data} (")
    for method, params in ((methods.CHAT, {"workspace": workspace.as_uri(), "message": "hi"}),
                           (methods.SESSIONS, {"workspace": workspace.as_uri()}),
                           (methods.TRUST, {})):
        error = raw.request(method, params)["error"]
        assert (error["code"], error["data"]["code"]) == (1015, "data_folder_unusable")
        assert error["message"] == shown[0]["message"]
    raw.close()
    assert raw.process.returncode == 0
    assert "Traceback" not in raw.stderr()


@pytest.mark.parametrize("name", ["switchman.db", "patterns.db"])
def test_a_damaged_database_is_named_with_what_to_do(tmp_path: Path, name: str) -> None:
    """A database file that is not one (or is damaged) is the file's problem, not the
    folder's: the answer names the file and says to move it aside; it used to name the
    folder and tell the user to make it writable, which it already was."""
    data, workspace = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    workspace.mkdir()
    (data / name).write_bytes(b"not a database, just text\n" * 100)
    raw = RawDaemon(server_env(tmp_path / "config", data), tmp_path / "stderr.log")
    assert "result" in raw.initialize(workspace)
    shown = raw.wait_until(lambda: [m["params"] for m in raw.received
                                    if m.get("method") == "window/showMessage"])
    error = raw.request(methods.CHAT, {"workspace": workspace.as_uri(), "message": "hi"})["error"]
    assert (error["code"], error["data"]["code"]) == (1015, "data_folder_unusable")
    assert error["message"] == shown[0]["message"] == (
        f"Switchman cannot read {data / name} (file is not a database): it is damaged or not "
        "one of Switchman's databases, so nothing can be sent until it is out of the way. "
        "Move that file aside (Switchman then starts a new, empty one), then restart "
        "Switchman.")
    raw.close()
    assert raw.process.returncode == 0
    assert "Traceback" not in raw.stderr()


@pytest.mark.parametrize("editor", CLIENTS)
@pytest.mark.parametrize("gone", ["exit", "pipe closed", "shutdown"])
async def test_an_editor_gone_during_a_turn_is_quiet_and_keeps_it_interrupted(
        editor: str, gone: str, daemon: Daemon, fake: FakeProvider,
        capfd: pytest.CaptureFixture[str]) -> None:
    """The editor ends the daemon mid-answer: with ``exit``, or (a window reloaded or closed
    before it could say so) by closing the daemon's stdin, or as LSP has it, ``shutdown`` and,
    once answered, ``exit`` (Neovim 0.11's ``:Switchman restart``; pygls cancelled the running
    chat request at ``shutdown``, which ended the turn as the user's Stop). The turn is kept,
    as ``interrupted`` saying why; it was kept ``cancelled``, as if the user had pressed Stop."""
    client = await start(editor, daemon)
    stall = fake.script_stall("half", after_chunks=1)
    pending = asyncio.ensure_future(client.request(
        methods.CHAT, {"workspace": daemon.uri, "message": "tell me everything"}))
    assert await stall.wait_reached_async()
    await client.wait_for(methods.CHAT_DELTA, lambda d: d.get("text") == "half")
    process = client._server
    assert process is not None and process.stdin is not None
    if gone == "shutdown":
        await client.shutdown_session()  # shutdown, answered, then exit
    elif gone == "exit":
        client.protocol.notify(types.EXIT, None)  # no shutdown first
    else:
        process.stdin.close()
    # LSP: 0 after a shutdown, 1 for an exit without one
    assert await asyncio.wait_for(process.wait(), 20) == (0 if gone == "shutdown" else 1)
    pending.cancel()
    await client.stop()
    fake.release_stalls()
    logs = capfd.readouterr().err
    assert "closed file" not in logs
    assert "Traceback" not in logs

    restarted = await start(editor, daemon)
    try:
        listing = await restarted.request(methods.SESSIONS, {"workspace": daemon.uri})
        detail = await restarted.request(methods.SESSION,
                                         {"session_id": listing["current_session_id"]})
    finally:
        await restarted.shutdown_session()
        await restarted.stop()
    assert detail["turns"][0]["status"] == "interrupted"
    assert detail["turns"][0]["error"] == {"code": "interrupted", "message": EXITED_MESSAGE}
    assert detail["messages"][-1]["content"] == [{"type": "text", "text": "half"}]


def tcp_daemon(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`switchman serve --tcp` on a free port, listening; its stderr is a pipe."""
    with socket.socket() as probe:  # a free port (the daemon binds it right after)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    daemon = subprocess.Popen(
        [sys.executable, "-m", "switchman.server.cli", "serve", "--tcp", f"127.0.0.1:{port}"],
        env=server_env(tmp_path / "config", tmp_path / "data"), stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE, bufsize=0)  # unbuffered: select() sees every line
    logged(daemon, b"listening on")
    return daemon, port


def logged(daemon: subprocess.Popen[bytes], needle: bytes) -> None:
    """Read the daemon's log until a line holds ``needle``."""
    assert daemon.stderr is not None
    while True:
        ready, _, _ = select.select([daemon.stderr], [], [], TIMEOUT)
        assert ready, f"the daemon did not log {needle!r} within {TIMEOUT} s"
        line = daemon.stderr.readline()
        assert line, f"the daemon ended without logging {needle!r}"
        if needle in line:
            return


def initialized(port: int) -> socket.socket:
    """A TCP connection to the daemon that has had its ``initialize`` answer."""
    editor = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    editor.sendall(frame(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": {"processId": None, "capabilities": {}}})
                         .encode()))
    assert b'"id": 1' in editor.recv(65536)
    return editor


@pytest.mark.parametrize("address", ["7077", "localhost", "127.0.0.1:", "127.0.0.1:99999",
                                     "127.0.0.1:77x"])
def test_serve_tcp_with_no_usable_address_says_so(tmp_path: Path, address: str) -> None:
    done = subprocess.run([sys.executable, "-m", "switchman.server.cli", "serve", "--tcp",
                           address], env=server_env(tmp_path / "config", tmp_path / "data"),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 2
    assert done.stderr.endswith(f"switchman serve: error: argument --tcp: {address!r} is not "
                                "HOST:PORT with a port from 0 to 65535 (e.g. 127.0.0.1:7077)\n")


def test_serve_tcp_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "switchman.server.cli", "serve", "--tcp",
                               f"127.0.0.1:{port}"], stdin=subprocess.DEVNULL,
                              env=server_env(tmp_path / "config", tmp_path / "data"),
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"switchman serve: cannot listen on 127.0.0.1:{port}: " in done.stderr
    assert done.stderr.rstrip().endswith("address already in use")


def test_over_tcp_a_second_connection_is_refused_while_the_first_is_open(tmp_path: Path) -> None:
    """`switchman serve --tcp` (debugging) gave a second connection the first one's session:
    its answers and approval requests went to whoever connected last. Now one at a time."""
    daemon, port = tcp_daemon(tmp_path)
    try:
        first = initialized(port)
        second = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        second.sendall(frame(b'{"jsonrpc": "2.0", "id": 7, "method": "shutdown"}'))
        with contextlib.suppress(ConnectionResetError):
            assert second.recv(65536) == b""  # closed, unanswered
        logged(daemon, b"refused a second TCP connection")
        first.sendall(frame(b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}'))
        assert b'"id": 2' in first.recv(65536)  # the first editor still has its session
        first.sendall(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        first.close()
        second.close()
        assert daemon.wait(TIMEOUT) == 0
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


def test_over_tcp_a_client_that_stops_reading_stops_being_read(tmp_path: Path) -> None:
    """As over stdio: an editor on `--tcp` that sends requests and never reads the answers
    had every answer buffered in the daemon, its memory growing with each request. Once a
    megabyte waits, the daemon reads no more of its requests until it reads again; then
    every request is answered."""
    daemon, port = tcp_daemon(tmp_path)
    editor = initialized(port)
    editor.settimeout(None)  # sendall blocks while the daemon does not read
    stop = threading.Event()
    sent: list[int] = []

    def send_until_stopped() -> None:  # far more than the kernel's buffers hold, if need be
        with contextlib.suppress(OSError):  # the daemon ended: the assertions below say so
            for msg_id in range(2, 40_000):
                if stop.is_set():
                    return
                editor.sendall(frame(json.dumps({
                    "jsonrpc": "2.0", "id": msg_id, "method": methods.MODELS,
                    "params": {"workspace": tmp_path.as_uri()}}).encode()))
                sent.append(msg_id)

    sender = threading.Thread(target=send_until_stopped, daemon=True)
    sender.start()
    try:
        logged(daemon, b"waits for the editor to read it")
        assert daemon.poll() is None
        stop.set()
        answers = editor.makefile("rb")
        answered: set[int] = set()
        while sender.is_alive() or answered != set(sent):
            message = read_frame(answers)
            assert message is not None, "the daemon closed the connection"
            assert "result" in message or message["error"]["data"]["code"] == \
                "unknown_workspace", message
            answered.add(message["id"])
        assert answered == set(sent)
        editor.sendall(frame(b'{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}'))
        assert read_frame(answers) == {"jsonrpc": "2.0", "id": 1, "result": None}
        editor.sendall(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        assert daemon.wait(TIMEOUT) == 0
    finally:
        editor.close()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 1)])
def test_exit_over_tcp_ends_the_daemon_without_a_traceback(tmp_path: Path, shutdown: bool,
                                                          code: int) -> None:
    """pygls ends the process with ``sys.exit`` inside the connection's task: asyncio logged
    it as an unhandled ``SystemExit`` with its traceback. The exit code is LSP's."""
    daemon, port = tcp_daemon(tmp_path)
    try:
        editor = initialized(port)
        if shutdown:
            editor.sendall(frame(b'{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}'))
            assert b'"id": 2' in editor.recv(65536)
        editor.sendall(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        with contextlib.suppress(ConnectionResetError):
            assert editor.recv(65536) == b""  # the daemon closed the connection
        editor.close()
        assert daemon.wait(TIMEOUT) == code
        assert daemon.stderr is not None
        log = daemon.stderr.read().decode()
        assert "Traceback" not in log and "SystemExit" not in log, log
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


def test_a_turn_stopped_by_shutdown_is_answered_before_the_shutdown(
        daemon: Daemon, fake: FakeProvider) -> None:
    """An editor sends ``exit`` once ``shutdown`` is answered, and may see the daemon's exit
    before reading what the daemon wrote last (Neovim 0.7.2 then drops it): the running chat's
    ``interrupted`` answer came after the shutdown answer, and ``:Switchman restart`` mid-turn
    then said "The Switchman daemon stopped during this turn" instead of the daemon's line."""
    raw = RawDaemon(daemon.env, daemon.data / "stderr.log")
    try:
        assert "result" in raw.initialize(daemon.workspace)
        stall = fake.script_stall("half", after_chunks=1)
        chat_id = raw.new_id()
        raw.send({"jsonrpc": "2.0", "id": chat_id, "method": methods.CHAT,
                  "params": {"workspace": daemon.uri, "message": "tell me everything"}})
        assert stall.wait_reached()
        raw.wait_until(lambda: any(m.get("method") == methods.CHAT_DELTA for m in raw.received))
        shutdown_id = raw.new_id()
        raw.send({"jsonrpc": "2.0", "id": shutdown_id, "method": "shutdown", "params": None})
        raw.response(shutdown_id)
        answered = [m.get("id") for m in raw.responses()]
        assert chat_id in answered, "the chat was not answered before the shutdown"
        assert answered.index(chat_id) < answered.index(shutdown_id)
        answer = raw.response(chat_id)["result"]
        assert answer["error"] == {"code": "interrupted", "message": EXITED_MESSAGE}
        raw.notify("exit", None)
        assert raw.process.wait(TIMEOUT) == 0
    finally:
        fake.release_stalls()
        raw.close()
