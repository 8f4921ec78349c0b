"""One check per saved text: the editor's check of its buffer and the store's check of the
saved file share their result (in the daemon, both run in its one check process)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from switchman.engine.config import check as check_module
from switchman.engine.config import routing_file
from switchman.engine.config.builtin import builtin_routing_values
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.config.store import ConfigStore
from switchman.engine.config.yamldoc import YamlDocument
from switchman.engine.editing.editing import ConfigDocuments

RULES = "".join(f"  - name: rule {i}\n    when: {{message_matches: 'deploy-{i}'}}\n"
                f"    use: opus\n" for i in range(30))
ROUTING = f"global_default: sonnet\nrules:\n{RULES}"
KEYS = {"ANTHROPIC_API_KEY": "test", "OPENAI_API_KEY": "test"}
"""Keys set, so that the editor adds no missing-key advice."""


class Checks:
    """Every full check of the user's routing.yaml, with the thread it ran on (the built-in
    routing.yaml, checked when the user's has errors, is not counted)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.threads: list[str] = []
        real = routing_file.check_routing_doc

        def counting(doc: YamlDocument, *args: Any) -> Any:
            if Path(doc.path).name == "routing.yaml":
                self.threads.append(threading.current_thread().name)
            return real(doc, *args)

        # the store reaches it through check_routing_text, the editor through check_value
        monkeypatch.setattr(routing_file, "check_routing_doc", counting)
        monkeypatch.setattr(check_module, "check_routing_doc", counting)

    @property
    def count(self) -> int:
        """How many times a routing.yaml was checked."""
        return len(self.threads)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Checks:
    return Checks(monkeypatch)


def test_saving_the_text_the_editor_checked_checks_it_once(config_dir: Path,
                                                           checks: Checks) -> None:
    documents = ConfigDocuments(config_dir)
    path = config_dir / "routing.yaml"
    documents.update(path, ROUTING)
    analysis = documents.check(path)
    assert analysis is not None and checks.count == 1

    path.write_text(ROUTING)  # the editor saves the buffer
    policy = ConfigStore(config_dir).policy()

    assert checks.count == 1
    assert policy == check_routing_text(ROUTING, str(path), ConfigStore(config_dir).registry(),
                                        routing_file_base(config_dir))[0]
    assert [r.name for r in policy.rules] == [f"rule {i}" for i in range(30)]


def test_the_editor_re_uses_the_check_of_a_file_the_store_checked_first(
        config_dir: Path, checks: Checks) -> None:
    """With the usual pause before diagnostics, the store often sees a save first."""
    path = config_dir / "routing.yaml"
    shadowed = ROUTING + "  - name: again\n    when: {message_matches: 'deploy-1'}\n    use: opus\n"
    path.write_text(shadowed)
    store = ConfigStore(config_dir)
    assert [p.code for p in store.problems()] == ["shadowed-rule"]

    documents = ConfigDocuments(config_dir, environ=KEYS)
    documents.update(path, shadowed)
    analysis = documents.check(path)

    assert checks.count == 1
    assert analysis is not None
    assert [(p.code, p.range.start.line) for p in analysis.problems] == [
        (p.code, p.range.start.line) for p in store.problems()]


def test_an_edited_text_is_checked_again_and_its_saved_value_is_a_fresh_checks(
        config_dir: Path, checks: Checks) -> None:
    """The editor re-checks only changed rules; the value the store takes from it must be
    the one a check from scratch gives (rule lines included)."""
    documents = ConfigDocuments(config_dir)
    path = config_dir / "routing.yaml"
    documents.update(path, ROUTING)
    documents.check(path)
    edited = ROUTING.replace("  - name: rule 3\n", "  - name: inserted\n    use: haiku\n"
                             "  - name: rule 3\n")
    documents.update(path, edited)
    documents.check(path)
    assert checks.count == 2

    path.write_text(edited)
    store = ConfigStore(config_dir)
    policy = store.policy()

    assert checks.count == 2
    fresh = check_routing_text(edited, str(path), store.registry(), routing_file_base(config_dir))
    assert policy == fresh[0]
    assert [(r.name, r.line) for r in policy.rules] == [(r.name, r.line) for r in fresh[0].rules]


def test_a_different_model_registry_is_a_different_check(config_dir: Path,
                                                         checks: Checks) -> None:
    """The editor checks routing.yaml against an unsaved models.yaml; the store, against
    the saved one: the same text, not the same check."""
    documents = ConfigDocuments(config_dir, environ=KEYS)
    documents.update(config_dir / "models.yaml", "models:\n  ollama:qwen: {aliases: [qwen]}\n")
    path = config_dir / "routing.yaml"
    text = "global_default: qwen\n"
    documents.update(path, text)
    analysis = documents.check(path)
    assert analysis is not None and analysis.problems == []

    path.write_text(text)
    store = ConfigStore(config_dir)

    assert [p.code for p in store.problems()] == ["unknown-model"]
    assert checks.count == 2


def routing_file_base(config_dir: Path) -> Any:
    """The built-in values a user routing.yaml is merged over."""
    return builtin_routing_values(ConfigStore(config_dir).registry())
