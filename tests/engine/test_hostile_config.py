"""Hostile configuration text: every value becomes a located problem, nothing raises.

The regression corpus (tests/corpus/config/) holds every input that ever made a
check or an editor function raise, put a range outside the document, or offer a
fix that did not fix; each is replayed here. The property tests generate at the
scalar level and record what they find into the corpus (see the README's test section).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from switchman.engine.config.check import FileKind, check_text
from switchman.engine.config.problems import Code, Position, Problem, Range, Severity
from switchman.engine.config.scalars import yaml_bool, yaml_float, yaml_int
from switchman.engine.config.walker import MAX_PROBLEMS, Walker
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.editing.completion import complete
from switchman.engine.editing.hover import hover
from switchman.engine.files import MAX_CONFIG_BYTES
from switchman.engine.keys import KeyRing
from tests.support.generators import LINE_ENDINGS, ODD_CHARACTERS, config_documents
from tests.support.hostile import (
    REGISTRY,
    corpus_entries,
    exercise_or_record,
    fuzz_examples,
    replay,
)

ROUTING, MODELS = FileKind.ROUTING, FileKind.MODELS


def problems(kind: FileKind, text: str) -> list[Problem]:
    return check_text(kind, text, "routing.yaml", REGISTRY)


# -- values PyYAML's constructors reject -------------------------------------------------


@pytest.mark.parametrize(("kind", "text", "code", "message"), [
    (ROUTING, "pattern:\n  cost_weight: !!float abc\n", Code.INVALID_TYPE,
     "'cost_weight' must be a number, found 'abc' tagged !!float."),
    (ROUTING, "pattern:\n  cost_weight: 0x1f\n", Code.OUT_OF_RANGE,
     "'cost_weight' must be between 0 and 1; found 0x1f."),
    (MODELS, "use_builtin_models: !!bool maybe\n", Code.INVALID_TYPE,
     "'use_builtin_models' must be true or false, found 'maybe' tagged !!bool."),
    (ROUTING, "pattern:\n  min_confidence: " + ":".join(["9"] * 300) + ":59\n",
     Code.OUT_OF_RANGE, "'min_confidence' must be between 0 and 1; found " + "9:" * 29 + "9…."),
    (ROUTING, "schema_version: " + "9" * 400 + "\n", Code.SCHEMA_VERSION,
     "schema_version " + "9" * 59 + "… is not supported by this Switchman (supported: 1). "
     "Upgrade Switchman or use version 1."),
    (ROUTING, "schema_version: !!int " + "9" * 5000 + "\n", Code.OUT_OF_RANGE,
     "'schema_version' is far too long to be a whole number (5,000 characters)."),
    (ROUTING, "schema_version: !!int\n", Code.INVALID_TYPE,
     "'schema_version' must be a whole number, found '' tagged !!int."),
    (ROUTING, "pattern:\n  cost_weight: .nan\n", Code.OUT_OF_RANGE,
     "'cost_weight' must be a finite number."),
])
def test_values_the_yaml_constructors_reject_are_located_problems(
        kind: FileKind, text: str, code: Code, message: str) -> None:
    [problem] = problems(kind, text)
    assert (problem.code, problem.message) == (code, message)
    line = text.count("\n", 0, text.rindex(": ")) if text.count("\n") > 1 else 0
    value = text.split("\n")[line].split(": ", 1)[1]
    start = text.split("\n")[line].index(value)
    assert problem.range == Range(Position(line, start), Position(line, start + len(value)))


@pytest.mark.parametrize(("text", "value"), [
    ("0x1f", 31), ("-0b101", -5), ("017", 15), ("0", 0), ("1_000", 1000), ("190:20:30", 685230),
    ("0x_", None), ("0b", None), ("abc", None), ("", None), ("9" * 1001, None), ("08", None),
])
def test_whole_numbers_in_every_yaml_spelling(text: str, value: int | None) -> None:
    assert yaml_int(text) == value


@pytest.mark.parametrize(("text", "value"), [
    ("1.5", 1.5), ("-.5", -0.5), ("1e3", 1000.0), ("190:20:30.15", 685230.15), ("0x10", 16.0),
    (".", None), (".e5", None), ("abc", None), ("9" * 400, float("inf")),
])
def test_numbers_in_every_yaml_spelling(text: str, value: float | None) -> None:
    assert yaml_float(text) == value


def test_booleans_in_every_yaml_spelling() -> None:
    assert [yaml_bool(t) for t in ("Yes", "off", "TRUE", "maybe", "")] == [
        True, False, True, None, None]


# -- text libyaml and editors read differently ----------------------------------------------


def test_a_lone_surrogate_is_an_error_where_it_is() -> None:
    [problem] = problems(ROUTING, "global_default: opus\n# caf\ud800\n")
    assert problem.code is Code.YAML_SYNTAX
    assert problem.range == Range(Position(1, 5), Position(1, 6))
    assert "U+D800" in problem.message


def test_a_byte_that_is_not_utf8_is_named_as_the_byte_it_was() -> None:
    """Neovim sends a buffer's bytes as they are; the daemon reads a Latin-1 é (0xE9) as the
    lone surrogate U+DCE9. The error spoke of half of a UTF-16 pair, which the user never
    typed, not of the byte."""
    [problem] = problems(ROUTING, "global_default: opus\n# caf\udce9\n")
    assert problem.range == Range(Position(1, 5), Position(1, 6))
    assert problem.message == (
        "Invalid character: the byte 0xE9, which is not UTF-8 (text in another encoding, such "
        "as Latin-1), or half of a UTF-16 pair (U+DCE9); it cannot be saved as UTF-8. Delete "
        "it, or type it again.")


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"])
def test_a_yaml_only_line_break_is_read_as_a_space_and_warned_about(separator: str) -> None:
    text = f"# note{separator}global_default: opus\nglobal_default: haiku\n"
    found = problems(ROUTING, text)
    assert [(p.code, p.severity, p.range) for p in found] == [
        (Code.YAML_SYNTAX, Severity.WARNING, Range(Position(0, 6), Position(0, 7)))]


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_every_range_counts_lines_as_editors_do(newline: str) -> None:
    text = newline.join(["global_default: opus", "rules:", "  - use: opsu", ""])
    [problem] = problems(ROUTING, text)
    assert problem.range == Range(Position(2, 9), Position(2, 13))


def test_a_reader_error_after_non_ascii_text_is_located_in_characters() -> None:
    [problem] = problems(ROUTING, "\u00e9\u00e9\u00e9: 1\nb: \x01\n")
    assert problem.range == Range(Position(1, 3), Position(1, 4))


def test_a_text_over_the_size_cap_is_refused_at_once() -> None:
    doc = parse_yaml("k: 1\n" * (MAX_CONFIG_BYTES // 5 + 1), "routing.yaml")
    assert doc.root is None
    assert [p.code for p in doc.problems] == [Code.TOO_COMPLEX]


def test_only_the_first_problems_are_shown() -> None:
    found = problems(ROUTING, "".join(f"unknown_{i}: 1\n" for i in range(MAX_PROBLEMS + 50)))
    assert len(found) == MAX_PROBLEMS + 1
    assert found[-1].code is Code.TOO_COMPLEX
    assert found[-1].range.start.line == MAX_PROBLEMS


# -- regular expressions that are valid but costly ----------------------------------------


def _rules(patterns: list[str]) -> str:
    return "rules:\n" + "".join(f'  - name: r{i}\n    when: {{message_matches: "{p}"}}\n'
                                 f"    use: haiku\n" for i, p in enumerate(patterns))


def test_a_pattern_too_large_for_its_budget_is_an_invalid_regex() -> None:
    r"""``\pL{200}`` is valid RE2, but its program (239,204 instructions) took 0.16 s to
    compile each time a file was checked, and a routing set of such patterns could not be
    built: a repository's file of thirty of them stalled the daemon's first turn for 40 s."""
    [problem] = problems(FileKind.WORKSPACE, _rules([r"\\pL{200}"]))
    assert problem.code is Code.INVALID_REGEX
    assert "too large" in problem.message and "repetition" in problem.message
    assert problem.range.start == Position(2, 28)


def test_patterns_too_large_together_are_too_complex_where_they_run_over() -> None:
    """Each fits its own budget; together they are more than a file may ask RE2 to build, so
    the file is refused (its last valid version stays) at the pattern that ran over, and the
    patterns after it are not compiled at all."""
    text = _rules([rf"(\\pL|\\pN|\\pP){{10}}x{i}" for i in range(300)])
    found = problems(FileKind.WORKSPACE, text)
    assert [p.code for p in found] == [Code.TOO_COMPLEX]
    assert "patterns" in found[0].message
    assert 2 < found[0].range.start.line < 3 * 300


def test_many_patterns_with_syntax_errors_are_each_reported_not_too_complex() -> None:
    """Only a pattern refused for its size costs much to find out; one with a syntax error
    (a backreference here) is found at once and charged as one node."""
    found = problems(FileKind.WORKSPACE, _rules([rf"(a)\\1x{i}" for i in range(120)]))
    assert [p.code for p in found] == [Code.INVALID_REGEX] * 120


def test_many_ordinary_patterns_stay_within_the_budget() -> None:
    text = _rules([rf"(?i)(deploy|migrat|refactor)-{i}[a-z]+\\b" for i in range(2300)])
    assert len(text.encode()) < MAX_CONFIG_BYTES
    assert [p for p in problems(FileKind.WORKSPACE, text) if p.severity is Severity.ERROR] == []


# -- the corpus and the generators --------------------------------------------------------


@pytest.mark.parametrize("entry", corpus_entries(), ids=lambda p: p.stem)
def test_every_input_that_ever_failed_passes_now(entry: Path) -> None:
    replay(entry)


@pytest.mark.parametrize("kind", list(FileKind))
@settings(max_examples=fuzz_examples(40), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_values_in_every_declared_place(kind: FileKind, data: st.DataObject) -> None:
    text = data.draw(config_documents(kind))
    exercise_or_record(kind, [text], step=2)


ALPHABET = st.sampled_from([*ODD_CHARACTERS, *LINE_ENDINGS, " ", "  ", "a", "rules:", "- ",
                            "use: ", "when: ", "{", "}", "0x1", "opus", "\n  - name: x\n"])


@settings(max_examples=fuzz_examples(60), deadline=None)
@given(st.lists(ALPHABET, max_size=30).map("".join), st.sampled_from(list(FileKind)))
def test_arbitrary_text_with_every_line_break(text: str, kind: FileKind) -> None:
    exercise_or_record(kind, [text])


def test_warnings_past_the_cap_keep_the_file_usable_and_an_error_does_not() -> None:
    walker = Walker(parse_yaml("a: 1\n", "routing.yaml"))
    for _ in range(MAX_PROBLEMS + 5):
        walker.report(Range.at(0, 0, 1), Code.SHADOWED_RULE, "shadowed", Severity.WARNING)
    assert walker.problems[-1].severity is Severity.WARNING
    walker.report(Range.at(0, 0, 1), Code.UNKNOWN_KEY, "unknown")
    assert len(walker.problems) == MAX_PROBLEMS + 1
    assert walker.problems[MAX_PROBLEMS].severity is Severity.ERROR


def test_editor_requests_on_a_text_over_the_cap_answer_at_once() -> None:
    text = "k: 1\n" * (2 * MAX_CONFIG_BYTES // 5)  # 512 KB: scanning it line by line took seconds
    doc = parse_yaml(text, "routing.yaml")
    middle = Position(text.count("\n") // 2, 1)
    assert complete(ROUTING, text, middle, REGISTRY, KeyRing({})) == []
    assert hover(ROUTING, doc, middle, REGISTRY, KeyRing({})) is None
