"""A YAML document with source positions, safe against hostile input.

Configuration files can come from a cloned repository, so parsing must never
crash or hang the daemon. libyaml's C composer recurses once per nesting level
and overflows the C stack on deeply nested input; instead we read libyaml's
(iterative) event stream and build the node tree ourselves, with a nesting
limit and an explicit check for recursive aliases.

Columns from libyaml count code points; :meth:`YamlDocument.range_of` converts
them to the UTF-16 offsets that LSP ranges use. Lines are counted as editors
count them (``\n``, ``\r\n`` and ``\r`` end a line): YAML 1.1 also breaks lines
at U+0085, U+2028 and U+2029, which editors show inside a line, so those are read
as spaces (with a warning) and every position stays where the editor shows it.
A lone surrogate (possible in an editor's text, never in a file) cannot be given
to libyaml at all; it is read as U+FFFD and reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

import yaml
from yaml import events as ev

from switchman.engine.config.problems import Code, Position, Problem, Range, Severity
from switchman.engine.config.text import split_lines
from switchman.engine.files import MAX_CONFIG_BYTES

try:  # the C event parser is much faster; fall back to pure Python without libyaml
    from yaml import CSafeLoader as _Loader

    _LIBYAML = True
except ImportError:  # pragma: no cover - depends on the platform build of PyYAML
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

    _LIBYAML = False

MAX_DEPTH = 64
_RESOLVER = yaml.resolver.Resolver()
_NO_PAIRS: list[Any] = []  # shared, never mutated: scalars have no children
_NO_ITEMS: list[Any] = []
_STR_TAG = "tag:yaml.org,2002:str"
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_MAX_REPORTED = 20  # characters of one kind reported; the rest are read the same way

NodeKind = Literal["scalar", "mapping", "sequence"]


class LineShift:
    """How many lines below its parse position a reused subtree now sits.

    Every node of a subtree parsed on its own (see :mod:`chunked`) shares one
    shift, so moving the subtree after an edit above it is one assignment.
    """

    __slots__ = ("lines",)

    def __init__(self, lines: int = 0) -> None:
        self.lines = lines


NO_SHIFT = LineShift()
"""The shift of nodes parsed from a whole document; never changed."""


class YamlNode:
    """A node with its position. Mappings hold ``(key, value)`` pairs in order.

    Positions are ``(line, code-point column)``; ``flow`` marks ``[...]``/``{...}``.
    """

    __slots__ = ("_end", "_start", "flow", "items", "kind", "pairs", "shift", "tag", "text")

    def __init__(self, kind: NodeKind, start: tuple[int, int], end: tuple[int, int],
                 tag: str = _STR_TAG, text: str = "", flow: bool = False,
                 shift: LineShift = NO_SHIFT) -> None:
        self.kind = kind
        self._start = start
        self._end = end
        self.tag = tag
        self.text = text
        self.flow = flow
        self.shift = shift
        self.pairs: list[tuple[YamlNode, YamlNode]] = _NO_PAIRS
        self.items: list[YamlNode] = _NO_ITEMS

    @property
    def start(self) -> tuple[int, int]:
        """Where the node starts: ``(line, code-point column)``."""
        line, col = self._start
        return (line + self.shift.lines, col)

    @property
    def end(self) -> tuple[int, int]:
        """Where the node ends (for block collections: where the next token starts)."""
        line, col = self._end
        return (line + self.shift.lines, col)

    @property
    def is_null(self) -> bool:
        """Whether this is an explicit or implicit YAML null."""
        return self.kind == "scalar" and self.tag == "tag:yaml.org,2002:null"

    def get(self, key: str) -> YamlNode | None:
        """The value node for ``key`` in a mapping (first occurrence), or None."""
        for k, v in self.pairs:
            if k.kind == "scalar" and k.text == key:
                return v
        return None

    def key_node(self, key: str) -> YamlNode | None:
        """The key node for ``key`` in a mapping, or None."""
        for k, _ in self.pairs:
            if k.kind == "scalar" and k.text == key:
                return k
        return None


class NodeMemo:
    """Results worked out from unchanged nodes, kept across versions of one edited document.

    Entries are keyed by the identity of a node (or of a value derived from
    one, which is never changed) and hold it, so nothing else can take its id
    while the entry lives, and the context they were computed in (such as the
    model registry); a different context misses. :meth:`roll` starts a new
    version: entries the previous version did not use are dropped.
    """

    def __init__(self) -> None:
        self._old: dict[tuple[int, int], tuple[object, object, Any]] = {}
        self._new: dict[tuple[int, int], tuple[object, object, Any]] = {}

    def get(self, node: object, what: object, context: object) -> Any:
        """The result for ``(node, what)`` computed in ``context``, or None.

        ``what`` names the kind of result; it must outlive the memo (a declaration
        or a function).
        """
        key = (id(node), id(what))
        entry = self._new.get(key) or self._old.get(key)
        if entry is None or entry[0] is not node or entry[1] is not context:
            return None
        self._new[key] = entry
        return entry[2]

    def put(self, node: object, what: object, context: object, result: Any) -> None:
        """Remember a result for ``(node, what)`` in ``context``."""
        self._new[(id(node), id(what))] = (node, context, result)

    def roll(self) -> None:
        """Start the next version.

        A version that used no entry (its check was re-used, see
        :mod:`switchman.engine.config.checking`) passes the previous one's on.
        """
        if self._new:
            self._old, self._new = self._new, {}


class YamlDocument:
    """The parsed tree of one file plus the problems found while parsing."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.lines = split_lines(text)
        self.root: YamlNode | None = None
        self.problems: list[Problem] = []
        self.memo: NodeMemo | None = None
        """Set for documents being edited: checks may re-use work on unchanged nodes."""

    def utf16_col(self, line: int, col: int) -> int:
        """Convert a code-point column on ``line`` to a UTF-16 offset (within the line)."""
        if not 0 <= line < len(self.lines):
            return 0
        text = self.lines[line]
        if not 0 <= col <= len(text):
            col = min(max(col, 0), len(text))
        if text.isascii():
            return col
        prefix = text[:col]
        return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)

    def position(self, line: int, col: int) -> Position:
        """An LSP position from a code-point (line, column), clamped into the document.

        Every range sent to an editor is built here, so a position libyaml reports
        past the end of a line or of the text still lands inside the document.
        """
        lines = self.lines
        if 0 <= line < len(lines):
            text = lines[line]
            if 0 <= col <= len(text) and text.isascii():  # the common case, kept cheap
                return Position(line, col)
        elif line >= len(lines):
            line, col = len(lines) - 1, len(lines[-1])
        else:
            line = 0
        return Position(line, self.utf16_col(line, col))

    def range_of(self, node: YamlNode) -> Range:
        """The range a diagnostic on ``node`` should underline."""
        (sl, sc), (el, ec) = node.start, node.end
        if node.kind != "scalar" and not node.flow:
            # A block collection ends at the start of the line after it; underline
            # only its first line so diagnostics stay readable.
            el, ec = sl, len(self.lines[sl].rstrip()) if sl < len(self.lines) else sc
        return Range(self.position(sl, sc), self.position(el, ec))

    def line_range(self, line: int) -> Range:
        """The non-blank text of a whole line."""
        text = self.lines[line] if line < len(self.lines) else ""
        start = len(text) - len(text.lstrip())
        return Range(self.position(line, start), self.position(line, len(text.rstrip())))

    def problem(
        self,
        rng: Range,
        code: Code,
        message: str,
        severity: Severity = Severity.ERROR,
        data: dict[str, Any] | None = None,
    ) -> Problem:
        """A problem located in this file."""
        return Problem(self.path, rng, severity, code, message, data=data)


