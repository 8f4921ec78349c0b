"""Every problem code appears, located at the offending key or value."""

from __future__ import annotations

import pytest

from switchman.engine.config.builtin import builtin_registry, builtin_text
from switchman.engine.config.check import FileKind, check_text, file_kind
from switchman.engine.config.problems import Code, Position, Problem, Range, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_text, check_workspace_text
from tests.conftest import span

ROUTING = FileKind.ROUTING
WORKSPACE = FileKind.WORKSPACE
MODELS = FileKind.MODELS
PROFILES = FileKind.PROFILES
WS_PROFILES = FileKind.WORKSPACE_PROFILES


def problems(kind: FileKind, text: str) -> list[Problem]:
    path = {ROUTING: "routing.yaml", WORKSPACE: "/ws/.switchman/routing.yaml",
            MODELS: "models.yaml", PROFILES: "profiles.yaml",
            WS_PROFILES: "/ws/.switchman/profiles.yaml"}[kind]
    return check_text(kind, text, path, builtin_registry())


def only(found: list[Problem], code: Code) -> Problem:
    matching = [p for p in found if p.code is code]
    assert len(matching) == 1, found
    return matching[0]


# (kind, text, code, needle, occurrence) — the problem must underline `needle`.
LOCATED = [
    (ROUTING, "rules:\n  - nmae: x\n    use: opus\n", Code.UNKNOWN_KEY, "nmae", 1),
    (ROUTING, "schema_version: 3\n", Code.SCHEMA_VERSION, "3", 1),
    (ROUTING, "rules:\n  - when: {estimated_input_tokens_gt: lots}\n    use: opus\n",
     Code.INVALID_TYPE, "lots", 1),
    (ROUTING, "global_default: [opus]\n", Code.INVALID_TYPE, "[opus]", 1),
    (ROUTING, "rules:\n  - use: opsu\n", Code.UNKNOWN_MODEL, "opsu", 1),
    (ROUTING, "global_default: anthropic:claude-sonet-4-6\n", Code.UNKNOWN_MODEL,
     "anthropic:claude-sonet-4-6", 1),
    (ROUTING, "rules:\n  - when: {mesage_matches: x}\n    use: opus\n", Code.UNKNOWN_PREDICATE,
     "mesage_matches", 1),
    (ROUTING, 'rules:\n  - when: {message_matches: "(a)\\\\1"}\n    use: opus\n',
     Code.INVALID_REGEX, '"(a)\\\\1"', 1),
    (ROUTING, "rules:\n  - when: {workspace_path_matches: '(?=x)'}\n    use: opus\n",
     Code.INVALID_REGEX, "'(?=x)'", 1),
    (ROUTING, "rules:\n  - name: same\n    use: opus\n  - name: same\n"
     "    when: {has_images: true}\n    use: haiku\n", Code.DUPLICATE_RULE_NAME, "same", 2),
    (ROUTING, "tiers:\n  fast: haiku\n  balanced: [sonnet, sonnet]\n  deep: opus\n",
     Code.DUPLICATE_MODEL, "sonnet", 2),
    (ROUTING, "tiers:\n  fast: haiku\n  balanced: sonnet\n", Code.PARTIAL_TIERS, "tiers", 1),
    (ROUTING, "workspaces:\n  /code/x:\n    tiers: {fast: haiku}\n", Code.PARTIAL_TIERS,
     "tiers", 1),
    (ROUTING, "pattern: {cost_weight: 1.5}\n", Code.OUT_OF_RANGE, "1.5", 1),
    (ROUTING, "pattern: {min_sample_size: 0}\n", Code.OUT_OF_RANGE, "0", 1),
    (ROUTING, "pattern: {min_confidence: -0.1}\n", Code.OUT_OF_RANGE, "-0.1", 1),
    (ROUTING, "pattern: {neighborhood: everywhere}\n", Code.INVALID_VALUE, "everywhere", 1),
    (ROUTING, "pattern: {similarity_exponent: 20}\n", Code.OUT_OF_RANGE, "20", 1),
    (ROUTING, 'rules:\n  - when: {time_of_day_between: ["25:00", "06:00"]}\n    use: opus\n',
     Code.INVALID_TIME_WINDOW, '"25:00"', 1),
    (ROUTING, "rules:\n  - when: {time_of_day_between: [09:00]}\n    use: opus\n",
     Code.INVALID_TIME_WINDOW, "[09:00]", 1),
    (ROUTING, "rules:\n  - when: {has_images: true}\n    use: opus\n  - when: {has_images: true}"
     "\n    use: haiku\n", Code.SHADOWED_RULE, "{has_images: true}", 2),
    (ROUTING, "rules:\n  - use: opus\n  - name: never\n    when: {has_images: true}\n"
     "    use: haiku\n", Code.SHADOWED_RULE, "never", 1),
    (ROUTING, "rules:\n  - use: opus\n    fallback: [sonnet]\n", Code.UNKNOWN_KEY, "fallback", 1),
    (ROUTING, "a: 1\na: 2\n", Code.DUPLICATE_KEY, "a", 2),
    (ROUTING, "workspaces:\n  relative/dir: {default: opus}\n", Code.INVALID_WORKSPACE_PATH,
     "relative/dir", 1),
    (ROUTING, "rules:\n  - when: {any_of: []}\n    use: opus\n", Code.EMPTY_COMBINATOR, "[]", 1),
    (ROUTING, "rules:\n  - when: {has_images: true}\n", Code.MISSING_KEY, "when", 1),
    (WORKSPACE, "default: opus\nbase_url: http://evil.example\n", Code.UNTRUSTED_SETTING,
     "base_url", 1),
    (WORKSPACE, "providers:\n  evil: {api: openai}\n", Code.UNTRUSTED_SETTING, "providers", 1),
    (WORKSPACE, "api_key_env: MY_KEY\n", Code.UNTRUSTED_SETTING, "api_key_env", 1),
    (WORKSPACE, "global_default: opus\n", Code.UNKNOWN_KEY, "global_default", 1),
    (WORKSPACE, "default: opus\ndelegation: {enabled: false}\n", Code.UNTRUSTED_SETTING,
     "delegation", 1),
    (MODELS, "models:\n  ollama:qwen:\n    aliases: [haiku]\n", Code.DUPLICATE_ALIAS, "haiku", 1),
    (MODELS, "models:\n  ollama:a: {aliases: [q]}\n  ollama:b: {aliases: [q]}\n",
     Code.DUPLICATE_ALIAS, "q", 2),
    (MODELS, "models:\n  nope:model: {}\n", Code.UNKNOWN_PROVIDER, "nope:model", 1),
    (MODELS, "models:\n  no-colon: {}\n", Code.INVALID_MODEL_ID, "no-colon", 1),
    (MODELS, "providers:\n  p: {api: grpc}\n", Code.INVALID_VALUE, "grpc", 1),
    (MODELS, "providers:\n  p: {api: openai, api_key: sk-secret}\n", Code.UNTRUSTED_SETTING,
     "api_key", 1),
    (MODELS, "models:\n  ollama:x: {capabilities: {max_context_tokens: 0}}\n",
     Code.OUT_OF_RANGE, "0", 1),
    (MODELS, "schema_version: 9\n", Code.SCHEMA_VERSION, "9", 1),
    (PROFILES, "default: reviewr\nprofiles:\n  reviewer: {tools: [read_file]}\n",
     Code.UNKNOWN_PROFILE, "reviewr", 1),
    (PROFILES, "profiles:\n  r: {tools: [read_file, rm_rf]}\n", Code.INVALID_VALUE, "rm_rf", 1),
    (PROFILES, "profiles:\n  r: {model: opsu}\n", Code.UNKNOWN_MODEL, "opsu", 1),
    (PROFILES, "profiles:\n  r: {approval: never}\n", Code.INVALID_VALUE, "never", 1),
    (PROFILES, "profiles:\n  r: {base_url: 'http://evil.example'}\n", Code.UNTRUSTED_SETTING,
     "base_url", 1),
    (WS_PROFILES, "profiles:\n  subagent: {api_key_env: MY_KEY}\n", Code.UNTRUSTED_SETTING,
     "api_key_env", 1),
    (WS_PROFILES, "default: nobody\n", Code.UNKNOWN_PROFILE, "nobody", 1),
]


