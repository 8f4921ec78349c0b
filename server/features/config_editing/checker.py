"""The editor's side of configuration checking, run in the daemon's check process.

Nothing here runs in the daemon: :class:`.feature.ConfigEditing` sends these
functions to the check process (:mod:`switchman.engine.config.checking`),
which holds the open documents (:class:`ConfigDocuments`, one per config
folder) and their incremental parsers. Each function takes plain values (paths,
texts, the client's position encoding and capabilities) and returns LSP
objects or LSP JSON, so what crosses back to the daemon is plain data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from switchman.engine.config.check import FileKind
from switchman.engine.config.problems import Problem, sort_problems
from switchman.engine.config.skill_names import naming_workspaces, unknown_skills
from switchman.engine.config.text import split_lines
from switchman.engine.config.yamldoc import YamlDocument
from switchman.engine.editing.completion import complete
from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.editing.fixes import fixes
from switchman.engine.editing.hover import hover
from switchman.engine.editing.outline import outline
from switchman.engine.skills import KnownSkills, Skill, SkillIndex
from switchman.server.features.config_editing.convert import (
    diagnostic_json,
    lsp_code_action,
    lsp_completion,
    lsp_document_symbol,
    lsp_hover,
    lsp_symbol_information,
)
from switchman.server.positions import Positions

_documents: dict[Path, ConfigDocuments] = {}
_KNOWN_SKILLS = KnownSkills()


def documents(directory: Path) -> ConfigDocuments:
    """The open documents of the config folder ``directory``."""
    found = _documents.get(directory)
    if found is None:
        found = _documents[directory] = ConfigDocuments(directory)
    return found


def update(directory: Path, path: Path, text: str) -> list[Path]:
    """A document was opened or changed; the documents to re-check."""
    return documents(directory).update(path, text)


def close(directory: Path, path: Path) -> list[Path]:
    """A document was closed; the documents to re-check."""
    return documents(directory).close(path)


def _positions(text: str, encoding: str) -> Positions:
    return Positions(split_lines(text), encoding)


def diagnostics(directory: Path, path: Path, uri: str, encoding: str, related: bool,
                folders: list[str]) -> tuple[str, list[Any]] | None:
    """The document's text and its problems as LSP JSON (None when it is not open)."""
    analysis = documents(directory).check(path)
    if analysis is None:
        return None
    positions = _positions(analysis.text, encoding)
    problems = sort_problems(analysis.problems + _skill_problems(directory, path, analysis.doc,
                                                                 folders))
    return analysis.text, [diagnostic_json(p, positions, uri, related) for p in problems]


def update_and_diagnose(directory: Path, path: Path, text: str, uris: dict[Path, str],
                        encoding: str, related: bool,
                        folders: list[str]) -> dict[Path, tuple[str, list[Any]]]:
    """:func:`update`, then :func:`diagnostics` of every open document it affects (``uris``
    names the open ones), in one call: with no debounce, an edit crosses to this process and
    back once instead of twice."""
    found = {}
    for changed in update(directory, path, text):
        uri = uris.get(changed)
        checked = diagnostics(directory, changed, uri, encoding, related, folders) \
            if uri else None
        if checked is not None:
            found[changed] = checked
    return found


def _skill_problems(directory: Path, path: Path, doc: YamlDocument,
                    folders: list[str]) -> list[Problem]:
    """``unknown-skill`` warnings, apart from the document's cached check: they change when a
    skill file does, not only with the text (:data:`_KNOWN_SKILLS` re-reads them then)."""
    opened = documents(directory)
    kind = opened.kind_of(path)
    if kind is None or opened.linked_out(path) is not None:  # its text is not checked
        return []
    return unknown_skills(kind, doc, _KNOWN_SKILLS.names, directory,
                          naming_workspaces(path, kind, map(Path, folders)))


def completion(directory: Path, path: Path, kind: FileKind, text: str,
               position: types.Position, encoding: str, folders: list[str], after_space: bool,
               snippets: bool, markdown: bool) -> list[types.CompletionItem]:
    """Completion items at ``position`` in ``text`` (the document at ``path``)."""
    opened = documents(directory)
    positions = _positions(text, encoding)
    candidates = complete(kind, text, positions.engine_position(position), opened.registry(),
                          opened.keys, folders, values_only=after_space,
                          skills=lambda block: _skills(directory, path, kind, folders, block))
    return [lsp_completion(c, positions, snippets, markdown) for c in candidates]


def _skills(directory: Path, path: Path, kind: FileKind, folders: list[str],
            block: str | None) -> list[Skill]:
    """The skills a rule or profile of the document at ``path`` can name (in its
    ``workspaces:`` block keyed on ``block``): those its check does not flag."""
    workspaces = naming_workspaces(path, kind, map(Path, folders), block)
    return list(SkillIndex.of_folders(directory, workspaces).skills.values())


def hover_at(directory: Path, path: Path, kind: FileKind, position: types.Position,
             encoding: str, markdown: bool) -> types.Hover | None:
    """The hover at ``position`` in the latest checked version."""
    opened = documents(directory)
    analysis = opened.check(path)
    if analysis is None:
        return None
    positions = _positions(analysis.text, encoding)
    found = hover(kind, analysis.doc, positions.engine_position(position), analysis.registry,
                  opened.keys)
    return lsp_hover(found, positions, markdown) if found else None


def code_actions(directory: Path, path: Path, uri: str, version: int | None, rng: types.Range,
                 encoding: str, changes: bool, related: bool,
                 folders: list[str]) -> list[types.CodeAction]:
    """The quick fixes for ``rng``, each verified by checking the text it produces."""
    opened = documents(directory)
    analysis = opened.check(path)

    def skills(doc: YamlDocument) -> list[Problem]:
        return _skill_problems(directory, path, doc, folders)

    context = opened.fix_context(path, also=skills)
    if analysis is None or context is None:
        return []
    positions = _positions(analysis.text, encoding)
    found = fixes(analysis.doc, analysis.problems + skills(analysis.doc),
                  positions.engine_range(rng), context)
    return [lsp_code_action(f, positions, uri, version, changes, related) for f in found]


def symbols(directory: Path, path: Path, kind: FileKind, uri: str, nested: bool,
            encoding: str) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
    """The outline of the latest checked version."""
    analysis = documents(directory).check(path)
    if analysis is None:
        return []
    positions = _positions(analysis.text, encoding)
    found = outline(kind, analysis.doc)
    if nested:
        return [lsp_document_symbol(symbol, positions) for symbol in found]
    return lsp_symbol_information(found, positions, uri)