class _TooDeep(Exception):
    def __init__(self, mark: Any) -> None:
        self.mark = mark


class _RecursiveAlias(Exception):
    def __init__(self, mark: Any, anchor: str) -> None:
        self.mark = mark
        self.anchor = anchor


def parse_yaml(text: str, path: str) -> YamlDocument:
    """Parse ``text``; syntax errors become problems, never exceptions."""
    doc = YamlDocument(path, text)
    if len(text) > MAX_CONFIG_BYTES:  # an editor's text is not read through files.read_text
        doc.problems.append(doc.problem(
            Range.at(0, 0, 0), Code.TOO_COMPLEX, f"The text is longer than {MAX_CONFIG_BYTES:,} "
            "characters; Switchman does not read configuration files this large."))
        return doc
    readable = _readable(doc)
    try:
        doc.root = _compose(readable)
    except _TooDeep as exc:
        rng = _mark_range(doc, exc.mark)
        doc.problems.append(
            doc.problem(rng, Code.TOO_COMPLEX, f"Nesting deeper than {MAX_DEPTH} levels.")
        )
    except _RecursiveAlias as exc:
        rng = _mark_range(doc, exc.mark)
        message = f"Alias *{exc.anchor} refers to a node that contains it."
        doc.problems.append(doc.problem(rng, Code.YAML_SYNTAX, message))
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in (exc.problem or ""):  # libyaml's own limit (0.2.6+)
            rng = _mark_range(doc, exc.problem_mark) if exc.problem_mark else Range.at(0, 0, 0)
            doc.problems.append(
                doc.problem(rng, Code.TOO_COMPLEX, f"Nesting deeper than {MAX_DEPTH} levels.")
            )
        else:
            doc.problems.append(_syntax_problem(doc, exc))
    except yaml.YAMLError as exc:  # reader errors (control characters) carry no mark
        reason = getattr(exc, "reason", None) or "unreadable text"
        rng = _offset_range(doc, _reader_offset(readable, exc))
        doc.problems.append(doc.problem(rng, Code.YAML_SYNTAX, f"YAML syntax error: {reason}."))
    return doc


