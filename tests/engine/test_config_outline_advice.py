"""The outline, the advice warnings and the open-documents registry, on the engine side."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from switchman.engine import skills
from switchman.engine.config.builtin import builtin_models_values, builtin_registry
from switchman.engine.config.check import FileKind
from switchman.engine.config.models_file import check_models_text
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.skill_names import unknown_skills, unknown_skills_of_file
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.editing.advice import advise
from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.editing.outline import Symbol, SymbolKind, outline
from switchman.engine.keys import KeyRing
from switchman.engine.skills import KnownSkills, workspaces_below
from tests.conftest import range_from_str, span

ROUTING_TEXT = """\
global_default: sonnet
tiers:
  fast: haiku
  balanced: sonnet
  deep: opus
rules:
  - name: commits
    when: {message_matches: commit}
    use: haiku
  - use: opus
workspaces:
  ~/code/app:
    default: gpt-5
    rules:
      - name: sql
        use: gpt-5
"""


def tree(symbols: list[Symbol]) -> list[object]:
    return [(s.name, s.kind.value, s.detail, [tree(s.children)] if s.children else [])
            for s in symbols]


def test_outline_of_a_routing_file() -> None:
    symbols = outline(FileKind.ROUTING, parse_yaml(ROUTING_TEXT, "routing.yaml"))
    assert tree(symbols) == [
        ("global_default", "setting", "sonnet", []),
        ("tiers", "tiers", "", [[("fast", "tier", "haiku", []), ("balanced", "tier", "sonnet", []),
                                 ("deep", "tier", "opus", [])]]),
        ("rules", "rules", "2 rules", [[("commits", "rule", "→ haiku", []),
                                        ("rule_2", "rule", "→ opus", [])]]),
        ("workspaces", "workspaces", "", [[("~/code/app", "workspace", "", [[
            ("default", "setting", "gpt-5", []),
            ("rules", "rules", "1 rule", [[("sql", "rule", "→ gpt-5", [])]])]])]]),
    ]
    commits = symbols[2].children[0]
    assert commits.range == range_from_str("6:4-8:14")
    assert commits.selection_range == span(ROUTING_TEXT, "commits")
    assert symbols[2].children[1].selection_range == range_from_str("9:4-9:13")


def test_outline_of_models_yaml() -> None:
    text = ("providers:\n  local: {api: openai_compatible, base_url: 'http://127.0.0.1:1/v1'}\n"
            "models:\n  local:coder:\n    aliases: [coder, c]\n")
    symbols = outline(FileKind.MODELS, parse_yaml(text, "models.yaml"))
    assert tree(symbols) == [
        ("providers", "providers", "", [[("local", "provider", "openai_compatible API", [])]]),
        ("models", "models", "", [[("local:coder", "model", "coder, c", [])]]),
    ]
    assert symbols[1].children[0].kind is SymbolKind.MODEL


def test_no_outline_for_broken_yaml() -> None:
    assert outline(FileKind.ROUTING, parse_yaml("rules: [\n", "routing.yaml")) == []


def advice(text: str, environ: dict[str, str] | None = None) -> list[Problem]:
    return advise(FileKind.ROUTING, parse_yaml(text, "routing.yaml"), builtin_registry(),
                  KeyRing(environ if environ is not None else {"ANTHROPIC_API_KEY": "x",
                                                               "OPENAI_API_KEY": "y"}))


def test_rules_whose_provider_has_no_key_are_flagged_at_their_model() -> None:
    text = "rules:\n  - name: a\n    use: gpt-5\n  - name: b\n    use: haiku\n"
    [problem] = advice(text, {"ANTHROPIC_API_KEY": "x"})
    assert (problem.code, problem.severity) == (Code.MISSING_API_KEY, Severity.WARNING)
    assert problem.range == span(text, "gpt-5")
    assert "OPENAI_API_KEY" in problem.message


def test_a_missing_key_names_the_key_file_too() -> None:
    """QA: with ``api_key_file`` in models.yaml, the warning said only "set ANTHROPIC_API_KEY"."""
    builtin = builtin_registry()
    providers = {**builtin.providers, "anthropic": msgspec.structs.replace(
        builtin.providers["anthropic"], api_key_file="~/.config/switchman/anthropic.key")}
    text = "rules:\n  - name: a\n    use: haiku\n"
    [problem] = advise(FileKind.ROUTING, parse_yaml(text, "routing.yaml"),
                       ModelRegistry(providers, builtin.models.values()), KeyRing({}))
    assert "set ANTHROPIC_API_KEY or the key file ~/.config/switchman/anthropic.key where" in \
        problem.message
    assert "Until then anthropic:claude-haiku-4-5 is rejected (not_configured)" in problem.message
    assert problem.data == {"provider": "anthropic", "key_source": "ANTHROPIC_API_KEY"}


def test_image_rules_need_a_vision_model_only_when_images_are_certain() -> None:
    registry, _ = check_models_text(
        "models:\n  anthropic:claude-haiku-4-5: {capabilities: {supports_images: false}}\n",
        "models.yaml", builtin_models_values())
    assert registry is not None
    text = ("rules:\n  - name: a\n    when: {all_of: [{has_images: true}]}\n    use: haiku\n"
            "  - name: b\n    when: {any_of: [{has_images: true}, {message_matches: x}]}\n"
            "    use: haiku\n")
    found = advise(FileKind.ROUTING, parse_yaml(text, "routing.yaml"), registry,
                   KeyRing({"ANTHROPIC_API_KEY": "x"}))
    assert [(p.code, p.range) for p in found] == [(Code.NO_VISION_MODEL, span(text, "haiku"))]


def test_budget_rules_without_any_prices_are_flagged() -> None:
    registry, _ = check_models_text(
        "use_builtin_models: false\nproviders: {p: {api: openai_compatible}}\n"
        "models: {p:m: {}}\n", "models.yaml", None)
    assert registry is not None
    text = "rules:\n  - name: a\n    when: {not: {cost_today_exceeds_usd: 2}}\n    use: p:m\n"
    [problem] = advise(FileKind.ROUTING, parse_yaml(text, "routing.yaml"), registry, KeyRing({}))
    assert problem.code is Code.NO_COST_TRACKING
    assert problem.range == span(text, "cost_today_exceeds_usd")


def test_unnamed_rules_get_a_hint_with_a_suggested_name() -> None:
    [problem] = advice("rules:\n  - use: haiku\n    when: {has_images: true}\n")
    assert (problem.code, problem.severity) == (Code.UNNAMED_RULE, Severity.HINT)
    assert problem.data == {"synthetic_name": "rule_1", "suggested_name": "haiku for has_images"}


@pytest.mark.parametrize("when", ["when:", "when: null", "when: ~  # all"])
def test_an_empty_when_says_it_matches_every_turn(when: str) -> None:
    """`when:` with nothing after it is documented to match every turn, and the rules
    below it are then only fallbacks: without a word, a condition forgotten there went
    unnoticed. `when: {}` (or no `when`) says it on purpose."""
    text = f"rules:\n  - name: a\n    {when}\n    use: haiku\n"
    [problem] = advice(text)
    assert (problem.code, problem.severity) == (Code.EMPTY_WHEN, Severity.INFORMATION)
    assert problem.range == span(text, "when")
    assert "matches every turn" in problem.message and "when: {}" in problem.message
    for deliberate in ("when: {}", "description: catch-all"):
        assert advice(f"rules:\n  - name: a\n    {deliberate}\n    use: haiku\n") == []


def test_alias_bombs_do_not_stall_advice() -> None:
    lines = ["x0: &a0 {message_matches: x}"]
    lines += [f"x{i}: &a{i} {{all_of: [*a{i - 1}, *a{i - 1}]}}" for i in range(1, 40)]
    text = "\n".join(lines) + "\nrules:\n  - name: r\n    when: *a39\n    use: opus\n"
    assert advice(text) == []


def test_routing_files_are_checked_against_the_unsaved_models_yaml(tmp_path: Path) -> None:
    documents = ConfigDocuments(tmp_path, {"ANTHROPIC_API_KEY": "x"})
    routing, models = tmp_path / "routing.yaml", tmp_path / "models.yaml"
    documents.update(models, "models:\n  ollama:qwen: {aliases: [qwen]}\n")
    assert documents.update(routing, "global_default: qwen\n") == [routing]
    analysis = documents.check(routing)
    assert analysis is not None and analysis.problems == []
    assert documents.update(models, "models: {}\n") == [models, routing]
    analysis = documents.check(routing)
    assert analysis is not None
    assert [p.code for p in analysis.problems] == [Code.UNKNOWN_MODEL]
    # While models.yaml is broken, its last valid version counts.
    documents.update(models, "models:\n  ollama:qwen: {aliases: [qwen]}\n")
    documents.update(models, "models: [\n")
    analysis = documents.check(routing)
    assert analysis is not None and analysis.problems == []
    assert documents.close(models) == [routing]


def test_only_switchmans_own_files_are_checked(tmp_path: Path) -> None:
    documents = ConfigDocuments(tmp_path / "config", {})
    assert documents.kind_of(tmp_path / "config" / "routing.yaml") is FileKind.ROUTING
    assert documents.kind_of(tmp_path / "config" / "models.yaml") is FileKind.MODELS
    assert documents.kind_of(tmp_path / "repo" / ".switchman" / "routing.yaml") \
        is FileKind.WORKSPACE
    assert documents.kind_of(tmp_path / "repo" / "routing.yaml") is None
    assert documents.kind_of(tmp_path / "repo" / "models.yaml") is None
    assert documents.kind_of(tmp_path / "config" / "other.yaml") is None
    assert documents.update(tmp_path / "repo" / "routing.yaml", "x: 1") == []


def test_skill_names_are_read_again_only_when_a_skill_file_changes(tmp_path: Path) -> None:
    """Checked at every keystroke, a file naming a skill costs a walk of stats: the skill
    files are read when one is added, changed or removed, not on every check."""
    config, workspace = tmp_path / "config", tmp_path / "app"
    skills = workspace / ".switchman" / "skills"
    skills.mkdir(parents=True)
    skill = skills / "a.md"
    skill.write_text("---\nname: alpha\n---\n", "utf-8")
    known = KnownSkills()
    assert known.names(config, [workspace]) == {"alpha"}
    stat = skill.stat()
    skill.write_text("---\nname: omega\n---\n", "utf-8")  # same size, same time: not read
    os.utime(skill, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert known.names(config, [workspace]) == {"alpha"}
    (skills / "b.md").write_text("---\nname: beta\n---\n", "utf-8")
    assert known.names(config, [workspace]) == {"omega", "beta"}


def test_unknown_skills_are_not_looked_up_in_a_file_that_names_none() -> None:
    def never(config: Path, workspaces: Sequence[Path]) -> frozenset[str]:
        raise AssertionError("the skill folders were read")

    text = "rules:\n  - name: a\n    when: {message_matches: x}\n    use: opus\n"
    assert unknown_skills(FileKind.ROUTING, parse_yaml(text, "routing.yaml"), never,
                          Path("config"), []) == []


def test_a_workspace_blocks_rules_name_that_folders_skills(tmp_path: Path) -> None:
    """A rule inside a `workspaces: {/path: …}` block of the user's routing.yaml applies to
    that folder only, so it can name the user's skills and that folder's, not those of the
    folders open in the editor (a skill of the block's folder was reported unknown, and one
    of another folder's was taken as known)."""
    config = tmp_path / "config"
    for folder, name in ((config / "skills", "house-style"),
                         (tmp_path / "billing" / ".switchman" / "skills", "ledger"),
                         (tmp_path / "app" / ".switchman" / "skills", "frontend")):
        folder.mkdir(parents=True)
        (folder / f"{name}.md").write_text(f"---\nname: {name}\ndescription: x\n---\n",
                                           "utf-8")
    text = (f"global_default: opus\nworkspaces:\n  {tmp_path / 'billing'}:\n    rules:\n"
            "      - name: a\n        when: {skills_matching_message_includes: "
            "[ledger, house-style, frontend]}\n        use: opus\n"
            "rules:\n  - name: b\n    when: {skills_matching_message_includes: "
            "[frontend, ledger]}\n    use: opus\n")
    path = config / "routing.yaml"
    found = unknown_skills_of_file(path, FileKind.ROUTING, parse_yaml(text, str(path)), config,
                                   tmp_path / "app")
    billing = tmp_path / "billing" / ".switchman" / "skills"
    assert [(p.range.start.line, p.message.split(",")[0]) for p in found] == [
        (5, f"No skill named 'frontend' in {config / 'skills'} or {billing}"),
        (9, f"No skill named 'ledger' in {config / 'skills'} or "
            f"{tmp_path / 'app' / '.switchman' / 'skills'}")]
    # a block keyed on a folder above the open one applies to it too, with its skills, and
    # to the folders below it that are not open (billing's ledger was flagged)
    above = (f"global_default: opus\nworkspaces:\n  {tmp_path}:\n    rules:\n"
             "      - name: a\n        when: {skills_matching_message_includes: "
             "[frontend, ledger, payroll]}\n        use: opus\n")
    found = unknown_skills_of_file(path, FileKind.ROUTING, parse_yaml(above, str(path)),
                                   config, tmp_path / "app")
    assert [p.message.split(" in ")[0] for p in found] == ["No skill named 'payroll'"]
    assert str(tmp_path / "app" / ".switchman" / "skills") in found[0].message
    assert str(billing) in found[0].message


def test_a_blocks_folders_below_it_are_found_within_bounds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The folders with skills below a `workspaces:` block's folder, open or not, are found by
    a walk that stays small: three levels down, no hidden folder, no link, not into a
    repository; its answer is
    reused for a while (the check runs at every keystroke)."""
    for below in ("a", "b/c", "d/e/f", "p/q/r/s", ".hidden/x", "outside/y", "a/inner",
                  "git/sub"):
        (tmp_path / below / ".switchman" / "skills").mkdir(parents=True)
    (tmp_path / "git" / ".git").mkdir()  # a repository's inner folders are not workspaces
    (tmp_path / "link").symlink_to(tmp_path / "outside")
    (tmp_path / ".switchman" / "skills").mkdir(parents=True)  # the block's own: not "below"
    assert workspaces_below(tmp_path) == (tmp_path / "a", tmp_path / "b" / "c",
                                          tmp_path / "outside" / "y", tmp_path / "d" / "e" / "f")
    # (outside/y once: the link to outside/ is not entered)
    (tmp_path / "n" / ".switchman" / "skills").mkdir(parents=True)
    assert tmp_path / "n" not in workspaces_below(tmp_path)  # reused
    monkeypatch.setattr(skills, "BELOW_SECONDS", 0.0)
    assert tmp_path / "n" in workspaces_below(tmp_path)
    monkeypatch.setattr(skills, "BELOW_MAX_FOLDERS", 1)  # only the folder itself is listed
    assert workspaces_below(tmp_path) == ()


def test_an_unknown_skill_names_five_folders_searched_at_most(tmp_path: Path) -> None:
    """A block keyed on a folder of many repositories searched each: the message names the
    first ones and counts the rest."""
    for index in range(6):
        (tmp_path / f"repo{index}" / ".switchman" / "skills").mkdir(parents=True)
    text = (f"workspaces:\n  {tmp_path}:\n    rules:\n      - name: a\n"
            "        when: {skills_matching_message_includes: [nosuch]}\n        use: opus\n")
    config = tmp_path / ".config"
    [found] = unknown_skills_of_file(config / "routing.yaml", FileKind.ROUTING,
                                     parse_yaml(text, "routing.yaml"), config, tmp_path / "x")
    assert f"{tmp_path / 'repo0' / '.switchman' / 'skills'} or 5 more skills folders," \
        in found.message
