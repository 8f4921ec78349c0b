"""Shared fixtures: an isolated config dir, the built-in registry, range helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.problems import Position, Range
from switchman.engine.config.registry import ModelRegistry
from tests.support.fake_provider import FakeProvider


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Switchman config dir, selected through SWITCHMAN_CONFIG_DIR."""
    folder = tmp_path / "config"
    folder.mkdir()
    monkeypatch.setenv("SWITCHMAN_CONFIG_DIR", str(folder))
    monkeypatch.setenv("SWITCHMAN_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return folder


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A fake model provider on 127.0.0.1 (Anthropic and OpenAI wire formats)."""
    with FakeProvider() as server:
        yield server


def models_yaml(fake: FakeProvider) -> str:
    """A models.yaml sending both built-in providers to the fake server."""
    return (f"providers:\n"
            f"  anthropic: {{base_url: '{fake.anthropic_base_url}', timeout_seconds: 20}}\n"
            f"  openai: {{base_url: '{fake.openai_base_url}', timeout_seconds: 20}}\n")


@pytest.fixture
def registry() -> ModelRegistry:
    """The built-in model registry."""
    return builtin_registry()


def range_from_str(spec: str) -> Range:
    """``"3:4-3:9"`` -> a Range from line 3 char 4 to line 3 char 9 (0-based)."""
    start, end = spec.split("-")
    sl, sc = (int(x) for x in start.split(":"))
    el, ec = (int(x) for x in end.split(":"))
    return Range(Position(sl, sc), Position(el, ec))


def span(text: str, needle: str, occurrence: int = 1) -> Range:
    """The range of the ``occurrence``-th ``needle`` in ``text`` (ASCII text only)."""
    index = -1
    for _ in range(occurrence):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index)
    col = index - (text.rfind("\n", 0, index) + 1)
    return Range(Position(line, col), Position(line, col + len(needle)))
