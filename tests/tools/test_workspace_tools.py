"""The read tools stay inside the workspace and cap their output."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from switchman.engine.tools.secret_files import is_secret_file
from switchman.engine.tools.workspace import (
    MAX_GREP_FILE_BYTES,
    MAX_GREP_MATCHES,
    MAX_LIST_ENTRIES,
    MAX_READ_BYTES,
    MAX_READ_LINES,
    WorkspaceTools,
    read_lines,
)
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


async def test_a_file_uri_in_the_workspace_is_read_as_its_path(workspace: Path) -> None:
    """A model that names a file as the editor does (``file:///…``): the URI was taken for a
    relative path (a folder ``file:`` in the workspace) and the error named ``'file:/…'``."""
    (workspace / "src" / "my notes.txt").write_text("kept\n")
    tools = WorkspaceTools(workspace)
    for uri in ((workspace / "src" / "app.py").as_uri(),
                (workspace / "src" / "my notes.txt").as_uri()):  # percent-escaped
        outcome = await tools.run("read_file", {"path": uri})
        assert not outcome.is_error, outcome.content
    assert outcome.content == "kept" and outcome.touched == ["src/my notes.txt"]
    outside = (workspace.parent / "secret.txt").as_uri()
    refused = await tools.run("read_file", {"path": outside})
    assert refused.is_error and "top secret" not in refused.content
    assert refused.content.startswith(f"'{outside}' is outside the workspace")
    other_host = await tools.run("read_file", {"path": "file://server/share/app.py"})
    assert other_host.content == ("'file://server/share/app.py' is a file:// URI on another "
                                  "host; give a path in the workspace.")


async def test_symlinks_cannot_escape(workspace: Path) -> None:
    os.symlink(workspace.parent / "secret.txt", workspace / "link.txt")
    os.symlink(workspace.parent, workspace / "up")
    tools = WorkspaceTools(workspace)
    assert (await tools.run("read_file", {"path": "link.txt"})).is_error
    listing = await tools.run("list_files", {})
    assert "secret" not in listing.content
    found = await tools.run("grep", {"pattern": "top secret"})
    assert found.content == "(no matches)"


async def test_grep_of_a_folder_does_not_follow_links_to_what_read_file_refuses(
        workspace: Path) -> None:
    """A symbolic link inside the workspace to ``.git/config`` or to a ``.env`` is refused by
    read_file (the real path counts); grep of the folder used to search through it by the
    link's innocent name, handing the repository's credentials or the keys to the model."""
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("url = https://me:ghp_do-not-leak@host/r\n")
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-do-not-leak\n")
    os.symlink(".git/config", workspace / "remote.txt")
    os.symlink(".env", workspace / "settings.txt")
    tools = WorkspaceTools(workspace)
    assert (await tools.run("read_file", {"path": "remote.txt"})).is_error
    assert (await tools.run("read_file", {"path": "settings.txt"})).is_error
    found = await tools.run("grep", {"pattern": "do-not-leak"})
    assert found.content.splitlines() == [
        "(no matches)",
        "[not searched, as files like these usually hold secrets: .env, settings.txt]"]
    assert found.touched == []


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


async def test_grep_says_when_it_stopped_at_its_match_cap(workspace: Path) -> None:
    """A grep that stopped at its cap said nothing of it: the model took the first matches for
    all of them. A folder's search and a named file's say so; one under the cap does not."""
    many = workspace / "many"
    many.mkdir()
    (many / "a.txt").write_text("hit\n" * (MAX_GREP_MATCHES + 5))
    tools = WorkspaceTools(workspace)
    note = (f"[stopped at the first {MAX_GREP_MATCHES} matches; there may be more: narrow the "
            "pattern, the path or the glob to see the rest]")
    for path in ("many", "many/a.txt"):
        outcome = await tools.run("grep", {"pattern": "hit", "path": path})
        lines = outcome.content.splitlines()
        assert lines[-1] == note and len(lines) == MAX_GREP_MATCHES + 1, path
    (many / "a.txt").write_text("hit\n" * 3)
    assert "stopped" not in (await tools.run("grep", {"pattern": "hit", "path": "many"})).content


async def test_grep_uses_re2_and_skips_binaries(workspace: Path) -> None:
    tools = WorkspaceTools(workspace)
    outcome = await tools.run("grep", {"pattern": "^def \\w+"})
    assert outcome.content == "src/app.py:3: def main():"
    bad = await tools.run("grep", {"pattern": "(a)\\1"})
    assert bad.is_error
    assert "backreferences" in bad.content


async def test_grep_counts_lines_by_newlines_only(workspace: Path) -> None:
    """A form feed or a lone carriage return does not end a line (as editors and read_file
    count them), so grep's line numbers point at the right line."""
    (workspace / "paged.txt").write_bytes(b"first\x0cpage\rstill first\nneedle\n")
    tools = WorkspaceTools(workspace)
    outcome = await tools.run("grep", {"pattern": "needle", "path": "paged.txt"})
    assert outcome.content == "paged.txt:2: needle"


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
    assert outcome.content.endswith(f"[… truncated: lines 1-{MAX_READ_LINES} shown; read on with "
                                    f"start_line={MAX_READ_LINES + 1}]")


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("read_file", {"path": "src/app.py", "start_line": "abc"}, "'start_line' must be a whole"),
    ("read_file", {"path": "src/app.py", "end_line": 2.5}, "'end_line' must be a whole"),
    ("read_file", {"path": "src/app.py", "start_line": True}, "'start_line' must be a whole"),
    ("read_file", {"path": "src/\u0000app.py"}, "NUL"),
    ("list_files", {"path": "src\u0000"}, "NUL"),
    ("grep", {"pattern": "x", "path": "\u0000"}, "NUL"),
    ("list_files", {"glob": ["*.py"]}, "'glob' must be text"),
    ("grep", {"pattern": 5}, "'pattern' must be text"),
    ("read_file", {"path": "src/app.py", "start_line": 10 ** 30},
     "'start_line' is too large: it can be at most 1,000,000,000, not 1000000000000000000000"),
    ("read_file", {"path": "src/app.py", "end_line": 10 ** 12},
     "'end_line' is too large: it can be at most 1,000,000,000, not 1000000000000."),
    ("read_file", {"path": "src/app.py", "end_line": "99999999999999"},
     "'end_line' is too large: it can be at most 1,000,000,000, not '99999999999999'."),
    ("read_file", {"path": "src/app.py", "start_line": -(10 ** 12)},
     "'start_line' is too small: it can be at least -1,000,000,000, not -1000000000000."),
    ("read_file", {"path": "src/app.py", "end_line": 1e300}, "'end_line' is too large"),
    ("read_file", {"path": "src/app.py", "start_line": "-" + "9" * 50},
     "'start_line' is too small"),
    ("read_file", {"path": "src/app.py", "start_line": "0000000000009"}, "start_line 9 is past"),
    ("read_file", {"path": "src/app.py", "end_line": "12a"}, "'end_line' must be a whole"),
])
async def test_malformed_arguments_are_error_results(
        workspace: Path, name: str, arguments: dict[str, object], expected: str) -> None:
    outcome = await WorkspaceTools(workspace).run(name, arguments)
    assert outcome.is_error
    assert expected in outcome.content


