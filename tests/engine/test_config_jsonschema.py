"""The JSON Schemas shipped for other editors match the engine's declarations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from switchman.engine.config import schema as s
from switchman.engine.config.check import FileKind
from switchman.engine.config.jsonschema import json_schema, schema_text, shipped_schema
from switchman.server.cli import main

KINDS = [FileKind.ROUTING, FileKind.WORKSPACE, FileKind.MODELS, FileKind.PROFILES,
         FileKind.WORKSPACE_PROFILES]


@pytest.mark.parametrize("kind", KINDS)
def test_shipped_schema_is_freshly_generated(kind: FileKind) -> None:
    # If this fails after changing engine/config/schema.py, regenerate with
    #   switchman schema <kind> --output engine/config/schemas/<kind>.schema.json
    assert shipped_schema(kind) == schema_text(kind)


def test_routing_schema_follows_the_declarations() -> None:
    routing = json_schema(FileKind.ROUTING)
    assert routing["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert set(routing["properties"]) == set(s.ROUTING_FILE.fields)
    assert routing["additionalProperties"] is False
    rule = routing["properties"]["rules"]["items"]
    assert rule["required"] == ["use"]
    assert "opus" in rule["properties"]["use"]["examples"]
    when = routing["definitions"]["when"]
    assert set(when["properties"]) == set(s.PREDICATES)
    assert "Reads: The wall clock" in when["properties"]["time_of_day_between"]["description"]
    assert when["properties"]["any_of"]["items"] == {"$ref": "#/definitions/when"}
    contains = when["properties"]["message_contains_any"]
    assert contains["anyOf"][1]["type"] == "array"  # one bare value or a list
    pattern = routing["properties"]["pattern"]["properties"]["cost_weight"]
    assert (pattern["minimum"], pattern["maximum"]) == (0, 1)


def test_models_schema_checks_ids_and_key_names() -> None:
    models = json_schema(FileKind.MODELS)
    assert models["properties"]["models"]["propertyNames"]["pattern"].startswith("^")
    provider = models["properties"]["providers"]["additionalProperties"]
    assert provider["properties"]["api_key_env"]["type"] == ["string", "null"]
    assert "api_key" not in provider["properties"]  # keys never go in files


def test_workspace_schema_has_no_user_only_keys() -> None:
    workspace = json_schema(FileKind.WORKSPACE)
    assert "global_default" not in workspace["properties"]
    assert "providers" not in workspace["properties"]


@pytest.mark.parametrize("kind", KINDS)
def test_cli_prints_and_writes_the_schema(kind: FileKind, capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    assert main(["schema", kind.value]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema(kind)
    target = tmp_path / "out.json"
    assert main(["schema", kind.value, "--output", str(target)]) == 0
    assert target.read_text("utf-8") == schema_text(kind)
