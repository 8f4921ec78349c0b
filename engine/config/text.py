"""Positions in text as editors count them, and plain text edits.

The engine locates everything with LSP positions (0-based lines, UTF-16
code-unit columns, see :mod:`problems`); Python strings index code points.
These helpers convert between the two and apply edits the way an editor does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from switchman.engine.config.problems import Position, Range


class TextEdit(msgspec.Struct, frozen=True):
    """Replace the text in ``range`` with ``new_text``."""

    range: Range
    new_text: str


_LINE_BREAK = re.compile("\r\n?|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as LSP counts them: ``\n``, ``\r\n`` and ``\r`` end a line.

    A final line break starts an empty last line.
    """
    if "\r" not in text:
        return text.split("\n")
    return _LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The code-point offset where each line (as :func:`split_lines` counts them) starts."""
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text))]


def utf16_len(text: str) -> int:
    """How many UTF-16 code units ``text`` takes."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_utf16(line: str, column: int) -> int:
    """The UTF-16 column of code-point ``column`` on ``line``."""
    return column if line.isascii() else utf16_len(line[:column])


def from_utf16(line: str, character: int) -> int:
    """The code-point column of UTF-16 ``character`` on ``line`` (clamped to the line)."""
    if line.isascii():
        return min(max(character, 0), len(line))
    units = 0
    for index, char in enumerate(line):
        if units >= character:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def position_at(lines: list[str], line: int, column: int) -> Position:
    """The LSP position of code-point ``column`` on ``line``."""
    text = lines[line] if 0 <= line < len(lines) else ""
    return Position(line, to_utf16(text, column))


def offset_at(text: str, position: Position) -> int:
    """The code-point offset into ``text`` of an LSP position (clamped to the text: a line
    past the last one is the end of the text, as editors treat it)."""
    lines, starts = split_lines(text), line_starts(text)
    if position.line >= len(lines):
        return len(text)
    line = max(position.line, 0)
    return starts[line] + from_utf16(lines[line], position.character)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with every edit applied; like LSP, all ranges refer to the original text."""
    spans = sorted(((offset_at(text, e.range.start), offset_at(text, e.range.end), e.new_text)
                    for e in edits), key=lambda span: (span[0], span[1]), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def line_range(lines: list[str], line: int) -> Range:
    """The whole of ``line``, without its line break."""
    return Range(Position(line, 0), position_at(lines, line, len(lines[line])))


def snippet_to_plain(snippet: str) -> str:
    """An LSP snippet as plain text: placeholders keep their default, choices their first."""
    out: list[str] = []
    at = 0
    while at < len(snippet):
        char = snippet[at]
        if char == "\\" and at + 1 < len(snippet):
            out.append(snippet[at + 1])
            at += 2
        elif char == "$" and at + 1 < len(snippet) and snippet[at + 1] == "{":
            close = _matching_brace(snippet, at + 1)
            inner = snippet[at + 2:close]
            body = inner.partition(":")[2] if ":" in inner else ""
            if "|" in inner and not body:
                body = inner.split("|")[1].split(",")[0]
            out.append(snippet_to_plain(body))
            at = close + 1
        elif char == "$" and at + 1 < len(snippet) and snippet[at + 1].isdigit():
            at += 2
            while at < len(snippet) and snippet[at].isdigit():
                at += 1
        else:
            out.append(char)
            at += 1
    return "".join(out)


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1
