"""Which task ``/delegate`` and "delegate that" mean (engine/delegation/focus.py), as pure rules."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from switchman.engine.delegation.focus import (
    Clarification,
    DelegateCommand,
    FocusedTask,
    focused_task,
    is_delegate_message,
    parse_command,
    unknown_target,
)
from switchman.engine.messages import AttachmentBlock, Message, TextBlock, ToolResultBlock
from switchman.engine.sessions.slash_commands import mistyped

TARGETS = ("fast", "balanced", "deep", "Reviewer")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def user(text: str, *blocks: AttachmentBlock) -> Message:
    return Message(id=text[:8], session_id="S", turn_id="T", role="user",
                   content=[TextBlock(text), *blocks], created_at=NOW)


def selection(text: str) -> AttachmentBlock:
    return AttachmentBlock(kind="selection", path="src/app.py", text=text, start_line=3,
                           end_line=4)


@pytest.mark.parametrize("message", [
    "delegate that", "Delegate this.", "please delegate it to a worker", "hand that off",
    "hand over this to the worker",
    "Do that via a sub-agent", "do it with a subagent please", "ok, run this through a worker!",
    "handle that using the helper agent",
])
def test_the_phrases_mean_delegate_the_latest(message: str) -> None:
    assert parse_command(message, TARGETS) == DelegateCommand(None, "")


def test_a_phrase_may_name_a_tier() -> None:
    assert parse_command("do that via a fast sub-agent", TARGETS) == DelegateCommand("fast", "")
    assert parse_command("delegate it to a deep worker", TARGETS) == DelegateCommand("deep", "")


@pytest.mark.parametrize("message", [
    "delegate the email to Bob", "how do I delegate that in Python?", "do that", "/delegates",
    "that via a sub-agent", "/model haiku", "hand that", "hand it to me",
])
def test_other_messages_are_not_delegations(message: str) -> None:
    assert not is_delegate_message(message)


def test_the_command_takes_a_tier_or_profile_first_else_the_task() -> None:
    assert parse_command("/delegate", TARGETS) == DelegateCommand(None, "")
    assert parse_command("/delegate fast rename f", TARGETS) == DelegateCommand("fast", "rename f")
    assert parse_command("/delegate fast: rename f", TARGETS) == DelegateCommand("fast", "rename f")
    assert parse_command("/delegate Reviewer:\ncheck it", TARGETS) == DelegateCommand(
        "Reviewer", "check it")
    assert parse_command("/delegate note: rename f", TARGETS) == DelegateCommand(
        None, "note: rename f")
    assert parse_command("/delegate reviewer check it", TARGETS) == DelegateCommand(
        "Reviewer", "check it")
    assert parse_command("/delegate rename fast things", TARGETS) == DelegateCommand(
        None, "rename fast things")
    assert parse_command("/delegate\nwrite the\nrelease notes", TARGETS) == DelegateCommand(
        None, "write the\nrelease notes")


@pytest.mark.parametrize(("message", "target"), [
    ("/delegate that", None), ("/delegate This.", None), ("/delegate fast it", "fast"),
    ("/delegate deep that!", "deep"),
])
def test_a_task_that_only_points_back_means_the_latest_request(message: str,
                                                               target: str | None) -> None:
    command = parse_command(message, TARGETS)
    assert command == DelegateCommand(target, "")
    assert unknown_target(command, TARGETS[:3], TARGETS[3:], False) is None
    latest = focused_task(command, [], [user("draft an email")], False)
    assert latest == FocusedTask("draft an email", (), "latest_request")
    assert parse_command("/delegate that file", TARGETS) == DelegateCommand(None, "that file")


def test_a_selection_comes_first_and_alone_is_the_task() -> None:
    history = [user("draft an email")]
    chosen = focused_task(DelegateCommand(None, ""), [selection("# TODO: docstring")], history,
                          turn_running=True)
    assert isinstance(chosen, FocusedTask) and chosen.focus == "selection"
    assert chosen.task.startswith("Do what the selected text below asks")
    worded = focused_task(DelegateCommand(None, "explain"), [selection("x = 1")], history, False)
    assert isinstance(worded, FocusedTask) and (worded.task, worded.focus) == ("explain",
                                                                               "selection")


def test_the_latest_request_with_its_attachments_and_never_a_tool_result() -> None:
    tool_result = Message(id="R", session_id="S", turn_id="T", role="tool",
                          content=[ToolResultBlock("toolu_1", "file contents")], created_at=NOW)
    history = [user("check the weather"), user("explain this", selection("x = 1")), tool_result]
    chosen = focused_task(DelegateCommand(None, ""), [], history, turn_running=False)
    assert isinstance(chosen, FocusedTask)
    assert (chosen.task, chosen.focus, len(chosen.attachments)) == (
        "explain this", "latest_request", 1)


def test_ambiguous_references_are_one_question() -> None:
    empty = focused_task(DelegateCommand(None, ""), [], [], turn_running=False)
    assert isinstance(empty, Clarification) and empty.question.startswith("What should")
    running = focused_task(DelegateCommand(None, ""), [], [user("fix it")], turn_running=True)
    assert isinstance(running, Clarification) and "still being written" in running.question
    three = focused_task(DelegateCommand(None, ""), [], [user(
        "today:\n1. fix the login bug\n2. write release notes\n- " + "x" * 80)], False)
    assert isinstance(three, Clarification)
    assert three.question.startswith("Delegate which one: “fix the login bug”, “write release "
                                     "notes” or “" + "x" * 59 + "…”?")


@pytest.mark.parametrize(("message", "selected", "word", "meant"), [
    ("/delegate ultra", False, "ultra", []),          # a lone word naming nothing
    ("/delegate fsat tidy the parser", False, "fsat", ["fast"]),   # two letters swapped
    ("/delegate dep upgrade", True, "dep", ["deep"]),  # a letter missing, selection or not
    ("/delegate reveiwer check it", False, "reveiwer", ["Reviewer"]),
    ("/delegate balanced fsat the tests", False, None, None),  # a tier first: fsat is the task
    ("/delegate refactor", True, None, None),         # with a selection: an instruction
    ("/delegate past bugs first", False, None, None),  # the first letter differs: a word
    ("/delegate fix the parser", False, None, None),
    ("/delegate", False, None, None),
    ("delegate that to a fast worker", False, None, None),
])
def test_a_first_word_that_reads_as_a_mistyped_tier_is_refused(
        message: str, selected: bool, word: str | None, meant: list[str] | None) -> None:
    command = parse_command(message, TARGETS)
    assert command is not None
    refused = unknown_target(command, TARGETS[:3], TARGETS[3:], selected)
    assert (refused and refused.word, refused and refused.meant) == (word, meant)


@pytest.mark.parametrize(("word", "meant"), [
    ("/modle", ["/model"]), ("/cots", ["/cost"]), ("/Help", ["/help"]), ("/rule", ["/rules"]),
    ("/hlep", ["/help"]), ("/profiel", ["/profile"]), ("/model", []), ("/commit", []),
    ("/post", []), ("/delete", []), ("/etc/hosts", []), ("/re-run", []), ("/", []),
    ("/mod", ["/model"]), ("/Patt", ["/patterns"]), ("/pro", ["/profile"]), ("/pr", []),
    ("/co", []), ("/rou", ["/route"]),
])
def test_a_slash_word_one_slip_from_a_command_is_a_mistyped_command(
        word: str, meant: list[str]) -> None:
    assert mistyped(word) == meant
