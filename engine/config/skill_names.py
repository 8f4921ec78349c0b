"""Skill names in rules and profiles that name no skill (``unknown-skill`` warnings).

A rule's ``skills_matching_message_includes`` and a profile's ``skills`` name skills, the
Markdown files of the skills folders. A name no skill has never matches (the rule's condition
is false for it) and lists nothing to the profile's model: a warning, not an error, since the
file is still usable and a user's rule may name a skill that only some repositories have.

The skill names are asked for (``known``) only when the file names a skill, so a file that
names none never reads the skills folders; the caller caches them (see
:class:`switchman.engine.skills.KnownSkills`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path

from switchman.engine.config.check import WORKSPACE_KINDS, FileKind, file_kind
from switchman.engine.config.nodes import pairs_named, rule_lists
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.store import read_config
from switchman.engine.config.yamldoc import YamlDocument, YamlNode, parse_yaml
from switchman.engine.skills import (
    SkillIndex,
    folders_signature,
    searched_folders,
    workspaces_below,
)
from switchman.engine.wording import closest, names_listed

CONDITION = "skills_matching_message_includes"
MAX_FOLDERS_NAMED = 5
"""Folders searched named in one message (then how many more)."""


Known = Callable[[Path, Sequence[Path]], Collection[str]]
"""The skill names of the user's skills (the config folder given) and those workspaces'
(:meth:`.SkillIndex.of_folders`, or :meth:`.KnownSkills.names`, which caches them)."""


def unknown_skills(kind: FileKind, doc: YamlDocument, known: Known, config_directory: Path,
                   workspaces: Sequence[Path]) -> list[Problem]:
    """A warning on each skill name in ``doc`` that the user's skills and ``workspaces``'
    lack (``known`` is asked only when the file names a skill); the folders searched are
    named in the message. A rule in a ``workspaces:`` block of the user's routing file
    applies to that block's folder only: it is checked against the user's skills and that
    folder's."""
    named = list(_skill_names(kind, doc.root))
    lookups: dict[tuple[Path, ...], tuple[Collection[str], list[str], list[str]]] = {}
    found = []
    for node, purpose, block in named:
        where = block_workspaces(block, workspaces)
        if where not in lookups:
            names = known(config_directory, where)
            lookups[where] = (names, sorted(names), searched_folders(config_directory, where))
        names, listed, folders = lookups[where]
        if node.text not in names:
            found.append(_unknown(doc, node, listed, folders, purpose))
    return found


def unknown_skills_of_file(path: Path, kind: FileKind, doc: YamlDocument,
                           config_directory: Path, workspace: Path) -> list[Problem]:
    """What ``rules check`` (the CLI's and the chat's) adds to a file's own check: the
    warnings of :func:`unknown_skills` against the user's skills and ``workspace``'s (the
    file's own workspace for a workspace's ``.switchman/`` file)."""
    return unknown_skills(kind, doc, lambda config, folders: SkillIndex.of_folders(
        config, folders).skills.keys(), config_directory,
        naming_workspaces(path, kind, [workspace]))


def naming_workspaces(path: Path, kind: FileKind, others: Iterable[Path],
                      block: str | None = None) -> tuple[Path, ...]:
    """Whose skills the configuration file at ``path`` can name, besides the user's: its own
    workspace's for a workspace's file (``<workspace>/.switchman/…``), ``others`` (the open
    folders, or the current workspace) for the user's own; inside its ``workspaces:`` block
    keyed on ``block``, :func:`block_workspaces` of them. The editor's check and its
    completion both ask this, so what is offered is what is not flagged."""
    if kind in (FileKind.WORKSPACE, FileKind.WORKSPACE_PROFILES):
        return (path.absolute().parent.parent,)
    return block_workspaces(block if kind is FileKind.ROUTING else None, list(others))


def block_workspaces(block: str | None, workspaces: Sequence[Path]) -> tuple[Path, ...]:
    """The folders whose skills a rule in the ``workspaces:`` block keyed on ``block`` may
    name (all of ``workspaces`` outside one, None): the block's own, and those of the folders
    below it, open (``workspaces``) or not (:func:`.skills.workspaces_below`: bounded and
    cached) — a block keyed on a folder above them applies to each, with its own skills."""
    if block is None:
        return tuple(workspaces)
    folder = Path(os.path.expanduser(block))
    below = [w for w in workspaces if w != folder and w.is_relative_to(folder)]
    others = workspaces_below(folder) if folder.is_absolute() else ()
    return (folder, *below, *(w for w in others if w not in below))


