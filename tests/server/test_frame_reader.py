"""The frame reader on its own: frames handled as their bytes arrive, however the pipe
splits them, with the size caps of the wire (the daemon's answers to hostile frames are
in tests/lsp/test_wire.py)."""

from __future__ import annotations

import json
import threading
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException

from switchman.server.frames import MAX_FRAME_BYTES, MAX_HEADER_LINE, FrameReader
from switchman.server.protocol import SwitchmanProtocol


class _Seen:
    """What a protocol is handed: messages, unreadable bodies and refusals, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def handle_message(self, message: Any) -> None:
        self.events.append(("message", message))

    def parse_error(self, error: BaseException) -> None:
        self.events.append(("unreadable", type(error).__name__))

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        self.events.append(("refused", error.code))


def _reader() -> tuple[FrameReader, _Seen]:
    seen = _Seen()
    return FrameReader(cast("SwitchmanProtocol", seen), threading.Event()), seen


def _frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_a_frame_is_handled_before_the_bytes_that_complete_it_are_returned() -> None:
    reader, seen = _reader()
    data = _frame({"jsonrpc": "2.0", "id": 1, "method": "switchman/chat"})
    reader.feed(data[:-1])
    assert seen.events == []
    reader.feed(data[-1:])
    assert seen.events == [("message", {"jsonrpc": "2.0", "id": 1, "method": "switchman/chat"})]


@given(st.lists(st.integers(min_value=1, max_value=60), min_size=1, max_size=40))
def test_frames_come_out_the_same_however_the_pipe_splits_them(cuts: list[int]) -> None:
    messages = [{"jsonrpc": "2.0", "method": "m", "params": {"n": n, "text": "é" * n}}
                for n in range(5)]
    data = b"".join(_frame(m) for m in messages)
    data = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + data
    reader, seen = _reader()
    at = 0
    for cut in cuts:
        reader.feed(data[at: at + cut])
        at += cut
    reader.feed(data[at:])
    assert seen.events == [("message", m) for m in messages]


def test_an_unreadable_body_and_a_block_without_a_length_do_not_stop_the_frames() -> None:
    reader, seen = _reader()
    reader.feed(b"Content-Length: 3\r\n\r\n{x}" + b"X-Other: 1\r\n\r\n"
                + b"Content-Length: abc\r\n\r\n" + _frame({"jsonrpc": "2.0", "method": "ok"}))
    assert seen.events == [("unreadable", "JSONDecodeError"), ("refused", -32700),
                           ("message", {"jsonrpc": "2.0", "method": "ok"})]


def test_a_number_too_long_for_int_is_read_as_a_float_and_the_next_frame_handled() -> None:
    reader, seen = _reader()
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"n": %s, "m": -%s, "k": 3}}' \
        % (b"9" * 5000, b"9" * 5000)
    reader.feed(b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                + _frame({"jsonrpc": "2.0", "method": "ok"}))
    assert seen.events == [
        ("message", {"jsonrpc": "2.0", "id": 1, "method": "m",
                     "params": {"n": float("inf"), "m": float("-inf"), "k": 3}}),
        ("message", {"jsonrpc": "2.0", "method": "ok"})]


def test_an_over_long_header_line_is_refused_and_dropped_as_it_arrives() -> None:
    reader, seen = _reader()
    reader.feed(b"X-Padding: " + b"x" * (MAX_HEADER_LINE + 10))
    assert seen.events == [("refused", -32700)]
    assert len(reader._buffer) == 0  # nothing of the line is kept
    for _ in range(3):
        reader.feed(b"y" * MAX_HEADER_LINE)
        assert len(reader._buffer) == 0
    reader.feed(b"\r\n" + _frame({"jsonrpc": "2.0", "method": "after"}))
    assert seen.events[1:] == [("message", {"jsonrpc": "2.0", "method": "after"})]


def test_a_body_over_the_cap_is_refused_at_once_and_dropped_as_it_arrives() -> None:
    reader, seen = _reader()
    length = MAX_FRAME_BYTES + 1
    reader.feed(b"Content-Length: %d\r\n\r\n" % length)
    assert seen.events == [("refused", -32600)]
    chunk = b"z" * (1 << 20)
    sent = 0
    while sent + len(chunk) < length:
        reader.feed(chunk)
        sent += len(chunk)
        assert len(reader._buffer) == 0
    reader.feed(b"z" * (length - sent) + _frame({"jsonrpc": "2.0", "method": "next"}))
    assert seen.events[1:] == [("message", {"jsonrpc": "2.0", "method": "next"})]


def test_nothing_is_handled_once_the_server_stops() -> None:
    seen = _Seen()
    stop = threading.Event()
    reader = FrameReader(cast("SwitchmanProtocol", seen), stop)
    stop.set()
    reader.feed(_frame({"jsonrpc": "2.0", "method": "late"}))
    assert seen.events == []
