"""edit_file / create_file / delete_file: proposals, approval, confinement."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from switchman.engine.tools.approval import (
    MAX_RECORDED_DIFF_CHARS,
    ApprovalAnswer,
    ApprovalRequest,
    ToolClass,
    TrustStore,
)
from switchman.engine.tools.toolbox import Toolbox
from tests.tools.conftest import ScriptedApprover, make_toolbox


async def test_edit_file_replaces_a_unique_snippet_after_approval(
        toolbox: Toolbox, project: Path, approver: ScriptedApprover) -> None:
    outcome = await toolbox.run("edit_file", {"path": "src/app.py", "old_text": "return 42",
                                              "new_text": "return 43"})
    assert not outcome.is_error, outcome.content
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 43\n"
    assert outcome.touched == ["src/app.py"]
    assert outcome.summary == "edited src/app.py"  # the editor's tool line; was "editd"
    request = approver.asked[0]
    assert (request.tool, request.tool_class, request.title) == (
        "edit_file", ToolClass.WRITE, "Edit src/app.py")
    assert "-    return 42\n+    return 43\n" in (request.diff or "")
    assert request.original == "def main():\n    return 42\n"


@pytest.mark.parametrize(("old", "expected"), [
    ("return 99", "was not found"), ("", "'old_text' is empty"),
])
async def test_edit_file_explains_a_snippet_it_cannot_use(
        toolbox: Toolbox, approver: ScriptedApprover, old: str, expected: str) -> None:
    outcome = await toolbox.run("edit_file", {"path": "src/app.py", "old_text": old,
                                              "new_text": "x"})
    assert outcome.is_error
    assert expected in outcome.content
    assert approver.asked == []  # nothing to approve


@pytest.mark.parametrize(("tool", "args", "expected"), [
    # the user was asked to approve an empty diff, and the model told "Edited src/app.py"
    ("edit_file", {"path": "src/app.py", "old_text": "return 42", "new_text": "return 42"},
     "'new_text' is the same as 'old_text': the edit would change nothing in src/app.py"),
    ("create_file", {"path": "src/app.py", "content": "def main():\n    return 42\n",
                     "overwrite": True},
     "src/app.py already holds exactly this content: nothing would change"),
    # asked first, then refused by the editor (it cannot make a folder where a file is)
    ("create_file", {"path": "src/app.py/new.txt", "content": "x"},
     "'src/app.py' is a file, not a folder: src/app.py/new.txt cannot be created"),
])
async def test_a_change_that_cannot_happen_is_refused_before_asking(
        toolbox: Toolbox, project: Path, approver: ScriptedApprover, tool: str,
        args: dict[str, Any], expected: str) -> None:
    outcome = await toolbox.run(tool, args)
    assert outcome.is_error
    assert expected in outcome.content
    assert approver.asked == []
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 42\n"


async def test_an_ambiguous_snippet_is_refused(toolbox: Toolbox, project: Path) -> None:
    (project / "twice.txt").write_text("a\na\n")
    outcome = await toolbox.run("edit_file", {"path": "twice.txt", "old_text": "a",
                                              "new_text": "b"})
    assert "occurs 2 times" in outcome.content
    assert (project / "twice.txt").read_text() == "a\na\n"


async def test_create_and_delete(toolbox: Toolbox, project: Path) -> None:
    created = await toolbox.run("create_file", {"path": "docs/new.md", "content": "# New\n"})
    assert not created.is_error
    assert created.summary == "created docs/new.md"
    assert (project / "docs" / "new.md").read_text() == "# New\n"
    again = await toolbox.run("create_file", {"path": "docs/new.md", "content": "x"})
    assert "already exists" in again.content
    replaced = await toolbox.run("create_file", {"path": "docs/new.md", "content": "y",
                                                 "overwrite": True})
    assert not replaced.is_error
    assert (project / "docs" / "new.md").read_text() == "y"
    deleted = await toolbox.run("delete_file", {"path": "docs/new.md"})
    assert not deleted.is_error
    assert deleted.summary == "deleted docs/new.md"
    # no "the user can undo it": in Neovim a deleted file and its buffer are gone for good
    assert deleted.content == "Deleted docs/new.md through the editor."
    assert not (project / "docs" / "new.md").exists()
    folder = await toolbox.run("delete_file", {"path": "src"})
    assert "is a folder" in folder.content


async def test_deleting_a_link_removes_the_link_not_the_file_it_leads_to(
        toolbox: Toolbox, project: Path, approver: ScriptedApprover) -> None:
    """``rm link`` semantics: the approval named (and the editor deleted) the link's target."""
    os.symlink(project / "src" / "app.py", project / "alias.py")
    os.symlink(project / "src" / "gone.py", project / "dangling.py")
    deleted = await toolbox.run("delete_file", {"path": "alias.py"})
    assert not deleted.is_error, deleted.content
    assert deleted.summary == "deleted alias.py"
    (request,) = approver.asked
    assert (request.title, request.original) == ("Delete alias.py",
                                                 "[a symbolic link to src/app.py]\n")
    assert not os.path.lexists(project / "alias.py")
    assert (project / "src" / "app.py").read_text() == "def main():\n    return 42\n"
    dangling = await toolbox.run("delete_file", {"path": "dangling.py"})
    assert dangling.is_error and dangling.content == (
        "'dangling.py' is a symbolic link to nothing; delete_file deletes files and links "
        "to files only.")  # it named the missing target: "'src/gone.py' is not a file."
    assert len(approver.asked) == 1


