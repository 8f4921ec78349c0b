"""Where the cursor is in a configuration file, read from the lines around it.

Completion runs while the user types, when the file is often not valid YAML,
so this does not parse: it reads indentation, ``- `` item markers and
``key:`` prefixes the way a person would, plus ``{...}`` / ``[...]`` on the
cursor's own line. That is enough to know which declaration of
:mod:`schema` applies at the cursor.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field, replace
from typing import Literal

Role = Literal["key", "value", "item"]
Label = str | int

_KEY = re.compile(
    r"""(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s#'"{}\[\],&*!|>%@`][^#]*?)"""
    r"""[ \t]*:(?=[ \t]|$)""")
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*[ \t]*(?:#.*)?$")
_WORD_END = re.compile(r"""[^\s,:{}\[\]#"']*""")


@dataclass(frozen=True)
class Cursor:
    """What the cursor is on, and where in the file's structure."""

    path: tuple[Label, ...]
    """Keys and item numbers from the root to the mapping or list holding the cursor."""
    role: Role
    """Typing a key, a key's value, or a list item."""
    key: str | None
    """For a value: its key. For a key: the key under the cursor, if complete."""
    word: str
    """The token at the cursor."""
    line: int
    start: int
    """Code-point column where the token starts."""
    end: int
    """Code-point column where the token ends."""
    siblings: frozenset[str] = frozenset()
    """Keys already present in the mapping that holds the cursor."""
    has_colon: bool = False
    """For a key: whether a ``:`` already follows it."""
    flow: bool = False
    """Inside ``{...}`` or ``[...]``."""
    indent: int = 0
    """How far the token sits right of the line's indentation (for multi-line snippets)."""


@dataclass
class _Frame:
    """An open block node while scanning: the value of a key, or a list item."""

    col: int
    label: Label
    parent: _Frame | None
    keys: set[str] = field(default_factory=set)
    items: int = 0

    def path(self) -> tuple[Label, ...]:
        labels: list[Label] = []
        frame: _Frame | None = self
        while frame is not None and frame.parent is not None:
            labels.append(frame.label)
            frame = frame.parent
        return tuple(reversed(labels))


@dataclass(frozen=True)
class _Line:
    """One line's block structure."""

    indent: int
    dashes: tuple[int, ...]
    content: int
    key: str | None = None
    key_end: int = 0
    value: int = 0
    value_text: str = ""


def parse_line(text: str) -> _Line | None:
    """The structure of a block line; None for blank and comment-only lines."""
    at = len(text) - len(text.lstrip(" "))
    indent, dashes = at, []
    while at < len(text) and text[at] == "-" and (at + 1 == len(text) or text[at + 1] in " \t"):
        dashes.append(at)
        at += 1
        while at < len(text) and text[at] in " \t":
            at += 1
    if at >= len(text) or text[at] == "#":
        return _Line(indent, tuple(dashes), at) if dashes else None
    match = _KEY.match(text, at)
    if match is None:
        return _Line(indent, tuple(dashes), at, value=at, value_text=_strip_comment(text[at:]))
    value = match.end() + 1
    while value < len(text) and text[value] in " \t":
        value += 1
    value = min(value, len(text))
    return _Line(indent, tuple(dashes), at, _unquote(match.group("key")), match.end("key"),
                 value, _strip_comment(text[value:]))


def _unquote(key: str) -> str:
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return key[1:-1]
    return key


def _strip_comment(text: str) -> str:
    quote = None
    for index, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].rstrip()
    return text.rstrip()


def _open_brackets(text: str) -> int:
    depth, quote = 0, None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return depth