def blocks_skills(blocks: Iterable[Path]) -> dict[Path, object]:
    """For each ``workspaces:`` block folder of ``blocks``, what the skills its rules may name
    are read from: :func:`.skills.folders_signature` of its ``.switchman/skills`` and those of
    the folders below it (:func:`block_workspaces`), each walked only inside its workspace. A
    skill added, changed or removed there, or a repository with skills cloned below (found by
    the next walk), changes it. For the daemon's poll of the folders no editor watches."""
    return {block: tuple(folders_signature([folder / ".switchman" / "skills"], workspace=folder)
                         for folder in block_workspaces(str(block), ()) if folder.is_absolute())
            for block in blocks}


def unknown_skills_in_files(files: Iterable[str], config_directory: Path,
                            workspace: Path) -> list[Problem]:
    """:func:`unknown_skills_of_file` of each configuration file of ``files`` as it is on
    disk now (one that cannot be read has that problem already, from its own check)."""
    found: list[Problem] = []
    for file in files:
        kind = file_kind(file, config_directory)
        text = read_config(Path(file), workspace_file=kind in WORKSPACE_KINDS)[0] \
            if kind is not None else None
        if kind is not None and text is not None:
            found += unknown_skills_of_file(Path(file), kind, parse_yaml(text, file),
                                            config_directory, workspace)
    return found


def _unknown(doc: YamlDocument, node: YamlNode, names: list[str], folders: Sequence[str],
             purpose: str) -> Problem:
    if len(folders) > MAX_FOLDERS_NAMED:  # a block keyed on a folder of many repositories
        folders = [*folders[:MAX_FOLDERS_NAMED - 1],
                   f"{len(folders) - MAX_FOLDERS_NAMED + 1} more skills folders"]
    where = " or ".join(folders) if len(folders) < 3 else \
        f"{', '.join(folders[:-1])} or {folders[-1]}"
    suggestions = closest(node.text, names)
    if not names:
        known = " No skills were found there (a skill is a Markdown file with 'name' and " \
                "'description' in its front matter)."
    else:
        hint = f" Did you mean '{suggestions[0]}'?" if suggestions else ""
        known = f"{hint} Known skills: {names_listed(names, suggestions)}."
    return doc.problem(doc.range_of(node), Code.UNKNOWN_SKILL,
                       f"No skill named '{node.text}' in {where}, so {purpose}.{known}",
                       Severity.WARNING, data={"suggestions": suggestions})



def block_of(path: Sequence[str | int]) -> str | None:
    """The folder of the ``workspaces:`` block that the place at ``path`` (keys and item
    numbers from the file's root) is in, None outside one."""
    return path[1] if len(path) > 1 and path[0] == "workspaces" and isinstance(path[1], str) \
        else None


def _skill_names(kind: FileKind,
                 root: YamlNode | None) -> Iterator[tuple[YamlNode, str, str | None]]:
    """Each skill name written in the file, with what naming a missing one does and the
    folder of the ``workspaces:`` block it is in (None outside one)."""
    for path, rules in rule_lists(kind, root):
        block = block_of(path)
        for rule in rules.items:
            when = rule.get("when") if rule.kind == "mapping" else None
            for _, value in pairs_named(when, CONDITION):
                yield from ((n, "this condition never matches for it", block)
                            for n in _scalars(value))
    if kind not in (FileKind.PROFILES, FileKind.WORKSPACE_PROFILES) or root is None \
            or root.kind != "mapping":
        return
    profiles = root.get("profiles")
    for _, body in profiles.pairs if profiles is not None and profiles.kind == "mapping" else ():
        skills = body.get("skills") if body.kind == "mapping" else None
        if skills is not None:
            yield from ((n, "the profile lists nothing for it", None)
                        for n in _scalars(skills))


def _scalars(node: YamlNode) -> Iterator[YamlNode]:
    """The non-empty text values of a name or a list of names."""
    for item in [node] if node.kind == "scalar" else node.items:
        if item.kind == "scalar" and not item.is_null and item.text.strip():
            yield item
