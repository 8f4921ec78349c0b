"""Quick fixes: applying each one leaves a file that checks clean of the problem."""

from __future__ import annotations

import pytest

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind, check_doc
from switchman.engine.config.problems import Code, Position, Problem, Range, Severity
from switchman.engine.config.text import TextEdit, apply_edits
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.editing.advice import advise
from switchman.engine.editing.fixes import Fix, FixContext, fixes
from switchman.engine.keys import KeyRing

ROUTING, WORKSPACE = FileKind.ROUTING, FileKind.WORKSPACE
GLOBAL_TIERS = {"fast": "anthropic:claude-haiku-4-5", "balanced": "anthropic:claude-sonnet-4-6",
                "deep": "anthropic:claude-opus-4-7"}
ENV = KeyRing({"ANTHROPIC_API_KEY": "set", "OPENAI_API_KEY": "set"})
PATHS = {ROUTING: "routing.yaml", WORKSPACE: "/ws/.switchman/routing.yaml",
         FileKind.PROFILES: "profiles.yaml"}


def problems_in(kind: FileKind, text: str) -> list[Problem]:
    doc = parse_yaml(text, PATHS[kind])
    registry = builtin_registry()
    return check_doc(kind, doc, registry) + advise(kind, doc, registry, ENV)


def fixes_for(kind: FileKind, text: str, code: Code) -> list[Fix]:
    doc = parse_yaml(text, PATHS[kind])
    found = [p for p in problems_in(kind, text) if p.code is code]
    assert found, f"no {code} in {text!r}"
    return fixes(doc, found, found[0].range, FixContext(kind, GLOBAL_TIERS))


def apply_first(kind: FileKind, text: str, code: Code, *, gone: bool = True) -> tuple[Fix, str]:
    found = fixes_for(kind, text, code)
    assert found, f"no fix for {code}"
    fixed = apply_edits(text, found[0].edits)
    after = problems_in(kind, fixed)
    assert not [p for p in after if p.severity is Severity.ERROR], (fixed, after)
    assert not gone or code not in {p.code for p in after}, (fixed, after)
    return found[0], fixed


@pytest.mark.parametrize(("text", "expected"), [
    ("global_default: opsu\n", "global_default: opus\n"),
    ('rules:\n  - name: a\n    use: "opsu"\n', 'rules:\n  - name: a\n    use: "opus"\n'),
    ("rules: [{name: a, use: anthropic:claude-opsu-4-7}]\n",
     "rules: [{name: a, use: anthropic:claude-opus-4-7}]\n"),
])
def test_unknown_model_is_replaced_with_the_closest(text: str, expected: str) -> None:
    fix, fixed = apply_first(ROUTING, text, Code.UNKNOWN_MODEL)
    assert fixed == expected
    assert fix.preferred


@pytest.mark.parametrize(("kind", "text", "expected"), [
    (ROUTING, "tiers:\n  fast: haiku\n  balanced: sonnet  # mine\nrules: []\n",
     "tiers:\n  fast: haiku\n  balanced: sonnet  # mine\n  deep: anthropic:claude-opus-4-7\n"
     "rules: []\n"),
    (ROUTING, "tiers: {fast: haiku}\n",
     "tiers: {fast: haiku, balanced: anthropic:claude-sonnet-4-6, "
     "deep: anthropic:claude-opus-4-7}\n"),
    (ROUTING, "workspaces:\n  /code/x:\n    tiers:\n      deep: opus",
     "workspaces:\n  /code/x:\n    tiers:\n      deep: opus\n"
     "      fast: anthropic:claude-haiku-4-5\n      balanced: anthropic:claude-sonnet-4-6"),
    (WORKSPACE, "tiers:\n    fast: haiku\n", "tiers:\n    fast: haiku\n"
     "    balanced: anthropic:claude-sonnet-4-6\n    deep: anthropic:claude-opus-4-7\n"),
])
def test_a_partial_tiers_block_is_filled_from_the_global_mapping(kind: FileKind, text: str,
                                                                 expected: str) -> None:
    _, fixed = apply_first(kind, text, Code.PARTIAL_TIERS)
    assert fixed == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("rules:\n  - when: {has_images: true}\n    use: opus\n",
     "rules:\n  - name: opus for has_images\n    when: {has_images: true}\n    use: opus\n"),
    ("rules:\n  - {use: haiku}\n", "rules:\n  - {name: haiku for every turn, use: haiku}\n"),
    ("rules:\n  - name: haiku for every turn\n    use: haiku\n    when: {has_images: false}\n"
     "  - use: haiku\n",
     "rules:\n  - name: haiku for every turn\n    use: haiku\n    when: {has_images: false}\n"
     "  - name: haiku for every turn 2\n    use: haiku\n"),
])
def test_an_unnamed_rule_gets_a_name(text: str, expected: str) -> None:
    _, fixed = apply_first(ROUTING, text, Code.UNNAMED_RULE)
    assert fixed == expected


