"""Each predicate reads its documented input; combinators compose; implication is sound."""

from __future__ import annotations

from datetime import time
from decimal import Decimal
from typing import Any

import pytest

from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.predicates import ALWAYS, build_predicate, describe, implies


def matches(when: dict[str, Any], **ctx: Any) -> bool:
    return build_predicate(when).matches(TurnContext(**ctx))


@pytest.mark.parametrize(("when", "ctx", "expected"), [
    ({"message_matches": "^/commit"}, {"message": "/commit fix"}, True),
    ({"message_matches": "^/commit"}, {"message": "please /commit"}, False),
    ({"message_matches": "(?i)ARCH"}, {"message": "the architecture"}, True),
    ({"message_contains_any": ["SQL", "query"]}, {"message": "optimise this sql"}, True),
    ({"message_contains_any": ["sql"]}, {"message": "nothing here"}, False),
    ({"estimated_input_tokens_gt": 100}, {"estimated_input_tokens": 101}, True),
    ({"estimated_input_tokens_gt": 100}, {"estimated_input_tokens": 100}, False),
    ({"estimated_input_tokens_lt": 100}, {"estimated_input_tokens": 99}, True),
    ({"has_images": True}, {"has_images": True}, True),
    ({"has_images": False}, {"has_images": True}, False),
    ({"has_tool_calls_in_history": True}, {"has_tool_calls_in_history": True}, True),
    ({"skills_matching_message_includes": ["db"]}, {"skills_matching": frozenset({"db"})}, True),
    ({"skills_matching_message_includes": ["db"]}, {"skills_matching": frozenset()}, False),
    ({"file_extensions_in_context": ["SQL"]}, {"files_touched": ("db/q.sql",)}, True),
    ({"file_extensions_in_context": [".py"]}, {"files_touched": ("a.sql", "Makefile")}, False),
    ({"workspace_path_matches": "/work/"}, {"workspace_path": "/home/me/work/x"}, True),
    ({"workspace_path_matches": "/work/"}, {}, False),
    ({"time_of_day_between": (9 * 60, 17 * 60)}, {"local_time": time(12, 0)}, True),
    ({"time_of_day_between": (9 * 60, 17 * 60)}, {"local_time": time(17, 0)}, False),
    ({"time_of_day_between": (22 * 60, 6 * 60)}, {"local_time": time(23, 30)}, True),
    ({"time_of_day_between": (22 * 60, 6 * 60)}, {"local_time": time(5, 59)}, True),
    ({"time_of_day_between": (22 * 60, 6 * 60)}, {"local_time": time(12, 0)}, False),
    ({"time_of_day_between": (22 * 60, 6 * 60)}, {}, False),
    ({"cost_today_exceeds_usd": 5.0}, {"cost_today_usd": Decimal("5.42")}, True),
    ({"cost_today_exceeds_usd": 5.0}, {"cost_today_usd": Decimal("5.00")}, False),
    ({"any_of": [{"has_images": True}, {"message_matches": "x"}]}, {"message": "x"}, True),
    ({"all_of": [{"has_images": True}, {"message_matches": "x"}]}, {"message": "x"}, False),
    ({"not": {"has_images": True}}, {}, True),
    ({"has_images": True, "message_matches": "x"}, {"message": "x", "has_images": True}, True),
    ({"has_images": True, "message_matches": "x"}, {"message": "x"}, False),
])
def test_predicate(when: dict[str, Any], ctx: dict[str, Any], expected: bool) -> None:
    assert matches(when, **ctx) is expected


def test_empty_when_always_matches() -> None:
    assert ALWAYS.matches(TurnContext())
    assert describe(ALWAYS) == "always"


def test_implication_is_about_what_the_later_rule_guarantees() -> None:
    loose = build_predicate({"estimated_input_tokens_gt": 1000})
    strict = build_predicate({"estimated_input_tokens_gt": 5000, "has_images": True})
    assert implies(loose, strict)
    assert not implies(strict, loose)
    assert implies(ALWAYS, strict)
    many = build_predicate({"message_contains_any": ["a", "b"]})
    few = build_predicate({"message_contains_any": ["a"]})
    assert implies(many, few)
    assert not implies(few, many)


def test_describe_is_readable() -> None:
    pred = build_predicate({"any_of": [{"message_matches": "x"}, {"not": {"has_images": True}}],
                            "time_of_day_between": (22 * 60, 6 * 60)})
    assert describe(pred) == ('any_of(message_matches "x", not(has_images true)) and '
                              "time_of_day_between [22:00, 06:00]")
