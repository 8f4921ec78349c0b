"""Hostile JSON-RPC frames against the real daemon: every request answered, nothing leaked.

The fuzz test sends generated frames (garbage bodies, wrong shapes, junk params
for every method the daemon serves, lone surrogates) and checks after each
batch that every request got a response, that no response is an internal
error or carries Python text, and that the daemon still serves. It runs
``SWITCHMAN_FUZZ_EXAMPLES`` batches (100 by default; raise it for a longer run).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from switchman.server import methods
from switchman.server.frames import MAX_FRAME_BYTES, MAX_HEADER_LINE
from switchman.server.notifier import STATUS_COALESCE_SECONDS
from tests.support.lsp import TIMEOUT, server_env
from tests.support.rawrpc import RawDaemon, frame

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32602, -32603
PYTHON_TEXT = ("Traceback", 'File "', "Error:", "Exception", "TypeError", "KeyError",
               "ValueError", "AttributeError")


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawDaemon]:
    root = tmp_path_factory.mktemp("wire")
    config, data, workspace = root / "config", root / "data", root / "project"
    for folder in (config, data, workspace):
        folder.mkdir()
    daemon = RawDaemon(server_env(config, data), root / "stderr.log")
    daemon.initialize(workspace)
    daemon.workspace = workspace  # type: ignore[attr-defined]
    daemon.notify("textDocument/didOpen", {"textDocument": {
        "uri": (config / "routing.yaml").as_uri(), "languageId": "yaml", "version": 1,
        "text": "global_default: sonnet\nrules:\n  - name: short\n    use: haiku\n"}})
    yield daemon
    daemon.close()
    assert "Traceback" not in daemon.stderr()


def uri(raw: RawDaemon) -> str:
    return Path(raw.workspace).as_uri()  # type: ignore[attr-defined]


def assert_clean(response: dict[str, Any]) -> None:
    """A response with no internal error and no Python text in it."""
    error = response.get("error")
    if error is None:
        return
    assert error["code"] != INTERNAL_ERROR, error
    text = json.dumps(error)
    assert not any(marker in text for marker in PYTHON_TEXT), error


def assert_serving(raw: RawDaemon) -> None:
    answer = raw.request(methods.MODELS, {"workspace": uri(raw)})
    assert "result" in answer, answer


# -- specific frames ------------------------------------------------------------------


@pytest.mark.parametrize("params", ["a string", None, 7, [1, 2], {"workspace": 3}])
def test_custom_method_with_wrong_params_is_invalid_params(raw: RawDaemon, params: Any) -> None:
    answer = raw.request(methods.MODELS, params)
    assert answer["error"]["code"] == INVALID_PARAMS
    assert_clean(answer)


def test_a_custom_request_without_params_is_answered(raw: RawDaemon) -> None:
    msg_id = raw.new_id()
    raw.send({"jsonrpc": "2.0", "id": msg_id, "method": methods.MODELS})
    answer = raw.response(msg_id)
    assert answer["error"]["code"] == INVALID_PARAMS
    assert "workspace" in answer["error"]["message"]


@pytest.mark.parametrize("params", [
    "a string", None,
    {"textDocument": {"uri": "file:///x/routing.yaml"}},  # no position
    {"textDocument": {}, "position": {"line": 0, "character": 0}},
    {"textDocument": {"uri": "file:///x/routing.yaml"}, "position": {"line": "0"}},
])
@pytest.mark.parametrize("method", ["textDocument/hover", "textDocument/completion"])
def test_editor_requests_with_missing_fields_are_invalid_params(
        raw: RawDaemon, method: str, params: Any) -> None:
    answer = raw.request(method, params)
    assert answer["error"]["code"] == INVALID_PARAMS
    assert method in answer["error"]["message"]
    assert_clean(answer)


@pytest.mark.parametrize("trigger", [7, {"a": 1}, ["x"], True, "", "\ud800", "junk" * 50])
@pytest.mark.parametrize("kind", [2, 99, "x"])
def test_completion_with_a_junk_trigger_is_answered(
        raw: RawDaemon, kind: Any, trigger: Any) -> None:
    answer = raw.request("textDocument/completion", {
        "textDocument": {"uri": uri(raw) + "/.switchman/routing.yaml"},
        "position": {"line": 0, "character": 0},
        "context": {"triggerKind": kind, "triggerCharacter": trigger}})
    assert "result" in answer or answer["error"]["code"] == INVALID_PARAMS


@pytest.mark.parametrize("body", [b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method"',
                                  b"\xff\xfe\x00", b"[" * 100_000, b""])
def test_a_frame_that_is_not_json_gets_a_parse_error(raw: RawDaemon, body: bytes) -> None:
    before = len(raw.responses())
    raw.send_bytes(frame(body) if body else b"Content-Length: 0\r\n\r\n")
    if body:
        answer = raw.wait_until(lambda: raw.responses()[before:])[0]
        assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR)
        assert answer["error"]["message"].startswith("Parse error")
    assert_serving(raw)


LONG_NUMBER = b"9" * 5000
"""More digits than Python's ``int()`` reads (4,300): ``json.loads`` raised a bare
``ValueError`` the frame reader did not expect, so the request was never answered."""


@pytest.mark.parametrize(("method", "params", "code"), [
    ("textDocument/hover", b'{"textDocument": {"uri": "file:///x/routing.yaml"}, '
                           b'"position": {"line": %s, "character": 0}}', INVALID_PARAMS),
    (methods.MODELS, b'{"workspace": 7, "n": %s}', INVALID_PARAMS),
])
def test_a_number_too_long_for_python_is_still_answered(
        raw: RawDaemon, method: str, params: bytes, code: int) -> None:
    """Read as JavaScript's JSON.parse reads it (a float), so the request keeps its id; and
    the frame sent with it in the same write is served at once."""
    msg_id, next_id = raw.new_id(), raw.new_id()
    body = b'{"jsonrpc": "2.0", "id": %d, "method": "%s", "params": %s}' % (
        msg_id, method.encode(), params % LONG_NUMBER)
    after = json.dumps({"jsonrpc": "2.0", "id": next_id, "method": methods.MODELS,
                        "params": {"workspace": uri(raw)}}).encode()
    raw.send_bytes(frame(body) + frame(after))
    answer = raw.response(msg_id)
    assert answer["error"]["code"] == code
    assert_clean(answer)
    assert "result" in raw.response(next_id)


def test_an_id_too_long_for_python_gets_invalid_request(raw: RawDaemon) -> None:
    before = len(raw.responses())
    raw.send_bytes(frame(b'{"jsonrpc": "2.0", "id": %s, "method": "%s", "params": {}}'
                         % (LONG_NUMBER, methods.MODELS.encode())))
    answer = raw.wait_until(lambda: [r for r in raw.responses()[before:] if r["id"] is None])[0]
    assert answer["error"]["code"] == INVALID_REQUEST
    assert_serving(raw)


def test_a_frame_over_the_size_cap_is_refused_and_skipped(raw: RawDaemon) -> None:
    """Its body is read and dropped in pieces, never held; the next frame is served."""
    before = len(raw.responses())
    length = MAX_FRAME_BYTES + 1
    raw.send_bytes(b"Content-Length: %d\r\n\r\n" % length)
    answer = raw.wait_until(lambda: raw.responses()[before:])[0]
    assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST)
    assert f"at most {MAX_FRAME_BYTES} bytes" in answer["error"]["message"]
    chunk = b" " * (1024 * 1024)
    for _ in range(length // len(chunk)):
        raw.send_bytes(chunk)
    raw.send_bytes(b" " * (length % len(chunk)))
    assert_serving(raw)


def test_an_over_long_header_line_gets_a_parse_error(raw: RawDaemon) -> None:
    before = len(raw.responses())
    raw.send_bytes(b"X-Padding: " + b"x" * (MAX_HEADER_LINE + 10) + b"\r\n")
    answer = raw.wait_until(lambda: raw.responses()[before:])[0]
    assert (answer["id"], answer["error"]["code"]) == (None, PARSE_ERROR)
    raw.send_bytes(b"\r\n")  # ends that header block, which announced no body
    assert_serving(raw)


@pytest.mark.parametrize("digits", [b"9" * 15, b"9" * 5000])
def test_a_huge_content_length_is_answered_at_once(tmp_path: Path, digits: bytes) -> None:
    """A client announcing terabytes gets its answer before anything is read, and the
    daemon does not end (pygls used to wait to buffer it all, or raise on 5,000 digits)."""
    daemon = RawDaemon(server_env(tmp_path / "config", tmp_path / "data"),
                       tmp_path / "stderr.log")
    try:
        (tmp_path / "project").mkdir()
        daemon.initialize(tmp_path / "project")
        before = len(daemon.responses())
        daemon.send_bytes(b"Content-Length: " + digits + b"\r\n\r\n{}")
        answer = daemon.wait_until(lambda: daemon.responses()[before:])[0]
        assert (answer["id"], answer["error"]["code"]) == (None, INVALID_REQUEST)
        assert "a length too large to read" in answer["error"]["message"]
        assert daemon.process.poll() is None
    finally:
        daemon.process.kill()  # it is reading the announced body, as the client asked
        daemon.process.wait()  # else close() may find it still running and ask it to shut down
        daemon.close()
    assert "Traceback" not in daemon.stderr()


def test_a_request_before_initialize_leaves_the_announced_folders_open(tmp_path: Path) -> None:
    """A request that needs the engine before ``initialize`` started it with no folder, and
    the folders ``initialize`` announced afterwards were never opened: every later chat
    was ``unknown_workspace`` until the daemon restarted."""
    (tmp_path / "project").mkdir()
    daemon = RawDaemon(server_env(tmp_path / "config", tmp_path / "data"),
                       tmp_path / "stderr.log")
    try:
        early = daemon.request(methods.SESSIONS, {"workspace": (tmp_path / "project").as_uri()})
        assert early["error"]["data"]["code"] == "unknown_workspace"  # not announced yet
        daemon.initialize(tmp_path / "project")
        later = daemon.request(methods.SESSIONS, {"workspace": (tmp_path / "project").as_uri()})
        assert later.get("result") == {"current_session_id": None, "sessions": []}, later
    finally:
        daemon.close()
    assert "Traceback" not in daemon.stderr()


def test_a_request_after_shutdown_is_answered_invalid_request(tmp_path: Path) -> None:
    """Every request gets one response (protocol.md), and LSP has one after ``shutdown``
    answered with InvalidRequest: it used to be logged and left unanswered, so a client
    waiting for it hung until it gave up."""
    (tmp_path / "project").mkdir()
    daemon = RawDaemon(server_env(tmp_path / "config", tmp_path / "data"),
                       tmp_path / "stderr.log")
    try:
        daemon.initialize(tmp_path / "project")
        assert daemon.request("shutdown", None) == {"jsonrpc": "2.0", "id": 2, "result": None}
        late = daemon.request(methods.MODELS, {"workspace": (tmp_path / "project").as_uri()})
        assert late["error"]["code"] == INVALID_REQUEST
        assert late["error"]["message"] == ("Invalid request: the server is shutting down "
                                            "(shutdown was requested).")
        daemon.notify("exit", None)
        assert daemon.process.wait(20) == 0
    finally:
        daemon.close()


def test_a_second_initialize_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    """LSP sends ``initialize`` once: a second was accepted, opened its folder and gave pygls
    a new workspace (the documents the editor had opened were forgotten)."""
    first, second = tmp_path / "project", tmp_path / "other"
    first.mkdir()
    second.mkdir()
    daemon = RawDaemon(server_env(tmp_path / "config", tmp_path / "data"),
                       tmp_path / "stderr.log")
    try:
        assert "result" in daemon.initialize(first)
        again = daemon.initialize(second)
        assert again["error"] == {"code": INVALID_REQUEST, "message": (
            "Invalid request: the server is already initialized (initialize is sent once).")}
        other = daemon.request(methods.SESSIONS, {"workspace": second.as_uri()})
        assert other["error"]["data"]["code"] == "unknown_workspace"
        kept = daemon.request(methods.SESSIONS, {"workspace": first.as_uri()})
        assert kept.get("result") == {"current_session_id": None, "sessions": []}, kept
    finally:
        daemon.close()
    assert "Traceback" not in daemon.stderr()


def test_a_change_to_a_document_never_opened_is_a_warning(raw: RawDaemon) -> None:
    """pygls logged an ERROR with a ``KeyError`` traceback for it."""
    never = uri(raw) + "/never%20opened.py"
    raw.notify("textDocument/didChange", {
        "textDocument": {"uri": never, "version": 2},
        "contentChanges": [{"text": "x = 1\n"}, {"text": "x = 2\n"}]})
    assert_serving(raw)  # handled in order: the notification was read before this answer
    warned = raw.wait_until(lambda: [line for line in raw.logged if never in line])
    assert len(warned) == 1 and "WARNING" in warned[0], warned
    assert "ignored a change to " + never in warned[0]
    assert "KeyError" not in raw.stderr() and "Traceback" not in raw.stderr()


@pytest.mark.parametrize("message", [
    [1, 2], "text", 42,
    {"jsonrpc": "1.0", "id": 900, "method": methods.MODELS},
    {"jsonrpc": "2.0", "id": {"a": 1}, "method": methods.MODELS},
    {"jsonrpc": "2.0", "id": 901, "method": 17},
])
def test_a_frame_that_is_no_message_gets_invalid_request(raw: RawDaemon, message: Any) -> None:
    before = len(raw.responses())
    raw.send(message)
    answer = raw.wait_until(lambda: raw.responses()[before:])[0]
    assert answer["error"]["code"] == INVALID_REQUEST
    expected_id = message.get("id") if isinstance(message, dict) else None
    assert answer["id"] == (expected_id if isinstance(expected_id, int) else None)
    assert_serving(raw)


def test_preview_for_a_workspace_path_with_a_nul_byte_is_unknown_workspace(
        raw: RawDaemon) -> None:
    for workspace in ("/tmp/a\x00b", "file:///tmp/a%00b", "/tmp/\ud800"):
        answer = raw.request(methods.PREVIEW, {"workspace": workspace, "message": "hi"})
        assert answer["error"]["data"]["code"] == "unknown_workspace"
        assert_clean(answer)


@pytest.mark.parametrize(("method", "params"), [
    ("$/cancelRequest", {"id": 1}), ("initialized", {}), ("$/setTrace", {"value": "off"}),
    ("textDocument/didClose", {"textDocument": {"uri": "file:///tmp/x.yaml"}}),
])
def test_a_notification_sent_with_an_id_gets_invalid_request(
        raw: RawDaemon, method: str, params: Any) -> None:
    """A notification's method sent as a request (with an ``id``) is answered -32600 naming
    the mistake; it used to fail in dispatch and be answered as an internal error."""
    answer = raw.request(method, params)
    assert answer["error"]["code"] == INVALID_REQUEST, answer
    assert answer["error"]["message"] == (
        f'Invalid request: {method} is a notification; send it without an "id".')
    assert_serving(raw)
    assert "Traceback" not in raw.stderr()


@pytest.mark.parametrize("params", [{"id": [1, 2]}, {"id": {"a": 1}}, {"id": None}, {}, "x", None])
def test_a_malformed_cancel_notification_is_dropped(raw: RawDaemon, params: Any) -> None:
    """Found by the fuzz test: an id pygls cannot look up used to raise in its dispatch."""
    raw.notify("$/cancelRequest", params)
    assert_serving(raw)
    assert "Traceback" not in raw.stderr()


def test_editor_requests_on_a_document_with_a_lone_surrogate_are_answered(
        raw: RawDaemon, tmp_path: Path) -> None:
    doc = (tmp_path / ".switchman" / "routing.yaml").as_uri()
    raw.notify("textDocument/didOpen", {"textDocument": {
        "uri": doc, "languageId": "yaml", "version": 1,
        "text": "rules:\n  - name: pasted \ud800 text\n    use: haiku\n"}})
    for line, character in ((0, 2), (1, 10), (1, 17), (2, 6)):
        where = {"textDocument": {"uri": doc}, "position": {"line": line, "character": character}}
        for method in ("textDocument/hover", "textDocument/completion"):
            answer = raw.request(method, where)
            assert "result" in answer, answer
    answer = raw.request("textDocument/documentSymbol", {"textDocument": {"uri": doc}})
    assert "result" in answer, answer


def test_params_holding_a_jsonrpc_key_are_not_taken_for_a_message(raw: RawDaemon) -> None:
    answer = raw.request(methods.PREVIEW, {"workspace": uri(raw), "message": "hello",
                                           "extra": {"jsonrpc": "2.0", "id": 1}})
    assert "result" in answer, answer


# -- generated frames -----------------------------------------------------------------

EXAMPLES = int(os.environ.get("SWITCHMAN_FUZZ_EXAMPLES", "100"))
REQUESTS = [methods.CHAT, methods.CANCEL, methods.SET_MODEL, methods.MODELS, methods.EXPLAIN,
            methods.PREVIEW, methods.SESSIONS, methods.SESSION, methods.NEW_SESSION,
            "textDocument/hover", "textDocument/completion", "textDocument/codeAction",
            "textDocument/documentSymbol", "switchman/unknown", "$/unknown"]
NOTIFICATIONS = ["textDocument/didOpen", "textDocument/didChange", "textDocument/didClose",
                 "workspace/didChangeWorkspaceFolders", "$/cancelRequest",
                 "workspace/didChangeWatchedFiles", "switchman/unknown"]

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | any_text \
    | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(any_text, inner, max_size=3), max_leaves=8)


@st.composite
def shaped_params(draw: st.DrawFn, workspace: str) -> Any:
    """Params close to a real method's: the right keys with a few values replaced or dropped."""
    doc = f"{workspace}/.switchman/routing.yaml"
    shape: dict[str, Any] = {
        "workspace": workspace, "message": "hello", "session_id": None, "turn_id": "t",
        "model": "haiku", "textDocument": {"uri": doc, "version": 1, "text": "rules: []\n"},
        "position": {"line": 0, "character": 3},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
        "context": {"triggerKind": 2, "triggerCharacter": " ", "diagnostics": []},
        "contentChanges": [{"text": "x"}], "event": {"added": [], "removed": []}, "id": 1,
        "images": [], "has_images": False, "include_workers": False}
    for key in draw(st.lists(st.sampled_from(sorted(shape)), max_size=4)):
        if draw(st.booleans()):
            shape.pop(key, None)
        else:
            shape[key] = draw(json_values)
    return shape