@pytest.mark.parametrize(("kind", "text", "code", "needle", "occurrence"), LOCATED)
def test_problem_is_located_at_the_offending_text(
    kind: FileKind, text: str, code: Code, needle: str, occurrence: int
) -> None:
    problem = only(problems(kind, text), code)
    assert problem.range.start == span(text, needle, occurrence).start
    if code is not Code.MISSING_KEY:
        assert problem.range == span(text, needle, occurrence)
    assert problem.message
    assert problem.source == "switchman"


def test_yaml_syntax_error_is_located() -> None:
    found = problems(ROUTING, "rules:\n  - name: x\n   use: [opus\n")
    problem = only(found, Code.YAML_SYNTAX)
    assert problem.range.start.line in (2, 3)
    assert problem.severity is Severity.ERROR


@pytest.mark.parametrize("text", ["rules:\n  - name: x\n\tuse: opus\n",
                                  "rules:\n  - name: x\n    when:\n\thas_images: true\n"])
def test_a_tab_indenting_a_line_is_named(text: str) -> None:
    """libyaml says only "found character that cannot start any token": the user is told that
    the character is a tab, which YAML does not allow for indentation, on the tab itself."""
    problem = only(problems(ROUTING, text), Code.YAML_SYNTAX)
    assert "tab" in problem.message and "spaces" in problem.message, problem.message
    tab = text.index("\t")
    line = text[:tab].count("\n")
    assert problem.range == Range(Position(line, 0), Position(line, 1))