async def test_a_file_that_is_not_text_can_be_deleted(
        toolbox: Toolbox, project: Path, approver: ScriptedApprover) -> None:
    """"delete one file": a binary or huge file was refused as not editable text."""
    (project / "core.bin").write_bytes(b"\x00\xff\x00 binary")
    (project / "big.log").write_text("x" * (2 * 1024 * 1024 + 1))
    for name, shown in (("core.bin", "[core.bin: 10 bytes, not UTF-8 text, not shown]\n"),
                        ("big.log", "[big.log: 2,097,153 bytes, too large to show]\n")):
        deleted = await toolbox.run("delete_file", {"path": name})
        assert not deleted.is_error, deleted.content
        assert approver.asked[-1].original == shown
        assert not (project / name).exists()
    missing = await toolbox.run("delete_file", {"path": "nothing.txt"})
    assert missing.is_error and "is not a file" in missing.content


async def test_a_denial_changes_nothing_and_carries_the_reason(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    approver.answers.append(ApprovalAnswer("deny", "use a constant instead"))
    outcome = await make_toolbox(project, approver, trust).run(
        "edit_file", {"path": "src/app.py", "old_text": "42", "new_text": "43"})
    assert outcome.is_error
    assert "denied" in outcome.content
    assert "use a constant instead" in outcome.content
    assert "42" in (project / "src" / "app.py").read_text()


@pytest.mark.parametrize(("tool", "arguments"), [
    ("create_file", {"path": "../evil.txt", "content": "x"}),
    ("create_file", {"path": "/tmp/evil.txt", "content": "x"}),
    ("edit_file", {"path": "../outside.txt", "old_text": "outside", "new_text": "pwned"}),
    ("delete_file", {"path": "../outside.txt"}),
    ("create_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ncurl evil\n"}),
    ("edit_file", {"path": ".git/config", "old_text": "token", "new_text": "x"}),
    ("create_file", {"path": "linkdir/evil.txt", "content": "x"}),
    ("edit_file", {"path": "link.txt", "old_text": "outside", "new_text": "pwned"}),
    ("create_file", {"path": "src/\u0000.py", "content": "x"}),
    ("delete_file", {"path": "link.txt"}),
    ("delete_file", {"path": "linkdir/outside.txt"}),
])
async def test_confinement_attacks_are_refused_before_asking(
        toolbox: Toolbox, project: Path, approver: ScriptedApprover, tool: str,
        arguments: dict[str, object]) -> None:
    os.symlink(project.parent, project / "linkdir")
    os.symlink(project.parent / "outside.txt", project / "link.txt")
    outcome = await toolbox.run(tool, arguments)
    assert outcome.is_error
    assert approver.asked == []
    assert (project.parent / "outside.txt").read_text() == "outside\n"
    assert not (project.parent / "evil.txt").exists()
    assert not (project / ".git" / "hooks").exists()


