"""The outline of a configuration file: rules, workspaces, tiers, providers, models and
profiles."""

from __future__ import annotations

from enum import StrEnum

import msgspec

from switchman.engine.config.check import FileKind
from switchman.engine.config.nodes import extent, scalar_text
from switchman.engine.config.problems import Position, Range
from switchman.engine.config.yamldoc import YamlDocument, YamlNode


class SymbolKind(StrEnum):
    """What an outline entry is."""

    SETTING = "setting"
    RULES = "rules"
    RULE = "rule"
    WORKSPACES = "workspaces"
    WORKSPACE = "workspace"
    TIERS = "tiers"
    TIER = "tier"
    PROVIDERS = "providers"
    PROVIDER = "provider"
    MODELS = "models"
    MODEL = "model"
    PROFILES = "profiles"
    PROFILE = "profile"


class Symbol(msgspec.Struct, frozen=True):
    """One outline entry; ``selection_range`` (the name) lies within ``range``."""

    name: str
    kind: SymbolKind
    detail: str
    range: Range
    selection_range: Range
    children: list[Symbol] = []


_GROUPS = {"rules": SymbolKind.RULES, "tiers": SymbolKind.TIERS,
           "workspaces": SymbolKind.WORKSPACES, "providers": SymbolKind.PROVIDERS,
           "models": SymbolKind.MODELS, "profiles": SymbolKind.PROFILES}


def outline(kind: FileKind, doc: YamlDocument) -> list[Symbol]:
    """The outline of a parsed file (empty while it is not valid YAML)."""
    root = doc.root
    if doc.problems or root is None or root.kind != "mapping":
        return []
    return _entries(doc, root)


def _entries(doc: YamlDocument, mapping: YamlNode) -> list[Symbol]:
    return [_entry(doc, key, value) for key, value in mapping.pairs if key.kind == "scalar"]


def _entry(doc: YamlDocument, key: YamlNode, value: YamlNode) -> Symbol:
    group = _GROUPS.get(key.text)
    children: list[Symbol] = []
    detail = value.text if value.kind == "scalar" else ""
    if group is SymbolKind.RULES and value.kind == "sequence":
        children = [_rule(doc, index, item) for index, item in enumerate(value.items)]
        detail = f"{len(children)} rule{'s' if len(children) != 1 else ''}"
    elif group is not None and group is not SymbolKind.RULES and value.kind == "mapping":
        children = [_member(doc, group, k, v) for k, v in value.pairs if k.kind == "scalar"]
    return _symbol(doc, key.text, group or SymbolKind.SETTING, detail, key, value, children)


def _member(doc: YamlDocument, group: SymbolKind, key: YamlNode, value: YamlNode) -> Symbol:
    if group is SymbolKind.WORKSPACES:
        children = _entries(doc, value) if value.kind == "mapping" else []
        return _symbol(doc, key.text, SymbolKind.WORKSPACE, "", key, value, children)
    if group is SymbolKind.TIERS:
        return _symbol(doc, key.text, SymbolKind.TIER, value.text, key, value)
    if group is SymbolKind.PROFILES:  # its description, else what it prefers
        detail = _profile_detail(value) if value.kind == "mapping" else ""
        return _symbol(doc, key.text, SymbolKind.PROFILE, detail, key, value)
    if group is SymbolKind.PROVIDERS:
        api = scalar_text(value, "api") if value.kind == "mapping" else None
        return _symbol(doc, key.text, SymbolKind.PROVIDER, f"{api} API" if api else "", key,
                       value)
    aliases = value.get("aliases") if value.kind == "mapping" else None
    names = [a.text for a in aliases.items] if aliases is not None else []
    detail = ", ".join(names) if names else (aliases.text if aliases is not None else "")
    return _symbol(doc, key.text, SymbolKind.MODEL, detail, key, value)


def _profile_detail(value: YamlNode) -> str:
    for key in ("description", "model", "tier"):
        text = scalar_text(value, key)
        if text:
            return text
    return ""


def _rule(doc: YamlDocument, index: int, item: YamlNode) -> Symbol:
    name_node = item.get("name") if item.kind == "mapping" else None
    named = name_node is not None and name_node.kind == "scalar" and bool(name_node.text)
    use = scalar_text(item, "use") if item.kind == "mapping" else None
    rng = extent(doc, item, item)
    selection = doc.range_of(name_node) if named and name_node is not None else \
        doc.range_of(item)
    return Symbol(name_node.text if named and name_node is not None else f"rule_{index + 1}",
                  SymbolKind.RULE, f"→ {use}" if use else "", rng, _within(selection, rng))


def _symbol(doc: YamlDocument, name: str, kind: SymbolKind, detail: str, key: YamlNode,
            value: YamlNode, children: list[Symbol] | None = None) -> Symbol:
    rng = extent(doc, key, value)
    return Symbol(name, kind, detail, rng, _within(doc.range_of(key), rng), children or [])


def _within(selection: Range, rng: Range) -> Range:
    """``selection`` clipped to ``rng`` (editors require it to lie inside)."""
    start = max(selection.start, rng.start, key=_order)
    end = min(selection.end, rng.end, key=_order)
    return Range(start, end) if _order(start) <= _order(end) else Range(rng.start, rng.start)


def _order(position: Position) -> tuple[int, int]:
    return (position.line, position.character)