def _surrogate_message(point: int) -> str:
    """What a lone surrogate in the text is: from Neovim, which sends a buffer's bytes as they
    are, U+DC80-U+DCFF is most likely a byte that is not UTF-8 (the daemon reads one so)."""
    if 0xDC80 <= point <= 0xDCFF:
        return (f"Invalid character: the byte 0x{point - 0xDC00:02X}, which is not UTF-8 (text "
                "in another encoding, such as Latin-1), or half of a UTF-16 pair "
                f"(U+{point:04X}); it cannot be saved as UTF-8. Delete it, or type it again.")
    return (f"Invalid character U+{point:04X} (half of a UTF-16 pair); it cannot be saved as "
            "UTF-8. Delete it.")


def _readable(doc: YamlDocument) -> str:
    """The text libyaml is given: same length, YAML-only line breaks and surrogates replaced."""
    text = doc.text
    if text.isascii():
        return text
    for match in list(_SURROGATES.finditer(text))[:_MAX_REPORTED]:
        doc.problems.append(doc.problem(_offset_range(doc, match.start()), Code.YAML_SYNTAX,
                                        _surrogate_message(ord(match.group()))))
    for match in list(_YAML_ONLY_BREAKS.finditer(text))[:_MAX_REPORTED]:
        doc.problems.append(doc.problem(
            _offset_range(doc, match.start()), Code.YAML_SYNTAX,
            f"U+{ord(match.group()):04X} is a line break to YAML but not to editors; Switchman "
            "reads it as a space. Use a plain line break or a space instead.",
            Severity.WARNING))
    text = _SURROGATES.sub("\ufffd", text)
    return _YAML_ONLY_BREAKS.sub(" ", text)


def _reader_offset(text: str, exc: yaml.YAMLError) -> int:
    """The character offset of a reader error (libyaml reports a UTF-8 byte offset)."""
    position = int(getattr(exc, "position", 0) or 0)
    if text.isascii() or not _LIBYAML:  # the pure-Python reader counts characters
        return position
    return len(text.encode("utf-8")[:position].decode("utf-8", "ignore"))


def _offset_range(doc: YamlDocument, offset: int) -> Range:
    """One character at a code-point offset into the document's text."""
    line, col = _line_and_column(doc.text, offset)
    return Range(doc.position(line, col), doc.position(line, col + 1))


def _line_and_column(text: str, offset: int) -> tuple[int, int]:
    """Where a code-point offset falls, counting lines as editors do."""
    lines = split_lines(text[:offset])
    return len(lines) - 1, len(lines[-1])


def _mark_range(doc: YamlDocument, mark: Any) -> Range:
    line, col = mark.line, mark.column
    width = 1 if line < len(doc.lines) and col < len(doc.lines[line]) else 0
    return Range(doc.position(line, col), doc.position(line, col + width))


def _syntax_problem(doc: YamlDocument, exc: yaml.MarkedYAMLError) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    rng = _mark_range(doc, mark) if mark is not None else Range.at(0, 0, 0)
    if mark is not None and _character_at(doc, mark.line, mark.column) == "\t":
        # (libyaml says only "found character that cannot start any token" of a tab)
        return doc.problem(rng, Code.YAML_SYNTAX, "YAML syntax error: a tab character here; "
                           "YAML indents with spaces only, so replace it with spaces.")
    what = exc.problem or "invalid YAML"
    context = f" ({exc.context})" if exc.context else ""
    return doc.problem(rng, Code.YAML_SYNTAX, f"YAML syntax error: {what}{context}.")


def _character_at(doc: YamlDocument, line: int, column: int) -> str:
    """The character at a mark (empty past the end of its line or of the document)."""
    text = doc.lines[line] if line < len(doc.lines) else ""
    return text[column] if column < len(text) else ""


