"""Re-parsing a large routing file after an edit: only the rules that changed.

A long routing file is mostly its top-level ``rules:`` list. While a file is
edited, :class:`ChunkedParser` splits the text where list items start, parses
each item on its own and keeps the trees; the next parse re-uses the tree of
every item whose text did not change, moved to its new line through a
:class:`LineShift`. The stitched tree is the tree :func:`parse_yaml` builds
for the whole text, position for position (a property test checks this), so
validation cannot tell the difference.

Whenever the split might not be exact (anchors or aliases, several documents,
unusual line breaks, a layout it does not recognise, any syntax error) the
whole text is parsed instead, which also reports problems exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from switchman.engine.config.yamldoc import (
    MAX_DEPTH,
    LineShift,
    NodeMemo,
    YamlDocument,
    YamlNode,
    compose_part,
    parse_yaml,
)

_RULES_REST = re.compile(r"[ \t]*(?:#[^\n]*)?(?:\n|$)")
_UNSAFE_STARTS = ("---", "...", "%")
_UNSAFE_CHARS = ("\x85", "\u2028", "\u2029")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ITEM = re.compile(r"( *)-(?: |$)")
_MIN_ITEMS = 8  # below this a whole parse is as fast


@dataclass(frozen=True)
class _Plan:
    """Where the parts of a text start: head, one chunk per rule, tail."""

    lines: list[str]
    item_starts: list[int]
    block_end: int
    indent: int

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start:end])


class _Part:
    """One parsed part: its root, the shift that places it, and where its blocks end alone."""

    __slots__ = ("natural_ends", "root", "shift")

    def __init__(self, root: YamlNode | None, shift: LineShift) -> None:
        self.root = root
        self.shift = shift
        item = root.items[0] if root is not None and root.items else None
        self.natural_ends = [(node, node._end) for node in _spine(item)] if item else []


class ChunkedParser:
    """Parses successive versions of one document, re-using unchanged rules.

    A tree returned by :meth:`parse` stays valid until the next call: nodes
    shared with the next version move with it.
    """

    def __init__(self) -> None:
        self._parts: dict[str, list[_Part]] = {}
        self._memo = NodeMemo()

    def parse(self, text: str, path: str) -> YamlDocument:
        """The document for ``text``, as :func:`parse_yaml` would return it.

        Its :attr:`YamlDocument.memo` carries results about nodes that the
        previous version shares.
        """
        self._memo.roll()
        plan = _plan(text)
        doc: YamlDocument | None = None
        if plan is not None:
            root = self._stitched(plan)
            if root is not None:
                doc = YamlDocument(path, text)
                doc.root = root
        if doc is None:
            doc = parse_yaml(text, path)
        doc.memo = self._memo
        return doc

    def _stitched(self, plan: _Plan) -> YamlNode | None:
        old, new = self._parts, dict[str, list[_Part]]()
        try:
            root = _stitch(plan, lambda text, line, depth: _take(old, new, text, line, depth))
        except Exception:  # any doubt: the caller parses the whole text
            root = None
        if root is None and len(new) + len(old) <= 2 * len(plan.item_starts) + 16:
            # Keep the last good version's parts for when the syntax error is fixed.
            for text, parts in old.items():
                new.setdefault(text, []).extend(parts)
        self._parts = new
        return root


def _take(old: dict[str, list[_Part]], new: dict[str, list[_Part]], text: str, line: int,
          depth: int) -> _Part:
    """The part for ``text`` placed at ``line``: re-used if unchanged, else parsed."""
    spare = old.get(text)
    if spare:
        part = spare.pop()
        part.shift.lines = line
    else:
        shift = LineShift(line)
        part = _Part(compose_part(text, shift, depth), shift)
    new.setdefault(text, []).append(part)
    return part


def _plan(text: str) -> _Plan | None:
    """Split points for ``text``, or None when it should be parsed whole."""
    if _unsafe(text):
        return None
    at = _rules_line(text)
    if at is None:
        return None
    lines = text.split("\n")
    first = text.count("\n", 0, at) + 1
    while first < len(lines) and _is_filler(lines[first]):
        first += 1
    item = _ITEM.match(lines[first]) if first < len(lines) else None
    if item is None:
        return None
    return _items(lines, first, len(item.group(1)))


def _unsafe(text: str) -> bool:
    """Whether ``text`` has document markers, directives or line breaks other than \\n."""
    if any(text.startswith(s) or f"\n{s}" in text for s in _UNSAFE_STARTS):
        return True
    return any(c in text for c in _UNSAFE_CHARS) or text.count("\r") != text.count("\r\n")


def _rules_line(text: str) -> int | None:
    """The offset of the one top-level ``rules:`` line with nothing after the colon."""
    found = [0] if text.startswith("rules:") else []
    at = text.find("\nrules:")
    while at != -1 and len(found) < 2:
        found.append(at + 1)
        at = text.find("\nrules:", at + 1)
    if len(found) != 1 or not _RULES_REST.match(text, found[0] + len("rules:")):
        return None
    return found[0]


def _is_filler(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _items(lines: list[str], first: int, indent: int) -> _Plan | None:
    """Find the items of the list whose first dash is at ``(first, indent)``."""
    starts = [first]
    dash = " " * indent + "-"
    for number in range(first + 1, len(lines)):
        line = lines[number]
        if line.startswith(dash) and (len(line) == indent + 1 or line[indent + 1] == " "):
            starts.append(number)
            continue
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#" or len(line) - len(stripped) > indent:
            continue
        if len(line) - len(stripped) == 0 and stripped[0] != "-":
            return _Plan(lines, starts, number, indent) if len(starts) >= _MIN_ITEMS else None
        return None  # a line the split cannot place with certainty
    return _Plan(lines, starts, len(lines), indent) if len(starts) >= _MIN_ITEMS else None


_Taker = Callable[[str, int, int], _Part]
"""Parses (or re-uses) the part with this text, placed at this line, nested this deep."""


def _stitch(plan: _Plan, take: _Taker) -> YamlNode | None:
    """Parse (or re-use) every part and assemble the whole document's tree."""
    starts = plan.item_starts
    head = take(plan.text(0, starts[0]), 0, MAX_DEPTH).root
    bounds = [*starts[1:], plan.block_end]
    # An item sits two levels deep in the document but one level deep on its own.
    items = [take(plan.text(a, b), a, MAX_DEPTH - 1) for a, b in zip(starts, bounds, strict=True)]
    tail = take(plan.text(plan.block_end, len(plan.lines)), plan.block_end, MAX_DEPTH).root \
        if plan.block_end < len(plan.lines) else None
    if not _head_ok(head) or not all(_item_ok(p.root, plan.indent) for p in items):
        return None
    if tail is not None and (tail.kind != "mapping" or tail.flow or tail.start[1] != 0):
        return None
    if tail is None and plan.block_end < len(plan.lines):
        return None
    assert head is not None
    last = items[-1].root
    assert last is not None
    after_list = tail.start if tail is not None else last.end
    stream_end = tail.end if tail is not None else _stream_end(plan.lines)
    nodes: list[YamlNode] = []
    # Blocks that run to an item's end close where the next token starts: the next
    # item's dash, or the tail's first key. The last item before the end of the
    # text closes exactly as it did when parsed alone.
    following: list[tuple[int, int] | None] = [(line, plan.indent) for line in starts[1:]]
    following.append(tail.start if tail is not None else None)
    for part, closing in zip(items, following, strict=True):
        assert part.root is not None
        _close_spine(part, closing)
        nodes.append(part.root.items[0])
    sequence = YamlNode("sequence", (starts[0], plan.indent), after_list)
    sequence.items = nodes
    root = YamlNode("mapping", head.start, stream_end)
    rules_key = head.pairs[-1][0]
    root.pairs = [*head.pairs[:-1], (rules_key, sequence), *(tail.pairs if tail else ())]
    return root