def test_every_problem_is_reported_not_just_the_first() -> None:
    text = (
        "schema_version: 2\n"
        "global_default: opsu\n"
        "pattern: {cost_weight: 2}\n"
        "rules:\n"
        "  - when: {mesage_matches: x}\n"
        "    use: haiku\n"
    )
    codes = {p.code for p in problems(ROUTING, text)}
    assert {Code.SCHEMA_VERSION, Code.UNKNOWN_MODEL, Code.OUT_OF_RANGE,
            Code.UNKNOWN_PREDICATE} <= codes


@pytest.mark.parametrize("first_use", ["nosuch", "[haiku]", ""])
def test_a_duplicate_name_is_reported_when_the_first_rules_model_is_wrong(
        first_use: str) -> None:
    """A rule whose `use` is refused (unknown model, wrong type, missing) still holds its
    name: the second rule of that name is reported too, with the first problem."""
    use = f"    use: {first_use}\n" if first_use else ""
    text = f"rules:\n  - name: same\n{use}  - name: same\n    use: opus\n"
    found = problems(ROUTING, text)
    assert only(found, Code.DUPLICATE_RULE_NAME).range == span(text, "same", 2)


def test_columns_are_utf16_code_units_on_non_ascii_lines() -> None:
    # Each emoji is one code point but two UTF-16 code units.
    text = 'rules: [{name: "😀😀 café", use: opsu}]\n'
    problem = only(problems(ROUTING, text), Code.UNKNOWN_MODEL)
    code_points = text.index("opsu")
    assert problem.range == Range(Position(0, code_points + 2), Position(0, code_points + 6))


def test_unknown_model_suggests_the_closest_id() -> None:
    problem = only(problems(ROUTING, "global_default: anthropic:claude-opsu-4-7\n"),
                   Code.UNKNOWN_MODEL)
    assert problem.data is not None
    assert problem.data["suggestions"][0] == "anthropic:claude-opus-4-7"
    assert "Did you mean 'anthropic:claude-opus-4-7'" in problem.message