def _pos(mark: Any) -> tuple[int, int]:
    return (mark.line, mark.column) if mark is not None else (0, 0)


# Plain scalars starting with anything else are always strings (YAML 1.1 core resolvers).
_MAYBE_TYPED = frozenset("0123456789-+.~nNtTfFyYoO")


def _resolve_tag(event: ev.ScalarEvent) -> str:
    if event.tag not in (None, "!"):
        return str(event.tag)
    if event.style or not event.implicit[0]:
        return _STR_TAG
    value = event.value
    if value and value[0] not in _MAYBE_TYPED:
        return _STR_TAG
    return str(_RESOLVER.resolve(yaml.ScalarNode, value, (True, False)))  # type: ignore[no-untyped-call]


class NotSelfContained(Exception):
    """A part of a document uses anchors or aliases, so it cannot be parsed on its own."""


def compose_part(text: str, shift: LineShift, max_depth: int) -> YamlNode | None:
    """Parse one self-contained part of a larger document (see :mod:`chunked`).

    Nodes get ``shift``; nesting beyond ``max_depth`` levels, anchors and aliases
    raise, as does any syntax error: the caller then parses the whole document.
    """
    return _compose(text, max_depth, shift, self_contained=True)


def _compose(text: str, max_depth: int = MAX_DEPTH, shift: LineShift = NO_SHIFT,  # noqa: PLR0915
             *, self_contained: bool = False) -> YamlNode | None:
    """Build the node tree from libyaml's event stream, iteratively.

    One flat loop with local variables: this is the hot path when a large
    routing file is re-validated on every keystroke.
    """
    loader = _Loader(text)
    stack: list[YamlNode] = []
    pending: list[YamlNode | None] = []  # per open mapping: a key waiting for its value
    anchors: dict[str, YamlNode] = {}
    open_anchors: dict[int, str] = {}  # id(collection) -> anchor, while it is being built
    root: YamlNode | None = None
    documents = 0
    get_event: Callable[[], Any] = loader.get_event
    try:
        while (event := get_event()) is not None:
            kind = type(event)
            if kind is ev.ScalarEvent:
                start, end = event.start_mark, event.end_mark
                node = YamlNode("scalar", (start.line, start.column), (end.line, end.column),
                                _resolve_tag(event), event.value, False, shift)
                if event.anchor:
                    if self_contained:
                        raise NotSelfContained
                    anchors[event.anchor] = node
            elif kind is ev.MappingStartEvent or kind is ev.SequenceStartEvent:
                if len(stack) >= max_depth:
                    raise _TooDeep(event.start_mark)
                node = _collection(event, kind is ev.MappingStartEvent, shift)
                if event.anchor:
                    if self_contained:
                        raise NotSelfContained
                    anchors[event.anchor] = node
                    open_anchors[id(node)] = event.anchor
            elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
                done = stack.pop()
                pending.pop()
                done._end = _pos(event.end_mark)
                open_anchors.pop(id(done), None)
                continue
            elif kind is ev.AliasEvent:
                if self_contained:
                    raise NotSelfContained
                node = _alias(event, anchors, open_anchors)
            elif kind is ev.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise yaml.composer.ComposerError(
                        None, None,
                        "found a second document; a configuration file holds one document",
                        event.start_mark)
                continue
            else:
                continue
            if not stack:
                root = node
            elif stack[-1].kind == "sequence":
                stack[-1].items.append(node)
            elif pending[-1] is None:
                pending[-1] = node
            else:
                stack[-1].pairs.append((pending[-1], node))
                pending[-1] = None
            if node.kind != "scalar" and kind is not ev.AliasEvent:
                stack.append(node)
                pending.append(None)
    finally:
        loader.dispose()
    return root


def _collection(event: Any, mapping: bool, shift: LineShift) -> YamlNode:
    node = YamlNode("mapping" if mapping else "sequence", _pos(event.start_mark),
                    _pos(event.end_mark), flow=bool(event.flow_style), shift=shift)
    if mapping:
        node.pairs = []
    else:
        node.items = []
    return node


def _alias(event: Any, anchors: dict[str, YamlNode], open_anchors: dict[int, str]) -> YamlNode:
    anchor = str(event.anchor)
    if anchor in open_anchors.values():
        raise _RecursiveAlias(event.start_mark, anchor)
    target = anchors.get(anchor)
    if target is None:
        raise yaml.composer.ComposerError(
            None, None, f"found undefined alias {anchor!r}", event.start_mark)
    return target
