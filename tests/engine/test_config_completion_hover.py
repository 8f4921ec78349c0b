"""Completion and hover in configuration files, on the engine side.

``¦`` marks the cursor in the texts below.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind
from switchman.engine.config.problems import Position
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.text import snippet_to_plain, to_utf16
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.editing.completion import Candidate, complete
from switchman.engine.editing.cursor import locate
from switchman.engine.editing.hover import Hover, hover
from switchman.engine.keys import KeyRing

ROUTING, WORKSPACE, MODELS = FileKind.ROUTING, FileKind.WORKSPACE, FileKind.MODELS
ENV = KeyRing({"ANTHROPIC_API_KEY": "set"})


def at_cursor(marked: str) -> tuple[str, Position]:
    line = next(i for i, text in enumerate(marked.split("\n")) if "¦" in text)
    text = marked.replace("¦", "", 1)
    column = marked.split("\n")[line].index("¦")
    return text, Position(line, to_utf16(text.split("\n")[line], column))


def candidates(kind: FileKind, marked: str) -> list[Candidate]:
    text, position = at_cursor(marked)
    return complete(kind, text, position, builtin_registry(), ENV, ["/code/app"])


def labels(kind: FileKind, marked: str) -> list[str]:
    return [c.label for c in candidates(kind, marked)]


def hover_at(kind: FileKind, marked: str) -> Hover | None:
    text, position = at_cursor(marked)
    return hover(kind, parse_yaml(text, "routing.yaml"), position, builtin_registry(), ENV)


def test_top_level_keys_of_each_file() -> None:
    assert labels(ROUTING, "¦") == ["schema_version", "global_default", "tiers", "pattern",
                                    "pattern_disagreement", "delegation", "rules", "workspaces"]
    assert labels(WORKSPACE, "default: opus\n¦") == ["schema_version", "pattern", "tiers",
                                                     "rules"]
    assert labels(MODELS, "¦") == ["schema_version", "use_builtin_models", "providers",
                                   "models"]


def test_keys_already_written_are_not_offered_again() -> None:
    assert labels(ROUTING, "global_default: opus\nru¦\ntiers: {}\n") == [
        "schema_version", "pattern", "pattern_disagreement", "delegation", "rules", "workspaces"]


def test_rule_keys_below_a_rule_and_on_a_new_item() -> None:
    assert labels(ROUTING, "rules:\n  - name: a\n    ¦\n    use: opus\n") == [
        "description", "when"]
    new_item = candidates(ROUTING, "rules:\n  - name: a\n    use: opus\n  - ¦\n")
    assert [c.label for c in new_item] == ["name", "description", "when", "use"]
    when = next(c for c in new_item if c.label == "when")
    assert when.snippet == "when:\n    $0"  # relative to the line: keys go under `when`


def test_a_blank_line_in_a_rule_list_offers_a_new_item() -> None:
    found = candidates(ROUTING, "rules:\n  ¦\n")
    assert [c.snippet for c in found][:1] == ["- name: $1"]


def test_conditions_come_with_their_value_shape_as_a_snippet() -> None:
    found = {c.label: c for c in candidates(ROUTING, "rules:\n  - when:\n      ¦\n    use: x\n")}
    assert len(found) == 14
    assert found["message_matches"].snippet == 'message_matches: "${1:pattern}"'
    assert found["message_matches"].plain == 'message_matches: "pattern"'
    assert found["time_of_day_between"].snippet == (
        'time_of_day_between: ["${1:09:00}", "${2:17:00}"]')
    assert found["any_of"].snippet == "any_of:\n  - ${1:message_matches}: ${2}"
    assert "**Reads:**" in found["file_extensions_in_context"].documentation
    assert found["has_images"].kind == "condition"


def test_conditions_inside_flow_mappings_and_nested_lists() -> None:
    found = {c.label: c for c in candidates(ROUTING, "rules:\n  - when: {has_images: true, a¦}\n")}
    assert "has_images" not in found
    assert found["any_of"].snippet == "any_of: [{${1:message_matches}: ${2}}]"
    assert "message_matches" in labels(ROUTING, "rules:\n  - when:\n      any_of:\n        - ¦\n")


def test_models_and_aliases_where_a_model_is_expected() -> None:
    for marked in ["global_default: ¦", "rules:\n  - use: so¦net\n",
                   "tiers:\n  fast: ¦\n", "workspaces:\n  /x:\n    default: ¦\n",
                   "rules: [{use: ¦}]\n"]:
        found = labels(ROUTING, marked)
        assert "sonnet" in found and "anthropic:claude-sonnet-4-6" in found, marked
    assert "opus" in labels(WORKSPACE, "default: ¦\n")


def test_a_model_candidate_replaces_the_whole_word_and_explains_the_model() -> None:
    [sonnet] = [c for c in candidates(ROUTING, "global_default: son¦net\n")
                if c.label == "sonnet"]
    assert (sonnet.range.start.character, sonnet.range.end.character) == (16, 22)
    assert "anthropic:claude-sonnet-4-6" in sonnet.documentation
    assert "200,000 tokens" in sonnet.documentation


def test_a_space_typed_by_the_user_only_brings_up_values() -> None:
    text = "rules:\n  - use: \n    \n"
    registry = builtin_registry()
    after_use = complete(ROUTING, text, Position(1, 9), registry, ENV, values_only=True)
    assert "opus" in [c.label for c in after_use]
    indenting = complete(ROUTING, text, Position(2, 4), registry, ENV, values_only=True)
    assert indenting == []
    assert complete(ROUTING, text, Position(2, 4), registry, ENV)  # when asked for: keys


def test_tier_names_and_other_choices() -> None:
    assert labels(ROUTING, "tiers:\n  fast: haiku\n  ¦\n") == ["balanced", "deep", "complexity",
                                                               "effort"]
    assert labels(MODELS, "models:\n  ollama:x:\n    tier: ¦\n") == ["fast", "balanced", "deep"]
    assert labels(MODELS, "providers:\n  p:\n    api: ¦\n") == [
        "anthropic", "openai", "openai_compatible"]
    assert labels(MODELS, "models:\n  ollama:x:\n    provider: ¦\n") == [
        "anthropic", "openai", "ollama"]
    assert labels(ROUTING, "rules:\n  - when: {has_images: ¦}\n") == ["true", "false"]


def test_workspace_folders_are_offered_as_workspaces_keys() -> None:
    [folder] = candidates(ROUTING, "workspaces:\n  ¦\n")
    assert folder.label == "/code/app"
    assert snippet_to_plain(folder.snippet) == "/code/app:\n  "


def test_nothing_is_offered_inside_comments_and_block_text() -> None:
    assert labels(ROUTING, "# a comment ¦\n") == []
    assert labels(ROUTING, "rules:\n  - description: |\n      some te¦xt\n    use: opus\n") == []


def test_the_cursor_reads_broken_yaml_the_way_a_person_would() -> None:
    lines = ["rules:", "  - name: a", "    when: {any_of: [{has_im", "    use: opus"]
    cursor = locate(lines, 2, len(lines[2]))
    assert cursor is not None
    assert (cursor.path, cursor.role, cursor.word) == (
        ("rules", 0, "when", "any_of", 0), "key", "has_im")


def test_hover_on_a_condition_says_what_it_reads_and_when() -> None:
    found = hover_at(ROUTING, "rules:\n  - when: {file_exten¦sions_in_context: [sql]}\n")
    assert found is not None
    assert "**Reads:** Paths in the inputs and results of this session's tool calls" \
        in found.markdown
    assert "before any model is called" in found.markdown
    assert (found.range.start.character, found.range.end.character) == (11, 37)


def test_hover_on_a_model_alias_gives_provider_capabilities_price_and_key(
        tmp_path: Path) -> None:
    found = hover_at(ROUTING, "rules:\n  - use: op¦us\n")
    assert found is not None
    text = found.markdown
    assert "`opus` is an alias of `anthropic:claude-opus-4-7`" in text
    assert "anthropic (anthropic API); API key from `ANTHROPIC_API_KEY` is set" in text
    assert "Context window: 200,000 tokens" in text
    assert "images" in text
    assert "input $5.00, output $25.00" in text
    gpt = hover_at(ROUTING, "global_default: gpt-¦5\n")
    assert gpt is not None
    assert "**no API key**: set `OPENAI_API_KEY`" in gpt.markdown
    # QA: a key read from api_key_file (the variable unset) was said to come from the variable
    key_file = tmp_path / "anthropic.key"
    key_file.write_text("sk-ant-0123456789abcdef\n")
    builtin = builtin_registry()
    providers = {**builtin.providers, "anthropic": msgspec.structs.replace(
        builtin.providers["anthropic"], api_key_file=str(key_file))}
    source, position = at_cursor("rules:\n  - use: op¦us\n")
    from_file = hover(ROUTING, parse_yaml(source, "routing.yaml"), position,
                      ModelRegistry(providers, builtin.models.values()), KeyRing({}))
    assert from_file is not None
    assert f"API key from key file `{key_file}` is set" in from_file.markdown
    assert "sk-ant-01234" not in from_file.markdown  # where it comes from, never the key
    key_file.unlink()  # no key: the hover names the file too, and why it gave none
    missing = hover(ROUTING, parse_yaml(source, "routing.yaml"), position,
                    ModelRegistry(providers, builtin.models.values()), KeyRing({}))
    assert missing is not None
    assert (f"**no API key**: set `ANTHROPIC_API_KEY` or the key file {key_file}, which does "
            "not exist") in missing.markdown


def test_hover_on_a_model_id_key_in_models_yaml() -> None:
    text, position = at_cursor("models:\n  anthropic:claude-hai¦ku-4-5:\n    tier: fast\n")
    found = hover(MODELS, parse_yaml(text, "models.yaml"), position, builtin_registry(), ENV)
    assert found is not None
    assert "Claude Haiku 4.5" in found.markdown


@pytest.mark.parametrize(("kind", "marked", "expected"), [
    (ROUTING, "rules:\n  - name: fi¦rst\n    use: haiku\n  - use: opus\n",
     ["**Rule 'first'** → `anthropic:claude-haiku-4-5`", "CONFIGURED_RULES",
      "Rule 1 of 2 in your global rules"]),
    (ROUTING, "workspaces:\n  ~/code/x:\n    rules:\n      - name: lo¦cal\n        use: opus\n",
     ["Rule 1 of 1 in your `workspaces:` block for `~/code/x`"]),
    (WORKSPACE, "rules:\n  - use: opus\n  - name: s¦ql\n    use: gpt-5\n",
     ["Rule 2 of 2 in this workspace's `.switchman/routing.yaml`"]),
])
def test_hover_on_a_rule_name_says_which_slot_it_feeds(kind: FileKind, marked: str,
                                                      expected: list[str]) -> None:
    found = hover_at(kind, marked)
    assert found is not None
    for part in expected:
        assert part in found.markdown


def test_no_hover_on_plain_values() -> None:
    assert hover_at(ROUTING, "rules:\n  - name: a\n    description: so¦me text\n") is None


def test_hover_on_the_first_character_of_a_key() -> None:
    for marked in ("¦global_default: sonnet\n", "rules:\n  - name: a\n    ¦use: opus\n"):
        shown = hover_at(ROUTING, marked)
        assert shown is not None, marked
