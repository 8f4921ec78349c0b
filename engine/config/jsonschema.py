"""JSON Schemas for routing.yaml, models.yaml, profiles.yaml and the workspace's files.

Generated from the declarations in :mod:`schema`, the ones the engine
validates with, for editors that only know JSON Schema (yaml-language-server
and others). The package ships the output in ``schemas/``; a test keeps the
shipped files identical to what this module generates.

JSON Schema cannot say everything Switchman checks (models that exist,
shadowed rules, RE2 syntax, trust in workspace files); those stay the
daemon's job. Keys Switchman only warns about are simply not allowed here.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from switchman.engine.config import schema as s
from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind
from switchman.engine.config.declarations import ROOTS
from switchman.engine.config.problems import Severity

DRAFT = "http://json-schema.org/draft-07/schema#"
FILE_NAMES = {FileKind.ROUTING: "routing.schema.json",
              FileKind.WORKSPACE: "workspace.schema.json",
              FileKind.MODELS: "models.schema.json",
              FileKind.PROFILES: "profiles.schema.json",
              FileKind.WORKSPACE_PROFILES: "workspace-profiles.schema.json"}
_TIME = r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$"
_PATTERNS = {"env-var": r"^[A-Za-z_][A-Za-z0-9_]*$", "url": r"^https?://",
             "model-id": r"^[^:\s][^:]*:.*\S", "time": _TIME}
_JSON_TYPES = {"string": "string", "integer": "integer", "number": "number",
               "boolean": "boolean"}


def json_schema(kind: FileKind) -> dict[str, Any]:
    """The JSON Schema (draft-07) for one kind of file."""
    root = ROOTS[kind]
    document: dict[str, Any] = {"$schema": DRAFT, "title": root.title,
                                "description": root.description}
    document.update(_object(root))
    document["type"] = "object"
    if kind in (FileKind.ROUTING, FileKind.WORKSPACE):
        document["definitions"] = {name: _object(spec) for name, spec in s.DEFINITIONS.items()}
    return document


def schema_text(kind: FileKind) -> str:
    """:func:`json_schema` as the text of a ``.schema.json`` file."""
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"


def shipped_schema(kind: FileKind) -> str:
    """The schema file shipped in the package."""
    return (files("switchman.engine.config") / "schemas" / FILE_NAMES[kind]).read_text("utf-8")


def _spec(spec: s.Spec) -> dict[str, Any]:
    if isinstance(spec, s.Ref):
        ref = {"$ref": f"#/definitions/{spec.name}"}
        return {"description": spec.description, "allOf": [ref]} if spec.description else ref
    if isinstance(spec, s.Scalar):
        return _scalar(spec)
    if isinstance(spec, s.Obj):
        return _object(spec)
    if isinstance(spec, s.ListOf):
        return _list(spec)
    if isinstance(spec, s.MapOf):
        return _map(spec)
    if isinstance(spec, s.TimeWindow):
        return {"description": spec.description, "type": "array", "minItems": 2, "maxItems": 2,
                "items": {"type": "string", "pattern": _TIME}}
    raise TypeError(f"no JSON Schema for {spec!r}")  # pragma: no cover - programming error


def _scalar(spec: s.Scalar) -> dict[str, Any]:
    kind = _JSON_TYPES[spec.type]
    out: dict[str, Any] = {"description": spec.description,
                           "type": [kind, "null"] if spec.nullable else kind}
    if spec.minimum is not None:
        out["minimum"] = _number(spec.minimum)
    if spec.maximum is not None:
        out["maximum"] = _number(spec.maximum)
    if spec.enum:
        out["enum"] = list(spec.enum)
    if spec.format in _PATTERNS:
        out["pattern"] = _PATTERNS[spec.format]
    if spec.format == "model":
        out["examples"] = _builtin_models()
    return out


def _object(spec: s.Obj) -> dict[str, Any]:
    out: dict[str, Any] = {"description": spec.description, "type": ["object", "null"],
                           "properties": {key: _field(f) for key, f in spec.fields.items()},
                           "additionalProperties": False}
    if spec.required:
        out["required"] = list(spec.required)
    return out


def _field(declared: s.Field) -> dict[str, Any]:
    out = _spec(declared.spec)
    if declared.reads:
        out["description"] = f"{out.get('description', '')}\n\nReads: {declared.reads}".strip()
    return out


def _list(spec: s.ListOf) -> dict[str, Any]:
    array: dict[str, Any] = {"type": "array", "items": _spec(spec.item)}
    if spec.min_items and spec.empty_severity is Severity.ERROR:
        array["minItems"] = spec.min_items
    if spec.single_ok:
        return {"description": spec.description, "anyOf": [_spec(spec.item), array]}
    return {"description": spec.description, **array}


def _map(spec: s.MapOf) -> dict[str, Any]:
    out: dict[str, Any] = {"description": spec.description, "type": ["object", "null"],
                           "additionalProperties": _spec(spec.value)}
    if spec.key.format in _PATTERNS:
        out["propertyNames"] = {"pattern": _PATTERNS[spec.key.format]}
    return out


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _builtin_models() -> list[str]:
    registry = builtin_registry()
    return [*registry.aliases, *registry.models]
