"""Looking up the :mod:`schema` declaration that applies at a place in a file."""

from __future__ import annotations

from collections.abc import Sequence

from switchman.engine.config import schema as s
from switchman.engine.config.check import FileKind
from switchman.engine.config.profiles_file import PROFILES_FILE, WORKSPACE_PROFILES_FILE

ROOTS: dict[FileKind, s.Obj] = {
    FileKind.ROUTING: s.ROUTING_FILE,
    FileKind.WORKSPACE: s.WORKSPACE_FILE,
    FileKind.MODELS: s.MODELS_FILE,
    FileKind.PROFILES: PROFILES_FILE,
    FileKind.WORKSPACE_PROFILES: WORKSPACE_PROFILES_FILE,
}


def resolved(spec: s.Spec) -> s.Spec:
    """``spec`` itself, or the declaration a :class:`schema.Ref` names."""
    return s.DEFINITIONS[spec.name] if isinstance(spec, s.Ref) else spec


def spec_at(kind: FileKind, path: Sequence[str | int]) -> s.Spec | None:
    """The declaration of the value at ``path`` (keys and item numbers), if the path exists."""
    spec: s.Spec = ROOTS[kind]
    for part in path:
        spec = resolved(spec)
        if isinstance(part, int):
            if not isinstance(spec, s.ListOf | s.TimeWindow):
                return None
            spec = spec.item if isinstance(spec, s.ListOf) else s.Scalar()
        elif isinstance(spec, s.Obj):
            found = spec.fields.get(part)
            if found is None:
                return None
            spec = found.spec
        elif isinstance(spec, s.MapOf):
            spec = spec.value
        else:
            return None
    return resolved(spec)


def field_at(kind: FileKind, path: Sequence[str | int], key: str) -> s.Field | None:
    """The declaration of ``key`` in the mapping at ``path``."""
    holder = spec_at(kind, path)
    return holder.fields.get(key) if isinstance(holder, s.Obj) else None


def is_rule(path: Sequence[str | int]) -> bool:
    """Whether ``path`` names one rule: ``rules/<n>`` at the top or in a workspace block."""
    return len(path) >= 2 and path[-2] == "rules" and isinstance(path[-1], int) and (
        len(path) == 2 or (len(path) == 4 and path[0] == "workspaces"))
