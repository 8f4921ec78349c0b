"""Fixtures for the tool tests: a workspace, a scripted approver, a toolbox."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from switchman.engine.skills import SkillIndex
from switchman.engine.tools.approval import (
    ApprovalAnswer,
    ApprovalPolicy,
    ApprovalRequest,
    Decision,
    TrustStore,
)
from switchman.engine.tools.changes import DiskApplier
from switchman.engine.tools.registry import ToolContext
from switchman.engine.tools.toolbox import Toolbox, ToolServices


@dataclass
class ScriptedApprover:
    """Answers approval requests from a list (then ``default``), recording each request."""

    answers: list[ApprovalAnswer] = field(default_factory=list)
    default: Decision = "allow_once"
    asked: list[ApprovalRequest] = field(default_factory=list)

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else ApprovalAnswer(self.default)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[remote]\nurl = https://user:token@host/x\n")
    (tmp_path / "outside.txt").write_text("outside\n")
    return root


@pytest.fixture
def approver() -> ScriptedApprover:
    return ScriptedApprover()


@pytest.fixture
def trust(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "data")


def make_toolbox(project: Path, approver: ScriptedApprover, trust: TrustStore, *,
                 is_worker: bool = False, skills: SkillIndex | None = None,
                 environ: dict[str, str] | None = None, key_variables: tuple[str, ...] = (),
                 buffers: dict[Path, str] | None = None) -> Toolbox:
    """A toolbox for ``project`` writing to the disk directly; ``buffers`` are the editor's
    shared texts (by real path)."""
    services = ToolServices(ApprovalPolicy(trust, approver), DiskApplier(),
                            environ if environ is not None else {"PATH": "/usr/bin:/bin"},
                            lambda: key_variables, lambda: buffers or {})
    context = ToolContext(project.as_uri(), project, "session-1", "turn-1", "test:model",
                          is_worker=is_worker)
    return Toolbox(context, services, skills)


@pytest.fixture
def toolbox(project: Path, approver: ScriptedApprover, trust: TrustStore) -> Toolbox:
    return make_toolbox(project, approver, trust)
