"""A YAML document with source positions, safe against hostile input.

Configuration files can come from a cloned repository, so parsing must never
crash or hang the daemon. libyaml's C composer recurses once per nesting level
and overflows the C stack on deeply nested input; instead we read libyaml's
(iterative) event stream and build the node tree ourselves, with a nesting
limit and an explicit check for recursive aliases.

Columns from libyaml count code points; :meth:`YamlDocument.range_of` converts
them to the UTF-16 offsets that LSP ranges use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from yaml import events as ev

from switchman.engine.config.problems import Code, Position, Problem, Range, Severity

try:  # the C event parser is much faster; fall back to pure Python without libyaml
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the platform build of PyYAML
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_DEPTH = 64
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"

NodeKind = Literal["scalar", "mapping", "sequence"]


@dataclass(eq=False, slots=True)
class YamlNode:
    """A node with its position. Mappings hold ``(key, value)`` pairs in order."""

    kind: NodeKind
    start: tuple[int, int]
    end: tuple[int, int]
    tag: str = _STR_TAG
    text: str = ""
    plain: bool = False
    flow: bool = False
    pairs: list[tuple[YamlNode, YamlNode]] = field(default_factory=list)
    items: list[YamlNode] = field(default_factory=list)

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


class YamlDocument:
    """The parsed tree of one file plus the problems found while parsing."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        self.lines = text.split("\n")
        self.root: YamlNode | None = None
        self.problems: list[Problem] = []

    def utf16_col(self, line: int, col: int) -> int:
        """Convert a code-point column on ``line`` to a UTF-16 offset."""
        if line >= len(self.lines):
            return col
        text = self.lines[line]
        if text.isascii():
            return col
        prefix = text[:col]
        return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)

    def position(self, line: int, col: int) -> Position:
        """An LSP position from a code-point (line, column)."""
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
    try:
        doc.root = _compose(text)
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
        doc.problems.append(_syntax_problem(doc, exc))
    except yaml.YAMLError as exc:  # reader errors (control characters) carry no mark
        position = getattr(exc, "position", 0) or 0
        line = text.count("\n", 0, position)
        col = position - (text.rfind("\n", 0, position) + 1)
        rng = Range(doc.position(line, col), doc.position(line, col + 1))
        reason = getattr(exc, "reason", None) or str(exc)
        doc.problems.append(doc.problem(rng, Code.YAML_SYNTAX, f"YAML syntax error: {reason}."))
    return doc


def _mark_range(doc: YamlDocument, mark: Any) -> Range:
    line, col = mark.line, mark.column
    width = 1 if line < len(doc.lines) and col < len(doc.lines[line]) else 0
    return Range(doc.position(line, col), doc.position(line, col + width))


def _syntax_problem(doc: YamlDocument, exc: yaml.MarkedYAMLError) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    rng = _mark_range(doc, mark) if mark is not None else Range.at(0, 0, 0)
    what = exc.problem or "invalid YAML"
    context = f" ({exc.context})" if exc.context else ""
    return doc.problem(rng, Code.YAML_SYNTAX, f"YAML syntax error: {what}{context}.")


def _resolve_tag(event: ev.ScalarEvent) -> str:
    if event.tag not in (None, "!"):
        return str(event.tag)
    plain = event.implicit[0] and not event.style
    if not plain:
        return _STR_TAG
    return str(_RESOLVER.resolve(yaml.ScalarNode, event.value, (True, False)))


class _Composer:
    """Builds :class:`YamlNode` trees from a libyaml event stream, iteratively."""

    def __init__(self) -> None:
        self.stack: list[YamlNode] = []
        self.pending_key: list[YamlNode | None] = []
        self.anchors: dict[str, YamlNode] = {}
        self.open_anchors: set[str] = set()
        self.anchor_of: dict[int, str] = {}
        self.root: YamlNode | None = None
        self.documents = 0

    def attach(self, node: YamlNode) -> None:
        if not self.stack:
            self.root = node
            return
        parent = self.stack[-1]
        if parent.kind == "sequence":
            parent.items.append(node)
        elif self.pending_key[-1] is None:
            self.pending_key[-1] = node
        else:
            key = self.pending_key[-1]
            assert key is not None
            parent.pairs.append((key, node))
            self.pending_key[-1] = None

    def scalar(self, event: ev.ScalarEvent) -> None:
        node = YamlNode(
            "scalar",
            (event.start_mark.line, event.start_mark.column),
            (event.end_mark.line, event.end_mark.column),
            tag=_resolve_tag(event),
            text=event.value,
            plain=not event.style,
        )
        self.remember(event.anchor, node)
        self.attach(node)

    def start(self, event: ev.CollectionStartEvent, kind: NodeKind) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise _TooDeep(event.start_mark)
        node = YamlNode(
            kind,
            (event.start_mark.line, event.start_mark.column),
            (event.end_mark.line, event.end_mark.column),
            flow=bool(event.flow_style),
        )
        self.attach(node)
        if event.anchor:
            self.open_anchors.add(event.anchor)
            self.remember(event.anchor, node)
        self.stack.append(node)
        self.pending_key.append(None)

    def end(self, event: ev.CollectionEndEvent) -> None:
        node = self.stack.pop()
        self.pending_key.pop()
        node.end = (event.end_mark.line, event.end_mark.column)
        anchor = self.anchor_of.get(id(node))
        if anchor:
            self.open_anchors.discard(anchor)

    def alias(self, event: ev.AliasEvent) -> None:
        anchor = str(event.anchor)
        if anchor in self.open_anchors:
            raise _RecursiveAlias(event.start_mark, anchor)
        target = self.anchors.get(anchor)
        if target is None:
            raise yaml.composer.ComposerError(
                None, None, f"found undefined alias {anchor!r}", event.start_mark
            )
        self.attach(target)

    def remember(self, anchor: str | None, node: YamlNode) -> None:
        if anchor:
            self.anchors[anchor] = node
            self.anchor_of[id(node)] = anchor

    def document(self, event: ev.DocumentStartEvent) -> None:
        self.documents += 1
        if self.documents > 1:
            raise yaml.composer.ComposerError(
                None,
                None,
                "found a second document; a configuration file holds one document",
                event.start_mark,
            )


def _compose(text: str) -> YamlNode | None:
    composer = _Composer()
    for event in yaml.parse(text, Loader=_Loader):
        kind = type(event)
        if kind is ev.ScalarEvent:
            composer.scalar(event)  # type: ignore[arg-type]
        elif kind is ev.MappingStartEvent:
            composer.start(event, "mapping")  # type: ignore[arg-type]
        elif kind is ev.SequenceStartEvent:
            composer.start(event, "sequence")  # type: ignore[arg-type]
        elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
            composer.end(event)  # type: ignore[arg-type]
        elif kind is ev.AliasEvent:
            composer.alias(event)  # type: ignore[arg-type]
        elif kind is ev.DocumentStartEvent:
            composer.document(event)  # type: ignore[arg-type]
    return composer.root