class _Scanner:
    """Reads lines top to bottom, keeping the stack of open block nodes."""

    def __init__(self) -> None:
        self.root = _Frame(-1, "", None)
        self.stack = [self.root]
        self.skip_deeper_than: int | None = None  # inside a block scalar
        self.open_flow = 0  # unclosed brackets carried over from earlier lines

    def skipping(self, text: str) -> bool:
        """Whether ``text`` continues a multi-line scalar or flow collection."""
        if self.open_flow > 0:
            self.open_flow += _open_brackets(text)
            return True
        if self.skip_deeper_than is not None:
            indent = len(text) - len(text.lstrip(" "))
            if not text.strip() or indent > self.skip_deeper_than:
                return True
            self.skip_deeper_than = None
        return False

    def feed(self, line: _Line) -> tuple[_Frame, _Frame | None]:
        """Take one line; return the frame holding its key and the key's own frame."""
        first = line.dashes[0] if line.dashes else line.content
        while self.stack[-1].col > first or (self.stack[-1].col == first and (
                not line.dashes or isinstance(self.stack[-1].label, int))):
            self.stack.pop()
        for dash in line.dashes:
            holder = self.stack[-1]
            holder.items += 1
            self.stack.append(_Frame(dash, holder.items - 1, holder))
        holder = self.stack[-1]
        own = None
        if line.key is not None:
            holder.keys.add(line.key)
            own = _Frame(line.content, line.key, holder)
            self.stack.append(own)
        self._multiline(line)
        return holder, own

    def _multiline(self, line: _Line) -> None:
        if _BLOCK_SCALAR.match(line.value_text):
            self.skip_deeper_than = line.dashes[-1] if line.key is None and line.dashes \
                else line.content
        else:
            self.open_flow = max(0, _open_brackets(line.value_text))


@dataclass
class _Scan:
    """One pass over every line of a text, kept for the requests that follow on it.

    Per line: whether it continues a multi-line value, its structure, the open
    nodes before it, and the frames feeding it gave. The cursor's own line is
    read exactly as every other line is, so one pass serves every position.
    """

    skipped: list[bool] = field(default_factory=list)
    parsed: list[_Line | None] = field(default_factory=list)
    before: list[tuple[_Frame, ...]] = field(default_factory=list)
    fed: list[tuple[_Frame, _Frame | None] | None] = field(default_factory=list)


_SCANS: dict[tuple[str, ...], _Scan] = {}
_MAX_SCANS = 4  # hover and completion on the one or two documents being edited
_SCANS_LOCK = threading.Lock()


def _scan(lines: list[str]) -> _Scan:
    key = tuple(lines)
    with _SCANS_LOCK:  # requests may be served from worker threads
        found = _SCANS.get(key)
    if found is not None:
        return found
    scan, scanner = _Scan(), _Scanner()
    for text in lines:
        skipped = scanner.skipping(text)
        parsed = None if skipped else parse_line(text)
        scan.skipped.append(skipped)
        scan.parsed.append(parsed)
        scan.before.append(tuple(scanner.stack))
        scan.fed.append(scanner.feed(parsed) if parsed is not None else None)
    with _SCANS_LOCK:
        while len(_SCANS) >= _MAX_SCANS:
            _SCANS.pop(next(iter(_SCANS)))
        _SCANS[key] = scan
    return scan


def locate(lines: list[str], line: int, column: int) -> Cursor | None:
    """The cursor at code-point ``column`` of ``line``; None where nothing can be offered.

    The lines are scanned once per text (see :class:`_Scan`), so requests at
    many positions of a large file each cost only their own line.
    """
    if not 0 <= line < len(lines):
        return None
    scan = _scan(lines)
    if scan.skipped[line]:
        return None
    found = _at_cursor(scan, line, lines[line], column)
    if found is None:
        return None
    holder, cursor = found
    if cursor.flow:
        return cursor
    siblings = holder.keys - {cursor.word} if cursor.role == "key" else holder.keys
    return replace(cursor, siblings=frozenset(siblings))


def _at_cursor(scan: _Scan, line: int, text: str, column: int) -> tuple[_Frame, Cursor] | None:
    """Read the cursor's line against the open nodes around it."""
    parsed, fed = scan.parsed[line], scan.fed[line]
    if parsed is not None and fed is not None and \
            column > (parsed.dashes[0] if parsed.dashes else parsed.content):
        holder, own = fed
        cursor = _cursor_on_line(holder, own, parsed, text, line, column)
        return (holder, cursor) if cursor is not None else None
    if text[:column].strip():  # inside a comment
        return None
    holder = next((f for f in reversed(scan.before[line]) if f.col < column),
                  scan.before[line][0])
    return holder, Cursor(holder.path(), "key", None, "", line, column, column)


