"""``switchman patterns stats | forget | export`` over the data folder's patterns.db."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.learning import database
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.routing.context import TurnContext
from switchman.server.cli import main

HAIKU, OPUS = "anthropic:claude-haiku-4-5", "anthropic:claude-opus-4-7"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(tmp_path))
    store = LearnedPatternStore(database.connect(tmp_path / database.FILE_NAME), ManualClock(),
                                background=False)
    for i, (folder, model) in enumerate([(tmp_path / "a", "fast"), (tmp_path / "a", "deep"),
                                         (tmp_path / "b", "fast")]):
        store.record(TurnRecord(context=TurnContext(message=f"secret words {i}",
                                                    workspace_path=str(folder)),
                                turn_id=f"t{i}", session_id="s", model=model,
                                status="completed"))
    store.connection.close()
    return tmp_path


def test_stats_export_and_forget(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["patterns", "stats"]) == 0
    text = capsys.readouterr().out
    assert f"{data_dir / 'a'}: 2 turns" in text and "deep: 1 turn, mean success 0.70" in text
    # when, as every other time Switchman prints (it was the stored "…14:00:00.000000+00:00")
    assert f"{data_dir / 'a'}: 2 turns, 2026-05-08T14:00:00Z … 2026-05-08T14:00:00Z\n" in text
    assert "topic matching: learning what is usual here, 2 of its first 200 turns so far" in text
    assert main(["patterns", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert [(s["turns"], s["centre_turns"]) for s in stats] == [(2, 2), (1, 1)]
    assert main(["patterns", "export"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and "secret" not in "".join(lines)
    assert json.loads(lines[0])["model"] == "fast"
    assert main(["patterns", "forget", "--workspace", str(data_dir / "a")]) == 0
    assert "Forgot 2 turns" in capsys.readouterr().out
    assert main(["patterns", "forget"]) == 0
    assert "Forgot 1 turn." in capsys.readouterr().out
    main(["patterns", "stats"])
    assert "No turns remembered yet" in capsys.readouterr().out


def test_export_writes_money_and_times_as_the_protocol_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``cost_usd`` was a float (0.0412) and ``recorded_at`` ``…14:23:11.532123+00:00``; the
    protocol's messages write a decimal string of six places and ``…Z`` to the millisecond."""
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(tmp_path))
    clock = ManualClock(datetime(2026, 5, 8, 14, 23, 11, 532123, tzinfo=UTC))
    store = LearnedPatternStore(database.connect(tmp_path / database.FILE_NAME), clock,
                                background=False)
    for turn_id, cost in (("t1", 0.0412), ("t2", 0.0), ("t3", 12.5)):
        store.record(TurnRecord(context=TurnContext(message="hi", workspace_path=str(tmp_path)),
                                turn_id=turn_id, session_id="s", model="fast",
                                status="completed", cost_usd=cost))
    store.connection.close()
    assert main(["patterns", "export"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["cost_usd"], r["recorded_at"]) for r in rows] == [
        ("0.041200", "2026-05-08T14:23:11.532Z"), ("0.000000", "2026-05-08T14:23:11.532Z"),
        ("12.500000", "2026-05-08T14:23:11.532Z")]


def test_forget_expands_a_quoted_tilde(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(data_dir))
    assert main(["patterns", "forget", "--workspace", "~/a"]) == 0
    assert f"Forgot 2 turns of {data_dir / 'a'}" in capsys.readouterr().out