async def test_a_line_range_past_the_first_read_cap_is_read(workspace: Path) -> None:
    """Lines far into a big file are reachable with start_line, and the truncation says how
    to read on (they used to come back empty, as if the file ended there)."""
    count = MAX_READ_BYTES // 5 * 3
    (workspace / "big.log").write_text("".join(f"{n:04d}\n" if n < 10000 else f"{n}\n"
                                               for n in range(1, count + 1)))
    tools = WorkspaceTools(workspace)
    first = await tools.run("read_file", {"path": "big.log"})
    assert first.content.endswith(
        f"[… truncated: lines 1-{MAX_READ_LINES} shown; read on with "
        f"start_line={MAX_READ_LINES + 1}]")
    far = await tools.run("read_file", {"path": "big.log", "start_line": count - 1,
                                        "end_line": count + 5})
    assert (far.is_error, far.content) == (False, f"{count - 1}\n{count}")


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"start_line": 9}, "'src/app.py' has 4 lines; start_line 9 is past its end."),
    ({"start_line": 3, "end_line": 2}, "'end_line' (2) is before 'start_line' (3)"),
])
async def test_an_impossible_line_range_is_an_error_not_an_empty_file(
        workspace: Path, arguments: dict[str, int], expected: str) -> None:
    outcome = await WorkspaceTools(workspace).run("read_file", {"path": "src/app.py",
                                                                **arguments})
    assert outcome.is_error
    assert expected in outcome.content