@st.composite
def hostile_frames(draw: st.DrawFn, workspace: str) -> list[tuple[bytes, int | None]]:
    """A few frames, each with the request id that must be answered (None: no answer needed)."""
    frames: list[tuple[bytes, int | None]] = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["request", "request", "notification", "garbage", "json"]))
        params = draw(shaped_params(workspace) | json_values)
        if kind == "request":
            msg_id = draw(st.integers(10**6, 10**9))
            message = {"jsonrpc": "2.0", "id": msg_id, "method": draw(st.sampled_from(REQUESTS)),
                       "params": params}
            frames.append((json.dumps(message).encode(), msg_id))
        elif kind == "notification":
            message = {"jsonrpc": "2.0", "method": draw(st.sampled_from(NOTIFICATIONS)),
                       "params": params}
            frames.append((json.dumps(message).encode(), None))
        elif kind == "garbage":
            frames.append((draw(st.binary(min_size=1, max_size=40)), None))
        else:
            frames.append((json.dumps(draw(json_values)).encode(), None))
    return frames


def test_generated_hostile_frames_are_all_answered(raw: RawDaemon) -> None:
    seen: set[int] = set()

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(hostile_frames(uri(raw)))
    def check(frames: list[tuple[bytes, int | None]]) -> None:
        ids = [msg_id for _, msg_id in frames if msg_id is not None and msg_id not in seen]
        seen.update(ids)
        for body, _ in frames:
            raw.send_bytes(frame(body))
        for msg_id in ids:
            assert_clean(raw.response(msg_id))
        assert_serving(raw)

    check()
    assert raw.process.poll() is None


