"""Engine-level session tests: a :class:`Switchman` over the HTTP fake provider (real SDKs)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pytest

from switchman.engine.clock import Clock
from switchman.engine.service import Switchman
from switchman.engine.sessions.records import ChatDelta, DelegationUpdate, RouteNotice
from tests.conftest import models_yaml
from tests.support.fake_provider import FakeProvider
from tests.support.scripted_adapter import ScriptedAdapter
from tests.tools.conftest import ScriptedApprover

T = TypeVar("T")


@dataclass
class Recorder:
    """Collects what the engine reports to the editor."""

    notices: list[RouteNotice] = field(default_factory=list)
    deltas: list[ChatDelta] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    delegations: list[DelegationUpdate] = field(default_factory=list)
    changed_sessions: list[tuple[str, str | None]] = field(default_factory=list)
    _waiting: list[asyncio.Event] = field(default_factory=list, repr=False)

    def route_decided(self, notice: RouteNotice) -> None:
        """Record a routing notice."""
        self.notices.append(notice)
        self._reported()

    def delta(self, delta: ChatDelta) -> None:
        """Record streamed output."""
        self.deltas.append(delta)
        self._reported()

    def status_changed(self, workspace: str) -> None:
        """Record that a workspace's status changed."""
        self.statuses.append(workspace)
        self._reported()

    def delegation(self, update: DelegationUpdate) -> None:
        """Record a delegation's progress."""
        self.delegations.append(update)
        self._reported()

    def session_changed(self, workspace: str, session_id: str | None) -> None:
        """Record that another daemon changed a workspace's current session."""
        self.changed_sessions.append((workspace, session_id))
        self._reported()

    async def until(self, check: Callable[[], T | None], timeout: float = 10) -> T:
        """The first true value of ``check()``, tried again whenever the engine reports."""
        async with asyncio.timeout(timeout):
            while not (found := check()):
                woken = asyncio.Event()
                self._waiting.append(woken)
                try:
                    await woken.wait()
                finally:
                    self._waiting.remove(woken)
        return found

    def _reported(self) -> None:
        for woken in self._waiting:
            woken.set()


@dataclass
class Engine:
    """A running engine, what it reported, and its workspace."""

    service: Switchman
    recorder: Recorder
    workspace: str
    folder: Path


@contextmanager
def engine_over(tmp_path: Path, fake: FakeProvider, environ: Mapping[str, str],
                approver: ScriptedApprover | None = None) -> Iterator[Engine]:
    """An engine whose models.yaml points at ``fake``, with these keys (retries at once:
    the caller sets ``SWITCHMAN_RETRY_BASE_SECONDS``)."""
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    (tmp_path / "config" / "models.yaml").write_text(models_yaml(fake))
    recorder = Recorder()
    service = Switchman(recorder, config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ=dict(environ), approver=approver)
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    yield Engine(service, recorder, workspace, tmp_path / "workspace")
    service.store.db.close()


@pytest.fixture
def engine(tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> Iterator[
        Engine]:
    monkeypatch.setenv("SWITCHMAN_RETRY_BASE_SECONDS", "0")
    with engine_over(tmp_path, fake, {"ANTHROPIC_API_KEY": "k"}) as engine:
        yield engine


@pytest.fixture
def adapter() -> ScriptedAdapter:
    """The in-memory provider: replies are scripted per test."""
    return ScriptedAdapter()


@pytest.fixture
def approver() -> ScriptedApprover:
    """The user: allows every delegation and tool call unless a test scripts otherwise."""
    return ScriptedApprover()


def scripted_engine(tmp_path: Path, adapter: ScriptedAdapter, approver: ScriptedApprover | None,
                    files: dict[str, str], clock: Clock | None = None) -> Engine:
    """An engine on the in-memory ``adapter`` whose user is ``approver`` (None: no editor
    attached), with ``files`` in its workspace. The caller closes ``service.store.db``."""
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir(exist_ok=True)
    for name, text in files.items():
        path = tmp_path / "workspace" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    recorder = Recorder()
    service = Switchman(recorder, config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ={"ANTHROPIC_API_KEY": "k"},
                        adapters=adapter, approver=approver, clock=clock)
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    return Engine(service, recorder, workspace, tmp_path / "workspace")