async def test_reading_git_internals_is_refused(toolbox: Toolbox) -> None:
    outcome = await toolbox.run("read_file", {"path": ".git/config"})
    assert outcome.is_error
    assert "token" not in outcome.content


@pytest.mark.parametrize("path", [".GIT/config", ".Git/hooks/pre-commit", ".git./config",
                                  "src/.GIT /config"])
async def test_git_internals_are_refused_whatever_their_case(toolbox: Toolbox, project: Path,
                                                             approver: ScriptedApprover,
                                                             path: str) -> None:
    """On the case-insensitive file systems of macOS and Windows ``.GIT/config`` is
    ``.git/config`` (and Windows drops a name's trailing dots and spaces): the names were
    compared exactly, so these reached the repository's credentials and hooks there."""
    (project / path).parent.mkdir(parents=True, exist_ok=True)
    (project / path).write_text("url = https://me:token@host/r\n")
    read = await toolbox.run("read_file", {"path": path})
    assert read.is_error and "inside .git/" in read.content
    assert "token" not in read.content
    written = await toolbox.run("create_file", {"path": path, "content": "x",
                                                "overwrite": True})
    assert written.is_error and "inside .git/" in written.content
    assert approver.asked == []


@pytest.mark.parametrize(("tool", "arguments", "field"), [
    ("read_file", {"path": "src/\ud800.py"}, "path"),
    ("create_file", {"path": "src/new.py", "content": "x = '\udfff'"}, "content"),
    ("edit_file", {"path": "src/app.py", "old_text": "42", "new_text": "\ud800"}, "new_text"),
    ("run_command", {"command": "echo \ud800"}, "command"),
])
async def test_a_lone_surrogate_in_an_argument_is_refused_before_asking(
        toolbox: Toolbox, approver: ScriptedApprover, tool: str, arguments: dict[str, Any],
        field: str) -> None:
    """Found by trying it: JSON from a provider may hold one; the path reached the file
    system and the tool "failed unexpectedly" with a traceback in the log."""
    outcome = await toolbox.run(tool, arguments)
    assert outcome.is_error and approver.asked == []
    assert f"'{field}' contains an invalid character (a lone UTF-16 surrogate)" in \
        outcome.content