@pytest.mark.parametrize(("method", "params"), [
    (methods.FEEDBACK, {"turn_id": "\ud800", "rating": "up"}),
    (methods.CANCEL, {"turn_id": "t\udfff"}),
    (methods.SESSION, {"session_id": "\ud800"}),
    (methods.EXPLAIN, {"turn_id": "\ud800"}),
    (methods.CHAT, {"workspace": "file:///w", "message": "hi", "session_id": "\ud800"}),
])
def test_an_id_with_a_lone_surrogate_is_invalid_params(raw: RawDaemon, method: str,
                                                       params: dict[str, Any]) -> None:
    """Found by trying it: the id reached SQLite, which raised, and the answer was -32603."""
    answer = raw.request(method, params)
    assert answer["error"]["code"] == -32602 and "lone UTF-16 surrogate" in \
        answer["error"]["message"], answer
    assert_clean(answer)


def test_a_preview_of_a_draft_with_a_lone_surrogate_is_invalid_text(raw: RawDaemon) -> None:
    answer = raw.request(methods.PREVIEW, {"workspace": uri(raw), "message": "pasted \ud800"})
    assert answer["error"]["data"]["code"] == "invalid_text", answer
    assert_clean(answer)


def test_a_chat_message_with_bytes_that_are_not_utf8_is_answered_invalid_text(
        raw: RawDaemon) -> None:
    """Found in Neovim: a Latin-1 byte in the chat input (a paste from a Latin-1 terminal or
    file) reaches the daemon as is; the frame could not be decoded, its answer had no id, and
    the chat waited for ever with its message gone from the input."""
    msg_id = raw.new_id()
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": methods.CHAT,
                       "params": {"workspace": uri(raw), "message": "caf@ ok"}}).encode()
    raw.send_bytes(frame(body.replace(b"caf@", b"caf\xe9")))
    answer = raw.response(msg_id)
    assert answer["error"]["data"]["code"] == "invalid_text", answer
    assert "invalid character" in answer["error"]["message"]
    assert_clean(answer)
    assert_serving(raw)