TIERS = "tiers:\n  fast: haiku\n  deep: opus\n"


@pytest.mark.parametrize(("text", "expected"), [
    (TIERS + "  balanced: [sonnet, sonnet]\n", TIERS + "  balanced: [sonnet]\n"),
    (TIERS + "  balanced: [sonnet, haiku, 'anthropic:claude-sonnet-4-6']\n",
     TIERS + "  balanced: [sonnet, haiku]\n"),
    (TIERS + "  balanced:\n    - sonnet\n    - sonnet  # again\n    - haiku\n",
     TIERS + "  balanced:\n    - sonnet\n    - haiku\n"),
    (TIERS + "  balanced:\n    - sonnet\n    - sonnet", TIERS + "  balanced:\n    - sonnet"),
    (TIERS + "  balanced: sonnet\n  complexity: {deep: {large: [opus, opus]}}\n",
     TIERS + "  balanced: sonnet\n  complexity: {deep: {large: [opus]}}\n"),
])
def test_a_repeated_model_in_a_tier_list_is_removed(text: str, expected: str) -> None:
    fix, fixed = apply_first(ROUTING, text, Code.DUPLICATE_MODEL)
    assert fixed == expected
    assert fix.preferred and fix.title.startswith("Remove the repeated ")


def test_an_unknown_default_profile_names_the_closest_few_and_is_replaced() -> None:
    """A repository's thousand profiles made `default: ghost`'s message list every one."""
    profiles = "".join(f"  profile_{i:04d}: {{tools: [read_file]}}\n" for i in range(1000))
    text = f"default: profile_0402x\nprofiles:\n{profiles}"
    [problem] = [p for p in problems_in(FileKind.PROFILES, text)
                 if p.code is Code.UNKNOWN_PROFILE]
    assert len(problem.message) < 400 and problem.message.endswith(" and 992 more.")
    assert "Did you mean 'profile_0402'? Known: profile_0402, " in problem.message
    assert len(str(problem.data)) < 200
    fix, fixed = apply_first(FileKind.PROFILES, text, Code.UNKNOWN_PROFILE)
    assert fix.preferred and fixed.startswith("default: profile_0402\n")


@pytest.mark.parametrize(("use", "name"), [
    ("sonet", "sonnet for message_matches"),  # the unknown-model fix's first suggestion
    ("anthropic:claude-sonet-4-6", "sonnet for message_matches"),
    ("zzzzzz", "rule for message_matches"),  # nothing close: no model in the name
])
def test_an_unnamed_rules_name_never_repeats_a_misspelled_model(use: str, name: str) -> None:
    """Found in the audit: the fix named the rule 'sonet for message_matches'."""
    text = f"rules:\n  - when: {{message_matches: x}}\n    use: {use}\n"
    [fix] = fixes_for(ROUTING, text, Code.UNNAMED_RULE)
    assert fix.title == f"Name this rule '{name}'"
    assert apply_edits(text, fix.edits).startswith(f"rules:\n  - name: {name}\n")


@pytest.mark.parametrize(("text", "expected"), [
    ("rules:\n  - name: a\n    when:\n    use: opus\n",
     "rules:\n  - name: a\n    when: {}\n    use: opus\n"),
    ("rules:\n  - name: a\n    when: ~   # later\n    use: opus\n",
     "rules:\n  - name: a\n    when: {}   # later\n    use: opus\n"),
    ("rules: [{name: a, when: null, use: opus}]\n", "rules: [{name: a, when: {}, use: opus}]\n"),
])
def test_an_empty_when_is_written_as_matching_every_turn_on_purpose(text: str,
                                                                    expected: str) -> None:
    _, fixed = apply_first(ROUTING, text, Code.EMPTY_WHEN)
    assert fixed == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("rules:\n  - name: broad\n    when: {has_images: true}\n    use: opus\n"
     "  # pictures of code\n  - name: narrow\n    when: {has_images: true, message_matches: x}\n"
     "    use: haiku\n",
     "rules:\n  # pictures of code\n  - name: narrow\n"
     "    when: {has_images: true, message_matches: x}\n    use: haiku\n"
     "  - name: broad\n    when: {has_images: true}\n    use: opus\n"),
    ("rules:\n- name: all\n  use: opus\n- name: sql\n  when: {file_extensions_in_context: [sql]}\n"
     "  use: haiku",
     "rules:\n- name: sql\n  when: {file_extensions_in_context: [sql]}\n  use: haiku\n"
     "- name: all\n  use: opus"),
])
def test_a_shadowed_rule_moves_above_the_rule_that_shadows_it(text: str, expected: str) -> None:
    fix, fixed = apply_first(ROUTING, text, Code.SHADOWED_RULE)
    assert fixed == expected
    assert fix.title.startswith("Move this rule above")