def test_untrusted_setting_is_a_warning_and_the_rest_still_applies(
        registry: ModelRegistry) -> None:
    text = "default: gpt-5\nbase_url: http://evil.example\nproviders: {x: {api: openai}}\n"
    block, found = check_workspace_text(text, "/ws/.switchman/routing.yaml", registry, "/ws")
    assert block is not None
    assert block.default == "openai:gpt-5"
    assert {p.severity for p in found} == {Severity.WARNING}


def test_delegation_in_a_workspace_file_says_why_and_the_rest_still_applies(
        registry: ModelRegistry) -> None:
    """Found by QA: it was an "Unknown key" error, so the repository's whole file was
    dropped; it is one setting only your own routing.yaml may make."""
    text = "default: gpt-5\ndelegation:\n  enabled: false\n"
    block, found = check_workspace_text(text, "/ws/.switchman/routing.yaml", registry, "/ws")
    assert block is not None and block.default == "openai:gpt-5"
    [problem] = found
    assert (problem.code, problem.severity, problem.range) == (
        Code.UNTRUSTED_SETTING, Severity.WARNING, span(text, "delegation"))
    assert problem.message.startswith("A workspace routing file cannot set 'delegation'")
    assert "only be set in your own routing.yaml" in problem.message


def test_pattern_disagreement_in_a_workspace_file_says_where_it_goes(
        registry: ModelRegistry) -> None:
    """Found by QA: it was "Unknown key ... Did you mean 'pattern'?" (a quick fix that would
    have broken the file) and the whole file was dropped."""
    text = "default: gpt-5\npattern_disagreement:\n  surface: true\n"
    block, found = check_workspace_text(text, "/ws/.switchman/routing.yaml", registry, "/ws")
    assert block is not None and block.default == "openai:gpt-5"
    [problem] = found
    assert (problem.code, problem.severity, problem.range) == (
        Code.UNTRUSTED_SETTING, Severity.WARNING, span(text, "pattern_disagreement"))
    assert "in your own routing.yaml" in problem.message and "'pattern'" not in problem.message


@pytest.mark.parametrize(("key", "says"), [
    ("delegation", "move it to the top level of this file"),
    ("pattern_disagreement", "move it to the top level of this file"),
    ("global_default", "sets 'default', not 'global_default'"),
])
def test_a_global_setting_inside_a_workspace_block_says_where_it_goes(key: str, says: str) -> None:
    """Found by QA: ``delegation:`` under ``workspaces:`` was a plain "Unknown key"."""
    text = f"global_default: sonnet\nworkspaces:\n  ~/code/app:\n    {key}: {{enabled: false}}\n"
    found = problems(FileKind.ROUTING, text)
    problem = only(found, Code.UNKNOWN_KEY)
    assert says in problem.message
    assert problem.range == Range(Position(3, 4), Position(3, 4 + len(key)))  # the block's key


def test_shadowing_by_a_stricter_threshold_is_detected() -> None:
    text = ("rules:\n  - name: big\n    when: {estimated_input_tokens_gt: 1000}\n    use: opus\n"
            "  - name: bigger\n    when: {estimated_input_tokens_gt: 5000, has_images: true}\n"
            "    use: gpt-5\n")
    problem = only(problems(ROUTING, text), Code.SHADOWED_RULE)
    assert problem.severity is Severity.WARNING
    assert problem.range == span(text, "bigger")
    assert "'big'" in problem.message


def test_rules_with_different_conditions_are_not_shadowed() -> None:
    text = ("rules:\n  - when: {message_matches: a}\n    use: opus\n"
            "  - when: {message_matches: b}\n    use: haiku\n")
    assert problems(ROUTING, text) == []


def test_invalid_rule_is_not_treated_as_an_empty_condition() -> None:
    text = ("rules:\n  - when: {mesage_matches: x}\n    use: opus\n"
            "  - when: {has_images: true}\n    use: haiku\n")
    codes = [p.code for p in problems(ROUTING, text)]
    assert codes == [Code.UNKNOWN_PREDICATE]