async def test_a_huge_denial_reason_reaches_the_model_capped(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    """Found by trying it: an editor answering with a 100 KB reason had all of it sent to the
    model, on every following request of the turn."""
    approver.answers.append(ApprovalAnswer("deny", "no " * 50_000))
    outcome = await make_toolbox(project, approver, trust).run(
        "edit_file", {"path": "src/app.py", "old_text": "42", "new_text": "43"})
    assert outcome.is_error and "Their reason: no no" in outcome.content
    assert outcome.content.endswith("… (cut)") and len(outcome.content) < 1200


@pytest.mark.parametrize(("tool", "arguments", "meanwhile", "kept"), [
    # a worker beside this one (or the user) edits the file while this edit is being approved
    ("edit_file", {"path": "src/app.py", "old_text": "return 42", "new_text": "return 43"},
     "# a comment added meanwhile\ndef main():\n    return 42\n", None),
    # the file is created meanwhile: writing the new file's text would replace it
    ("create_file", {"path": "notes.md", "content": "# Notes by the model\n"},
     "my own notes, written while I was asked\n", "notes.md"),
    ("delete_file", {"path": "src/app.py"}, "def main():\n    return 7\n", None),
])
async def test_a_file_that_changed_while_its_change_was_approved_is_left_alone(
        project: Path, trust: TrustStore, tool: str, arguments: dict[str, Any], meanwhile: str,
        kept: str | None) -> None:
    """The change was applied at the places computed before the approval: an edit landed in
    the wrong place of the new text, a create wrote over a file made meanwhile (Neovim's
    `workspace/applyEdit` truncates it), a delete removed text nobody had seen."""
    target = project / (kept or "src/app.py")

    class ChangingMeanwhile(ScriptedApprover):
        async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
            target.write_text(meanwhile)
            return await super().ask(request)

    outcome = await make_toolbox(project, ChangingMeanwhile(), trust).run(tool, arguments)
    assert outcome.is_error and "changed while this change waited for approval, so nothing " \
        "was changed" in outcome.content
    assert target.read_text() == meanwhile
    # The question's record says the allowed change was not applied, and why: the card said
    # "Allowed once." above a tool line saying it failed.
    assert outcome.approval is not None and outcome.approval.outcome == "not_applied"
    assert outcome.approval.reason == (f"{target.relative_to(project).as_posix()} changed since "
                                       "this change was proposed (on disk or by another tool): "
                                       "applied to that text it would have landed in the wrong "
                                       "place, so nothing was changed.")


async def test_a_change_to_a_file_nobody_touched_meanwhile_still_applies(
        toolbox: Toolbox, project: Path) -> None:
    (project / "notes.md").write_text("one\n")
    outcome = await toolbox.run("create_file", {"path": "notes.md", "content": "two\n",
                                                "overwrite": True})
    assert not outcome.is_error and (project / "notes.md").read_text() == "two\n"
    added = await toolbox.run("memory_add", {"file": "memory", "text": "tests: make test"})
    assert not added.is_error, added.content


@pytest.mark.parametrize(("tool", "arguments"), [
    ("edit_file", {"path": ".env", "old_text": "sk-ant-", "new_text": "x"}),
    ("edit_file", {"path": ".env", "old_text": "sk-nothing-like-it", "new_text": "x"}),
    ("edit_file", {"path": ".env", "old_text": "=", "new_text": "x"}),
    ("edit_file", {"path": "settings.txt", "old_text": "sk-ant-", "new_text": "x"}),
    ("edit_file", {"path": "config/missing.env", "old_text": "sk-ant-", "new_text": "x"}),
    ("create_file", {"path": ".env", "content": "KEY=1\n", "overwrite": True}),
    ("create_file", {"path": "deploy/id_ed25519", "content": "x"}),
    ("delete_file", {"path": ".env"}),
    ("delete_file", {"path": "settings.txt"}),
])
async def test_files_that_usually_hold_secrets_are_not_changed_for_the_model(
        toolbox: Toolbox, project: Path, approver: ScriptedApprover, tool: str,
        arguments: dict[str, Any]) -> None:
    """edit_file's "was not found" / "occurs 2 times" told the model whether a snippet is in
    a .env (an oracle on the key) before anything was approved: the write tools refuse such
    a file (by its name, or the name a link leads to) with the same answer whatever it holds."""
    (project / ".env").write_text("ANTHROPIC_API_KEY=sk-ant-one\nOPENAI_API_KEY=sk-two\n")
    os.symlink(project / ".env", project / "settings.txt")
    outcome = await toolbox.run(tool, arguments)
    assert outcome.is_error and approver.asked == []
    assert "usually holds secrets" in outcome.content
    assert "not found" not in outcome.content and "occurs" not in outcome.content
    assert (project / ".env").read_text() == "ANTHROPIC_API_KEY=sk-ant-one\nOPENAI_API_KEY=sk-two\n"
    assert not (project / "deploy").exists()


async def test_a_template_of_a_secret_file_is_edited_as_usual(
        toolbox: Toolbox, project: Path) -> None:
    (project / ".env.example").write_text("ANTHROPIC_API_KEY=\n")
    outcome = await toolbox.run("edit_file", {"path": ".env.example", "old_text": "KEY=",
                                              "new_text": "KEY=your-key-here"})
    assert not outcome.is_error, outcome.content
    assert (project / ".env.example").read_text() == "ANTHROPIC_API_KEY=your-key-here\n"


async def test_a_new_files_buffer_counts_as_the_file_once_it_has_text(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    """A buffer the editor opened for a file not on disk yet: empty, create_file creates the
    file; with the user's text in it, the file exists for the tools (they read that text)."""
    new, typed = project / "src" / "new.py", project / "src" / "typed.py"
    toolbox = make_toolbox(project, approver, trust, buffers={new: "", typed: "x = 1\n"})
    created = await toolbox.run("create_file", {"path": "src/new.py", "content": "y = 2\n"})
    assert created.summary == "created src/new.py"
    refused = await toolbox.run("create_file", {"path": "src/typed.py", "content": "y = 2\n"})
    assert refused.is_error and "already exists" in refused.content
    read = await toolbox.run("read_file", {"path": "src/typed.py"})
    assert read.content == "x = 1"


async def test_a_buffer_showing_a_non_utf8_file_with_replacement_characters_is_not_edited(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    """VS Code opens a Latin-1 file as UTF-8 with � for its bytes: an edit saved from that
    buffer would write � over every é of the file, so it is refused as the disk's file is.
    A buffer that decoded the file (Neovim's 'fileencoding'), or a UTF-8 file's own �, is edited."""
    latin, neovim, utf8 = (project / "src" / name for name in ("a.py", "b.py", "c.py"))
    latin.write_bytes(b"caf\xe9 = 1\nx = 1\n")
    neovim.write_bytes(b"caf\xe9 = 1\nx = 1\n")
    utf8.write_text("s = '\ufffd'\nx = 1\n", "utf-8")
    toolbox = make_toolbox(project, approver, trust, buffers={
        latin: "caf\ufffd = 1\nx = 1\n", neovim: "café = 1\nx = 1\n",
        utf8: "s = '\ufffd'\nx = 1\n"})
    refused = await toolbox.run("edit_file", {"path": "src/a.py", "old_text": "x = 1",
                                              "new_text": "x = 2"})
    assert refused.is_error and "not a UTF-8 text file" in refused.content, refused.content
    assert latin.read_bytes() == b"caf\xe9 = 1\nx = 1\n"
    for name in ("src/b.py", "src/c.py"):
        edited = await toolbox.run("edit_file", {"path": name, "old_text": "x = 1",
                                                 "new_text": "x = 2"})
        assert not edited.is_error, edited.content


async def test_a_refusal_is_its_own_summary_and_a_long_one_is_cut_at_a_word_with_a_mark(
        toolbox: Toolbox, project: Path) -> None:
    # The editors' tool line is the summary: it was cut at 80 characters mid-word, unmarked
    # ("… only files under /tmp/project can be us"), so the reason read as complete.
    outside = await toolbox.run("edit_file", {"path": "../outside.txt", "old_text": "a",
                                              "new_text": "b"})
    assert outside.is_error and outside.summary == outside.content
    assert outside.summary.endswith(f"only files under {project} can be used.")
    deep = "/".join(["folder"] * 40) + "/file.txt"
    long = await toolbox.run("create_file", {"path": f"../{deep}", "content": "x"})
    assert long.is_error and len(long.summary) <= 160
    assert long.summary.endswith("…") and long.content.startswith(long.summary[:-1])
    assert not long.summary[:-1].endswith("fold")  # a whole word, then the mark


async def test_a_file_too_large_to_edit_is_refused_with_its_size_and_the_limit(
        toolbox: Toolbox, project: Path) -> None:
    (project / "big.log").write_text("x" * (3 * 1024 * 1024) + "\nmarker\n")
    outcome = await toolbox.run("edit_file", {"path": "big.log", "old_text": "marker",
                                              "new_text": "changed"})
    assert outcome.is_error
    assert outcome.content == ("'big.log' is too large to edit here: it has 3 MB, and files "
                               "of up to 2 MB can be edited.")  # was only "too large"
    (project / "big.log").write_text("x" * (2 * 1024 * 1024) + "\nmarker\n")  # just over
    outcome = await toolbox.run("edit_file", {"path": "big.log", "old_text": "marker",
                                              "new_text": "changed"})
    assert outcome.content == ("'big.log' is too large to edit here: it has 2.1 MB, and files "
                               "of up to 2 MB can be edited.")  # it read "it has 2 MB"


async def test_a_snippet_of_several_lines_matches_a_file_with_windows_line_ends(
        toolbox: Toolbox, project: Path) -> None:
    # The model writes "\n" between the lines it read; the file has "\r\n": the edit was
    # refused as "not found", however often the model read the file again.
    (project / "win.py").write_bytes(b"a = 1\r\nb = 2\r\nc = 3\r\n")
    outcome = await toolbox.run("edit_file", {"path": "win.py", "old_text": "b = 2\nc = 3",
                                              "new_text": "b = 20\nc = 30\nd = 4"})
    assert not outcome.is_error, outcome.content
    assert (project / "win.py").read_bytes() == b"a = 1\r\nb = 20\r\nc = 30\r\nd = 4\r\n"


async def test_the_question_asked_and_its_answer_go_with_the_outcome(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    """Kept with the call's result, so that a rebuilt chat shows the answered card again."""
    tools = make_toolbox(project, approver, trust)
    approver.answers += [ApprovalAnswer("deny", "use a constant instead"),
                         ApprovalAnswer("allow_always"),
                         ApprovalAnswer.unanswered("no answer in time")]
    edit = {"path": "src/app.py", "old_text": "42", "new_text": "43"}
    denied = (await tools.run("edit_file", edit)).approval
    assert denied is not None
    assert (denied.id, denied.title, denied.outcome, denied.reason, denied.path) == (
        approver.asked[0].id, "Edit src/app.py", "denied", "use a constant instead",
        "src/app.py")
    allowed = (await tools.run("edit_file", edit)).approval
    assert allowed is not None and allowed.outcome == "allowed_always"
    # trusted now: nobody is asked, so there is no question to show
    trusted = await tools.run("edit_file", {**edit, "old_text": "43", "new_text": "44"})
    assert not trusted.is_error and trusted.approval is None
    ran = (await tools.run("run_command", {"command": "true"})).approval
    assert ran is not None
    assert (ran.outcome, ran.title, ran.command) == ("unanswered", "Run `true`", "true")
    # the title is one line: a script of several lines (or a long one) is cut, its question
    # and record keep it whole (the card showed it twice, the title wrapping over four lines)
    script = "for f in *.py; do\n  python -m py_compile \"$f\"\ndone"
    approver.answers.append(ApprovalAnswer("deny"))
    long = (await tools.run("run_command", {"command": script})).approval
    assert long is not None
    assert (long.title, long.command) == ("Run `for f in *.py; do …`", script)
    assert approver.asked[-1].title == long.title and approver.asked[-1].command == script
    approver.answers.append(ApprovalAnswer("deny"))
    wide = (await tools.run("run_command", {"command": "echo " + "x" * 200})).approval
    assert wide is not None and wide.title == f"Run `echo {'x' * 75} …`"
    # only a line break ends the title's line: a carriage return (or another of Python's line
    # boundaries) is part of the line, which the editors show as the question does (^M, ␍);
    # cut there, `touch x #\rls -la` read as a command of several lines, `touch x # …`
    approver.answers.append(ApprovalAnswer("deny"))
    hidden = (await tools.run("run_command", {"command": "touch x #\rls -la\x0b\u2028y"})).approval
    assert hidden is not None and hidden.title == "Run `touch x #\rls -la\x0b\u2028y`"
    assert (await tools.run("read_file", {"path": "src/app.py"})).approval is None


async def test_an_edits_record_keeps_the_diff_its_question_showed_within_a_bound(
        project: Path, approver: ScriptedApprover, trust: TrustStore) -> None:
    """A chat rebuilt from the session shows an edit's card with its diff, as the question
    did; a huge diff is cut at a line (saying how many were left out), not kept whole."""
    tools = make_toolbox(project, approver, trust)
    approver.answers += [ApprovalAnswer("allow_once"), ApprovalAnswer("deny")]
    record = (await tools.run("edit_file", {"path": "src/app.py", "old_text": "42",
                                            "new_text": "43"})).approval
    assert record is not None and record.diff == approver.asked[0].diff
    assert record.diff is not None and "-    return 42\n+    return 43\n" in record.diff
    assert (record.tier, record.worker_tools) == (None, None)
    # a file of long lines: its diff (of at most 400 lines) is over the bound
    line = "x = '" + "y" * 300 + "'\n"
    big = (await tools.run("create_file", {"path": "big.py", "content": line * 200})).approval
    shown = approver.asked[1].diff
    assert big is not None and big.diff is not None and shown is not None
    assert len(shown) > MAX_RECORDED_DIFF_CHARS >= len(big.diff) - 40
    kept, marker = big.diff.rstrip("\n").rsplit("\n", 1)
    assert shown.startswith(kept + "\n")
    assert marker == f"[… {len(shown[len(kept) + 1:].splitlines())} more lines not kept]"
    # nothing asked, nothing kept: a command's question has no diff
    approver.answers.append(ApprovalAnswer("deny"))
    ran = (await tools.run("run_command", {"command": "true"})).approval
    assert ran is not None and ran.diff is None
