"""`switchman route --delegate-tier`: a dry run of a worker's routing, with the planner's
tier floor and the task's complexity."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_cli import run, run_json

TIERS = ("global_default: sonnet\n"
         "tiers:\n"
         "  fast: [gpt-5-mini, haiku]\n"
         "  balanced: sonnet\n"
         "  deep: opus\n"
         "  complexity:\n"
         "    fast: {large: sonnet}\n")


def test_a_dry_run_shows_the_floor_and_the_estimated_complexity(
        config_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (config_dir / "routing.yaml").write_text(TIERS, "utf-8")
    code, out = run(capsys, "route", "prove it terminates", "--assume-configured",
                    "--delegate-tier", "deep", "--planner", "sonnet")
    assert code == 0
    assert "Chose: anthropic:claude-sonnet-4-6 (delegation tier)" in out
    assert "capped from deep by the tier floor: the planner is balanced" in out
    assert "complexity trivial (estimated)" in out


def test_a_dry_run_with_a_given_complexity_and_a_fallback(
        config_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (config_dir / "routing.yaml").write_text(TIERS, "utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, result = run_json(capsys, "route", "rename x", "--delegate-tier", "fast")
    assert code == 0
    delegated = [e for e in result["decision"]["chain"] if e["policy"] == "DELEGATE_REQUEST"]
    assert [(e["candidate_model"], e["verdict"]) for e in delegated] == [
        ("openai:gpt-5-mini", "rejected"), ("anthropic:claude-haiku-4-5", "chose")]
    assert delegated[1]["tier_choice"]["tier_floor"] is None  # no planner given
    code, result = run_json(capsys, "route", "rename x", "--delegate-tier", "fast",
                            "--complexity", "large")
    chosen = result["decision"]["chain"][result["decision"]["winner_index"]]
    assert chosen["candidate_model"] == "anthropic:claude-sonnet-4-6"
    assert chosen["tier_choice"]["complexity_source"] == "given"
