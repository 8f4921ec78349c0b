"""The read tools stay inside the workspace and cap their output."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from switchman.engine.tools.workspace import MAX_LIST_ENTRIES, MAX_READ_BYTES, WorkspaceTools
from tests.support.hostile_files import REASONS, make_trap, within


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("import os\n\ndef main():\n    return 1\n")
    (root / "db").mkdir()
    (root / "db" / "q.sql").write_text("SELECT 1;\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.js").write_text("main\n")
    (root / "bin.dat").write_bytes(b"\0\1\2")
    (tmp_path / "secret.txt").write_text("top secret\n")
    return root


async def test_read_file_with_a_line_range(workspace: Path) -> None:
    outcome = await WorkspaceTools(workspace).run("read_file", {"path": "src/app.py",
                                                                "start_line": 3, "end_line": 4})
    assert outcome.content == "def main():\n    return 1"
    assert outcome.touched == ["src/app.py"]
    assert not outcome.is_error


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd", "src/../../secret.txt"])
async def test_paths_outside_the_workspace_are_refused(workspace: Path, path: str) -> None:
    outcome = await WorkspaceTools(workspace).run("read_file", {"path": path})
    assert outcome.is_error
    assert "outside the workspace" in outcome.content
    assert "top secret" not in outcome.content


async def test_symlinks_cannot_escape(workspace: Path) -> None:
    os.symlink(workspace.parent / "secret.txt", workspace / "link.txt")
    os.symlink(workspace.parent, workspace / "up")
    tools = WorkspaceTools(workspace)
    assert (await tools.run("read_file", {"path": "link.txt"})).is_error
    listing = await tools.run("list_files", {})
    assert "secret" not in listing.content
    found = await tools.run("grep", {"pattern": "top secret"})
    assert found.content == "(no matches)"


async def test_list_files_skips_vendored_folders(workspace: Path) -> None:
    outcome = await WorkspaceTools(workspace).run("list_files", {"glob": "*.*"})
    assert outcome.content.splitlines() == ["bin.dat", "db/q.sql", "src/app.py"]
    assert "db/q.sql" in outcome.touched


async def test_list_files_is_capped(workspace: Path) -> None:
    many = workspace / "many"
    many.mkdir()
    for i in range(MAX_LIST_ENTRIES + 10):
        (many / f"f{i}.txt").write_text("x")
    outcome = await WorkspaceTools(workspace).run("list_files", {"path": "many"})
    assert outcome.content.endswith("[… more files not shown]")
    assert len(outcome.touched) == MAX_LIST_ENTRIES


async def test_grep_uses_re2_and_skips_binaries(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    outcome = await tools.run("grep", {"pattern": "^def \\w+"})
    assert outcome.content == "src/app.py:3: def main():"
    bad = await tools.run("grep", {"pattern": "(a)\\1"})
    assert bad.is_error
    assert "backreferences" in bad.content


async def test_unknown_tool_and_bad_arguments(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    assert (await tools.run("rm", {})).is_error
    assert (await tools.run("read_file", {})).is_error
    assert (await tools.run("read_file", {"path": "bin.dat"})).content.endswith("binary file.")


@pytest.mark.parametrize("trap", ["fifo", "loop", "folder"])
async def test_file_system_traps_are_refused_without_blocking(workspace: Path, trap: str) -> None:
    make_trap(workspace / "trap.txt", trap)
    tools = WorkspaceTools(workspace)
    outcome = within(2, lambda: asyncio.run(tools.run("read_file", {"path": "trap.txt"})))
    assert outcome.is_error
    assert REASONS[trap] in outcome.content
    found = within(2, lambda: asyncio.run(tools.run("grep", {"pattern": "main"})))
    assert "src/app.py:3" in found.content  # the rest of the workspace is still searched


async def test_a_huge_file_is_read_only_up_to_the_cap(workspace: Path) -> None:
    (workspace / "huge.txt").write_bytes(b"line\n" * (MAX_READ_BYTES // 5 + 10))
    outcome = await WorkspaceTools(workspace).run("read_file", {"path": "huge.txt"})
    assert outcome.content.endswith("[… truncated]")


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("read_file", {"path": "src/app.py", "start_line": "abc"}, "'start_line' must be a whole"),
    ("read_file", {"path": "src/app.py", "end_line": 2.5}, "'end_line' must be a whole"),
    ("read_file", {"path": "src/app.py", "start_line": True}, "'start_line' must be a whole"),
    ("read_file", {"path": "src/\u0000app.py"}, "NUL"),
    ("list_files", {"path": "src\u0000"}, "NUL"),
    ("grep", {"pattern": "x", "path": "\u0000"}, "NUL"),
    ("list_files", {"glob": ["*.py"]}, "'glob' must be text"),
    ("grep", {"pattern": 5}, "'pattern' must be text"),
    ("read_file", {"path": "src/app.py", "start_line": 10 ** 30}, "'start_line' must be a whole"),
])
async def test_malformed_arguments_are_error_results(
        workspace: Path, name: str, arguments: dict[str, object], expected: str) -> None:
    outcome = await WorkspaceTools(workspace).run(name, arguments)
    assert outcome.is_error
    assert expected in outcome.content
