"""The bench/ scripts as a new user runs them from a fresh clone: no benchmark is timed here.

Each is run in a subprocess the way the docs say, but from outside the checkout and without
``PYTHONPATH=.`` (which four of them needed, or they stopped on ``No module named 'tests'``
before even printing their help), with arguments they cannot use (each was a traceback, or
a silent wrong figure, before the arguments were checked), and bench_editing.py without
its reference installed (it ran ``npm install``, and without a network stopped on a
traceback a minute later).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py")
                 if p.name.startswith(("bench_", "routing_")) and p.name != "bench_support.py")


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python bench/SCRIPT args`` from ``cwd``, with no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env, check=False)


def test_every_script_is_listed() -> None:
    assert len(SCRIPTS) == 13 and {"bench_session_watch.py", "bench_key_mask.py"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_without_pythonpath_from_another_folder(script: str, tmp_path: Path) -> None:
    """bench_session_watch.py took no arguments at all: ``--help`` ran the benchmark."""
    done = run(script, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script}")
    assert not list(tmp_path.iterdir())  # nothing was run, nothing written


@pytest.mark.parametrize(("script", "args", "said"), [
    ("bench_routing.py", ["--decisions", "0"], "argument --decisions: must be 1 or more, not 0"),
    ("bench_daemon.py", ["--runs", "0"], "argument --runs: must be 1 or more, not 0"),
    ("bench_daemon.py", ["--spawns", "-1"], "argument --spawns: must be 1 or more, not -1"),
    # its first three steps of each kind are warm-up: --runs 3 timed nothing (a traceback)
    ("bench_delegation.py", ["--runs", "3"], "argument --runs: must be 4 or more, not 3"),
    ("bench_delegation.py", ["--runs", "many"], "argument --runs: invalid whole_number value"),
    ("bench_editing.py", ["--edits", "1"], "argument --edits: must be 2 or more, not 1"),
    ("bench_editing.py", ["--warmup", "-1"], "argument --warmup: must be 0 or more, not -1"),
    ("bench_hostile.py", ["--positions", "0"], "argument --positions: must be 1 or more"),
    ("bench_load.py", ["--chunks", "1"], "argument --chunks: must be 2 or more, not 1"),
    ("bench_load.py", ["--delay", "nan"], "argument --delay: must be from 0 to 10, not nan"),
    ("bench_load.py", ["--typing-only", "--typing-lines", "20"],
     "argument --typing-lines: must be 21 or more, not 20"),
    # the typing options were ignored without --typing-only, and --edits/--saves with it
    ("bench_load.py", ["--typing-rounds", "1", "--keystrokes", "10"],
     "--typing-rounds, --keystrokes: only with --typing-only (part 4, run alone)"),
    ("bench_load.py", ["--keystroke", "0.1"], "--keystroke: only with --typing-only"),
    ("bench_load.py", ["--typing-lines", "30"], "--typing-lines: only with --typing-only"),
    ("bench_load.py", ["--typing-only", "--edits", "2"],
     "--edits: not with --typing-only (parts 1-3 are not run with it)"),
    ("bench_load.py", ["--saves", "1", "--typing-only"], "--saves: not with --typing-only"),
    # a store this small is never indexed: the reopening part waited for it forever
    ("bench_patterns.py", ["--rows", "1024"], "argument --rows: must be 1025 or more, not 1024"),
    ("bench_small_store.py", ["--queries", "0"], "argument --queries: must be 1 or more"),
    ("bench_stream_cpu.py", ["--runs", "0"], "argument --runs: must be 1 or more, not 0"),
    ("bench_session_watch.py", ["--calls", "5"], "unrecognized arguments: --calls 5"),
])
def test_an_argument_the_script_cannot_use_is_refused_before_it_starts(
        script: str, args: list[str], said: str, tmp_path: Path) -> None:
    done = run(script, *args, cwd=tmp_path)
    assert done.returncode == 2
    assert said in done.stderr and done.stderr.startswith("usage: "), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("helper", ["lean_client.py", "bench_support.py"])
def test_a_helper_run_directly_says_what_to_run_instead(helper: str, tmp_path: Path) -> None:
    done = run(helper, cwd=tmp_path)
    assert done.returncode == 1
    assert "measures nothing" in done.stderr and "docs/performance.md" in done.stderr


def test_editing_without_yaml_language_server_says_so_and_downloads_nothing(
        tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    done = run("bench_editing.py", "--edits", "2", "--warmup", "0", "--yaml-ls", str(missing),
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("| switchman serve (diagnostics delay 0) | 2 | ")
               for line in lines)
    assert not any(line.startswith("| yaml-language-server") for line in lines)
    assert "switchman / yaml-language-server" not in done.stdout  # no ratio without it
    assert (f"no reference in this run: yaml-language-server is not installed in {missing} "
            "(`.venv/bin/python bench/bench_editing.py --install-yaml-ls` installs version "
            "2.0.0 into bench/node_modules" in done.stdout)
    assert "The figures above are Switchman's alone (informational; no ratio)." in done.stdout
    assert not (tmp_path / "node_modules").exists() and not missing.exists()


def test_daemon_memory_after_fifty_sessions_says_when_the_run_was_too_short() -> None:
    """``bench_daemon.py --runs 5`` printed 'nan MiB' for the memory after 50 sessions."""
    sys.path.insert(0, str(BENCH))
    from bench_daemon import memory_rows  # noqa: PLC0415  (a script's module)

    nan = float("nan")
    short = memory_rows(44, 40.0, (50.0, 90.0), (nan, nan))
    assert "nan" not in short
    assert ("| resident memory after 50 sessions (a turn each) | not measured (--runs 45 or "
            "more) | at initialize: 40.0 MiB | — | ≤ 120 MB |") in short
    full = memory_rows(45, 40.0, (50.0, 90.0), (70.0, 110.0))
    assert ("| resident memory after 50 sessions (a turn each) | 70.0 MiB | at initialize: "
            "40.0 MiB | +30.0 MiB | ≤ 120 MB |") in full
    assert "| 90.0 MiB / 110.0 MiB | the daemon alone: 50.0 MiB / 70.0 MiB |" in full


def test_hostile_references_stay_within_the_size_cap() -> None:
    """The reference of the texts at or over the 256 KB cap was a normal file of 262,281
    bytes: over the cap, so completion and hover answered it at once and the hostile text's
    slowest request read 18,000 times a reference that had done nothing."""
    sys.path.insert(0, str(BENCH))
    from bench_hostile import hostile, normal  # noqa: PLC0415  (a script's module)

    from switchman.engine.files import MAX_CONFIG_BYTES  # noqa: PLC0415

    for name, text in hostile().items():
        reference = normal(min(len(text), MAX_CONFIG_BYTES))
        assert len(reference.encode()) <= MAX_CONFIG_BYTES, name
        assert len(reference) > min(len(text), MAX_CONFIG_BYTES) - 200, name  # still its size


def test_hostile_fixes_have_no_ratio_when_the_normal_text_had_nothing_to_fix() -> None:
    """A normal routing.yaml has no problem, so its quick fixes did nothing: the hostile
    texts' fixes read 454 or 721 times that nothing."""
    sys.path.insert(0, str(BENCH))
    from bench_hostile import measure, normal, row  # noqa: PLC0415  (a script's module)

    _, work = measure(normal(3000), 1)
    assert work.problems == work.verified == 0
    assert row("6,000 shadowing rules", "fixes", 0.0045, 0.00001, False).endswith(" —")
    assert row("6,000 shadowing rules", "fixes", 0.0045, 0.0015, True).endswith(" 3.00")
    assert row("mutated 3 KB file", "check", 0.0006, 0.0003, False).split() == [
        "mutated", "3", "KB", "file", "check", "0.6", "0.3", "2.00"]


