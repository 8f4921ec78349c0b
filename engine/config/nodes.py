"""Finding things in a parsed configuration tree: rule lists, values, extents."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from switchman.engine.config.check import FileKind
from switchman.engine.config.problems import Range
from switchman.engine.config.yamldoc import YamlDocument, YamlNode

RulesPath = tuple[str, ...]
"""Where a rule list sits: ``("rules",)`` or ``("workspaces", folder, "rules")``."""

_BOOL = "tag:yaml.org,2002:bool"


def rule_lists(kind: FileKind, root: YamlNode | None) -> list[tuple[RulesPath, YamlNode]]:
    """Every block or flow list of rules in a routing or workspace file, in file order."""
    if kind not in (FileKind.ROUTING, FileKind.WORKSPACE) or root is None \
            or root.kind != "mapping":
        return []
    found: list[tuple[RulesPath, YamlNode]] = []
    for key, value in root.pairs:
        if key.text == "rules" and value.kind == "sequence":
            found.append((("rules",), value))
        elif key.text == "workspaces" and kind is FileKind.ROUTING and value.kind == "mapping":
            for folder, block in value.pairs:
                rules = block.get("rules") if block.kind == "mapping" else None
                if rules is not None and rules.kind == "sequence":
                    found.append((("workspaces", folder.text, "rules"), rules))
    return found


def scalar_text(mapping: YamlNode, key: str) -> str | None:
    """The text of ``key``'s value when it is a non-empty scalar."""
    value = mapping.get(key) if mapping.kind == "mapping" else None
    if value is None or value.kind != "scalar" or value.is_null:
        return None
    return value.text


def is_true(node: YamlNode | None) -> bool:
    """Whether ``node`` is the YAML boolean true."""
    return (node is not None and node.kind == "scalar" and node.tag == _BOOL
            and node.text.lower() in ("true", "yes", "on"))


def last_position(node: YamlNode) -> tuple[int, int]:
    """Where the node's own text ends (a block collection ends with its last child)."""
    while node.kind != "scalar" and not node.flow:
        if node.pairs:
            node = node.pairs[-1][1]
        elif node.items:
            node = node.items[-1]
        else:
            break
    return node.end


def extent(doc: YamlDocument, first: YamlNode, last: YamlNode) -> Range:
    """The range from the start of ``first`` to the end of ``last``'s text."""
    return Range(doc.position(*first.start), doc.position(*last_position(last)))


def distinct(node: YamlNode | None, follow: Callable[[str], bool]) -> Iterator[YamlNode]:
    """Each node once (aliases may share nodes many times), following keys ``follow`` accepts."""
    seen: set[int] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(value for key, value in current.pairs if follow(key.text))
        stack.extend(current.items)


def pairs_named(node: YamlNode | None, name: str) -> Iterator[tuple[YamlNode, YamlNode]]:
    """Every ``name: value`` pair in a condition, however deeply nested."""
    for current in distinct(node, lambda key: True):
        yield from ((key, value) for key, value in current.pairs if key.text == name)
