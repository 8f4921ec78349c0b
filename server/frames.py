"""Reading LSP base-protocol frames from the editor's pipe, with bounded memory.

pygls' reader trusts the ``Content-Length`` header: a client announcing a
huge length makes it buffer that many bytes, and a length of thousands of
digits ends its loop with an exception. Here a frame is at most
:data:`MAX_FRAME_BYTES`; a longer one is answered at once with ``-32600``
(its id cannot be known without reading it) and its body is dropped as it
arrives, so the next frame is served as usual. A header line longer
than :data:`MAX_HEADER_LINE` or a length that is not a number gets ``-32700``.

A header block with no usable ``Content-Length`` (only ``Content-Type``, say) leaves
its body's end unknown: the bytes after it are dropped up to the next frame's
``Content-Length`` header, or up to the end of the JSON value they begin with when
nothing follows yet (a client waiting for its answer). A request among them gets
``-32600`` with its id; reading the body as header lines, as pygls does, ate the
next frame's header and misread every frame after it.
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
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
"""The next frame's header after an unframed body that is not JSON."""
_JSON_START = re.compile(rb"\s*[\[{]")
_NEXT_HEADER_AFTER_JSON = re.compile(rb"(?<![^}\]\n])content-length[ \t]*:", re.IGNORECASE)
"""The next frame's header after an unframed JSON body: at a line's start or just after the
end of a JSON value (a body ends with no newline), never inside one of its strings."""
_UNFRAMED = "Invalid request: the frame's header has no Content-Length, so its end was " \
    "not known; Switchman skipped it."


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
        self._header_lines = 0
        """Lines of the header block being read."""
        self._block_refused = False
        """The header block being read was answered with an error already."""
        self._unframed: bool | None = None
        """Dropping a body whose header had no length (True: still to be reported)."""
        self._scanned = 0
        """How far the unframed bytes were searched for the next header."""

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
        if self._unframed is not None:
            return self._skip_unframed()
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
            self._header_lines, self._block_refused = 1, True
            _refuse(self._protocol, JsonRpcParseError(
                f"Parse error: a header line is longer than {MAX_HEADER_LINE} bytes."))
            return True
        line = bytes(buffer[: end + 1])
        del buffer[: end + 1]
        if line.strip():
            self._header_lines += 1
            match = _CONTENT_LENGTH.fullmatch(line)
            if match is not None:
                self._length = _parse_length(match.group(1), self._protocol)
                self._block_refused |= self._length is None
            return True
        length, self._length = self._length, None
        lines, self._header_lines = self._header_lines, 0
        refused, self._block_refused = self._block_refused, False
        if length is None:
            if lines:  # not a stray blank line between frames: a body may follow
                self._unframed, self._scanned = not refused, 0
            return True
        if length > MAX_FRAME_BYTES:
            _refuse(self._protocol, JsonRpcInvalidRequest(
                f"Invalid request: the frame announces {_size(length)}; Switchman reads "
                f"frames of at most {MAX_FRAME_BYTES} bytes, and skipped this one."))
            self._discarding = length
        else:
            self._body = length
        return True

    def _skip_unframed(self) -> bool:
        """Drop the body of a header block that had no length: up to the next frame's
        header, or the whole input when it is one JSON value (nothing sent after it yet)."""
        buffer = self._buffer
        header = _NEXT_HEADER_AFTER_JSON if _JSON_START.match(buffer) else _NEXT_HEADER
        found = header.search(buffer, max(0, self._scanned - len("content-length")))
        if found is not None:
            end = found.start()
        elif bytes(buffer[-MAX_HEADER_LINE:]).rstrip()[-1:] in (b"}", b"]") \
                and _json_value(bytes(buffer)) is not _NOT_JSON:
            end = len(buffer)
        else:
            self._scanned = len(buffer)
            if len(buffer) > MAX_FRAME_BYTES:  # keep a header's start that may be cut in two
                del buffer[: -MAX_HEADER_LINE]
                self._scanned = len(buffer)
            return False
        stray = bytes(buffer[:end])
        del buffer[:end]
        report, self._unframed = self._unframed, None
        if report:
            self._refuse_unframed(stray)
        return True

    def _refuse_unframed(self, body: bytes) -> None:
        """Log a frame that had no length; answer it if it is a request (its id is known) or
        unreadable (as a frame that is not JSON is), never a notification or a response."""
        message = _json_value(body)
        if isinstance(message, dict) and "method" in message:
            log.warning("skipped a JSON-RPC %s whose header has no Content-Length",
                        "request" if "id" in message else "notification")
            msg_id = message.get("id")
            if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
                self._protocol.send_error(msg_id, JsonRpcInvalidRequest(_UNFRAMED))
        elif body.strip():
            log.warning("skipped a JSON-RPC frame whose header has no Content-Length")
            if not isinstance(message, dict):  # a response (from the editor) needs none
                self._protocol.send_error(None, JsonRpcInvalidRequest(_UNFRAMED))
        else:
            log.warning("skipped a header block with no Content-Length and no body")

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
        return _json(body)
    except UnicodeDecodeError:
        return _json(body.decode("utf-8", "surrogateescape"))


def _json(text: bytes | str) -> object:
    """``json.loads``, except that an integer longer than Python's ``int()`` reads (4,300
    digits) is read as a float, infinite, as JavaScript's ``JSON.parse`` reads it: the
    frame keeps its id and is answered (an id or a field that must be an integer is then
    refused as such), where ``json.loads`` raised a bare ``ValueError`` and the request was
    never answered. Tried only once the plain reading failed, so it costs nothing else."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:
        return json.loads(text, parse_int=_integer)


def _integer(digits: str) -> int | float:
    try:
        return int(digits)
    except ValueError:
        return float(digits)


_NOT_JSON = object()


def _json_value(body: bytes) -> object:
    """The JSON value ``body`` holds, or :data:`_NOT_JSON` if it holds none (or more)."""
    try:
        return _loads(body)
    except UNREADABLE_FRAME_ERRORS:
        return _NOT_JSON


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
