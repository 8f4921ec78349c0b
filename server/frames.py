"""Reading LSP base-protocol frames from the editor's pipe, with bounded memory.

pygls' reader trusts the ``Content-Length`` header: a client announcing a
huge length makes it buffer that many bytes, and a length of thousands of
digits ends its loop with an exception. Here a frame is at most
:data:`MAX_FRAME_BYTES`; a longer one is answered at once with ``-32600``
(its id cannot be known without reading it) and its body is dropped as it
arrives, so the next frame is served as usual. A header line longer
than :data:`MAX_HEADER_LINE` or a length that is not a number gets ``-32700``.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInvalidRequest, JsonRpcParseError

from switchman.server.protocol import UNREADABLE_FRAME_ERRORS

if TYPE_CHECKING:
    import threading

    from switchman.server.protocol import SwitchmanProtocol

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 32 * 1024 * 1024
"""The largest body read: far above any document or chat message an editor sends
(configuration files are capped at 256 KB, attachments at 200,000 characters each)."""

MAX_HEADER_LINE = 64 * 1024
"""The longest header line read (``Content-Length`` and ``Content-Type`` are short)."""

_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\S*)\s*", re.IGNORECASE)
_MAX_LENGTH_DIGITS = 12  # more would exceed any cap; also keeps int() far from its digit limit


class FrameReader:
    """Splits the editor's bytes into frames as they arrive and hands each to ``protocol``.

    Fed from the pipe's ``data_received``: a frame is handled in the same pass of the
    event loop that read it, with no reader task to wake up in between (that was a pass
    of the loop for every message the editor sends, keystrokes and chat messages alike).
    Memory stays bounded: a header line is kept up to :data:`MAX_HEADER_LINE` bytes, a
    body up to :data:`MAX_FRAME_BYTES`, and a refused body is dropped as it arrives.
    """

    def __init__(self, protocol: SwitchmanProtocol, stop: threading.Event) -> None:
        self._protocol = protocol
        self._stop = stop
        self._buffer = bytearray()
        self._length: int | None = None
        """The length announced in the header block being read."""
        self._body: int | None = None
        """The length of the body being read (its header block is complete)."""
        self._discarding = 0
        """Bytes of a refused body still to drop."""
        self._skipping_line = False
        """Dropping the rest of an over-long header line."""

    def feed(self, data: bytes) -> None:
        """Take the next bytes of input; handle every frame they complete."""
        self._buffer += data
        while not self._stop.is_set() and self._step():
            pass

    def _step(self) -> bool:
        """One step of progress on the buffer; False when it needs more input."""
        buffer = self._buffer
        if self._discarding:
            dropped = min(self._discarding, len(buffer))
            del buffer[:dropped]
            self._discarding -= dropped
            return not self._discarding
        if self._skipping_line:
            end = buffer.find(b"\n")
            if end < 0:
                buffer.clear()
                return False
            del buffer[: end + 1]
            self._skipping_line = False
            return True
        if self._body is not None:
            if len(buffer) < self._body:
                return False
            body = bytes(buffer[: self._body])
            del buffer[: self._body]
            self._body = None
            self._handle(body)
            return True
        return self._header_line()

    def _header_line(self) -> bool:
        """Read one header line, if a whole one is there."""
        buffer = self._buffer
        end = buffer.find(b"\n", 0, MAX_HEADER_LINE + 1)
        if end < 0:
            if len(buffer) <= MAX_HEADER_LINE:
                return False
            buffer.clear()
            self._skipping_line = True  # the rest of the line is dropped as it arrives
            self._length = None  # and the header block starts again after it
            _refuse(self._protocol, JsonRpcParseError(
                f"Parse error: a header line is longer than {MAX_HEADER_LINE} bytes."))
            return True
        line = bytes(buffer[: end + 1])
        del buffer[: end + 1]
        if line.strip():
            match = _CONTENT_LENGTH.fullmatch(line)
            if match is not None:
                self._length = _parse_length(match.group(1), self._protocol)
            return True
        length, self._length = self._length, None
        if length is None:  # a header block without a length is skipped, as pygls does
            return True
        if length > MAX_FRAME_BYTES:
            _refuse(self._protocol, JsonRpcInvalidRequest(
                f"Invalid request: the frame announces {_size(length)}; Switchman reads "
                f"frames of at most {MAX_FRAME_BYTES} bytes, and skipped this one."))
            self._discarding = length
        else:
            self._body = length
        return True

    def _handle(self, body: bytes) -> None:
        try:
            message = _loads(body)
        except UNREADABLE_FRAME_ERRORS as error:
            self._protocol.parse_error(error)
            return
        self._protocol.handle_message(message)



def _loads(body: bytes) -> object:
    """The body's JSON. Bytes in it that are not UTF-8 (Neovim sends a buffer's or the chat
    input's bytes as they are: a Latin-1 paste) are read as lone surrogates, as a JSON
    ``\\udce9`` escape would be: the frame's id is known and its request answered (a chat
    message holding one is ``invalid_text``; a shared buffer's text has them replaced), where
    an undecodable frame could only be answered without an id, leaving the editor waiting."""
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        return json.loads(body.decode("utf-8", "surrogateescape"))


def _parse_length(digits: bytes, protocol: SwitchmanProtocol) -> int | None:
    """The announced length; one too long to write down counts as just over any cap."""
    if not digits.isdigit():
        _refuse(protocol, JsonRpcParseError(
            "Parse error: the Content-Length header is not a number."))
        return None
    return int(digits) if len(digits) <= _MAX_LENGTH_DIGITS else 10**_MAX_LENGTH_DIGITS




def _refuse(protocol: SwitchmanProtocol, error: JsonRpcInvalidRequest | JsonRpcParseError) -> None:
    log.warning("refused a JSON-RPC frame: %s", error.message)
    protocol.send_error(None, error)


def _size(length: int) -> str:
    return f"{length} bytes" if length < 10**_MAX_LENGTH_DIGITS else "a length too large to read"