def test_fixes_only_for_problems_at_the_requested_range() -> None:
    text = "global_default: opsu\ntiers: {fast: haiku}\n"
    doc = parse_yaml(text, "routing.yaml")
    found = problems_in(ROUTING, text)
    on_tiers = fixes(doc, found, Range.at(1, 2, 2), FixContext(ROUTING, GLOBAL_TIERS))
    assert [f.problem.code for f in on_tiers] == [Code.PARTIAL_TIERS]


def test_moving_one_of_two_identical_rules_swaps_them() -> None:
    # Identical conditions shadow each other whichever comes first: the move swaps which
    # model is tried first, and the other rule becomes the fallback.
    text = ("rules:\n  - name: first\n    when: {has_images: true}\n    use: opus\n"
            "  - name: fallback\n    when: {has_images: true}\n    use: sonnet\n")
    _, fixed = apply_first(ROUTING, text, Code.SHADOWED_RULE, gone=False)
    assert fixed.index("fallback") < fixed.index("first")


# -- fixes are checked when built -------------------------------------------------------

# Found by the fuzz harness: with two rules named 'b', moving the shadowed rule above
# "the rule named b" moves it above the wrong one and the warning stays.
TWO_RULES_NAMED_B = ("global_default: opus\nrules:\n  - when: {has_images: true}\n    use: opsu\n"
                     "  - name: b\n    use: haiku\n  - name: c\n    whe: {has_images: true}\n"
                     "    use: opus\n  - name: b\n    use: haiku\n")


def test_a_fix_that_would_leave_its_problem_is_not_offered() -> None:
    doc = parse_yaml(TWO_RULES_NAMED_B, PATHS[ROUTING])
    found = [p for p in problems_in(ROUTING, TWO_RULES_NAMED_B) if p.code is Code.SHADOWED_RULE]
    everything = Range(found[0].range.start, found[-1].range.end)
    unchecked = fixes(doc, found, everything, FixContext(ROUTING, GLOBAL_TIERS))
    broken = [f for f in unchecked
              if sum(p.message == f.problem.message
                     for p in problems_in(ROUTING, apply_edits(TWO_RULES_NAMED_B, f.edits)))
              >= sum(p.message == f.problem.message for p in found)]
    assert broken, "the example no longer has a fix that does not work"
    checked = fixes(doc, found, everything,
                    FixContext(ROUTING, GLOBAL_TIERS, lambda text: problems_in(ROUTING, text)))
    assert [f.title for f in checked] == [f.title for f in unchecked if f not in broken]


def test_a_fix_that_would_break_the_yaml_is_not_offered() -> None:
    text = "global_default: opus\nrules:\n  - {when: {has_images: true}, use: opsu}\n"
    doc = parse_yaml(text, PATHS[ROUTING])
    found = [p for p in problems_in(ROUTING, text) if p.code is Code.UNKNOWN_MODEL]
    offered = fixes(doc, found, found[0].range, FixContext(
        ROUTING, GLOBAL_TIERS, lambda edited: problems_in(ROUTING, edited + "\n  - [")))
    assert offered == []  # every result "fails to parse", so nothing is offered


def test_an_edit_past_the_last_line_applies_at_the_end_of_the_text() -> None:
    """A position on a line after the last one is the end of the text (it was the start of
    the last line, so an append landed before it)."""
    past = Position(7, 0)
    assert apply_edits("a: 1\nb: 2", [TextEdit(Range(past, past), "\nc: 3")]) == "a: 1\nb: 2\nc: 3"
    inside = Position(1, 99)  # past the end of a line: that line's end
    assert apply_edits("a: 1\nb: 2\n", [TextEdit(Range(inside, inside), "0")]) == "a: 1\nb: 20\n"


def test_checking_fixes_stops_when_the_request_has_spent_its_time() -> None:
    """On a huge file each fix's check is a whole re-check (half a second for 6,000 rules):
    twenty of them kept a code action, and every check queued behind it, waiting ten
    seconds. Fixes are checked until the request's time is spent; the first is always."""
    text = "rules:\n" + "".join(f"  - name: r{i}\n    use: haiku\n" for i in range(40))
    doc = parse_yaml(text, PATHS[ROUTING])
    found = [p for p in problems_in(ROUTING, text) if p.code is Code.SHADOWED_RULE]
    everything = Range(found[0].range.start, found[-1].range.end)
    now = [0.0]
    checks: list[str] = []

    def slow_recheck(edited: str) -> list[Problem]:
        checks.append(edited)
        now[0] += 0.3  # each check takes 0.3 s of the (fake) clock
        return problems_in(ROUTING, edited)

    offered = fixes(doc, found, everything, FixContext(
        ROUTING, GLOBAL_TIERS, slow_recheck, clock=lambda: now[0]))
    assert len(checks) == 2  # 0.6 s: over FIX_SECONDS, so no third check starts
    assert [f.problem for f in offered] == found[:2]
    assert fixes(doc, found, everything, FixContext(
        ROUTING, GLOBAL_TIERS, lambda edited: problems_in(ROUTING, edited)))[:2] == offered