def test_a_client_that_stops_reading_stops_being_read(tmp_path: Path) -> None:
    """An editor that sends requests and never reads the answers (hung, or broken) used to
    have every answer buffered in the daemon, its memory growing with each request. Once
    a megabyte waits, the daemon reads no more requests until the editor reads again; then
    every request is answered."""
    (tmp_path / "project").mkdir()
    daemon = RawDaemon(server_env(tmp_path / "config", tmp_path / "data"),
                       tmp_path / "stderr.log", reading=False)
    workspace = (tmp_path / "project").as_uri()
    count = 1200  # over 3 MB of answers
    ids = [daemon.new_id() for _ in range(count + 1)]

    def send_all() -> None:
        with contextlib.suppress(OSError):  # the daemon ended: the assertions below say so
            daemon.send({"jsonrpc": "2.0", "id": ids[0], "method": "initialize", "params": {
                "processId": None, "rootUri": workspace, "capabilities": {}}})
            for msg_id in ids[1:]:
                daemon.send({"jsonrpc": "2.0", "id": msg_id, "method": methods.MODELS,
                             "params": {"workspace": workspace}})

    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    try:
        daemon.wait_until(lambda: any("waits for the editor to read it" in line
                                      for line in daemon.logged))
        assert daemon.process.poll() is None
        daemon.start_reading()
        assert "result" in daemon.response(ids[-1])
        sender.join(TIMEOUT)
        answered = {m["id"] for m in daemon.responses()}
        assert answered == set(ids)
        assert all("result" in m for m in daemon.responses())
    finally:
        daemon.close()
    assert "Traceback" not in daemon.stderr()