def test_aliases_are_accepted_where_a_model_is_expected(registry: ModelRegistry) -> None:
    policy, found = check_routing_text("global_default: haiku\n", "routing.yaml", registry)
    assert found == []
    assert policy is not None
    assert policy.global_default == "anthropic:claude-haiku-4-5"


def test_file_kind_is_taken_from_name_and_place() -> None:
    assert file_kind("/home/u/.config/switchman/models.yaml") is FileKind.MODELS
    assert file_kind("/home/u/.config/switchman/routing.yaml") is FileKind.ROUTING
    assert file_kind("/code/x/.switchman/routing.yaml") is FileKind.WORKSPACE
    assert file_kind("/code/x/other.yaml") is None


def test_deeply_nested_input_is_refused_without_crashing() -> None:
    text = "rules: " + "[" * 5000 + "]" * 5000 + "\n"
    assert only(problems(ROUTING, text), Code.TOO_COMPLEX).severity is Severity.ERROR


def test_recursive_alias_is_a_syntax_problem() -> None:
    assert only(problems(ROUTING, "rules: &r [*r]\n"), Code.YAML_SYNTAX)


def test_alias_bombs_are_bounded() -> None:
    # Each level doubles: walking the final condition naively would visit 2**30 nodes.
    lines = ["x0: &a0 {message_matches: x}"]
    for i in range(1, 31):
        lines.append(f"x{i}: &a{i} {{any_of: [*a{i - 1}, *a{i - 1}]}}")
    text = "\n".join(lines) + "\nrules:\n  - when: *a30\n    use: opus\n"
    found = problems(ROUTING, text)
    assert any(p.code is Code.TOO_COMPLEX for p in found)


def test_yaml_sexagesimal_times_are_read_as_text() -> None:
    text = "rules:\n  - when: {time_of_day_between: [22:00, 06:00]}\n    use: haiku\n"
    assert problems(ROUTING, text) == []


def test_builtin_files_are_valid() -> None:
    assert problems(MODELS, builtin_text("models.yaml")) == []
    assert problems(ROUTING, builtin_text("routing.yaml")) == []


@pytest.mark.parametrize(("url", "says"), [
    ("http://127.0.0.1:99999/v1", "a port is a number from 1 to 65535"),
    ("http://localhost:abc/v1", "a port is a number from 1 to 65535"),
    ("http://[::1/v1", "is not a valid URL"),
    ("http:///v1", "has no valid host name"),
    ("http://my host/v1", "contains spaces"),
    ("ftp://files.example/v1", "is not an http:// or https:// URL"),
])
def test_a_base_url_that_cannot_work_is_a_located_problem(url: str, says: str) -> None:
    text = f"providers:\n  local:\n    api: openai_compatible\n    base_url: '{url}'\n"
    problem = only(problems(MODELS, text), Code.INVALID_VALUE)
    assert problem.range == span(text, f"'{url}'")
    assert says in problem.message


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434/v1", "https://api.example.com",
                                 "http://[::1]:8080/v1", "http://user@host:80/"])
def test_usable_base_urls_pass(url: str) -> None:
    assert problems(MODELS, f"providers:\n  local: {{api: openai, base_url: '{url}'}}\n") == []


def test_neighbourhood_settings_are_read_globally_and_per_workspace(
        registry: ModelRegistry) -> None:
    text = "pattern: {neighborhood: per_model, similarity_exponent: 4, neighbors: 25}\n"
    policy, found = check_routing_text("global_default: haiku\n" + text, "routing.yaml",
                                       registry)
    assert found == [] and policy is not None
    assert policy.pattern.neighborhood == "per_model"
    assert policy.pattern.similarity_exponent == 4 and policy.pattern.neighbors == 25
    workspace, found = check_workspace_text(text, "/code/x/.switchman/routing.yaml", registry,
                                            "/code/x")
    assert found == [] and workspace is not None and workspace.pattern is not None
    assert workspace.pattern.neighborhood == "per_model"


PASTED_KEYS = ["sk-ant-api03-Zx81QmT0pLk2VbN7rW4eYc9uHs3dGf6jAa5", "sk-proj-4fGh7Jk2Lm9Np0Qr",
               "AIzaSyD3x9Kq7Lm2Np8Rt5Vw1Yz4Bc6Df0Gh2Jk", "gsk_Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8"]


