"""Shared fixtures: an isolated config dir, the built-in registry, range helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadGroupScheduling

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.problems import Position, Range
from switchman.engine.config.registry import ModelRegistry
from tests.support.fake_provider import FakeProvider

EDITORS = "tests/editors/"
"""The editor end-to-end tests: `make pytest` runs them one after another on one worker."""


class EditorsTogether(LoadGroupScheduling):  # type: ignore[misc]  # xdist is untyped
    """``--dist loadgroup``, with every test under ``tests/editors/`` in one group.

    An editor run drives several processes (Neovim or code-server and Chromium, the daemon,
    the fake provider) and waits on what they show; two at once on CI's two cores would
    compete for them, and the VS Code tests share one setup of ``editor-clients/vscode``
    (npm ci, code-server, the .vsix) that must not run twice at once. The group is chosen
    here by path: pytest-xdist's ``xdist_group`` mark renames a test's node id, which
    pytest 9.2 no longer lets it do, so the mark alone groups nothing."""

    def _split_scope(self, nodeid: str) -> str:
        return "editors" if nodeid.startswith(EDITORS) else super()._split_scope(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> EditorsTogether | None:
    """The scheduler of ``--dist loadgroup`` (what `make pytest` asks for)."""
    return EditorsTogether(config, log) if config.getvalue("dist") == "loadgroup" else None


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
