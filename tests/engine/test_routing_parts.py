"""Overrides, the sticky model, pattern scoring, skills and token estimates."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from switchman.engine.config.policy import PatternSettings
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.errors import UnknownAlias
from switchman.engine.patterns import (
    InMemoryPatternStore,
    PatternNeighbor,
    neighbourhood,
    per_model_nearest,
    pool_size,
    score_neighbors,
)
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.overrides import parse_override
from switchman.engine.routing.sticky import PendingSwap, StickyModel, SwapOutcome, pending_banner
from switchman.engine.skills import (
    MATCH_THRESHOLD,
    MAX_KEYWORDS,
    Skill,
    SkillIndex,
    keywords,
    read_front_matter,
    score,
)
from switchman.engine.tokens import TOKENS_PER_IMAGE, estimate_text, estimate_turn

HAIKU = "anthropic:claude-haiku-4-5"


# -- @alias overrides ----------------------------------------------------------------

def test_override_at_start_is_stripped(registry: ModelRegistry) -> None:
    text, override = parse_override("@haiku  what's a good name?", registry)
    assert text == "what's a good name?"
    assert override is not None
    assert (override.token, override.model) == ("haiku", HAIKU)


def test_full_model_ids_work_too(registry: ModelRegistry) -> None:
    _, override = parse_override(f"@{HAIKU} hi", registry)
    assert override is not None and override.model == HAIKU


@pytest.mark.parametrize("message", ["Email me @haiku tomorrow", "@haiku, hi", "hello"])
def test_not_an_override(registry: ModelRegistry, message: str) -> None:
    assert parse_override(message, registry) == (message, None)


def test_escaped_at_is_sent_literally(registry: ModelRegistry) -> None:
    assert parse_override("\\@haiku is a model name", registry) == ("@haiku is a model name", None)


def test_unknown_alias_is_an_error_with_suggestions(registry: ModelRegistry) -> None:
    with pytest.raises(UnknownAlias) as caught:
        parse_override("@haikuu do it", registry)
    assert caught.value.suggestions == ["haiku"]
    assert "@haikuu" in str(caught.value)


def test_nothing_after_the_alias_is_left_to_the_caller(registry: ModelRegistry) -> None:
    """The message may carry attachments, which are what it sends: the chat (and a
    preview, the CLI, a policy test) refuses it as empty only when it carries nothing."""
    text, override = parse_override("@haiku   ", registry)
    assert (text.strip(), override.model if override else None) == (
        "", "anthropic:claude-haiku-4-5")


# -- sticky model ----------------------------------------------------------------------

def test_sticky_set_and_clear_between_turns() -> None:
    sticky = StickyModel()
    assert sticky.request("m1") is SwapOutcome.APPLIED
    assert sticky.request("m1") is SwapOutcome.UNCHANGED
    assert sticky.request(None) is SwapOutcome.CLEARED
    assert sticky.active is None


def test_swaps_during_a_turn_are_queued_and_last_write_wins() -> None:
    sticky = StickyModel("sonnet")
    assert sticky.begin_turn() == "sonnet"
    assert sticky.request("opus") is SwapOutcome.QUEUED
    assert sticky.request("haiku") is SwapOutcome.QUEUED
    assert sticky.pending == PendingSwap("haiku")
    assert pending_banner(sticky.pending) == "Model swap pending: haiku. Applies to next turn."
    assert sticky.active == "sonnet"  # the turn in flight keeps its model
    sticky.end_turn()
    assert sticky.active == "haiku"
    assert sticky.pending is None


def test_a_queued_swap_back_to_the_model_in_force_drops_the_queued_one() -> None:
    """A model picked mid-turn, then "Follow my routing rules" picked to undo it: nothing is
    left to change (the status bar showed `sonnet → auto` and "Sticky model will be cleared"
    of a session that had none)."""
    sticky = StickyModel()
    sticky.begin_turn()
    assert sticky.request("opus") is SwapOutcome.QUEUED
    assert sticky.request(None) is SwapOutcome.UNCHANGED
    assert sticky.pending is None
    sticky.end_turn()
    assert sticky.active is None


def test_queued_clear_applies_at_the_boundary() -> None:
    sticky = StickyModel("sonnet")
    sticky.begin_turn()
    assert sticky.request(None) is SwapOutcome.QUEUED
    sticky.end_turn()
    assert sticky.active is None


# -- pattern scoring (§5.5) ------------------------------------------------------------

def test_scoring_blends_success_and_cost() -> None:
    neighbors = [PatternNeighbor("sonnet", 1.0, 10, 0.10), PatternNeighbor("haiku", 0.8, 10, 0.02)]
    rec = score_neighbors(neighbors, cost_weight=0.05)
    assert rec is not None
    # sonnet: 0.95 * 1.0 + 0.05 * 0 = 0.95; haiku: 0.95 * 0.8 + 0.05 * 1 = 0.81
    assert rec.model == "sonnet"
    assert rec.score == pytest.approx(0.95)
    assert rec.alternatives[0].score == pytest.approx(0.81)
    assert rec.confidence == pytest.approx((0.95 - 0.81) / 0.95, abs=1e-6)
    assert rec.sample_size == 10


def test_sample_size_weights_the_success_mean() -> None:
    rec = score_neighbors([PatternNeighbor("a", 1.0, 50, 1.0), PatternNeighbor("a", 0.0, 1, 1.0)],
                          cost_weight=0.0)
    assert rec is not None and rec.score == pytest.approx(50 / 51, abs=1e-6)


def test_equal_costs_zero_the_cost_term() -> None:
    rec = score_neighbors([PatternNeighbor("a", 0.5, 1, 0.1), PatternNeighbor("b", 0.4, 1, 0.1)],
                          cost_weight=1.0)
    assert rec is not None
    assert rec.score == 0.0
    assert rec.confidence == 0.0


def test_similarity_exponent_lets_the_closest_neighbours_decide() -> None:
    near = [PatternNeighbor("a", 1.0, 1, 1.0, similarity=0.9)]
    far = [PatternNeighbor("a", 0.0, 1, 1.0, similarity=0.3) for _ in range(3)]
    plain = score_neighbors(near + far, cost_weight=0.0)
    weighted = score_neighbors(near + far, cost_weight=0.0, similarity_exponent=4)
    assert plain is not None and plain.score == pytest.approx(0.25)
    # 0.9**4 = 0.6561 against 3 * 0.3**4 = 0.0243: the near turn carries the mean
    assert weighted is not None and weighted.score == pytest.approx(0.6561 / 0.6804, abs=1e-5)
    assert weighted.sample_size == 4  # the gates still count turns, not weights


def test_per_model_neighbourhood_takes_k_of_each_model() -> None:
    models = ["weak", "weak", "weak", "strong", "weak", "strong", "strong"]
    assert per_model_nearest(models, 2) == [0, 1, 3, 5]
    nearest = PatternSettings(neighbors=2)
    per_model = PatternSettings(neighbors=2, neighborhood="per_model")
    assert neighbourhood(models, nearest) == [0, 1]
    assert neighbourhood(models, per_model) == [0, 1, 3, 5]
    assert pool_size(nearest) == 2 and pool_size(per_model) >= 256


def test_in_memory_store_finds_similar_turns() -> None:
    store = InMemoryPatternStore()
    for _ in range(6):
        store.add("write unit tests for the parser", "sonnet", 1.0, 0.05)
    store.add("write unit tests for the lexer", "haiku", 0.2, 0.01)
    store.add("deploy to production", "opus", 1.0, 0.5)
    rec = store.recommend(TurnContext(message="write unit tests for the tokenizer"),
                          PatternSettings())
    assert rec is not None and rec.model == "sonnet"
    assert rec.sample_size == 6
    assert store.recommend(TurnContext(message="zzz"), PatternSettings()) is None


# -- skills ------------------------------------------------------------------------------

def _skill(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, "utf-8")


def test_skill_index_reads_front_matter_only(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    _skill(skills, "design", "---\nname: system_design\ndescription: Architecture reviews, "
           "service boundaries and data flow design.\n---\nBODY mentions kubernetes\n")
    _skill(skills, "sql", "---\nname: sql_tuning\ndescription: Slow queries and indexes.\n---\n")
    _skill(skills, "none", "no front matter here\n")
    index = SkillIndex.build([skills, tmp_path / "missing"])
    assert set(index.skills) == {"system_design", "sql_tuning"}
    assert index.matching("please review our service boundaries") == {"system_design"}
    assert index.matching("the queries are slow, add indexes?") == {"sql_tuning"}
    assert index.matching("a System Design question") == {"system_design"}
    assert index.matching("kubernetes") == frozenset()  # bodies are not indexed


NAMES = ["system_design", "sql-tuning", "c++", "a.b", "release notes", "x", "Über_Stil", "(", "",
         "a a", "-x-", "ab"]
DESCRIPTIONS = ["Architecture reviews and service boundaries.", "Slow queries, indexes.", "",
                "the and for", "Parsers; lexers & grammars!", "résumé naïve façade"]


@given(st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(DESCRIPTIONS)), max_size=8),
       st.lists(st.sampled_from([*NAMES, *DESCRIPTIONS, " ", "_", "-", ", ", "\n", "please",
                                 "SQL", "Tuning", "indexes", "boundary", "a", "xa a a", "Ü"]),
                max_size=12).map("".join))
def test_matching_a_message_is_each_skills_score_over_the_threshold(
        skills: list[tuple[str, str]], message: str) -> None:
    index = SkillIndex([Skill(name, text, f"/s/{i}.md") for i, (name, text) in enumerate(skills)])
    expected = {name for name, skill in index.skills.items()
                if _scored_alone(skill, message) >= MATCH_THRESHOLD}
    assert index.matching(message) == expected
    assert {n for n, skill in index.skills.items() if score(skill, message) >= MATCH_THRESHOLD} \
        == expected


def _scored_alone(skill: Skill, message: str) -> float:
    """The score as the module docstring defines it, one skill at a time (as it once ran)."""
    phrase = re.sub(r"[_\-\s]+", " ", skill.name.lower()).strip()
    flat = re.sub(r"[_\-\s]+", " ", message.lower())
    if phrase and re.search(rf"(?<![a-z0-9]){re.escape(phrase)}(?![a-z0-9])", flat):
        return 1.0
    wanted = keywords(skill.description)
    if not wanted:
        return 0.0
    return min(1.0, len(wanted & keywords(message)) / min(len(wanted), MAX_KEYWORDS))


def test_matching_reads_a_long_message_once_not_once_per_skill() -> None:
    """Every turn matches its message against every skill. Each skill scanned the whole
    message again (twice): a repository's 5,000 skills held the daemon for 1.2 s on "hi", 14 s
    on a 10,000-character message and two minutes on 100,000 characters; 50 skills and a
    pasted 100 KB log took 1.2 s."""
    index = SkillIndex([Skill(f"skill{i}", f"word{i} " * 50, f"/s/{i}.md") for i in range(5000)])
    message = "please refactor the parser module, word17 and word4999 " * 2000
    started = time.perf_counter()
    assert index.matching(message) == {"skill17", "skill4999"}
    assert time.perf_counter() - started < 2.0


def test_a_skill_without_a_name_is_named_after_its_file(tmp_path: Path) -> None:
    """A front matter with no ``name`` (or an empty one) was ignored without a word, and the
    model was told of no skills: the file's name (its folder's, for a SKILL.md) stands in."""
    path = tmp_path / "sql_tuning.md"
    path.write_text("---\ndescription: Slow queries and indexes.\n---\n", "utf-8")
    skill = read_front_matter(path)
    assert skill is not None and (skill.name, skill.description) == (
        "sql_tuning", "Slow queries and indexes.")
    (tmp_path / "release-notes").mkdir()
    anthropic_layout = tmp_path / "release-notes" / "SKILL.md"
    anthropic_layout.write_text("---\nname: \ndescription: Changelog entries.\n---\n", "utf-8")
    assert getattr(read_front_matter(anthropic_layout), "name", None) == "release-notes"
    assert set(SkillIndex.build([tmp_path]).skills) == {"sql_tuning", "release-notes"}
    no_front_matter = tmp_path / "notes.md"
    no_front_matter.write_text("just notes\n", "utf-8")
    assert read_front_matter(no_front_matter) is None  # not a skill at all


# -- token estimates ---------------------------------------------------------------------

def test_token_estimates() -> None:
    assert estimate_text("") == 0
    assert estimate_text("abcd") == 1
    assert estimate_text("abcde") == 2
    assert estimate_turn(["abcd"], images=2) == 1 + 4 + 2 * TOKENS_PER_IMAGE
