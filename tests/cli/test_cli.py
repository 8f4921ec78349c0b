"""The ``switchman`` CLI: rules check / show / test, route, models."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from switchman.server.cli import build_parser, main
from tests.support.hostile_files import (
    CONFIG_FOLDER_NAMINGS,
    REASONS,
    TRAPS,
    dot_switchman_config,
    make_trap,
)

POLICY_DIR = Path(__file__).parent.parent / "policy"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code, out = run(capsys, *args, "--json")
    return code, json.loads(out)


# -- rules test ----------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(POLICY_DIR.glob("*.test.yaml")), ids=lambda p: p.name)
def test_spec_worked_examples_pass(path: Path, capsys: pytest.CaptureFixture[str],
                                   config_dir: Path) -> None:
    code, results = run_json(capsys, "rules", "test", str(path))
    assert [r["failures"] for r in results if not r["passed"]] == []
    assert code == 0
    for result in results:
        assert set(result) >= {"name", "passed", "decision", "error"}
        if result["decision"] is not None:
            assert result["decision"]["type"] == "route.decided"


def test_a_failing_case_exits_1_and_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             config_dir: Path) -> None:
    shutil.copy(POLICY_DIR / "section8.routing.yaml", tmp_path)
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text("routing: section8.routing.yaml\ncases:\n  - name: wrong\n"
                         "    message: /commit x\n    expect: {model: opus}\n", "utf-8")
    code, out = run(capsys, "rules", "test", str(test_file))
    assert code == 1
    assert "FAIL  wrong" in out
    assert "expected model anthropic:claude-opus-4-7, got anthropic:claude-haiku-4-5" in out
    assert out.strip().endswith("0 passed, 1 failed")


@pytest.mark.parametrize("given", ['"25:99"', '"noon"', '"7"', "-1"])
def test_a_local_time_that_is_no_time_of_day_is_a_located_problem(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], config_dir: Path,
        given: str) -> None:
    """`context: {local_time: "25:99"}` ended `rules test` with a traceback (ValueError)."""
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text("cases:\n  - name: late\n    message: hi\n"
                         f"    context: {{local_time: {given}}}\n"
                         "    expect: {model: sonnet}\n", "utf-8")
    code, out = run(capsys, "rules", "test", str(test_file))
    assert code == 2
    assert f"{test_file}:4:27: error [invalid-value] '{given.strip(chr(34))}' is not a time " \
        "of day; use 24-hour HH:MM." in out


def test_an_empty_message_fails_a_policy_test_as_the_chat_refuses_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], config_dir: Path) -> None:
    """`message: ""` was routed to the global default, so `expect: {error: empty_message}`
    (a documented error) could never pass; the chat and `switchman route` refuse it."""
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text(
        "cases:\n"
        "  - {name: empty, message: '', expect: {error: empty_message}}\n"
        "  - {name: blank, message: '   ', expect: {error: empty_message}}\n"
        "  - {name: alias only, message: '@haiku ', expect: {error: empty_message}}\n"
        "  - {name: an image alone, message: '', context: {has_images: true},\n"
        "     expect: {model: sonnet}}\n", "utf-8")
    code, results = run_json(capsys, "rules", "test", str(test_file))
    assert [(r["name"], r["failures"]) for r in results if not r["passed"]] == []
    assert code == 0
    assert results[0]["error"] == {"code": "empty_message",
                                   "message": "Nothing to send: the message is empty."}


def test_two_cases_with_one_name_are_refused_located(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    config_dir: Path) -> None:
    """Two cases named alike printed "PASS dup" twice, and a failure could not be told from
    the other: the second name is an error, located, as a rule's is in routing.yaml."""
    shutil.copy(POLICY_DIR / "section8.routing.yaml", tmp_path)
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text("routing: section8.routing.yaml\ncases:\n  - name: dup\n"
                         "    message: /commit x\n    expect: {model: haiku}\n"
                         "  - name: dup\n    message: hi\n    expect: {model: sonnet}\n",
                         "utf-8")
    code, out = run(capsys, "rules", "test", str(test_file))
    assert code == 2
    assert (f"{test_file}:6:11: error [duplicate-case-name] Another case above is already "
            "named 'dup'; case names must be unique so the report can tell them apart.") in out
    assert "PASS" not in out


def test_an_invalid_test_file_with_json_prints_its_problems_as_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], config_dir: Path) -> None:
    """``rules test --json`` on a file with a YAML error printed the text report, which a CI
    step reading the JSON could not parse; now the problems as ``rules check --json`` has
    them."""
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text('cases:\n  - name: x\n    message: "hi\n', "utf-8")
    code, out = run_json(capsys, "rules", "test", str(test_file))
    assert code == 2
    assert [(p["file"], p["severity"], p["code"]) for p in out] == [
        (str(test_file), "error", "yaml-syntax")]


def test_a_model_an_expectation_names_must_exist(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                config_dir: Path) -> None:
    """A typo in `expect: {model: …}` could only fail its case (exit 1, "expected model
    opsu"), never pass: it is an invalid file, located, with the closest name offered."""
    shutil.copy(POLICY_DIR / "section8.routing.yaml", tmp_path)
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text("routing: section8.routing.yaml\ncases:\n  - name: typo\n"
                         "    message: /commit x\n    expect: {model: haiuk}\n"
                         "  - name: chain\n    message: hi\n"
                         "    expect: {chain: [{model: 'anthropic:claude-sonet-4-6'}]}\n", "utf-8")
    code, out = run(capsys, "rules", "test", str(test_file))
    assert code == 2
    assert f"{test_file}:5:21: error [unknown-model] Unknown model 'haiuk'. Did you mean 'haiku'?" \
        in out
    assert f"{test_file}:8:30: error [unknown-model] Unknown model 'anthropic:claude-sonet-4-6'" \
        in out
    assert "FAIL" not in out
    test_file.write_text("routing: section8.routing.yaml\ncases:\n  - name: alias\n"
                         "    message: /commit x\n    expect: {model: haiku}\n", "utf-8")
    code, results = run_json(capsys, "rules", "test", str(test_file))
    assert (code, [r["passed"] for r in results]) == (0, [True])


