"""Validate any Switchman configuration file from its text (used by the CLI and the editor)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

from switchman.engine.config.builtin import builtin_models_values, builtin_routing_values
from switchman.engine.config.models_file import check_models_doc
from switchman.engine.config.paths import WORKSPACE_DIR, config_dir, config_path, same_folder
from switchman.engine.config.problems import Problem, sort_problems
from switchman.engine.config.profiles_file import check_profiles_doc
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_doc, check_workspace_doc
from switchman.engine.config.yamldoc import YamlDocument, parse_yaml
from switchman.engine.profiles.profile import BUILTIN_SET, ProfileSet


class FileKind(StrEnum):
    """The kinds of configuration file."""

    MODELS = "models"
    ROUTING = "routing"
    WORKSPACE = "workspace"
    PROFILES = "profiles"
    WORKSPACE_PROFILES = "workspace-profiles"


WORKSPACE_KINDS = frozenset({FileKind.WORKSPACE, FileKind.WORKSPACE_PROFILES})
"""The kinds of a workspace's own (untrusted) files, read only from inside the workspace."""


def file_kind(path: str | Path, config_directory: Path | None = None) -> FileKind | None:
    """Guess a file's kind from its name and place; None if it is not a Switchman file.

    A file in a ``.switchman`` folder is a workspace's, unless that folder is the user's
    config folder ``config_directory`` (default: :func:`.paths.config_dir`), named so or
    linked either way: ``SWITCHMAN_CONFIG_DIR=~/.switchman`` holds the user's own files."""
    p = Path(path)
    if p.name in ("models.yaml", "models.yml"):
        return FileKind.MODELS
    workspace = p.parent.name == WORKSPACE_DIR and not same_folder(
        p.parent, config_directory if config_directory is not None else config_dir())
    if p.name in ("routing.yaml", "routing.yml"):
        return FileKind.WORKSPACE if workspace else FileKind.ROUTING
    if p.name in ("profiles.yaml", "profiles.yml"):
        return FileKind.WORKSPACE_PROFILES if workspace else FileKind.PROFILES
    return None


def workspace_folder_of(path: str | Path) -> str:
    """The workspace folder a ``.switchman/routing.yaml`` belongs to: the one it was found in,
    not the parent of wherever a linked ``.switchman`` folder leads (see :func:`config_path`)."""
    return str(config_path(path).parent.parent)


def check_text(kind: FileKind, text: str, path: str, registry: ModelRegistry,
               user_profiles: ProfileSet | None = None) -> list[Problem]:
    """Every problem in ``text`` read as a file of ``kind``, in file order.

    ``registry`` is the model registry routing files are checked against; a
    models.yaml is checked on its own (merged over the built-in registry).
    ``user_profiles`` bound a workspace profiles file (default: the built-in ones).
    """
    return check_doc(kind, parse_yaml(text, path), registry, user_profiles)


def check_doc(kind: FileKind, doc: YamlDocument, registry: ModelRegistry,
              user_profiles: ProfileSet | None = None) -> list[Problem]:
    """:func:`check_text` for an already parsed document."""
    return sort_problems(check_value(kind, doc, registry, user_profiles)[1])


def check_value(kind: FileKind, doc: YamlDocument, registry: ModelRegistry,
                user_profiles: ProfileSet | None = None) -> tuple[Any, list[Problem]]:
    """What the file's own loader returns for ``doc``: its value (None when it has errors)
    and its problems in the order found (what the daemon's configuration store keeps)."""
    if kind is FileKind.PROFILES:
        return check_profiles_doc(doc, registry)
    if kind is FileKind.WORKSPACE_PROFILES:
        return check_profiles_doc(doc, registry, user_profiles or BUILTIN_SET)
    if kind is FileKind.MODELS:
        return check_models_doc(doc, builtin_models_values())
    if kind is FileKind.ROUTING:
        return check_routing_doc(doc, registry, builtin_routing_values(registry))
    return check_workspace_doc(doc, registry, workspace_folder_of(doc.path))
