"""What the editor can offer at the cursor in a configuration file.

Keys come from the :mod:`schema` declaration that applies at the cursor
(conditions with their value shape as a snippet), values from the registry
(model ids and aliases where a model is expected, provider names), the skill
index (skill names) or the declaration (tier names and other fixed choices,
true/false).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum

import msgspec

from switchman.engine.config import schema as s
from switchman.engine.config.check import FileKind
from switchman.engine.config.declarations import resolved, spec_at
from switchman.engine.config.problems import Position, Range
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.skill_names import block_of
from switchman.engine.config.text import from_utf16, position_at, snippet_to_plain, split_lines
from switchman.engine.editing.cursor import Cursor, locate
from switchman.engine.editing.hover import describe_model
from switchman.engine.files import MAX_CONFIG_BYTES
from switchman.engine.keys import KeyRing
from switchman.engine.skills import Skill


class CandidateKind(StrEnum):
    """What a completion candidate is, for the editor's icon."""

    KEY = "key"
    CONDITION = "condition"
    MODEL = "model"
    ALIAS = "alias"
    VALUE = "value"
    FOLDER = "folder"
    SKILL = "skill"


class Candidate(msgspec.Struct, frozen=True):
    """One completion: what to show, and what replaces the token at the cursor."""

    label: str
    kind: CandidateKind
    detail: str
    documentation: str
    snippet: str
    """The text to insert, in LSP snippet syntax (multi-line text is relative to the line)."""
    range: Range
    sort: str

    @property
    def plain(self) -> str:
        """The text to insert for editors without snippets."""
        return snippet_to_plain(self.snippet)


def complete(kind: FileKind, text: str, position: Position, registry: ModelRegistry,
             keys: KeyRing, folders: Sequence[str] = (), *,
             values_only: bool = False,
             skills: Callable[[str | None], Iterable[Skill]] = lambda block: ()
             ) -> list[Candidate]:
    """Every candidate at ``position`` (UTF-16) in ``text``.

    ``skills`` gives the ones the file's rules or profiles can name, offered where a skill
    name is expected (called only there: it reads the skill files), given the folder of the
    ``workspaces:`` block the cursor is in (:func:`.skill_names.block_of`; None outside one).

    ``values_only`` is for completion the editor started by itself after a
    space: then only a key's value is worth offering (not keys while indenting).
    """
    if len(text) > MAX_CONFIG_BYTES:  # refused by every check; scanning it would stall
        return []
    lines = split_lines(text)
    if not 0 <= position.line < len(lines):
        return []
    cursor = locate(lines, position.line, from_utf16(lines[position.line], position.character))
    if cursor is None:
        return []
    rng = Range(position_at(lines, cursor.line, cursor.start),
                position_at(lines, cursor.line, cursor.end))
    offers = _Offers(registry, keys, rng, lambda: skills(block_of(cursor.path)))
    if cursor.role == "value" and cursor.key is not None:
        return offers.values(spec_at(kind, (*cursor.path, cursor.key)))
    if values_only:
        return []
    holder = spec_at(kind, cursor.path)
    if cursor.role == "item" or isinstance(holder, s.Scalar):
        return offers.values(holder)
    if isinstance(holder, s.Obj):
        return offers.keys(holder, cursor)
    if isinstance(holder, s.ListOf) and isinstance(resolved(holder.item), s.Obj):
        return offers.keys(resolved(holder.item), cursor, item=True)  # type: ignore[arg-type]
    if isinstance(holder, s.MapOf) and holder.key.format == "path" and not cursor.flow:
        return offers.folders(folders, cursor)
    return []


