"""bench/routing_quality.py and bench/routing_bounds.py on data that is not RouteLLM's MMLU.

The issue asks for a tool that takes any CSV of this shape: a ``prompt`` column, one boolean
column per model (named anything, spelled True/false/1/0/yes/no), other columns ignored, a
file or a folder of files. These run both scripts as a user would, in a subprocess, on two
small files of made-up prompts where the strong model is right on the 'proof' questions and
the weak one is not, and check what they print.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUALITY = ROOT / "bench" / "routing_quality.py"
BOUNDS = ROOT / "bench" / "routing_bounds.py"
STRONG, WEAK = "big-model v2", "small/model"


def _write(folder: Path) -> tuple[float, float]:
    """Two CSV files (groups) of 30 rows each; returns (strong accuracy, weak accuracy)."""
    folder.mkdir()
    spellings = [("True", "False"), ("1", "0"), ("yes", "no"), ("TRUE", "false")]
    strong_ok = weak_ok = rows = 0
    for name, topic in (("proofs", "prove the lemma about prime numbers"),
                        ("lists", "sort this list of names")):
        with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, ["id", "prompt", STRONG, "notes", WEAK])
            writer.writeheader()
            for i in range(30):
                strong = name == "proofs" or i % 5 != 0
                weak = name == "lists" and i % 7 != 0
                yes, no = spellings[i % len(spellings)]
                writer.writerow({"id": i, "prompt": f"{topic} number {i} please", "notes": "x",
                                 STRONG: yes if strong else no, WEAK: yes if weak else no})
                strong_ok += strong
                weak_ok += weak
                rows += 1
    return strong_ok / rows, weak_ok / rows


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, check=False)


def test_quality_replay_takes_any_csv_of_the_shape_and_prints_the_summary(tmp_path: Path) -> None:
    strong, weak = _write(tmp_path / "data")
    plot = tmp_path / "curve.png"
    done = _run(QUALITY, "--data", str(tmp_path / "data"), "--strong", STRONG, "--weak", WEAK,
                "--strong-price", "10", "--weak-price", "0.5", "--orders", "2", "--jobs", "1",
                "--cost-weights", "0.0", "0.1", "0.5", "--refine", "1", "--plot", str(plot))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["prompts"] == 60
    assert summary["strong_accuracy"] == pytest.approx(strong, abs=1e-4)
    assert summary["weak_accuracy"] == pytest.approx(weak, abs=1e-4)
    target = 0.95 * strong
    assert summary["random_strong_share_at_95"] == pytest.approx(
        (target - weak) / (strong - weak), abs=1e-4)
    curve = summary["curve"]
    refined = summary["refined_cost_weights"]
    assert len(refined) <= 1 and all(0.0 < w < 0.5 for w in refined)
    assert [p["cost_weight"] for p in curve] == sorted([0.0, 0.1, 0.5, *refined])
    for point in curve:
        assert 0.0 <= point["strong_share"] <= 1.0 and 0.0 <= point["accuracy"] <= 1.0
    reaching = [p["strong_share"] for p in curve if p["accuracy"] >= target]
    assert summary["strong_share_at_95"] == (round(min(reaching), 4) if reaching else None)
    assert (summary["note"] is None) == bool(reaching)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_quality_replay_says_why_no_operating_point_reaches_the_target(tmp_path: Path) -> None:
    _write(tmp_path / "data")  # nobody explores: the strong model is never tried
    done = _run(QUALITY, "--data", str(tmp_path / "data"), "--strong", STRONG, "--weak", WEAK,
                "--orders", "1", "--jobs", "1", "--cost-weights", "0.0", "--explore", "0")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["strong_share_at_95"] is None and summary["curve"][0]["strong_share"] == 0
    assert summary["note"].startswith("no operating point reached 85.50% accuracy")
    assert "cost_weight 0.0, reached 41.67% with 0.0% strong calls" in summary["note"]
    assert summary["note"] in done.stderr


def test_quality_replay_names_a_missing_column_and_a_value_that_is_not_a_boolean(
        tmp_path: Path) -> None:
    _write(tmp_path / "data")
    missing = _run(QUALITY, "--data", str(tmp_path / "data"), "--strong", "gpt-9",
                   "--weak", WEAK, "--orders", "1", "--jobs", "1")
    assert missing.returncode != 0
    assert "lists.csv: no column 'gpt-9'" in missing.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text(f"prompt,{STRONG},{WEAK}\nhello,True,False\nagain,maybe,True\n", "utf-8")
    wrong = _run(QUALITY, "--data", str(bad), "--strong", STRONG, "--weak", WEAK)
    assert wrong.returncode != 0
    assert f"bad.csv:3: {STRONG} is 'maybe', not a boolean" in wrong.stderr
    unnamed = tmp_path / "unnamed.csv"
    unnamed.write_text(f"question,{STRONG},{WEAK}\nhello,True,False\n", "utf-8")
    no_prompt = _run(QUALITY, "--data", str(unnamed), "--strong", STRONG, "--weak", WEAK)
    assert no_prompt.returncode != 0 and "unnamed.csv: no column 'prompt'" in no_prompt.stderr
    nowhere = _run(QUALITY, "--data", str(tmp_path / "nowhere"), "--strong", STRONG,
                   "--weak", WEAK)
    assert nowhere.returncode != 0 and "nowhere: no such file or folder" in nowhere.stderr
    assert "Traceback" not in no_prompt.stderr + nowhere.stderr


def test_quality_replay_reads_a_spreadsheets_csv_and_refuses_a_missing_value(
        tmp_path: Path) -> None:
    """A "CSV UTF-8" file saved by a spreadsheet starts with a byte-order mark: its first
    column was read as '\ufeffprompt' ("no column 'prompt'"). An empty cell or a short row
    counted as False (the model answered wrongly) without a word; a file that is not UTF-8
    was a traceback."""
    saved = tmp_path / "saved.csv"
    saved.write_bytes(f"\ufeffprompt,{STRONG},{WEAK}\nhello,True,False\n"
                      f"\"two\nlines\",yes,no\n".encode())
    done = _run(QUALITY, "--data", str(saved), "--strong", STRONG, "--weak", WEAK,
                "--orders", "1", "--jobs", "1", "--cost-weights", "0.0", "--refine", "0")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["prompts"] == 2
    for name, body, said in (
            ("empty", "hello,True,\n", f"empty.csv:2: {WEAK} is '', not a boolean"),
            ("short", "\"two\nlines\",True,False\nhello,True\n",
             f"short.csv:4: {WEAK} has no value (the row has fewer fields than the header)")):
        (tmp_path / f"{name}.csv").write_text(f"prompt,{STRONG},{WEAK}\n{body}", "utf-8")
        refused = _run(QUALITY, "--data", str(tmp_path / f"{name}.csv"), "--strong", STRONG,
                       "--weak", WEAK)
        assert refused.returncode != 0 and said in refused.stderr, refused.stderr
    latin = tmp_path / "latin.csv"
    latin.write_bytes(f"prompt,{STRONG},{WEAK}\nh\xe9llo,True,False\n".encode("latin-1"))
    foreign = _run(QUALITY, "--data", str(latin), "--strong", STRONG, "--weak", WEAK)
    assert foreign.returncode != 0 and "latin.csv: not UTF-8 text" in foreign.stderr
    assert "Traceback" not in foreign.stderr


def test_bounds_put_the_perfect_and_group_oracle_points_beside_the_fair_figure(
        tmp_path: Path) -> None:
    strong, weak = _write(tmp_path / "data")
    done = _run(BOUNDS, "--data", str(tmp_path / "data"), "--strong", STRONG, "--weak", WEAK,
                "--neighbors", "5", "20")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["prompts"] == 60 and summary["groups"] == 2
    # Every 'proofs' row gains from the strong model: the perfect router sends just enough
    # of them (and of the few 'lists' rows only it gets right) to reach the target.
    target = 0.95 * strong
    needed = math.ceil((target - weak) * 60)  # prompts the strong model must win back
    assert summary["perfect"] == pytest.approx(needed / 60, abs=1 / 60)
    # The group oracle knows 'proofs' gains and 'lists' does not: as good as perfect here.
    assert summary["group_oracle"] == pytest.approx(summary["perfect"], abs=1 / 60)
    assert summary["random"] == pytest.approx((target - weak) / (strong - weak), abs=1e-4)
    # The fingerprints put the two topics apart, so the k-NN finds the proofs too.
    assert set(summary["full_information_knn"]) == {"5", "20"}
    for share in summary["full_information_knn"].values():
        assert share <= summary["random"]


def test_refinement_halves_the_step_after_the_cheapest_point_that_reaches_the_target() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from routing_quality import Point, refine  # noqa: PLC0415  (a script's module)

    def at(weight: float) -> Point:  # share and accuracy both fall as the weight rises
        return Point(weight, 1.0 - 2 * weight, 0.9 - weight)

    asked: list[list[float]] = []

    def evaluate_at(weights: list[float]) -> list[Point]:
        asked.append(weights)
        return [at(w) for w in weights]

    sweep = [at(w) for w in (0.0, 0.1, 0.2, 0.3)]
    # Target 0.74: 0.1 reaches it (0.8), 0.2 does not (0.7); the crossing is at 0.16.
    points = refine(sweep, 0.74, 3, evaluate_at)
    assert asked == [[0.15], [0.175], [0.1625]]
    assert [p.cost_weight for p in points] == [0.0, 0.1, 0.15, 0.1625, 0.175, 0.2, 0.3]
    cheapest = min((p for p in points if p.accuracy >= 0.74), key=lambda p: p.strong_share)
    assert cheapest.cost_weight == 0.15  # 0.1625 falls just short (0.7375)
    # Nothing to refine: no point reaches the target, or the largest weight does.
    assert refine(sweep, 0.95, 2, evaluate_at) == sweep
    assert refine(sweep, 0.5, 2, evaluate_at) == sweep
    assert refine(sweep, 0.74, 0, evaluate_at) == sweep
    assert len(asked) == 3


@pytest.mark.parametrize(("args", "said"), [
    # each was a traceback (no orders, no worker processes, a model dropped for its price)
    (["--orders", "0"], "argument --orders: must be 1 or more, not 0"),
    (["--jobs", "0"], "argument --jobs: must be 1 or more, not 0"),
    (["--strong-price", "-1"], "argument --strong-price: must be 0 or more, not -1"),
    # each ran with a routing.yaml the engine refused, or read every prompt (--limit 0)
    (["--limit", "0"], "argument --limit: must be 1 or more, not 0"),
    (["--explore", "2"], "argument --explore: must be from 0 to 1, not 2"),
    (["--neighbors", "0"], "argument --neighbors: must be 1 or more, not 0"),
    (["--cost-weights", "0", "1.5"], "argument --cost-weights: must be from 0 to 1, not 1.5"),
    (["--similarity-exponent", "-1"], "argument --similarity-exponent: must be from 0 to 16"),
    (["--min-sample-size", "0"], "argument --min-sample-size: must be 1 or more, not 0"),
    (["--refine", "-1"], "argument --refine: must be 0 or more, not -1"),
])
def test_quality_replay_refuses_a_setting_it_cannot_use(
        args: list[str], said: str, tmp_path: Path) -> None:
    _write(tmp_path / "data")
    done = _run(QUALITY, "--data", str(tmp_path / "data"), "--strong", STRONG, "--weak", WEAK,
                *args)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_both_scripts_name_a_folder_without_csv_files_and_bounds_refuse_no_neighbours(
        tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for script in (QUALITY, BOUNDS):
        done = _run(script, "--data", str(tmp_path / "empty"), "--strong", STRONG,
                    "--weak", WEAK)
        assert done.returncode == 1
        assert "empty: a folder with no .csv file in it (or its subfolders)" in done.stderr
    _write(tmp_path / "data")
    none = _run(BOUNDS, "--data", str(tmp_path / "data"), "--strong", STRONG, "--weak", WEAK,
                "--neighbors", "10", "0")
    assert none.returncode == 2  # K = 0 printed the share of a router that predicts nothing
    assert "argument --neighbors: must be 1 or more, not 0" in none.stderr


def test_both_scripts_name_an_empty_file_and_a_file_without_a_header_line(
        tmp_path: Path) -> None:
    """A 0-byte file, or one whose first line is blank or a row of data, said only
    "no prompts" (or, for a blank first line, was a traceback): the file is named now, with
    what is wrong with it and the header line that was expected."""
    expected = f"expected a header line naming the columns 'prompt', {STRONG!r} and {WEAK!r}"
    for name, body, said in (
            ("zero", "", "zero.csv: the file is empty"),
            ("blank", "\nhello,True,False\n", "blank.csv: the first line is blank"),
            ("headless", "hello,True,False\n",
             f"headless.csv: no column 'prompt', {STRONG!r} or {WEAK!r} in the first line "
             "(hello, True, False)"),
            ("other", f"question,{STRONG},{WEAK}\n",
             f"other.csv: no column 'prompt' in the first line (question, {STRONG}, {WEAK})")):
        (tmp_path / f"{name}.csv").write_text(body, "utf-8")
        for script in (QUALITY, BOUNDS):
            done = _run(script, "--data", str(tmp_path / f"{name}.csv"), "--strong", STRONG,
                        "--weak", WEAK)
            assert done.returncode == 1, done.stderr
            assert said in done.stderr and expected in done.stderr, done.stderr
            assert "Traceback" not in done.stderr and "no prompts" not in done.stderr
    # in a folder, the empty file is named as well, not passed over
    folder = tmp_path / "data"
    _write(folder)
    (folder / "zero.csv").write_text("", "utf-8")
    done = _run(QUALITY, "--data", str(folder), "--strong", STRONG, "--weak", WEAK)
    assert done.returncode == 1 and "zero.csv: the file is empty" in done.stderr, done.stderr
    # a header and no rows is still "no prompts", now saying which file had none
    (folder / "zero.csv").unlink()
    only = tmp_path / "only.csv"
    only.write_text(f"prompt,{STRONG},{WEAK}\n", "utf-8")
    done = _run(QUALITY, "--data", str(only), "--strong", STRONG, "--weak", WEAK)
    assert done.returncode == 1 and "only.csv: no prompts" in done.stderr, done.stderr


def test_quality_replay_reads_a_long_prompt_and_passes_over_a_folder_named_csv(
        tmp_path: Path) -> None:
    """A prompt over 131,072 characters (a long document, a code file) ended the replay in a
    traceback (``_csv.Error: field larger than field limit``), and so did a folder whose name
    ends in .csv among the data (``IsADirectoryError``)."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "old.csv").mkdir()  # a folder, not a file of prompts
    (data / "long.csv").write_text(f"prompt,{STRONG},{WEAK}\n\"{'word ' * 40_000}\",True,False\n"
                                   "short one,True,True\n", "utf-8")
    done = _run(QUALITY, "--data", str(data), "--strong", STRONG, "--weak", WEAK,
                "--orders", "1", "--jobs", "1", "--cost-weights", "0.0", "--refine", "0")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["prompts"] == 2
    twice = tmp_path / "twice.csv"  # the strong column twice: csv took the last silently
    twice.write_text(f"prompt,{STRONG},{WEAK},{STRONG}\nhello,True,False,False\n", "utf-8")
    refused = _run(QUALITY, "--data", str(twice), "--strong", STRONG, "--weak", WEAK)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert f"twice.csv: the first line names {STRONG!r} more than once" in refused.stderr
