"""Live diagnostics for routing.yaml and models.yaml, end to end through `switchman serve`."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind, check_text
from switchman.engine.config.problems import Code
from tests.engine.test_config_problems import LOCATED
from tests.support.editing import Editor, editing, with_code
from tests.support.lsp import CLIENTS

KIND_NAMES = {FileKind.ROUTING: "routing", FileKind.WORKSPACE: "workspace",
              FileKind.MODELS: "models", FileKind.PROFILES: "profiles",
              FileKind.WORKSPACE_PROFILES: "workspace-profiles"}

NO_PRICES = ("use_builtin_models: false\n"
             "providers: {local: {api: openai_compatible, api_key_env: null, "
             "base_url: 'http://127.0.0.1:9/v1'}}\n"
             "models: {local:free: {aliases: [free]}}\n")

# (kind, text, code, needle, occurrence, models.yaml to open first)
EDITOR_ONLY = [
    (FileKind.ROUTING, "rules:\n  - name: pictures\n    when: {has_images: true}\n"
     "    use: textonly\n", Code.NO_VISION_MODEL, "textonly", 1, None),
    (FileKind.ROUTING, "rules:\n  - name: gpt\n    when: {has_images: false}\n    use: gpt-5\n",
     Code.MISSING_API_KEY, "gpt-5", 1, None),
    (FileKind.WORKSPACE, "rules:\n  - name: gpt\n    use: openai:gpt-5-mini\n",
     Code.MISSING_API_KEY, "openai:gpt-5-mini", 1, None),
    (FileKind.ROUTING, "global_default: free\nrules:\n  - name: budget\n"
     "    when: {cost_today_exceeds_usd: 5}\n    use: free\n",
     Code.NO_COST_TRACKING, "cost_today_exceeds_usd", 1, NO_PRICES),
    (FileKind.ROUTING, "rules:\n  - when: {has_images: true}\n    use: opus\n",
     Code.UNNAMED_RULE, "when: {has_images: true}", 1, None),
    (FileKind.WORKSPACE, "rules:\n  - name: all\n    when:\n    use: haiku\n",
     Code.EMPTY_WHEN, "when", 1, None),
    (FileKind.PROFILES, "profiles:\n  reviewer:\n    skills: [python-style]\n",
     Code.UNKNOWN_SKILL, "python-style", 1, None),
    (FileKind.ROUTING, "tiers:\n  fast: [haiku, qwen]\n  balanced: sonnet\n  deep: opus\n"
     "  effort: {fast: low}\n", Code.EFFORT_UNSUPPORTED, "low", 1,
     "models: {ollama:qwen2.5-coder: {aliases: [qwen]}}\n"),
    (FileKind.ROUTING, "tiers:\n  fast: opus\n  balanced: opus\n  deep: haiku\n",
     Code.INVERTED_TIERS, "haiku", 1, None),
    (FileKind.ROUTING, "tiers:\n  fast: haiku\n  balanced: sonnet\n  deep: opus\n"
     "  complexity: {deep: {large: [haiku, opus]}}\n", Code.INVERTED_TIERS, "haiku", 2, None),
    (FileKind.PROFILES, "profiles:\n  architect:\n    tiers: {fast: opus, deep: haiku}\n",
     Code.INVERTED_TIERS, "haiku", 1, None),
]

# Codes whose exact range the engine tests pin down; here it must arrive unchanged.
ENGINE_LOCATED = [
    (FileKind.ROUTING, "rules:\n  - name: x\n\tuse: opus\n", Code.YAML_SYNTAX),
    (FileKind.ROUTING, "rules: " + "[" * 70 + "]" * 70 + "\n", Code.TOO_COMPLEX),
]

CASES = [(k, t, c, n, o, None) for k, t, c, n, o in LOCATED] + EDITOR_ONLY


# Only files read from disk can be unreadable, and only a file's place (a symbolic link) makes
# it lead out of its workspace; tests/cli and tests/lsp/test_hostile_files.py cover both end to
# end (the latter also in the editor). No text makes a check stop:
# tests/engine/test_check_process.py and tests/server/test_code_actions_off_loop.py end the
# check process during a check.
FILE_ONLY = {Code.UNREADABLE_FILE, Code.OUTSIDE_WORKSPACE, Code.CHECK_STOPPED}
POLICY_TEST_ONLY = {Code.DUPLICATE_CASE_NAME}
"""Codes of policy test files, which `switchman rules test` checks (the editor does not)."""


def test_every_code_has_an_end_to_end_case() -> None:
    covered = {case[2] for case in CASES} | {case[2] for case in ENGINE_LOCATED}
    assert covered | FILE_ONLY | POLICY_TEST_ONLY == set(Code)


async def expect_at(editor: Editor, uri: str, code: Code, expected: types.Range,
                    severity: types.DiagnosticSeverity | None = None) -> None:
    found = with_code(await editor.diagnostics(uri), code.value)
    if code is Code.MISSING_KEY:  # it underlines the whole first line of the mapping
        assert [d.range.start for d in found] == [expected.start], (code, found)
    else:
        assert [d.range for d in found] == [expected], (code, found)
    assert found[0].source == "switchman"
    assert severity is None or found[0].severity == severity


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_every_code_at_its_range_on_open_and_after_an_edit(
        editor_name: str, tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        for kind, text, code, needle, occurrence, models in CASES:
            uri = editor.uri(KIND_NAMES[kind])
            if models is not None:
                editor.open(editor.uri("models"), models)
            editor.open(uri, text)
            await expect_at(editor, uri, code, editor.range_of(uri, needle, occurrence))
            editor.insert(uri, 0, "#\n")  # moves everything one line down
            await expect_at(editor, uri, code, editor.range_of(uri, needle, occurrence))
            mark = editor.published()
            editor.close(uri)
            assert await editor.next_diagnostics(uri, mark) == []
            if models is not None:
                editor.close(editor.uri("models"))


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_syntax_and_nesting_problems_arrive_at_the_engines_range(
        editor_name: str, tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        for kind, text, code in ENGINE_LOCATED:
            [problem] = [p for p in check_text(kind, text, "routing.yaml", builtin_registry())
                         if p.code is code]
            editor.open(uri, text)
            rng = problem.range
            assert rng.start.line == rng.end.line  # ASCII text: UTF-16 columns are code points
            start = sum(len(line) + 1 for line in text.split("\n")[:rng.start.line])
            expected = editor.range_at(uri, start + rng.start.character,
                                       start + rng.end.character)
            await expect_at(editor, uri, code, expected, types.DiagnosticSeverity.Error)
            editor.close(uri)


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_diagnostics_clear_when_the_problem_is_fixed(editor_name: str,
                                                           tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        text = "global_default: sonnet\nrules:\n  - name: a\n    use: opsu\n"
        editor.open(uri, text)
        [problem] = await editor.diagnostics(uri)
        assert problem.code == "unknown-model"
        assert problem.severity == types.DiagnosticSeverity.Error
        assert problem.data == {"suggestions": ["opus"]}
        at = text.index("opsu")
        editor.edit(uri, at, at + 4, "opus")
        assert await editor.diagnostics(uri) == []


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_non_ascii_lines_get_columns_in_the_agreed_encoding(editor_name: str,
                                                                  tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        text = 'rules:\n  - {name: "🚀 café ünï", use: opsu}\n'
        editor.open(uri, text)
        [problem] = with_code(await editor.diagnostics(uri), "unknown-model")
        line = text.split("\n")[1]
        at = line.index("opsu")
        units = {"utf-16": at + 1, "utf-8": len(line[:at].encode()), "utf-32": at}
        assert problem.range.start == types.Position(1, units[editor.encoding])
        assert problem.range.end.character - problem.range.start.character == 4
        # The same after an edit earlier on the line, which shifts the columns.
        editor.insert(uri, text.index("café"), "🙂")
        [problem] = with_code(await editor.diagnostics(uri), "unknown-model")
        assert problem.range == editor.range_of(uri, "opsu")


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_a_model_removed_in_the_unsaved_models_yaml_is_flagged_in_routing_yaml(
        editor_name: str, tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        models, routing = editor.uri("models"), editor.uri("routing")
        defined = "models:\n  ollama:qwen:\n    aliases: [qwen]\n"
        editor.open(models, defined)
        editor.open(routing, "rules:\n  - name: local\n    use: qwen\n")
        assert await editor.diagnostics(routing) == []  # only the unsaved models.yaml has qwen
        mark = editor.published()
        editor.replace_all(models, "models:\n  ollama:qwen2:\n    aliases: [qwen2]\n")
        [problem] = await editor.next_diagnostics(routing, mark, bool)
        assert problem.code == "unknown-model"
        assert problem.range == editor.range_of(routing, "qwen")
        assert problem.data is not None
        assert problem.data["suggestions"][0] == "qwen2"
        # Typing in routing.yaml keeps checking against the unsaved models.yaml.
        editor.insert(routing, len(editor.texts[routing]) - 1, "2")
        assert await editor.diagnostics(routing) == []
        # Closing models.yaml without saving: the file on disk counts again.
        mark = editor.published()
        editor.close(models)
        [problem] = await editor.next_diagnostics(routing, mark, bool)
        assert problem.code == "unknown-model"


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_other_yaml_files_are_left_alone(editor_name: str, tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        other = (tmp_path / "elsewhere" / "routing.yaml").as_uri()
        editor.open(other, "rules: [nonsense\n")
        mine = editor.uri("routing")
        editor.open(mine, "global_default: opsu\n")
        assert with_code(await editor.diagnostics(mine), "unknown-model")
        assert other not in editor.client.diagnostics


async def test_a_routing_file_linked_from_a_dotfiles_folder_is_checked(tmp_path: Path) -> None:
    """The user's routing.yaml a symbolic link to ``dotfiles/switchman-routing.yaml`` (the daemon
    reads it through the link): the editor's path was resolved to the link's target, which is
    no configuration file by its name and place, so the open file was never checked."""
    dotfiles = tmp_path / "dotfiles" / "switchman-routing.yaml"
    dotfiles.parent.mkdir()
    dotfiles.write_text("global_default: sonnet\n", "utf-8")
    async with editing("visual-studio-code", tmp_path) as editor:
        (editor.config / "routing.yaml").symlink_to(dotfiles)
        mine = editor.uri("routing")
        editor.open(mine, "global_default: opsu\n")
        assert [d.code for d in await editor.diagnostics(mine)] == ["unknown-model"]


async def test_quick_changes_are_checked_once_after_the_pause(tmp_path: Path) -> None:
    async with editing("visual-studio-code", tmp_path, delay_ms=150) as editor:
        uri = editor.uri("routing")
        editor.open(uri, "global_default: sonnet\n")
        for char in "opsu":
            editor.insert(uri, len(editor.texts[uri]) - 1, char)
        [problem] = await editor.diagnostics(uri)
        assert problem.code == "unknown-model"
        published = editor.client.received[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
        versions = [p.version for p in published if p.uri == uri]
        assert versions == [5]


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_a_shadowed_rule_points_at_the_rule_that_shadows_it(editor_name: str,
                                                                  tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        text = ("rules:\n  - name: all images\n    when: {has_images: true}\n    use: opus\n"
                "  - name: big images\n    when: {has_images: true, estimated_input_tokens_gt: 9}\n"
                "    use: opus\n")
        editor.open(uri, text)
        [problem] = with_code(await editor.diagnostics(uri), "shadowed-rule")
        assert problem.range == editor.range_of(uri, "big images")
        assert problem.data == {"shadowed_by": "all images", "shadowed_by_line": 1}
        caps = editor.client.capabilities
        assert caps is not None and caps.text_document is not None
        publish = caps.text_document.publish_diagnostics
        if publish is not None and publish.related_information:
            [related] = problem.related_information or []
            assert related.location.uri == uri
            assert related.location.range == editor.range_of(uri, "- name: all images")
        else:
            assert problem.related_information is None
