"""Notifications with JSON-ready params (deltas, statuses, diagnostics) as they are framed."""

from __future__ import annotations

import json

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
