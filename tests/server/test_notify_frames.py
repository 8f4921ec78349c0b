"""Notifications with JSON-ready params (deltas, statuses, diagnostics) as they are framed."""

from __future__ import annotations

import json
from typing import Any, _ProtocolMeta

import pytest

from switchman.server.app import build_server
from switchman.server.protocol import SwitchmanProtocol


class Collected:
    """A writer that keeps what the protocol writes."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        """Nothing to close."""


def test_a_notification_is_one_utf8_frame_whose_length_counts_bytes() -> None:
    protocol = build_server().protocol
    assert isinstance(protocol, SwitchmanProtocol)
    out = Collected()
    protocol.set_writer(out)
    params = {"turn_id": "t1", "kind": "text", "text": "café ✓ 𝄞", "n": 2, "ok": None}
    protocol.notify_json("switchman/chatDelta", params)
    header, _, body = out.data.partition(b"\r\n\r\n")
    assert header.startswith(b"Content-Length: ")
    assert int(header.split(b"\r\n")[0].split(b": ")[1]) == len(body)
    assert "café ✓ 𝄞".encode() in body  # UTF-8 as is, not escaped to six bytes a character
    assert json.loads(body) == {"jsonrpc": "2.0", "method": "switchman/chatDelta",
                                "params": params}


def test_nothing_is_written_after_exit() -> None:
    protocol = build_server().protocol
    assert isinstance(protocol, SwitchmanProtocol)
    out = Collected()
    protocol.set_writer(out)
    protocol.closing = True
    protocol.notify_json("switchman/status", {"workspace": "w"})
    assert out.data == b""


def test_each_kind_of_message_reaches_its_handler_without_a_protocol_isinstance(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """pygls told requests, notifications and responses apart with ``isinstance`` against
    runtime-checkable protocols (about 20 µs each, on every message the editor sends); the
    frame's keys say the same."""
    protocol = build_server().protocol
    assert isinstance(protocol, SwitchmanProtocol)
    checks: list[type] = []
    instancecheck = _ProtocolMeta.__instancecheck__

    def counting(cls: Any, instance: object) -> bool:
        checks.append(cls)
        return bool(instancecheck(cls, instance))

    monkeypatch.setattr(_ProtocolMeta, "__instancecheck__", counting)
    seen: list[tuple[str, object]] = []
    monkeypatch.setattr(protocol, "_handle_request",
                        lambda msg_id, method, params: seen.append(("request", method)))
    monkeypatch.setattr(protocol, "_handle_notification",
                        lambda method, params: seen.append(("notification", method)))
    monkeypatch.setattr(protocol, "_handle_response",
                        lambda msg_id, result, error=None: seen.append(
                            ("error" if error is not None else "response", msg_id)))
    protocol.handle_message({"jsonrpc": "2.0", "id": 1, "method": "switchman/models",
                             "params": {}})
    protocol.handle_message({"jsonrpc": "2.0", "method": "switchman/unknown", "params": {}})
    protocol.handle_message({"jsonrpc": "2.0", "id": "a", "result": None})
    protocol.handle_message({"jsonrpc": "2.0", "id": "b",
                             "error": {"code": -32601, "message": "no"}})
    assert seen == [("request", "switchman/models"), ("notification", "switchman/unknown"),
                    ("response", "a"), ("error", "b")]
    assert not [c for c in checks if c.__module__.startswith("pygls")], checks
