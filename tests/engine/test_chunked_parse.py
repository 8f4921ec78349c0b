"""Re-parsing only the changed rules gives exactly the tree of a whole parse."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from switchman.engine.config.builtin import (
    builtin_models_values,
    builtin_registry,
    builtin_routing_values,
)
from switchman.engine.config.models_file import check_models_text
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_doc, check_routing_text
from switchman.engine.config.yamldoc import YamlNode, parse_yaml
from switchman.engine.editing.chunked import ChunkedParser

HEADS = [
    "schema_version: 1",
    "global_default: sonnet",
    "# a comment",
    "",
    "tiers:\n  fast: haiku\n  balanced: sonnet\n  deep: opus",
    "pattern: {cost_weight: 0.1}",
    "workspaces:\n  /code/x:\n    rules:\n      - use: opus",
]

ITEMS = [
    "- name: r{i}\n  when:\n    any_of:\n      - message_matches: \"x{i}\"\n"
    "      - has_images: true\n  use: haiku",
    "- {{name: r{i}, use: opus}}",
    "- name: r{i}\n  description: |\n    multi\n    line\n\n  use: sonnet",
    "- use: haiku\n  when: {{message_contains_any: [a, b{i}]}}",
    "-\n  name: empty dash {i}\n  use: opus",
    "- - nested\n  - list",
    "- plain scalar {i}",
    "- name: r{i}\n  # a comment inside\n  use: x",
    "- name: \"quoted\n  over two lines\"\n  use: x",
    "- name: &a{i} anchored\n  use: *a{i}",
    "- name: r{i}\n  when: [a,\n    b]\n  use: x",
    "- 'single {i}'",
    "# between items\n- use: opus",
    "- name: r{i}\n\n  use: opus\n",
    "- name: ünïcode 😀 {i}\n  use: opus",
]

TAILS = [
    "",
    "workspaces:\n  /x:\n    default: opus",
    "# trailing comment",
    "pattern:\n  neighbors: 3\n",
    "tiers: {fast: haiku}",
]

EDIT_CHARS = " -:#{}[]\n\"'ab\t&*|>"


def tree(node: YamlNode | None) -> Any:
    """Everything the engine reads from a node, recursively."""
    if node is None:
        return None
    return (node.kind, node.start, node.end, node.tag, node.text, node.flow,
            [(tree(k), tree(v)) for k, v in node.pairs], [tree(i) for i in node.items])


def same_as_whole_parse(parser: ChunkedParser, text: str) -> None:
    chunked = parser.parse(text, "routing.yaml")
    whole = parse_yaml(text, "routing.yaml")
    assert chunked.problems == whole.problems
    assert tree(chunked.root) == tree(whole.root)


@st.composite
def documents(draw: st.DrawFn) -> str:
    indent = " " * draw(st.sampled_from([0, 2, 4]))
    head = draw(st.lists(st.sampled_from(HEADS), max_size=4))
    count = draw(st.integers(min_value=6, max_value=14))
    templates = draw(st.lists(st.sampled_from(ITEMS), min_size=count, max_size=count))
    items = ["\n".join(indent + line if line else line for line in t.format(i=i).split("\n"))
             for i, t in enumerate(templates)]
    tail = draw(st.sampled_from(TAILS))
    text = "\n".join([*head, "rules:", *items, tail]).rstrip("\n")
    return text + draw(st.sampled_from(["", "\n", " ", "\n ", "\n   # end", "\n\n"]))


@st.composite
def edits(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        if draw(st.booleans()) and at < len(text):
            text = text[:at] + text[at + 1:]
        else:
            text = text[:at] + draw(st.sampled_from(EDIT_CHARS)) + text[at:]
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_chunked_parse_equals_whole_parse_across_edits(data: st.DataObject) -> None:
    parser = ChunkedParser()
    text = data.draw(documents())
    same_as_whole_parse(parser, text)
    for _ in range(4):
        text = data.draw(edits(text))
        same_as_whole_parse(parser, text)


def other_registry() -> ModelRegistry:
    registry, problems = check_models_text(
        "models:\n  anthropic:claude-haiku-4-5: {aliases: [x, y]}\n", "models.yaml",
        builtin_models_values())
    assert registry is not None, problems
    return registry


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_checking_with_remembered_rules_equals_checking_from_scratch(data: st.DataObject) -> None:
    registries = [builtin_registry(), other_registry()]
    parser = ChunkedParser()
    text = data.draw(documents())
    for _ in range(4):
        registry = data.draw(st.sampled_from(registries))
        base = builtin_routing_values(registry)
        remembered = check_routing_doc(parser.parse(text, "routing.yaml"), registry, base)
        assert remembered == check_routing_text(text, "routing.yaml", registry, base)
        text = data.draw(edits(text))


@pytest.mark.parametrize("ending", ["", "\n", " ", "\n ", "\n     # end", "\n\n"])
@pytest.mark.parametrize("indent", [0, 2])
def test_the_end_of_the_text_is_where_a_whole_parse_puts_it(ending: str, indent: int) -> None:
    rules = "".join(f"{' ' * indent}- name: r{i}\n{' ' * indent}  use: opus\n"
                    for i in range(10))
    for tail in ("", "tiers: {fast: haiku}\n"):
        text = (f"rules:\n{rules}{tail}").rstrip("\n") + ending
        same_as_whole_parse(ChunkedParser(), text)


def test_unchanged_rules_are_reused_and_moved() -> None:
    rules = "".join(f"  - name: r{i}\n    use: opus\n" for i in range(20))
    text = f"global_default: sonnet\nrules:\n{rules}"
    parser = ChunkedParser()
    before = parser.parse(text, "routing.yaml").root
    assert before is not None
    last = before.pairs[-1][1].items[-1]
    edited = text.replace("rules:\n", "rules:\n  # a new line above every rule\n")
    after = parser.parse(edited, "routing.yaml").root
    assert after is not None
    assert after.pairs[-1][1].items[-1] is last
    assert last.start == (2 + 19 * 2 + 1, 4)
    assert tree(after) == tree(parse_yaml(edited, "routing.yaml").root)
