"""Positions between the engine's UTF-16 columns and the encoding the editor chose.

The engine counts columns in UTF-16 code units; the editor may have chosen
UTF-8 or UTF-32 at initialisation. Kept apart from the configuration-editing
conversions so that tools can use it without importing the editing engine.
"""

from __future__ import annotations

from lsprotocol import types

from switchman.engine.config.problems import Position, Range
from switchman.engine.config.text import from_utf16, to_utf16


class Positions:
    """Converts positions in one text between the engine's UTF-16 and the client's encoding."""

    def __init__(self, lines: list[str], encoding: str) -> None:
        self.lines = lines
        self.encoding = encoding

    def _line(self, number: int) -> str:
        return self.lines[number] if 0 <= number < len(self.lines) else ""

    def lsp_position(self, position: Position) -> types.Position:
        """An engine position as the client counts it."""
        if self.encoding == types.PositionEncodingKind.Utf16:
            return types.Position(position.line, position.character)
        line = self._line(position.line)
        column = from_utf16(line, position.character)
        if self.encoding == types.PositionEncodingKind.Utf32:
            return types.Position(position.line, column)
        return types.Position(position.line, sum(_utf8_width(c) for c in line[:column]))

    def lsp_range(self, rng: Range) -> types.Range:
        """An engine range as the client counts it."""
        return types.Range(self.lsp_position(rng.start), self.lsp_position(rng.end))

    def engine_position(self, position: types.Position) -> Position:
        """A client position in the engine's UTF-16 columns."""
        if self.encoding == types.PositionEncodingKind.Utf16:
            return Position(position.line, position.character)
        line = self._line(position.line)
        if self.encoding == types.PositionEncodingKind.Utf32:
            column = min(position.character, len(line))
        else:
            column = _utf8_column(line, position.character)
        return Position(position.line, to_utf16(line, column))

    def engine_range(self, rng: types.Range) -> Range:
        """A client range in the engine's UTF-16 columns."""
        return Range(self.engine_position(rng.start), self.engine_position(rng.end))


def _utf8_width(char: str) -> int:
    # by code point, so a lone surrogate (legal in an editor's text) counts as 3 bytes
    point = ord(char)
    return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4


def _utf8_column(line: str, offset: int) -> int:
    """The code-point column at UTF-8 byte ``offset`` of ``line`` (inside a character: before)."""
    used = 0
    for column, char in enumerate(line):
        used += _utf8_width(char)
        if used > offset:
            return column
    return len(line)