@pytest.mark.parametrize("shape", ["request", "notification", "garbage", "header only"])
def test_a_frame_without_content_length_is_skipped_and_the_next_one_read(
        raw: RawDaemon, shape: str) -> None:
    """A header block with no ``Content-Length`` (only ``Content-Type``) used to be skipped
    alone: its body was then read as header lines, which ate the next frame's header, and
    every later frame was misread (requests never answered). The unframed body is dropped
    up to the next frame's header; a request in it gets ``-32600`` with its id."""
    msg_id = raw.new_id()
    body = {"request": json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": methods.MODELS,
                                   "params": {"workspace": uri(raw)}}).encode(),
            "notification": json.dumps({"jsonrpc": "2.0", "method": "initialized",
                                        "params": {}}).encode(),
            "garbage": b"not json at all \x00\xff",
            "header only": b""}[shape]
    before, logged = len(raw.responses()), len(raw.logged)
    raw.send_bytes(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body)
    for _ in range(3):  # frames after it, each read and answered
        assert_serving(raw)
    refused = [m for m in raw.responses()[before:] if "error" in m]
    if shape == "request":
        assert [(m["id"], m["error"]["code"]) for m in refused] == [(msg_id, INVALID_REQUEST)]
        assert "Content-Length" in refused[0]["error"]["message"]
    elif shape == "garbage":
        assert [(m["id"], m["error"]["code"]) for m in refused] == [(None, INVALID_REQUEST)]
    else:
        assert refused == []
    raw.wait_until(lambda: any("no Content-Length" in line for line in raw.logged[logged:]))


