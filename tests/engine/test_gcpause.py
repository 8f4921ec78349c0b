"""Configuration checks run with the cyclic collector paused and freeze what they leave.

A collection triggered by a check's allocations holds the interpreter lock and
stalls the event loop's streams (see ``engine/gcpause.py``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from switchman.engine import gcpause
from switchman.engine.config.builtin import builtin_registry, builtin_routing_values
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.editing.editing import ConfigDocuments

RULES = "".join(
    f"  - name: regex {i}\n    when: {{message_matches: \"deploy-{i}[a-z]+\"}}\n    use: haiku\n"
    f"  - name: words {i}\n    when: {{message_contains_any: [kw{i}, plan{i}]}}\n    use: opus\n"
    f"  - name: either {i}\n    when:\n      any_of:\n        - message_matches: \"t-{i}$\"\n"
    f"        - not: {{has_images: false}}\n    use: sonnet\n"
    for i in range(70))


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


class Survivor:
    """An object the collector tracks (instances of plain classes are)."""


def test_collection_is_paused_during_a_check_and_its_survivors_frozen() -> None:
    assert gc.isenabled()
    before = gc.get_freeze_count()
    with gcpause.collection_paused():
        assert not gc.isenabled()
        assert gcpause.pausing()
        kept = Survivor()
    assert gc.isenabled() and not gcpause.pausing()
    assert gc.get_freeze_count() > before
    assert not any(found is kept for found in gc.get_objects())  # out of every generation


def test_overlapping_checks_keep_it_paused_until_the_last_ends() -> None:
    first_in, second_done, release = threading.Event(), threading.Event(), threading.Event()

    def long_check() -> None:
        with gcpause.collection_paused():
            first_in.set()
            release.wait(10)

    thread = threading.Thread(target=long_check)
    thread.start()
    assert first_in.wait(10)
    gcpause.run_paused(second_done.set)
    assert second_done.is_set() and not gc.isenabled()  # the first check still runs
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    gcpause.run_paused(lambda: None)
    assert not gc.isenabled()


def test_checks_leave_no_cyclic_garbage_so_freezing_them_keeps_nothing_dead(
        tmp_path: Path) -> None:
    """The design relies on it: what a check leaves is either alive or freed by refcount."""
    text = "global_default: sonnet\nrules:\n" + RULES
    registry = builtin_registry()
    documents = ConfigDocuments(tmp_path)
    path = tmp_path / "routing.yaml"
    gc.collect()
    gc.disable()
    check_routing_text(text, str(path), registry, builtin_routing_values(registry))
    documents.update(path, text)
    analysis = documents.check(path)
    assert analysis is not None and analysis.problems  # (rules with no key set are warned)
    assert gc.collect() == 0