class _Offers:
    """Builds candidates that replace one range."""

    def __init__(self, registry: ModelRegistry, keys: KeyRing, rng: Range,
                 skills: Callable[[], Iterable[Skill]] = tuple) -> None:
        self.registry = registry
        self.key_ring = keys
        self.range = rng
        self.skills = skills

    def keys(self, holder: s.Obj, cursor: Cursor, *, item: bool = False) -> list[Candidate]:
        """The keys of ``holder`` not yet used (each with a snippet for its value)."""
        condition = holder is s.WHEN
        found = []
        for order, (key, declared) in enumerate(holder.fields.items()):
            if key in cursor.siblings:
                continue
            snippet = key if cursor.has_colon else _key_snippet(key, declared, cursor,
                                                                 2 if item else 0)
            found.append(Candidate(
                label=key,
                kind=CandidateKind.CONDITION if condition else CandidateKind.KEY,
                detail=_shape(declared.spec),
                documentation=_documentation(declared),
                snippet=f"- {snippet}" if item else snippet,
                range=self.range,
                sort=f"{order:03d}"))
        return found

    def values(self, spec: s.Spec | None) -> list[Candidate]:
        """Candidates for a scalar value declared by ``spec`` (or an item of a list)."""
        if isinstance(spec, s.ListOf):  # a list item, or the one bare value of a single_ok list
            spec = resolved(spec.item)
        if not isinstance(spec, s.Scalar):
            return []
        if spec.format == "model":
            return self.models()
        if spec.format == "skill":
            return [Candidate(skill.name, CandidateKind.SKILL, "skill", skill.description,
                              _escape(skill.name), self.range, skill.name)
                    for skill in self.skills()]
        if spec.format == "provider":
            return [self._value(name, f"{p.api.value} API", "") for name, p in
                    self.registry.providers.items()]
        if spec.enum:
            meaning = dict(spec.choices)
            return [self._value(choice, spec.description, meaning.get(choice, ""))
                    for choice in spec.enum]
        if spec.type == "boolean":
            return [self._value(choice, spec.description, "") for choice in ("true", "false")]
        return []

    def models(self) -> list[Candidate]:
        """Every alias, then every model id."""
        found = []
        for alias, model_id in self.registry.aliases.items():
            found.append(Candidate(alias, CandidateKind.ALIAS, f"alias of {model_id}",
                                   describe_model(self.registry, alias, self.key_ring),
                                   _escape(alias), self.range, f"0{alias}"))
        for model_id, model in self.registry.models.items():
            found.append(Candidate(model_id, CandidateKind.MODEL, model.display_name,
                                   describe_model(self.registry, model_id, self.key_ring),
                                   _escape(model_id), self.range, f"1{model_id}"))
        return found

    def folders(self, folders: Sequence[str], cursor: Cursor) -> list[Candidate]:
        """The editor's workspace folders, as ``workspaces:`` keys."""
        return [Candidate(folder, CandidateKind.FOLDER, "workspace folder",
                          "Settings for this folder and the folders below it.",
                          f"{_escape(folder)}:\n{' ' * (cursor.indent + 2)}$0", self.range,
                          f"{index:03d}")
                for index, folder in enumerate(folders) if folder not in cursor.siblings]

    def _value(self, value: str, detail: str, documentation: str) -> Candidate:
        return Candidate(value, CandidateKind.VALUE, detail, documentation, _escape(value),
                         self.range, value)


def _key_snippet(key: str, declared: s.Field, cursor: Cursor, shift: int) -> str:
    """``key: <value shape>``; nested blocks indent relative to the cursor's line.

    ``shift`` counts columns the key will sit further right (after a ``- `` added for it).
    """
    spec = resolved(declared.spec)
    nested = " " * (cursor.indent + shift + 2)
    if declared.snippet is not None:
        value = declared.snippet
        if "\n" in value:
            value = f"[{{{value.strip().removeprefix('- ')}}}]" if cursor.flow \
                else value.replace("\n  ", f"\n{nested}")
        return f"{key}: {value}" if not value.startswith("\n") else f"{key}:{value}"
    if isinstance(spec, s.Obj | s.MapOf):
        return f"{key}: {{$0}}" if cursor.flow else f"{key}:\n{nested}$0"
    if isinstance(spec, s.ListOf):
        if isinstance(resolved(spec.item), s.Obj):
            return f"{key}: [{{$0}}]" if cursor.flow else f"{key}:\n{nested}- $0"
        return f"{key}: [$1]"
    if isinstance(spec, s.TimeWindow):
        return f'{key}: ["${{1:09:00}}", "${{2:17:00}}"]'
    if isinstance(spec, s.Scalar) and (spec.enum or spec.type == "boolean"):
        choices = spec.enum or ("true", "false")
        return f"{key}: ${{1|{','.join(choices)}|}}"
    return f"{key}: $1"


def _shape(spec: s.Spec) -> str:
    spec = resolved(spec)
    if isinstance(spec, s.Scalar):
        names = {"model": "model id or alias", "regex": "RE2 regular expression"}
        return names.get(spec.format or "", spec.type if not spec.enum else "one of " +
                         ", ".join(spec.enum))
    if isinstance(spec, s.ListOf):
        return "list"
    if isinstance(spec, s.TimeWindow):
        return "[HH:MM, HH:MM]"
    return "mapping"


def _documentation(declared: s.Field) -> str:
    text = declared.spec.description
    if declared.reads:
        text += f"\n\n**Reads:** {declared.reads}"
    return text


def _escape(text: str) -> str:
    """``text`` as literal snippet text."""
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")