def _stream_end(lines: list[str]) -> tuple[int, int]:
    """Where libyaml ends the stream: it moves to a new line if the text does not end in one."""
    last = len(lines) - 1
    return (last + 1, 0) if lines[last] else (last, 0)


def _head_ok(head: YamlNode | None) -> bool:
    if head is None or head.kind != "mapping" or head.flow or not head.pairs:
        return False
    key, value = head.pairs[-1]
    return key.text == "rules" and key.start[1] == 0 and value.is_null and value.text == ""


def _item_ok(root: YamlNode | None, indent: int) -> bool:
    return (root is not None and root.kind == "sequence" and not root.flow
            and len(root.items) == 1 and root.start[1] == indent)


def _close_spine(part: _Part, following: tuple[int, int] | None) -> None:
    """Set where the item's trailing block collections end in the whole document.

    Parsed alone they end at the end of the item's own text; in the document,
    where the next token starts (``following``), or as parsed when nothing follows.
    """
    for node, natural in part.natural_ends:
        node._end = natural if following is None else (
            following[0] - node.shift.lines, following[1])


def _spine(node: YamlNode) -> list[YamlNode]:
    """The block collections that run to the end of ``node``: it, its last child, …"""
    found = []
    while node.kind != "scalar" and not node.flow:
        found.append(node)
        if node.kind == "mapping" and node.pairs:
            node = node.pairs[-1][1]
        elif node.kind == "sequence" and node.items:
            node = node.items[-1]
        else:
            break
    return found