def test_the_models_a_case_names_must_exist(tmp_path: Path, config_dir: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A case's inputs name models too: a misspelt sticky model, planner, pattern model,
    `@alias`, outage or provider tested something else than meant (a sticky model that is
    no model is rejected and the turn falls through; the case could pass), and an expected
    model whose provider the case leaves unconfigured could never be chosen."""
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text(
        "cases:\n"
        "  - {name: a, message: hi, sticky: opsu, expect: {model: opus}}\n"
        "  - {name: b, message: hi, delegate_tier: fast, planner: sonet, expect: {tier: fast}}\n"
        "  - name: c\n"
        "    message: hi\n"
        "    pattern: {model: haiuk, confidence: 0.9, sample_size: 30}\n"
        "    expect: {policy: PATTERN_RECOMMENDATION}\n"
        "  - {name: d, message: '@haiku4 hello', expect: {model: haiku}}\n"
        "  - {name: e, message: '@haiku4 hello', expect: {error: unknown_alias}}\n"
        "  - {name: f, message: hi, unavailable: [antropic, opsu], expect: {model: sonnet}}\n"
        "  - {name: g, message: hi, configured: [openai, antropic], expect: {model: gpt-5}}\n"
        "  - {name: h, message: hi, configured: [openai], expect: {model: sonnet}}\n",
        "utf-8")
    code, out = run(capsys, "rules", "test", str(test_file))
    assert code == 2, out
    expected = [
        "2:36: error [unknown-model] Unknown model 'opsu'. Did you mean 'opus'?",
        "3:58: error [unknown-model] Unknown model 'sonet'. Did you mean 'sonnet'?",
        "6:22: error [unknown-model] Unknown model 'haiuk'. Did you mean 'haiku'?",
        "8:24: error [unknown-model] Unknown model alias '@haiku4': this case stops with "
        "unknown_alias. Did you mean @haiku?",
        "10:42: error [unknown-model] 'antropic' is neither a model nor a provider. Did you "
        "mean 'anthropic'?",
        "10:52: error [unknown-model] 'opsu' is neither a model nor a provider. Did you mean "
        "'opus'?",
        "11:49: error [unknown-provider] Unknown provider 'antropic'. Did you mean "
        "'anthropic'?",
        "12:66: error [invalid-value] This case expects anthropic:claude-sonnet-4-6, but its "
        "provider anthropic is not in the case's 'configured' list, so it can never be chosen.",
    ]
    for line in expected:
        assert f"{test_file}:{line}" in out
    assert out.count("error [") == len(expected), out
    assert "FAIL" not in out


def test_an_invalid_test_file_gets_located_problems(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text("cases:\n  - name: x\n    mesage: hi\n    expect: {model: opus}\n")
    code, out = run(capsys, "rules", "test", str(test_file))
    assert code == 2
    assert f"{test_file}:3:5: error [unknown-key]" in out


@pytest.mark.parametrize(("text", "where", "expected"), [
    ("", "1:1", "error [missing-key] This policy test file is empty: it needs 'cases'"),
    ("# cases to come\n", "1:1", "error [missing-key] This policy test file is empty"),
    ("cases:\n  - null\n", "2:5", "error [missing-key] This case needs a 'message' key."),
    ("cases:\n  - {name: a, message: hi}\n", "2:5",  # was "a 'expect' key: What should happen."
     "error [missing-key] This case needs an 'expect' key: what should happen."),
    ("cases:\n  - {name: a, message: hi, expect: null}\n", "2:28",
     "error [missing-key] This case's 'expect' checks nothing: give at least one of model,"),
    ("cases:\n  - name: a\n    message: hi\n    expect: {}\n", "4:5",
     "error [missing-key] This case's 'expect' checks nothing"),
])
def test_a_test_file_with_nothing_to_run_or_check_is_invalid(
        text: str, where: str, expected: str, tmp_path: Path, config_dir: Path) -> None:
    test_file = tmp_path / "t.test.yaml"
    test_file.write_text(text, "utf-8")
    done = subprocess.run([sys.executable, "-m", "switchman.server.cli", "rules", "test",
                           str(test_file)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{test_file}:{where}: {expected}" in done.stdout


def test_a_test_or_profiles_file_checked_as_routing_says_what_it_is(
        tmp_path: Path, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    test_file = tmp_path / "policy.test.yaml"
    test_file.write_text("cases:\n  - {name: a, message: hi, expect: {model: haiku}}\n")
    profiles = tmp_path / "my-profiles.yaml"
    profiles.write_text("profiles:\n  r: {tier: deep}\n")
    code, out = run(capsys, "rules", "check", str(test_file), str(profiles))
    assert code == 1
    assert f"{test_file}:1:1: error [unknown-key] 'cases' is the key of a policy test file, " \
        "which is run with 'switchman rules test FILE'" in out
    assert f"{profiles}:1:1: error [unknown-key] 'profiles' belongs in profiles.yaml, not " \
        "routing.yaml." in out
    assert "Did you mean 'rules'?" not in out


def test_a_null_rule_is_a_rule_without_its_model(tmp_path: Path, config_dir: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "routing.yaml"
    path.write_text("rules:\n  - null\n  - {name: x, use: haiku}\n", "utf-8")
    code, out = run(capsys, "rules", "check", str(path))
    assert code == 1
    assert f"{path}:2:5: error [missing-key] This rule needs a 'use' key" in out


# -- rules check ---------------------------------------------------------------------


def test_check_json_prints_lsp_shaped_diagnostics(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  config_dir: Path) -> None:
    path = tmp_path / "routing.yaml"
    path.write_text("global_default: opsu\n", "utf-8")
    code, diagnostics = run_json(capsys, "rules", "check", str(path))
    assert code == 1
    assert diagnostics == [{
        "file": str(path),
        "range": {"start": {"line": 0, "character": 16}, "end": {"line": 0, "character": 20}},
        "severity": "error",
        "code": "unknown-model",
        "message": diagnostics[0]["message"],
        "source": "switchman",
        "data": {"suggestions": ["opus"]},
    }]


def test_check_warns_of_a_skill_name_that_no_skill_has(tmp_path: Path, config_dir: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """As the editor does: a rule or profile naming a skill the skills folders lack gets a
    located warning naming the folders and the known skills (the file is still valid)."""
    skills = config_dir / "skills"
    skills.mkdir()
    (skills / "design.md").write_text("---\nname: system_design\ndescription: x\n---\n",
                                      "utf-8")
    workspace = tmp_path / "app"
    (workspace / ".switchman" / "skills").mkdir(parents=True)
    (workspace / ".switchman" / "skills" / "db.md").write_text(
        "---\nname: db-migrations\ndescription: y\n---\n", "utf-8")
    (config_dir / "routing.yaml").write_text(
        "rules:\n  - name: a\n    when: {any_of: [{skills_matching_message_includes: "
        "sytem_design}]}\n    use: opus\n", "utf-8")
    profiles = workspace / ".switchman" / "profiles.yaml"
    profiles.write_text("profiles:\n  reviewer:\n    skills: [db-migrations, db-migration]\n",
                        "utf-8")
    code, out = run(capsys, "rules", "check", "--workspace", str(workspace))
    assert code == 0, out
    assert (f"{config_dir / 'routing.yaml'}:3:56: warning [unknown-skill] No skill named "
            f"'sytem_design' in {skills} or {workspace / '.switchman' / 'skills'}, so this "
            "condition never matches for it. Did you mean 'system_design'? Known skills: "
            "system_design, db-migrations.") in out
    assert f"{profiles}:3:29: warning [unknown-skill] No skill named 'db-migration'" in out
    assert out.count("unknown-skill") == 2


def test_a_config_folder_that_is_a_file_is_an_error_not_ok(
        tmp_path: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # SWITCHMAN_CONFIG_DIR naming the routing file instead of its folder: nothing of the
    # user's is read, which "No configuration files found ... ok" hid
    wrong = config_dir / "routing.yaml"
    wrong.write_text("global_default: haiku\n", "utf-8")
    monkeypatch.setenv("SWITCHMAN_CONFIG_DIR", str(wrong))
    code, out = run(capsys, "rules", "check", "--workspace", str(tmp_path))
    assert code == 1
    assert out.startswith(f"{wrong}:1:1: error [unreadable-file] The configuration folder is "
                          "not a folder, so your models.yaml, routing.yaml and profiles.yaml "
                          "cannot be read from it")
    assert "point SWITCHMAN_CONFIG_DIR at the folder that holds them" in out
    main(["route", "hi", "--assume-configured", "--workspace", str(tmp_path)])
    assert f"Note: {wrong}: The configuration folder is not a folder" in capsys.readouterr().err
    monkeypatch.setenv("SWITCHMAN_CONFIG_DIR", str(tmp_path / "not-made-yet"))
    assert run(capsys, "rules", "check", "--workspace", str(tmp_path)) == (
        0, "No configuration files found; the built-in defaults are in use. ok\n")


def test_check_defaults_to_user_and_workspace_files(tmp_path: Path, config_dir: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (config_dir / "routing.yaml").write_text("global_default: haiku\n", "utf-8")
    workspace = tmp_path / "proj"
    (workspace / ".switchman").mkdir(parents=True)
    (workspace / ".switchman" / "routing.yaml").write_text("base_url: http://x\n", "utf-8")
    code, out = run(capsys, "rules", "check", "--workspace", str(workspace))
    assert code == 0  # a warning does not fail the check
    assert "warning [untrusted-setting]" in out
    assert str(config_dir / "routing.yaml") in out


def test_check_includes_profile_files_and_bounds_a_workspaces_by_the_users(
        tmp_path: Path, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (config_dir / "profiles.yaml").write_text(
        "default: reader\nprofiles:\n  reader: {tools: [read_file]}\n", "utf-8")
    workspace = tmp_path / "proj"
    (workspace / ".switchman").mkdir(parents=True)
    (workspace / ".switchman" / "profiles.yaml").write_text(
        "profiles:\n  reader: {tools: [read_file, run_command]}\n", "utf-8")
    code, out = run(capsys, "rules", "check", "--workspace", str(workspace))
    assert code == 0  # narrowing is a warning
    assert "cannot add 'run_command': your profile 'reader' does not allow it" in out
    assert str(workspace / ".switchman" / "profiles.yaml") + ":2:" in out


def test_route_with_a_profile_without_tools_can_choose_a_tool_less_model(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The dry run reckons the tools as the chat does: under a profile that offers none, a
    model with ``supports_tools: false`` may take the turn."""
    (config_dir / "models.yaml").write_text(
        "models:\n  ollama:tiny:\n    aliases: [tiny]\n    capabilities: "
        "{max_context_tokens: 8000, supports_tools: false}\n", "utf-8")
    (config_dir / "profiles.yaml").write_text("profiles:\n  chat: {tools: []}\n", "utf-8")
    code, result = run_json(capsys, "route", "@tiny hi", "--assume-configured", "--profile",
                            "chat")
    assert code == 0 and result["decision"]["chosen_model"] == "ollama:tiny"
    code, result = run_json(capsys, "route", "@tiny hi", "--assume-configured")
    assert code == 0 and result["decision"]["chosen_model"] != "ollama:tiny"
    assert result["decision"]["chain"][0]["validation_failure"] == "no_tool_support"


def test_route_with_a_profile_uses_its_default_model(config_dir: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (config_dir / "profiles.yaml").write_text(
        "profiles:\n  quick: {model: haiku}\n  deep: {tier: deep}\n", "utf-8")
    code, result = run_json(capsys, "route", "hello", "--assume-configured", "--profile", "quick")
    assert code == 0 and result["decision"]["chosen_model"] == "anthropic:claude-haiku-4-5"
    assert result["decision"]["profile"] == {"name": "quick", "resolved_from": "session"}
    code, out = run(capsys, "route", "hello", "--assume-configured", "--profile", "deep")
    assert "Profile: deep (chosen for this session)" in out
    assert 'profile "deep" (from session): default tier deep' in out
    code, result = run_json(capsys, "route", "hello", "--profile", "qiuck")
    assert code == 1 and result["error"]["code"] == "unknown_profile"
    assert "Did you mean 'quick'? Known profiles: quick, deep, default, subagent." in \
        result["error"]["message"]


def test_a_profiles_effort_a_model_cannot_take_is_noted_in_the_chain(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A worker's chain noted an effort its model could not take; a top-level turn's dropped
    the profile's effort without a word, whichever slot chose the model."""
    (config_dir / "models.yaml").write_text(
        "models:\n  ollama:qwen2.5-coder: {aliases: [qwen]}\n", "utf-8")
    (config_dir / "profiles.yaml").write_text(
        "profiles:\n  cheap: {model: qwen, effort: high}\n", "utf-8")
    note = "reasoning effort high ignored: ollama:qwen2.5-coder has no reasoning-effort setting"
    for message in ("hello", "@qwen hello"):
        code, result = run_json(capsys, "route", message, "--assume-configured", "--profile",
                                "cheap")
        decision = result["decision"]
        assert code == 0 and decision["chosen_model"] == "ollama:qwen2.5-coder"
        assert decision["chain"][decision["winner_index"]]["reason"].endswith(f"; {note}")
    code, result = run_json(capsys, "route", "@opus hello", "--assume-configured", "--profile",
                            "cheap")  # Opus takes it: nothing to note
    assert "reasoning effort" not in json.dumps(result["decision"]["chain"])


def test_check_of_clean_files_says_ok(tmp_path: Path, config_dir: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = config_dir / "models.yaml"
    path.write_text("models:\n  ollama:qwen2.5-coder: {aliases: [qwen]}\n", "utf-8")
    code, out = run(capsys, "rules", "check", str(path))
    assert (code, out.strip()) == (0, f"ok: {path}")


def test_routing_file_is_checked_against_the_models_file_beside_it(
        tmp_path: Path, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "models.yaml").write_text("models:\n  ollama:qwen: {aliases: [qwen]}\n")
    (tmp_path / "routing.yaml").write_text("global_default: qwen\n")
    code, _ = run(capsys, "rules", "check", str(tmp_path / "routing.yaml"))
    assert code == 0


# -- rules show ----------------------------------------------------------------------


def test_show_lists_rules_with_synthetic_names(tmp_path: Path, config_dir: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (config_dir / "routing.yaml").write_text(
        "rules:\n  - when: {has_images: true}\n    use: opus\n  - name: sql\n"
        "    when: {file_extensions_in_context: [sql]}\n    use: gpt-5\n", "utf-8")
    code, shown = run_json(capsys, "rules", "show", "--workspace", str(tmp_path))
    assert code == 0
    assert [(r["name"], r["synthetic_name"], r["when"]) for r in shown["rules"]] == [
        ("rule_1", True, "has_images true"),
        ("sql", False, "file_extensions_in_context [.sql]"),
    ]
    code, out = run(capsys, "rules", "show", "--workspace", str(tmp_path))
    assert "1. rule_1: has_images true -> anthropic:claude-opus-4-7" in out


@pytest.mark.parametrize("routing", [None, "global_default: sonnet\n"])
def test_show_marks_built_in_rules_as_built_in(tmp_path: Path, config_dir: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               routing: str | None) -> None:
    """A routing.yaml without ``rules`` keeps the built-in ones: each was listed at
    ``<builtin routing.yaml>:1``, a line nobody could find them at."""
    if routing is not None:
        (config_dir / "routing.yaml").write_text(routing, "utf-8")
    code, out = run(capsys, "rules", "show", "--workspace", str(tmp_path))
    listed = [line for line in out.splitlines() if line.startswith("  1. ")]
    assert code == 0 and listed[0].startswith("  1. fast for commits: ")
    assert listed[0].endswith("   (built-in)") and ":1)" not in out
    code, shown = run_json(capsys, "rules", "show", "--workspace", str(tmp_path))
    first = shown["rules"][0]
    assert first["source"] == "<builtin routing.yaml>"
    assert first["line"] == (None if routing else 19)  # a real line of the built-in file


# -- route ---------------------------------------------------------------------------


def test_route_prints_the_decision_and_chain(config_dir: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "route", "write a commit message", "--assume-configured")
    assert code == 0
    assert 'Chose: anthropic:claude-haiku-4-5 (rule "fast for commits")' in out
    code, result = run_json(capsys, "route", "@opus hello", "--assume-configured")
    assert result["message"] == "hello"
    assert result["decision"]["chosen_model"] == "anthropic:claude-opus-4-7"


def test_route_without_keys_is_not_configured(config_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, "route", "hello")
    assert code == 1
    assert result["error"]["code"] == "no_model_available"
    chain = result["decision"]["chain"]
    assert chain[-1]["validation_failure"] == "not_configured"


def test_route_with_a_key_in_the_environment(config_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    code, result = run_json(capsys, "route", "hello", "--sticky", "gpt-5")
    assert (code, result["decision"]["chosen_model"]) == (0, "openai:gpt-5")
    assert "sk-test-not-real" not in json.dumps(result)


def test_route_unknown_alias(config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, "route", "@nope hi", "--assume-configured")
    assert code == 1
    assert result["error"]["code"] == "unknown_alias"
    assert result["decision"] is None


def test_route_refuses_an_empty_message_as_the_chat_does(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for message in ("", "   "):
        code, result = run_json(capsys, "route", message, "--assume-configured")
        assert code == 1 and result["decision"] is None
        assert result["error"] == {"code": "empty_message",
                                   "message": "Nothing to send: the message is empty."}
    code, result = run_json(capsys, "route", "@haiku  ", "--assume-configured")
    assert code == 1 and result["error"]["code"] == "empty_message"
    assert "after '@haiku'" in result["error"]["message"]
    code, result = run_json(capsys, "route", "", "--images", "--assume-configured")
    assert code == 0 and result["decision"]["chosen_model"]  # an image alone is a message


def test_route_does_not_dry_run_a_slash_command_as_a_turn(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # In the chat these never reach a model: the dry run must not print a decision for them.
    code, result = run_json(capsys, "route", "/modle opus", "--assume-configured")
    assert (code, result["error"]["code"], result["decision"]) == (1, "unknown_command", None)
    assert "did you mean /model?" in result["error"]["message"]
    for message, command in (("/model opus", "/model"), ("/delegate fast tidy it", "/delegate"),
                             ("delegate that", "/delegate")):
        code, result = run_json(capsys, "route", message, "--assume-configured")
        assert (code, result["decision"], result["command"]) == (0, None, command)
    code, text = run(capsys, "route", "/model opus")
    assert (code, text) == (0, "'/model opus' is the slash command /model: in the chat Switchman "
                               "answers it itself, and no model is routed.\n")
    code, result = run_json(capsys, "route", "/etc/hosts is wrong", "--assume-configured")
    assert code == 0 and result["decision"]["chosen_model"]  # a path is a message


def test_route_simulated_outage_and_context(config_dir: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, result = run_json(capsys, "route", "the architecture", "--assume-configured",
                            "--unavailable", "anthropic")
    assert code == 1
    assert "Run /model <id> to choose a model from openai, or wait for recovery." in \
        result["error"]["message"]
    assert "--sticky <id> stands for /model <id>" in result["error"]["message"]
    code, result = run_json(capsys, "route", "the architecture", "--assume-configured",
                            "--unavailable", "anthropic", "--sticky", "gpt-5")
    assert (code, result["decision"]["chosen_model"]) == (0, "openai:gpt-5")
    _, result = run_json(capsys, "route", "the architecture", "--assume-configured",
                         "--unavailable", "opus")
    assert result["decision"]["chosen_model"] == "anthropic:claude-sonnet-4-6"
    code, result = run_json(capsys, "route", "big", "--assume-configured", "--tokens", "190000")
    assert result["decision"]["winner_index"] is not None
    assert result["decision"]["chain"][2]["rule_name"] == "long context"


def test_route_refuses_an_unavailable_name_that_names_nothing(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "route", "review the architecture", "--assume-configured",
                    "--unavailable", "opsu")
    assert code == 1
    assert out == ("--unavailable opsu: no model or provider has that name. Did you mean opus? "
                   "Run 'switchman models' to list them.\n")
    code, result = run_json(capsys, "route", "hi", "--assume-configured",
                            "--unavailable", "openai", "--unavailable", "antropic")
    assert code == 1 and result["decision"] is None
    assert result["error"]["code"] == "unknown_model"
    assert "--unavailable antropic:" in result["error"]["message"]
    assert "Did you mean anthropic?" in result["error"]["message"]


# -- models --------------------------------------------------------------------------


def test_models_lists_key_status(config_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "secret-value")
    code, rows = run_json(capsys, "models")
    assert code == 0
    status = {r["id"]: r["configured"] for r in rows}
    assert status["anthropic:claude-opus-4-7"] is True
    assert status["openai:gpt-5"] is False
    assert "secret-value" not in json.dumps(rows)


def test_a_local_model_needs_no_key_and_says_so(config_dir: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # the README's Ollama example: "key set" read as if a key had been found somewhere
    (config_dir / "models.yaml").write_text(
        "models:\n  ollama:qwen2.5-coder:7b:\n    aliases: [qwen]\n    tier: fast\n", "utf-8")
    code, out = run(capsys, "models")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert rows["ollama:qwen2.5-coder:7b"].endswith(" no key needed")
    assert rows["openai:gpt-5"].endswith(" no key (OPENAI_API_KEY)")


def test_check_reports_a_dot_switchman_folder_that_is_a_symlink_loop(
        tmp_path: Path, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It used to print "No configuration files found" (the path counted as absent)."""
    workspace = tmp_path / "proj"
    workspace.mkdir()
    os.symlink(workspace / ".switchman", workspace / ".switchman")
    code, out = run(capsys, "rules", "check", "--workspace", str(workspace))
    assert code == 1
    assert f"inside {workspace / '.switchman'}, which is a symbolic link loop" in out


def test_check_reports_a_dot_switchman_folder_leading_out_of_the_workspace(
        tmp_path: Path, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its files were read and checked as the workspace's own (a located error now)."""
    workspace, outside = tmp_path / "proj", tmp_path / "elsewhere"
    workspace.mkdir()
    outside.mkdir()
    (outside / "routing.yaml").write_text("default: [broken\n", "utf-8")
    (workspace / ".switchman").symlink_to(outside, target_is_directory=True)
    code, out = run(capsys, "rules", "check", "--workspace", str(workspace))
    assert code == 1
    assert "[outside-workspace] This file is not read: its .switchman folder is a symbolic " \
        f"link leading out of the workspace, to {outside / 'routing.yaml'}." in out
    assert "yaml-syntax" not in out


@pytest.mark.parametrize("named", CONFIG_FOLDER_NAMINGS)
def test_check_reads_a_config_folder_called_dot_switchman_as_yours(
        tmp_path: Path, config_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], named: str) -> None:
    """``SWITCHMAN_CONFIG_DIR=~/.switchman`` (a folder, or a link to a dotfiles folder): its
    routing.yaml was taken for the home workspace's, checked for a workspace's keys or refused
    as leading out of it, and listed twice (as yours and as the workspace's)."""
    home = tmp_path / "home"
    mine = dot_switchman_config(home, config_dir, named, "global_default: opsu\n")
    monkeypatch.setenv("SWITCHMAN_CONFIG_DIR", str(mine))
    code, out = run(capsys, "rules", "check", "--workspace", str(home))
    assert code == 1
    assert out.splitlines() == [
        f"{mine / 'routing.yaml'}:1:17: error [unknown-model] Unknown model 'opsu'. Did you "
        "mean 'opus'? Models come from models.yaml (run 'switchman models' to list them).",
        f"1 error, 0 warnings in {mine / 'routing.yaml'}"]


# -- the installed console script ----------------------------------------------------


def test_console_script_runs(config_dir: Path) -> None:
    exe = Path(sys.executable).with_name("switchman")
    result = subprocess.run([str(exe), "route", "fix the commit message", "--assume-configured"],
                            capture_output=True, text=True, env=dict(os.environ), check=False)
    assert result.returncode == 0, result.stderr
    assert "CONFIGURED_RULES" in result.stdout


# -- hostile files -------------------------------------------------------------------


def test_check_reports_every_file_system_trap_and_never_hangs(tmp_path: Path) -> None:
    paths = []
    for trap in TRAPS:
        (tmp_path / trap).mkdir()
        paths.append(str(make_trap(tmp_path / trap / "routing.yaml", trap)))
    exe = Path(sys.executable).with_name("switchman")
    result = subprocess.run([str(exe), "rules", "check", *paths, "--json"], capture_output=True,
                            text=True, env=_isolated(tmp_path), timeout=30, check=False)
    assert result.returncode == 1, result.stderr
    found = {Path(d["file"]).parent.name: d for d in json.loads(result.stdout)}
    assert set(found) == set(TRAPS)
    for trap, diagnostic in found.items():
        assert diagnostic["code"] == "unreadable-file"
        assert REASONS[trap] in diagnostic["message"]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("trap", ["fifo", "dev-zero", "loop", "dangling"])
def test_route_with_a_trapped_config_file_uses_the_built_in_policy(tmp_path: Path,
                                                                   trap: str) -> None:
    env = _isolated(tmp_path)
    make_trap(Path(env["SWITCHMAN_CONFIG_DIR"]) / "routing.yaml", trap)
    exe = Path(sys.executable).with_name("switchman")
    result = subprocess.run([str(exe), "route", "fix the commit message", "--assume-configured"],
                            capture_output=True, text=True, env=env, timeout=30, check=False)
    assert result.returncode == 0, result.stderr
    assert "CONFIGURED_RULES" in result.stdout
    assert "routing.yaml has errors" in result.stderr


def _isolated(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    return {**os.environ, "SWITCHMAN_CONFIG_DIR": str(config),
            "SWITCHMAN_DATA_DIR": str(tmp_path / "data")}


def test_schema_to_an_unwritable_place_is_one_clear_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "routing.schema.json"
    assert main(["schema", "routing", "--output", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"switchman schema: cannot write {target}") and "Traceback" not in err


def test_schema_never_writes_over_a_yaml_file(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--output models.yaml` (tab completion picked the wrong file) replaced the user's
    # models.yaml with a JSON Schema
    models = config_dir / "models.yaml"
    models.write_text("models: {}\n", "utf-8")
    assert main(["schema", "models", "--output", str(models)]) == 1
    assert models.read_text("utf-8") == "models: {}\n"
    err = capsys.readouterr().err
    assert err.startswith(f"switchman schema: {models} is a YAML file name")
    assert main(["schema", "models", "--output", str(config_dir / "models.schema.json")]) == 0
    assert json.loads((config_dir / "models.schema.json").read_text("utf-8"))["type"] == "object"


@pytest.mark.parametrize(("arguments", "complaint"), [
    (["--workspace", "/no/such/folder"], "--workspace /no/such/folder: no such folder"),
    (["--tokens", "-5"], "--tokens -5: must be 0 or more"),
    (["--cost-today", "-1"], "--cost-today -1.0: must be 0 or more"),
    (["--cost-today", "nan"], "--cost-today nan: must be 0 or more"),
    (["--planner", "opus"], "--planner only applies with --delegate-tier"),
    (["--complexity", "small"], "--complexity only applies with --delegate-tier"),
])
def test_route_refuses_arguments_it_would_silently_ignore(
        config_dir: Path, capsys: pytest.CaptureFixture[str], arguments: list[str],
        complaint: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["route", "hello", "--assume-configured", *arguments])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    # as argparse refuses its own: the sub-command's usage and name (it showed the top level's)
    assert err.startswith("usage: switchman route [-h]"), err
    assert f"switchman route: error: {complaint}" in err


@pytest.mark.parametrize(("arguments", "usage"), [
    (["route", "hello", "--bogus"], "switchman route"),
    (["rules", "check", "--bogus"], "switchman rules check"),
    (["rules", "test", "a.test.yaml", "b.test.yaml"], "switchman rules test"),
    (["patterns", "stats", "--verbose"], "switchman patterns stats"),
    (["models", "extra"], "switchman models"),
])
def test_an_unknown_argument_is_refused_with_its_sub_commands_usage(
        config_dir: Path, capsys: pytest.CaptureFixture[str], arguments: list[str],
        usage: str) -> None:
    """``switchman route hello --bogus`` printed the top level's usage (``switchman [-h]
    [--version] COMMAND ...``) and ``switchman: error: …``, which lists no option of route."""
    with pytest.raises(SystemExit) as exit_:
        main(arguments)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {usage} [-h]"), err
    assert f"{usage}: error: unrecognized arguments: {arguments[-1]}" in err


def test_a_message_that_is_not_utf8_is_refused_naming_the_byte(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A message typed or pasted in another encoding (Latin-1 ``café``) reaches Python as a lone
    surrogate: ``switchman route`` ended with a UnicodeEncodeError traceback."""
    with pytest.raises(SystemExit) as exit_:
        main(["route", "caf\udce9 au lait", "--assume-configured"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: switchman route [-h]"), err
    assert ("switchman route: error: the message is not valid UTF-8 (byte 0xe9 after 'caf'); "
            "write it in UTF-8, as the editors send it") in err
    assert "Traceback" not in err


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:  # argparse exposes sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_argument_of_every_command_is_explained_in_help() -> None:
    """Found by reading `--help`: several `--json` flags, `rules test FILE` and `route
    MESSAGE` were listed with no word of explanation."""
    unexplained = [f"{parser.prog} {action.dest}" for parser in _parsers(build_parser())
                   for action in parser._actions
                   if not isinstance(action, argparse._SubParsersAction) and not action.help]
    assert unexplained == []


def test_serve_help_says_what_the_daemon_is(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "language server" in capsys.readouterr().out


def test_make_demo_shows_the_built_in_configuration_whatever_the_users_is(
        tmp_path: Path) -> None:
    """The README promises `make demo` routes "with the built-in configuration"; it used to
    read the user's own config folder, so a catch-all rule there changed every line."""
    (tmp_path / "routing.yaml").write_text("rules:\n  - name: mine\n    when: {}\n    use: opus\n")
    root = Path(__file__).resolve().parents[2]
    if not (root / ".venv" / "bin" / "switchman").exists() or shutil.which("make") is None:
        pytest.skip("needs the repository's .venv and make, as `make demo` does")
    env = {**os.environ, "SWITCHMAN_CONFIG_DIR": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    done = subprocess.run(["make", "-s", "-o", ".venv/.installed", "demo"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert 'Chose: anthropic:claude-haiku-4-5 (rule "fast for commits")' in done.stdout
    assert 'rule "mine"' not in done.stdout
    assert not (root / ".demo-builtin").exists()


def test_every_broken_config_file_is_noted_and_models_notes_its_own(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by trying it: with models.yaml and profiles.yaml both broken only the first was
    named, and `switchman models` listed the built-in models without a word about why."""
    (config_dir / "models.yaml").write_text("models:\n  foo: [\n")
    (config_dir / "profiles.yaml").write_text("profiles:\n  x: {tools: 5}\n")
    main(["route", "hello", "--assume-configured"])
    err = capsys.readouterr().err
    assert f"Note: {config_dir / 'models.yaml'} has errors" in err
    assert f"Note: {config_dir / 'profiles.yaml'} has errors" in err
    assert main(["models"]) == 0
    captured = capsys.readouterr()
    assert f"Note: {config_dir / 'models.yaml'} has errors" in captured.err
    assert "profiles.yaml" not in captured.err and "anthropic:claude-haiku-4-5" in captured.out


def test_models_json_names_the_key_file_the_key_comes_from(
        config_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by QA: with the key in ``api_key_file`` (and ``api_key_env`` unset), `models
    --json` said the key came from the environment variable."""
    key_file = tmp_path / "anthropic.key"
    key_file.write_text("sk-ant-not-a-real-key-0123456789\n")
    (config_dir / "models.yaml").write_text(
        f"providers:\n  anthropic: {{api_key_env: ANTHROPIC_API_KEY, "
        f"api_key_file: '{key_file}'}}\n")
    code, out = run(capsys, "models", "--json")
    haiku = {row["id"]: row for row in json.loads(out)}["anthropic:claude-haiku-4-5"]
    assert (code, haiku["configured"], haiku["key_source"]) == (0, True, str(key_file))
    assert "sk-ant" not in out
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment-0123")
    code, rows = run_json(capsys, "models")
    assert {r["id"]: r for r in rows}["anthropic:claude-haiku-4-5"]["key_source"] == (
        "ANTHROPIC_API_KEY")
    key_file.write_text("")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code, rows = run_json(capsys, "models")
    haiku = {r["id"]: r for r in rows}["anthropic:claude-haiku-4-5"]
    assert (haiku["configured"], haiku["key_source"]) == (False, "ANTHROPIC_API_KEY")
    # QA: with no key, the list named only the variable, never the key file the user set up
    # (nor why it gave no key), and a route said "Set ANTHROPIC_API_KEY" alone
    assert haiku["missing_key"] == f"ANTHROPIC_API_KEY or the key file {key_file}, which is empty"
    key_file.unlink()
    code, out = run(capsys, "models")
    assert f"no key (ANTHROPIC_API_KEY or the key file {key_file}, which does not exist)" in out
    code, out = run(capsys, "route", "hello")
    assert f"Set ANTHROPIC_API_KEY or the key file {key_file} (see 'switchman models')." in out


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_models_warns_when_the_key_file_can_be_read_by_others(
        config_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The README says to keep a key "in a file only you can read"; a key file anyone on the
    machine could read was listed as "key set" like any other."""
    key_file = tmp_path / "anthropic.key"
    key_file.write_text("sk-ant-not-a-real-key-0123456789\n")
    (config_dir / "models.yaml").write_text(
        f"providers:\n  anthropic: {{api_key_file: '{key_file}'}}\n")
    key_file.chmod(0o644)
    code, out = run(capsys, "models")
    assert code == 0
    haiku = next(line for line in out.splitlines() if "claude-haiku-4-5" in line)
    assert haiku.endswith(f"key set, but others can read its file: chmod 600 {key_file}")
    _, rows = run_json(capsys, "models")
    assert {r["id"]: r for r in rows}["anthropic:claude-haiku-4-5"]["key_file_open"] is True
    assert "sk-ant" not in out
    key_file.chmod(0o600)
    _, out = run(capsys, "models")
    assert next(line for line in out.splitlines() if "claude-haiku-4-5" in line).endswith(
        "key set")
    _, rows = run_json(capsys, "models")
    assert {r["id"]: r for r in rows}["anthropic:claude-haiku-4-5"]["key_file_open"] is False


def test_models_reads_each_key_file_once_and_never_prints_the_key(
        config_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`switchman models` read the keys itself, past the daemon's key ring: each key file
    three times for each of its provider's models (whether set, where from, who can read
    it). It now asks the ring, which reads a file again only once it changed."""
    from switchman.engine import files, keys  # noqa: PLC0415

    key = "sk-ant-not-a-real-key-0123456789"
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(f"{key}\n")
    key_file.chmod(0o600)
    (config_dir / "models.yaml").write_text(
        f"providers:\n  anthropic: {{api_key_env: null, api_key_file: '{key_file}'}}\n")
    reads: list[Path] = []
    read_text = files.read_text

    def counted(path: Path, limit: int) -> str:
        reads.append(path)
        return read_text(path, limit)

    monkeypatch.setattr(keys, "read_text", counted)
    monkeypatch.setattr(keys, "RECENT_CHANGE_NS", 0)  # the file just written is kept
    code, out = run(capsys, "models")
    assert code == 0 and reads == [key_file]
    code, rows = run_json(capsys, "models")
    anthropic = [r for r in rows if r["provider"] == "anthropic"]
    assert len(anthropic) > 1 and all(r["configured"] for r in anthropic)
    assert key[:12] not in out + json.dumps(rows)


HINT = ("To see what Switchman would choose once a key is set, run this again with "
        "--assume-configured (it then treats every provider as having a key).")


def test_a_route_refused_for_missing_keys_says_which_and_how_to_dry_run_without_them(
        capsys: pytest.CaptureFixture[str], config_dir: Path) -> None:
    """The README's first command, for a new user with no key: it says which key is missing
    and how to see a decision anyway (it used to end at "Chose: nothing" and the keys)."""
    code, out = run(capsys, "route", "write a commit message for this change")
    assert code == 1
    assert "Chose: nothing" in out
    assert "Set ANTHROPIC_API_KEY (see 'switchman models')." in out
    assert out.rstrip().endswith(HINT)
    code, out = run(capsys, "route", "write a commit message for this change",
                    "--assume-configured")
    assert code == 0 and "Chose: anthropic:claude-haiku-4-5" in out and HINT not in out
    code, result = run_json(capsys, "route", "write a commit message for this change")
    assert code == 1 and HINT not in result["error"]["message"]  # JSON: the engine's words


def test_a_route_refused_for_outages_gives_no_key_advice(
        capsys: pytest.CaptureFixture[str], config_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-real")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    code, out = run(capsys, "route", "hello", "--unavailable", "anthropic",
                    "--unavailable", "openai")
    assert code == 1 and "Chose: nothing" in out and "--assume-configured" not in out


def test_the_readme_route_example_shows_a_decision_without_keys(
        capsys: pytest.CaptureFixture[str], config_dir: Path) -> None:
    """A new user copies the README's first command before setting any key: it shows a
    decision (it printed "Chose: nothing" and exited 1)."""
    readme = (Path(__file__).parents[2] / "README.md").read_text("utf-8")
    line = next(x for x in readme.splitlines() if x.startswith(".venv/bin/switchman route "))
    args = shlex.split(line.partition("#")[0])[1:]
    code, out = run(capsys, *args)
    assert code == 0 and "Chose: anthropic:claude-haiku-4-5" in out


def test_route_with_an_invalid_workspace_file_says_where_and_what_it_used_instead(
        tmp_path: Path, config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A daemon keeps the last valid version of a file that turns invalid; the dry run has
    none (the daemon keeps it in memory only), so it routes without the file. It said only
    "has errors; an earlier or built-in version is in use": not where the error is, nor that
    the workspace's rules were left out, nor that the editor's decision may differ."""
    workspace = tmp_path / "app"
    (workspace / ".switchman").mkdir(parents=True)
    routing = workspace / ".switchman" / "routing.yaml"
    routing.write_text("default: opus\nrules:\n  - name: sql\n    when: {message_matches: sql}\n"
                       "    use: opsu\n", "utf-8")
    code = main(["route", "fix the sql", "--assume-configured", "--workspace", str(workspace)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Chose: anthropic:claude-sonnet-4-6 (global default)" in out
    assert f"{routing}:5:10: error [unknown-model] Unknown model 'opsu'." in err
    assert "this dry run leaves out the workspace's rules and default" in err
    assert "last valid version" in err and "can differ" in err
    (config_dir / "routing.yaml").write_text("global_default: [\n", "utf-8")
    main(["route", "hello", "--assume-configured", "--workspace", str(workspace), "--json"])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["decision"]["chosen_model"]
    assert f"{config_dir / 'routing.yaml'}:2:1: error [yaml-syntax]" in captured.err
    assert "uses the built-in policy" in captured.err