async def test_an_empty_file_reads_as_empty(workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    outcome = await WorkspaceTools(workspace).run("read_file", {"path": "empty.txt"})
    assert (outcome.is_error, outcome.content) == (False, "")


async def test_one_huge_line_is_cut_and_says_so(workspace: Path) -> None:
    (workspace / "one.json").write_text("x" * (MAX_READ_BYTES * 2))
    outcome = await WorkspaceTools(workspace).run("read_file", {"path": "one.json"})
    assert outcome.content.startswith("x" * MAX_READ_BYTES + "\n")
    assert outcome.content.endswith("only its beginning is shown]")


async def test_grep_says_which_files_it_did_not_search_and_searches_a_named_big_file(
        workspace: Path) -> None:
    """A file over grep's size cap used to be skipped in silence: "(no matches)" while the
    text was there."""
    (workspace / "big.log").write_text("filler line\n" * (MAX_GREP_FILE_BYTES // 12 + 10)
                                       + "needle here\n")
    tools = WorkspaceTools(workspace)
    walked = await tools.run("grep", {"pattern": "needle"})
    assert walked.content == ("(no matches)\n[not searched: 1 file larger than 1 MB "
                              "(big.log); give one as the path to search it]")
    named = await tools.run("grep", {"pattern": "needle", "path": "big.log"})
    assert named.content.endswith(": needle here")
    assert named.touched == ["big.log"]


@pytest.mark.parametrize(("path", "expected"), [
    ("bin.dat", "'bin.dat' is a binary file."),
    ("nothing.txt", "does not exist"),
])
async def test_grep_on_a_named_file_it_cannot_search_says_why(
        workspace: Path, path: str, expected: str) -> None:
    outcome = await WorkspaceTools(workspace).run("grep", {"pattern": "x", "path": path})
    assert outcome.is_error
    assert expected in outcome.content


@pytest.mark.parametrize("ending", ["\n", "\r\n", ""])
def test_read_lines_agrees_with_splitting_the_whole_file(tmp_path: Path, ending: str) -> None:
    """Both ways of reading (all at once within the first 256 KB, or reading on past it)
    give the lines a plain split gives, at every boundary, and count a file's lines right."""
    lines = [f"{n}:" + "x" * (n % 97) for n in range(1, 9001)]
    path = tmp_path / "f.txt"
    path.write_text(ending.join(lines) + ending if ending else "\n".join(lines))
    near_cap = next(n for n in range(len(lines))
                    if len("\n".join(lines[:n])) * (1 + ("\r" in ending)) > MAX_READ_BYTES)
    for start, end in [(1, None), (1, 5), (2, 2), (near_cap - 2, near_cap + 2),
                       (near_cap + 1, None), (8990, None), (9000, 9000), (8999, 12000)]:
        part = read_lines(path, start, end)
        stop = len(lines) if end is None else min(end, len(lines))
        expected = lines[start - 1:min(stop, start - 1 + MAX_READ_LINES)]
        assert part.lines == expected, (start, end)
        assert part.more == (end is None and start - 1 + MAX_READ_LINES < len(lines)), (start, end)
    past = read_lines(path, 9005, None)
    assert (past.lines, past.total) == ([], 9000)


@pytest.mark.parametrize("name", [".env", ".env.local", "prod.env", ".envrc", "id_ed25519",
                                  "server.pem", "tls.key", ".npmrc", ".netrc", ".pypirc",
                                  ".git-credentials", "credentials.json", "Store.JKS"])
def test_names_that_usually_hold_secrets(name: str) -> None:
    assert is_secret_file(name)


@pytest.mark.parametrize("name", [".env.example", ".env.sample", "example.env", ".env.template",
                                  "id_ed25519.pub", "env.py", "environment.yml", "keys.py",
                                  "README.md"])
def test_templates_and_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret_file(name)


async def test_secret_files_are_not_read_or_searched_for_the_model(workspace: Path) -> None:
    """A workspace's .env is inside the workspace, yet what the read tools return goes to the
    model's provider: read_file refuses it, grep skips it and says so, a named one is refused;
    its template is an ordinary file, and list_files still names it."""
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-do-not-leak\n")
    (workspace / "config").mkdir()
    (workspace / "config" / "prod.env").write_text("DB_PASSWORD=do-not-leak\n")
    (workspace / ".env.example").write_text("ANTHROPIC_API_KEY=\n")
    tools = WorkspaceTools(workspace)
    read = await tools.run("read_file", {"path": ".env"})
    assert read.is_error and "usually holds secrets" in read.content
    assert "do-not-leak" not in read.content
    found = await tools.run("grep", {"pattern": "API_KEY|PASSWORD"})
    assert "do-not-leak" not in found.content
    assert found.content.splitlines() == [
        ".env.example:1: ANTHROPIC_API_KEY=",
        "[not searched, as files like these usually hold secrets: .env, config/prod.env]"]
    named = await tools.run("grep", {"pattern": "PASSWORD", "path": "config/prod.env"})
    assert named.is_error and "do-not-leak" not in named.content
    assert not (await tools.run("read_file", {"path": ".env.example"})).is_error
    assert ".env" in (await tools.run("list_files", {})).content.splitlines()


def _buffers(workspace: Path, texts: dict[str, str]) -> WorkspaceTools:
    """The read tools with the editor sharing ``texts`` (relative path -> unsaved text)."""
    real = {Path(os.path.realpath(workspace / rel)): text for rel, text in texts.items()}
    return WorkspaceTools(workspace, lambda: real)


async def test_a_shared_buffer_is_read_with_the_files_caps(workspace: Path) -> None:
    """The editor's text of a file is read like the file: ranges, the line cap with its
    note, a range past the end named as an error, a lone surrogate as U+FFFD."""
    long = "".join(f"line {n}\n" for n in range(1, MAX_READ_LINES + 11))
    tools = _buffers(workspace, {"src/app.py": long, "db/q.sql": "SELECT \ud800;\n"})
    first = await tools.run("read_file", {"path": "src/app.py"})
    assert first.content.endswith(f"line {MAX_READ_LINES}\n[… truncated: lines 1-"
                                  f"{MAX_READ_LINES} shown; read on with start_line="
                                  f"{MAX_READ_LINES + 1}]")
    rest = await tools.run("read_file", {"path": "src/app.py", "start_line": MAX_READ_LINES + 9})
    assert rest.content == f"line {MAX_READ_LINES + 9}\nline {MAX_READ_LINES + 10}"
    past = await tools.run("read_file", {"path": "src/app.py", "start_line": 5000})
    assert past.is_error and f"has {MAX_READ_LINES + 10} lines" in past.content
    odd = await tools.run("read_file", {"path": "db/q.sql"})
    assert odd.content.startswith("SELECT \ufffd") and not odd.is_error


async def test_grep_searches_shared_buffers_in_place_of_their_files(workspace: Path) -> None:
    tools = _buffers(workspace, {"src/app.py": "import os\n\ndef start():\n    return 2\n"})
    found = await tools.run("grep", {"pattern": "def (main|start)"})
    assert found.content == "src/app.py:3: def start():"
    big = _buffers(workspace, {"db/q.sql": "x" * (MAX_GREP_FILE_BYTES + 1)})
    assert "larger than 1 MB (db/q.sql)" in (await big.run("grep", {"pattern": "y"})).content


async def test_a_folder_grep_searches_buffers_never_saved_in_the_walks_order(
        workspace: Path) -> None:
    """A file created in the editor and not saved is searched as if it were on the disk:
    in its folder's place, with the glob, the skipped folders and the secret-file rule."""
    tools = _buffers(workspace, {
        "main.py": "def main(): ...\n", "src/new.py": "\n# main\n", "src/app.py":
        "import os\n\ndef main():\n", "zz/new/deep.py": "main = 1\n", "zz/a.txt": "main\n",
        "node_modules/new.js": "main\n", ".env.local": "main=1\n", "src/lib.ts": "main\n"})
    found = await tools.run("grep", {"pattern": "main", "glob": "*.py"})
    assert found.content.splitlines() == [
        "main.py:1: def main(): ...", "src/app.py:3: def main():", "src/new.py:2: # main",
        "zz/new/deep.py:1: main = 1"]
    assert found.touched == ["main.py", "src/app.py", "src/new.py", "zz/new/deep.py"]
    everything = (await tools.run("grep", {"pattern": "main"})).content.splitlines()
    assert everything[-1] == "[not searched, as files like these usually hold secrets: .env.local]"
    assert "zz/a.txt:1: main" in everything and "src/lib.ts:1: main" in everything
    assert not any(line.startswith("node_modules/") for line in everything)
    only_new = await tools.run("grep", {"pattern": "main", "path": "zz"})
    assert only_new.content == "zz/a.txt:1: main\nzz/new/deep.py:1: main = 1"
    assert (await tools.run("grep", {"pattern": "main", "path": "src/new.py"})).content == (
        "src/new.py:2: # main")