def test_forget_takes_the_workspace_as_the_editors_name_it(
        data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a file:// URI was taken as a relative path: "Forgot 0 turns of $PWD/file:/…"
    uri = (data_dir / "a").as_uri()
    assert main(["patterns", "forget", "--workspace", uri]) == 0
    assert capsys.readouterr().out == f"Forgot 2 turns of {data_dir / 'a'}.\n"


def test_forgetting_a_folder_with_nothing_remembered_says_what_is(
        data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in --workspace forgot nothing with only "Forgot 0 turns" to tell."""
    assert main(["patterns", "forget", "--workspace", str(data_dir / "typo")]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"Forgot 0 turns of {data_dir / 'typo'}.\n"
    assert captured.err == (f"switchman patterns: nothing is remembered for {data_dir / 'typo'}"
                            f" (there is no such folder); turns are remembered for:\n"
                            f"  {data_dir / 'a'}\n  {data_dir / 'b'}\n")
    (data_dir / "c").mkdir()
    main(["patterns", "forget", "--workspace", str(data_dir / "c")])
    assert f"nothing is remembered for {data_dir / 'c'}; turns" in capsys.readouterr().err
    main(["patterns", "forget"])
    capsys.readouterr()
    main(["patterns", "forget", "--workspace", str(data_dir / "c")])
    assert capsys.readouterr().err == (
        f"switchman patterns: nothing is remembered for {data_dir / 'c'}.\n")


@pytest.mark.parametrize("folder", ["", "  "])
def test_forget_with_an_empty_workspace_forgets_nothing(
        data_dir: Path, capsys: pytest.CaptureFixture[str], folder: str) -> None:
    """``--workspace "$DIR"`` with DIR unset is a mistake, not a request to forget everything."""
    with pytest.raises(SystemExit) as exit_info:
        main(["patterns", "forget", "--workspace", folder])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: switchman patterns forget [-h]"), err
    assert "switchman patterns forget: error: --workspace: empty folder name" in err
    main(["patterns", "stats", "--json"])
    assert [s["turns"] for s in json.loads(capsys.readouterr().out)] == [2, 1]


def test_route_dry_runs_slot_4_from_what_the_workspace_learned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SWITCHMAN_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "data").mkdir()
    folder = tmp_path / "app"
    folder.mkdir()
    store = LearnedPatternStore(database.connect(tmp_path / "data" / database.FILE_NAME),
                                ManualClock(), background=False)
    for i in range(20):  # Haiku completes these, Opus fails them: each request to both
        store.record(TurnRecord(
            context=TurnContext(message=f"rename the variable foo to bar in file {i // 2}",
                                workspace_path=str(folder)),
            turn_id=f"t{i}", session_id="s", model=HAIKU if i % 2 else OPUS,
            status="completed" if i % 2 else "failed"))
    store.connection.close()
    assert main(["route", "rename the variable foo to bar in file 3", "--workspace", str(folder),
                 "--assume-configured", "--json"]) == 0
    decision = json.loads(capsys.readouterr().out)["decision"]
    slot_4 = next(p for p in decision["chain"] if p["policy"] == "PATTERN_RECOMMENDATION")
    assert (slot_4["verdict"], slot_4["candidate_model"]) == ("chose", HAIKU)
    assert decision["chosen_model"] == HAIKU
    assert not (tmp_path / "data" / "patterns-index").exists()  # a dry run leaves no cache


def test_reading_an_empty_data_folder_creates_nothing(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "never-used"
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(folder))
    assert main(["patterns", "stats"]) == 0
    assert "No turns remembered yet" in capsys.readouterr().out
    assert main(["patterns", "export"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["patterns", "forget"]) == 0
    assert "Forgot 0 turns." in capsys.readouterr().out
    assert not folder.exists()


@pytest.mark.parametrize("action", [["stats"], ["export"], ["forget"]])
@pytest.mark.parametrize("trap", ["not-a-database", "a-folder"])
def test_an_unusable_pattern_database_is_one_clear_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        action: list[str], trap: str) -> None:
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(tmp_path))
    target = tmp_path / database.FILE_NAME
    if trap == "a-folder":
        target.mkdir()
    else:
        target.write_text("this is not SQLite\n" * 100)
    assert main(["patterns", *action]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"switchman patterns: {target}")
    assert "Traceback" not in captured.err and captured.err.count("\n") == 1
    if trap == "not-a-database":  # what to do about it, as the daemon says (forget cannot)
        assert "Move it aside (Switchman then starts a new, empty one" in captured.err


@pytest.mark.parametrize("action", [["stats"], ["export"], ["forget"]])
def test_a_data_folder_that_cannot_be_looked_into_is_one_clear_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        action: list[str]) -> None:
    # A name too long for the file system fails like a folder the user may not search
    # (which root, running the tests, always may): the check for the file itself fails.
    folder = tmp_path / ("x" * 300)
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(folder))
    assert main(["patterns", *action]) == 1
    captured = capsys.readouterr()
    assert captured.err == (f"switchman patterns: the data folder {folder} cannot be used "
                            "(File name too long); make it a folder you can read, or set "
                            "SWITCHMAN_DATA_DIR to one\n")


@pytest.mark.parametrize("action", [["stats"], ["stats", "--json"], ["export"], ["forget"]])
@pytest.mark.parametrize("trap", ["under-a-file", "a-file", "a-dangling-link"])
def test_a_data_folder_that_cannot_be_a_folder_is_an_error_not_an_empty_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        action: list[str], trap: str) -> None:
    """SWITCHMAN_DATA_DIR under a regular file (or naming one, or a link to nothing) is a
    folder the daemon refuses (data_folder_unusable): the CLI says so and exits 1; it used to
    print "No turns remembered yet" (or nothing, or "Forgot 0 turns") and exit 0."""
    blocking = tmp_path / "notes.txt"
    blocking.write_text("a file\n")
    folder, reason = {
        "under-a-file": (blocking / "switchman", f"{blocking} is a file, not a folder"),
        "a-file": (blocking, "it is not a folder"),
        "a-dangling-link": (tmp_path / "link", "it is a link to nothing"),
    }[trap]
    if trap == "a-dangling-link":
        folder.symlink_to(tmp_path / "gone")
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(folder))
    assert main(["patterns", *action]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"switchman patterns: the data folder {folder} cannot be used "
                            f"({reason}); make it a folder you can read, or set "
                            "SWITCHMAN_DATA_DIR to one\n")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("action", [["stats"], ["stats", "--json"], ["export"], ["forget"]])
def test_a_data_folder_that_cannot_be_created_is_an_error_not_an_empty_store(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        action: list[str]) -> None:
    """A data folder not made yet is "nothing learned" only if it could be made: under /proc
    (where even root may not make folders) the daemon refuses it, so the CLI does too."""
    folder = Path("/proc/switchman-nope/data")
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(folder))
    assert main(["patterns", *action]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"switchman patterns: the data folder {folder} cannot be used "
                            "(it cannot be created in /proc: No such file or directory); make "
                            "it a folder you can read, or set SWITCHMAN_DATA_DIR to one\n")


def test_a_data_folder_not_made_yet_is_probed_without_a_trace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(tmp_path / "new" / "data"))
    assert main(["patterns", "stats"]) == 0
    assert "No turns remembered yet" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


def test_route_says_it_decides_without_patterns_when_the_data_folder_is_unusable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    blocking = tmp_path / "notes.txt"
    blocking.write_text("a file\n")
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(blocking / "switchman"))
    monkeypatch.setenv("SWITCHMAN_CONFIG_DIR", str(tmp_path / "config"))
    assert main(["route", "hello", "--workspace", str(tmp_path), "--assume-configured"]) == 0
    err = capsys.readouterr().err
    assert f"switchman route: the data folder {blocking / 'switchman'} cannot be used " \
        f"({blocking} is a file, not a folder)" in err
    assert "deciding without learned patterns" in err


@pytest.mark.parametrize(("stdout", "why"), [("/dev/full", "No space left on device"),
                                             (None, "standard output is closed")])
def test_an_export_that_cannot_be_written_fails_in_one_line(
        data_dir: Path, stdout: str | None, why: str) -> None:
    """``patterns export > file`` on a full disk (or with stdout closed) ended in a traceback
    with status 1 from Python, not a line saying the export is incomplete."""
    exe = Path(sys.executable).with_name("switchman")
    env = {**os.environ, "SWITCHMAN_DATA_DIR": str(data_dir)}
    # stdout=None below would inherit pytest's; closing fd 1 in the child is `>&-`
    with open(stdout or os.devnull, "w") as target:
        done = subprocess.run(
            [str(exe), "patterns", "export"], stdout=target, stderr=subprocess.PIPE, text=True,
            env=env, check=False, timeout=60,
            preexec_fn=None if stdout else (lambda: os.close(1)))
    assert (done.returncode, done.stderr) == (
        1, f"switchman patterns: could not write the output: {why}\n")


@pytest.mark.parametrize("workspace", [[], ["--workspace", "a"]])
def test_a_forget_that_cannot_write_is_one_clear_line(
        data_dir: Path, capsys: pytest.CaptureFixture[str], workspace: list[str]) -> None:
    """``patterns forget`` on a patterns.db it may not write (another user's file, a full
    disk, another process holding its write lock past the wait) ended in a traceback
    (``sqlite3.OperationalError: attempt to write a readonly database``)."""
    path = data_dir / database.FILE_NAME
    disk = sqlite3.connect(path, isolation_level=None)
    disk.execute("CREATE TRIGGER readonly BEFORE DELETE ON pattern_turns"
                 " BEGIN SELECT RAISE(ABORT, 'attempt to write a readonly database'); END")
    disk.close()
    where = [workspace[0], str(data_dir / workspace[1])] if workspace else []
    assert main(["patterns", "forget", *where]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err == (f"switchman patterns: {path} cannot be written (attempt to write a"
                            " readonly database); nothing was forgotten\n")
    assert main(["patterns", "stats", "--json"]) == 0
    assert sum(s["turns"] for s in json.loads(capsys.readouterr().out)) == 3


def test_stats_as_json_writes_times_as_export_does_and_names_each_figure(
        data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``patterns stats --json`` gave the times as stored (``…14:00:00+00:00``, with
    microseconds when there were), where ``export`` and the protocol write
    ``…14:00:00.000Z``, and each model's figures as a bare pair ``[2, 0.7]``."""
    assert main(["patterns", "stats", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)[0]
    assert first == {"workspace": str(data_dir / "a"), "turns": 2,
                     "by_model": {"deep": {"turns": 1, "mean_success": 0.7},
                                  "fast": {"turns": 1, "mean_success": 0.7}},
                     "oldest": "2026-05-08T14:00:00.000Z", "newest": "2026-05-08T14:00:00.000Z",
                     "centre_turns": 2}
    assert main(["patterns", "export"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["recorded_at"] == first["oldest"]