def _cursor_on_line(holder: _Frame, own: _Frame | None, parsed: _Line, text: str, line: int,
                    column: int) -> Cursor | None:
    base = holder.path()
    if parsed.key is not None and column <= parsed.key_end:
        return Cursor(base, "key", parsed.key, parsed.key, line, parsed.content, parsed.key_end,
                      has_colon=True, indent=parsed.content - parsed.indent)
    if parsed.key is not None:
        assert own is not None
        start = parsed.value
        if parsed.value_text[:1] in ("{", "["):
            # between the colon and the bracket nothing can be inserted
            return _in_flow((*base, parsed.key), text, start, line, column) \
                if column >= start else None
        return _scalar(Cursor((*base,), "value", parsed.key, "", line, start, start),
                       text, start, column)
    if parsed.value_text[:1] in ("{", "["):
        return _in_flow(base, text, parsed.content, line, column) \
            if column >= parsed.content else None
    cursor = Cursor(base, "key", None, "", line, parsed.content, parsed.content,
                    indent=parsed.content - parsed.indent)
    return _scalar(cursor, text, parsed.content, column)


def _scalar(cursor: Cursor, text: str, start: int, column: int) -> Cursor:
    """Extend ``cursor`` over the plain or quoted scalar starting at ``start``."""
    if start < len(text) and text[start] in "'\"":
        quote = text[start]
        close = text.find(quote, start + 1)
        end = close if close != -1 else len(text)
        start += 1
    else:
        end = max(start + len(_strip_comment(text[start:])), column)
    return replace(cursor, word=text[start:end], start=start, end=end)


@dataclass
class _Flow:
    kind: Literal["map", "seq"]
    key: str | None = None
    in_value: bool = False
    index: int = 0
    keys: set[str] = field(default_factory=set)


def _in_flow(base: tuple[Label, ...], text: str, start: int, line: int, column: int) -> Cursor:
    """The cursor inside ``{...}`` / ``[...]`` that starts at ``start`` on the cursor's line."""
    stack: list[_Flow] = []
    token = start
    at = start
    while at < column:
        char = text[at]
        if char in "'\"":
            close = text.find(char, at + 1)
            if close == -1 or close >= column:
                token = at + 1
                break
            at = close
        elif char in "{[":
            stack.append(_Flow("map" if char == "{" else "seq"))
            token = at + 1
        elif char in "}]" and stack:
            stack.pop()
        elif char == "," and stack:
            top = stack[-1]
            top.key, top.in_value, top.index = None, False, top.index + 1
            token = at + 1
        elif char == ":" and stack and stack[-1].kind == "map" and not stack[-1].in_value and (
                at + 1 >= len(text) or text[at + 1] in " ,}"):
            stack[-1].key = text[token:at].strip().strip("'\"")
            stack[-1].keys.add(stack[-1].key)
            stack[-1].in_value = True
            token = at + 1
        at += 1
    while token < column and text[token] == " ":
        token += 1
    end = column + len(_WORD_END.match(text, column).group())  # type: ignore[union-attr]
    word = text[token:end]
    labels: list[Label] = list(base)
    for flow in stack[:-1]:
        labels.append(flow.key if flow.kind == "map" and flow.key is not None else flow.index)
    if not stack:
        return Cursor(tuple(labels), "value", None, word, line, token, end, flow=True)
    top = stack[-1]
    if top.kind == "seq":
        return Cursor((*labels, top.index), "item", None, word, line, token, end, flow=True)
    if top.in_value:
        return Cursor(tuple(labels), "value", top.key, word, line, token, end, flow=True)
    return Cursor(tuple(labels), "key", None, word, line, token, end,
                  siblings=frozenset(top.keys), flow=True)