@pytest.mark.parametrize("key", PASTED_KEYS)
@pytest.mark.parametrize("field", ["api_key_env", "api_key_file"])
def test_a_key_pasted_where_its_source_goes_is_refused_and_never_repeated(
        field: str, key: str) -> None:
    """A key written into api_key_env ("is not an environment variable name", quoting it) or
    api_key_file (accepted, then quoted as a missing key file in `switchman models`, a failed
    route and the editor's hover) reached the terminal and the editor verbatim."""
    text = f"providers:\n  anthropic:\n    {field}: {key}\n"
    found = problems(MODELS, text)
    problem = only(found, Code.UNTRUSTED_SETTING)
    assert problem.severity is Severity.ERROR and problem.range == span(text, key)
    assert problem.message.startswith("This looks like an API key itself")
    assert all(key not in repr(p) and key[:12] not in repr(p) for p in found)


@pytest.mark.parametrize(("field", "source"), [
    ("api_key_env", "ANTHROPIC_API_KEY"), ("api_key_env", "MyCompanyAnthropicProductionKey2024"),
    ("api_key_env", "WORK_ANTHROPIC_API_KEY_FOR_THE_PRODUCTION_ACCOUNT_2"),
    ("api_key_file", "~/.config/switchman/anthropic.key"), ("api_key_file", "/run/secrets/sk-ant"),
    ("api_key_file", "anthropic-production-key-2024.txt")])
def test_key_sources_that_only_look_long_are_accepted(field: str, source: str) -> None:
    assert problems(MODELS, f"providers:\n  anthropic:\n    {field}: {source}\n") == []


# A key pasted where something else goes: every message that quotes the value (unknown model,
# wrong type, bad regex, unknown key name) quoted the key itself — in the editor's diagnostics,
# `switchman rules check` and the routing.policy_invalid event stored in the database.
PASTED_ELSEWHERE = [
    (ROUTING, "global_default: {key}\n", Code.UNKNOWN_MODEL),
    (ROUTING, "rules:\n  - name: r\n    use: {key}\n", Code.UNKNOWN_MODEL),
    (ROUTING, "rules:\n  - name: r\n    when: {{message_matches: '({key}'}}\n    use: haiku\n",
     Code.INVALID_REGEX),
    (ROUTING, "rules:\n  - name: r\n    when: {{estimated_input_tokens_gt: {key}}}\n"
     "    use: haiku\n", Code.INVALID_TYPE),
    (MODELS, "models:\n  anthropic:claude-haiku-4-5:\n    pricing: {{input: {key}}}\n",
     Code.INVALID_TYPE),
    (MODELS, "providers:\n  anthropic:\n    {key}: x\n", Code.UNKNOWN_KEY),
    (PROFILES, "profiles:\n  reviewer:\n    model: {key}\n", Code.UNKNOWN_MODEL),
]


@pytest.mark.parametrize("key", PASTED_KEYS)
@pytest.mark.parametrize(("kind", "template", "code"), PASTED_ELSEWHERE)
def test_a_key_pasted_into_any_other_value_is_reported_without_repeating_it(
        kind: FileKind, template: str, code: Code, key: str) -> None:
    text = template.format(key=key)
    found = problems(kind, text)
    problem = only(found, code)
    assert problem.range.start.line == span(text, key).start.line
    assert "[redacted]" in problem.message
    assert all(key not in repr(p) and key[:12] not in repr(p) for p in found), found


@pytest.mark.parametrize("name", ["claude-sonnet-4-5-20250929", "my_team_routing_rule_for_sql",
                                  "anthropic:claude-opus-4-7-preview-longname"])
def test_long_names_that_are_no_keys_are_still_quoted(name: str) -> None:
    problem = only(problems(ROUTING, f"global_default: {name}\n"), Code.UNKNOWN_MODEL)
    assert f"'{name}'" in problem.message