def test_hostile_fixes_have_no_ratio_when_the_reference_verified_other_fixes() -> None:
    """The shadowing rules' fix request verifies no fix (their first 20 problems are
    flow-style rules shadowed by the first, which no fix moves); their same-rule-count
    reference verifies a name for each unnamed rule, a whole recheck each. The row divided
    the one by the other (6 ms by 3.6 s for 6,000 rules): here the same texts of 30 rules."""
    sys.path.insert(0, str(BENCH))
    import bench_hostile as bench  # noqa: PLC0415  (a script's module)

    text = bench.shadowing_rules(30)
    assert bench.hostile()["6,000 shadowing rules"] == bench.shadowing_rules(6000)
    _, hostile = bench.measure(text, 1)
    _, (_, same_rules) = bench.references("6,000 shadowing rules", text)
    _, reference = bench.measure(same_rules, 1)
    assert hostile.problems > 20 and hostile.verified == 0
    assert reference.problems == 30 and reference.verified > 0
    assert not bench.same_fix_work(hostile, reference)
    assert bench.same_fix_work(hostile, bench.FixWork(30, 0))  # the same work: a ratio
    assert not bench.same_fix_work(hostile, bench.FixWork(0, 0))  # nothing to fix: none
    lines = bench.table("6,000 shadowing rules", text, 1)
    assert [line.split()[-4] for line in lines] == ["check", "outline", "request", "fixes"] * 2
    assert [line.split()[-1] == "—" for line in lines] == [False, False, False, True] * 2
    assert lines[4].startswith("  same rule count (30) ")


def test_hostile_shadowing_rules_are_also_divided_by_a_normal_file_of_as_many_rules() -> None:
    """The 6,000 one-line shadowing rules were divided only by a normal file of their 84 KB,
    551 rules of six lines, and read 5-15 times it although a rule costs no more: the check
    and the outline go rule by rule."""
    sys.path.insert(0, str(BENCH))
    import bench_hostile as bench  # noqa: PLC0415  (a script's module)

    from switchman.engine.config.check import check_doc  # noqa: PLC0415
    from switchman.engine.config.problems import Severity  # noqa: PLC0415
    from switchman.engine.editing.chunked import ChunkedParser  # noqa: PLC0415
    from switchman.engine.files import MAX_CONFIG_BYTES  # noqa: PLC0415

    texts = bench.hostile()
    text = texts["6,000 shadowing rules"]
    (same_size, by_size), (same_rules, by_rules) = bench.references(
        "6,000 shadowing rules", text)
    assert same_size == "6,000 shadowing rules" and by_size == bench.normal(len(text))  # kept
    assert bench.rule_count(by_size) == 551
    assert same_rules == "  same rule count (6,000)"
    assert bench.rule_count(text) == bench.rule_count(by_rules) == 6000
    assert len(by_rules.encode()) <= MAX_CONFIG_BYTES  # a reference the check does not refuse
    problems = check_doc(bench.KIND, ChunkedParser().parse(by_rules, bench.PATH), bench.REGISTRY)
    assert not [p for p in problems if p.severity in (Severity.ERROR, Severity.WARNING)]
    # every other text: the row of its size only
    assert all(len(bench.references(name, other)) == 1
               for name, other in texts.items() if name != "6,000 shadowing rules")
