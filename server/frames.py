"""Reading LSP base-protocol frames from the editor's pipe, with bounded memory.

pygls' reader trusts the ``Content-Length`` header: a client announcing a
huge length makes it buffer that many bytes, and a length of thousands of
digits ends its loop with an exception. Here a frame is at most
:data:`MAX_FRAME_BYTES`; a longer one is answered at once with ``-32600``
(its id cannot be known without reading it) and its body is read and dropped
in small pieces, so the next frame is served as usual. A header line longer
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
    import asyncio
    import threading

    from switchman.server.protocol import SwitchmanProtocol

log = logging.getLogger(__name__)

MAX_FRAME_BYTES = 32 * 1024 * 1024
"""The largest body read: far above any document or chat message an editor sends
(configuration files are capped at 256 KB, attachments at 200,000 characters each)."""

MAX_HEADER_LINE = 64 * 1024
"""The longest header line read (``Content-Length`` and ``Content-Type`` are short)."""

_DISCARD_CHUNK = 64 * 1024
_CONTENT_LENGTH = re.compile(rb"content-length\s*:\s*(\S*)\s*", re.IGNORECASE)
_MAX_LENGTH_DIGITS = 12  # more would exceed any cap; also keeps int() far from its digit limit


async def read_frames(reader: asyncio.StreamReader, protocol: SwitchmanProtocol,
                      stop: threading.Event) -> None:
    """Hand every frame on ``reader`` to ``protocol`` until end of input or ``stop``."""
    while not stop.is_set():
        try:
            length = await _read_header(reader, protocol)
        except ValueError:  # StreamReader drops an over-long line and says so this way
            _refuse(protocol, JsonRpcParseError(
                f"Parse error: a header line is longer than {MAX_HEADER_LINE} bytes."))
            continue
        if length is None:
            return
        if length > MAX_FRAME_BYTES:
            _refuse(protocol, JsonRpcInvalidRequest(
                f"Invalid request: the frame announces {_size(length)}; Switchman reads "
                f"frames of at most {MAX_FRAME_BYTES} bytes, and skipped this one."))
            if not await _discard(reader, length):
                return
            continue
        body = await reader.readexactly(length)
        try:
            message = json.loads(body)
        except UNREADABLE_FRAME_ERRORS as error:
            protocol.parse_error(error)
            continue
        protocol.handle_message(message)


async def _read_header(reader: asyncio.StreamReader, protocol: SwitchmanProtocol) -> int | None:
    """The ``Content-Length`` of the next frame (its blank line read), or None at end of input.

    Header blocks without a length are skipped, as pygls does.
    """
    length: int | None = None
    while True:
        line = await reader.readline()
        if not line:
            return None
        if line.strip():
            match = _CONTENT_LENGTH.fullmatch(line)
            if match is not None:
                length = _parse_length(match.group(1), protocol)
        elif length is not None:
            return length


def _parse_length(digits: bytes, protocol: SwitchmanProtocol) -> int | None:
    """The announced length; one too long to write down counts as just over any cap."""
    if not digits.isdigit():
        _refuse(protocol, JsonRpcParseError(
            "Parse error: the Content-Length header is not a number."))
        return None
    return int(digits) if len(digits) <= _MAX_LENGTH_DIGITS else 10**_MAX_LENGTH_DIGITS


async def _discard(reader: asyncio.StreamReader, length: int) -> bool:
    """Read and drop ``length`` bytes in small pieces; False if the input ended first."""
    left = length
    while left > 0:
        chunk = await reader.read(min(left, _DISCARD_CHUNK))
        if not chunk:
            return False
        left -= len(chunk)
    return True


def _refuse(protocol: SwitchmanProtocol, error: JsonRpcInvalidRequest | JsonRpcParseError) -> None:
    log.warning("refused a JSON-RPC frame: %s", error.message)
    protocol.send_error(None, error)


def _size(length: int) -> str:
    return f"{length} bytes" if length < 10**_MAX_LENGTH_DIGITS else "a length too large to read"