def test_a_request_without_content_length_alone_is_answered(raw: RawDaemon) -> None:
    """A client that sends one unframed request and waits for its answer is answered (the
    body is read up to the end of its JSON) rather than left waiting for a next frame."""
    msg_id = raw.new_id()
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": methods.MODELS,
                       "params": {"workspace": uri(raw)}}).encode()
    raw.send_bytes(b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + body)
    answer = raw.response(msg_id)
    assert answer["error"]["code"] == INVALID_REQUEST
    assert_serving(raw)


def test_a_body_after_a_length_that_is_no_number_is_skipped(raw: RawDaemon) -> None:
    """`Content-Length: abc` is answered -32700 once; its body, whose end is unknown, is
    skipped up to the next frame (it was read as header lines, misreading the frames after)."""
    msg_id = raw.new_id()
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": methods.MODELS,
                       "params": {"workspace": uri(raw)}}).encode()
    before = len(raw.responses())
    raw.send_bytes(b"Content-Length: abc\r\n\r\n" + body)
    for _ in range(3):
        assert_serving(raw)
    refused = [m for m in raw.responses()[before:] if "error" in m]
    assert [(m["id"], m["error"]["code"]) for m in refused] == [(None, PARSE_ERROR)]


def test_protocol_md_says_what_a_coalesced_status_guarantees() -> None:
    """protocol.md said `switchman/status` was sent "whenever anything changes", while the
    daemon coalesces them (architecture.md): a client counting on every state (a queued
    pending_swap, a short turn) missed ones never sent. It now says the latest state always
    arrives, intermediate ones may not, and after what delay (the daemon's window)."""
    text = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text("utf-8")
    section = text.split("### `switchman/status`", 1)[1].split("\n### ", 1)[0]
    assert "whenever anything" not in section
    window = f"{round(STATUS_COALESCE_SECONDS * 1000)} ms"
    assert f"notification {window} later" in section
    for promise in ("The latest state always arrives", "Intermediate states may be skipped",
                    "pending_swap"):
        assert promise in section
