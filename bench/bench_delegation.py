"""Delegation benchmarks (figures go to docs/performance.md). Run from the repository root:

    PYTHONPATH=. .venv/bin/python bench/bench_delegation.py

1. Cost: the multi-step workload of spec 001 §12 — a planner on the deep tier
   (Opus) refactoring three providers that share boilerplate, handing the three
   mechanical rewrites to the fast tier (Haiku) — against the same work done by
   the planner alone. Both run through the real engine, the real Anthropic SDK
   and the HTTP fake provider; the fake reports token usage scripted for the
   same work in both runs (the same three files read, the same code written),
   and the engine prices it with the built-in prices. Reported: each run's cost
   and the ratio.
2. Overhead: from the moment the planner's LLM call that asks for ``delegate``
   has finished to the moment the worker's first provider request is made
   (argument checks, handoff, worker session, routing, durable turn start),
   measured with the in-memory adapter so no HTTP time is included. The
   reference, measured in the same run, is an ordinary tool step: from a call
   asking for ``read_file`` finishing to the next LLM request.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

from bench_support import at_least, machine

from switchman.engine.providers.base import Finished, ProviderRequest, StreamEvent
from switchman.engine.service import Switchman
from tests.conftest import models_yaml
from tests.sessions.conftest import Recorder
from tests.support.fake_provider import FakeProvider, ToolCall, Usage
from tests.support.scripted_adapter import ScriptedAdapter

OPUS_API, HAIKU_API = "claude-opus-4-7", "claude-haiku-4-5"
FILES = ("github.py", "gitlab.py", "bitbucket.py")
FILE_TOKENS = 2000
"""Tokens of each provider file (read in both runs)."""
REWRITE_TOKENS = 900
"""Tokens of each rewritten provider (written in both runs)."""
PLANNER_CONTEXT = 6000
"""System prompt, tools, the auth module's overview and the user's request."""
WARM_UP = 3
"""Steps of each kind run before the timed ones (imports, caches)."""


def make_workspace(root: Path) -> Path:
    """A small auth module with three providers sharing boilerplate."""
    folder = root / "workspace"
    (folder / "auth").mkdir(parents=True)
    for name in FILES:
        (folder / "auth" / name).write_text("def login(token):\n    check(token)\n" * 40)
    return folder


def engine(root: Path, **options: Any) -> tuple[Switchman, str]:
    """An engine on its own folders, its workspace open."""
    for name in ("config", "data"):
        (root / name).mkdir(exist_ok=True)
    service = Switchman(Recorder(), config_folder=root / "config", data_folder=root / "data",
                        environ={"ANTHROPIC_API_KEY": "bench"}, **options)
    return service, service.open_workspace(str(make_workspace(root)))


def script_delegated(fake: FakeProvider) -> None:
    """Planner plans and delegates; each worker reads its file and rewrites it."""
    calls = [ToolCall("delegate", {"tier": "fast", "task": f"Move the shared token check in "
                                   f"auth/{name} into auth/common.py and rewrite {name} to use "
                                   "it. Answer with the new file.",
                                   "allowed_tools": ["read_file"],  # read-only: no approval
                                   "context": {"mode": "explicit", "include": [
                                       {"type": "file", "path": f"auth/{name}"}]}},
                      id=f"toolu_{n}") for n, name in enumerate(FILES)]
    fake.script_tool_calls(calls, model=OPUS_API, usage=Usage(PLANNER_CONTEXT, 600))
    for n, name in enumerate(FILES):
        fake.script_tool_call("read_file", {"path": f"auth/{name}"}, id=f"toolu_r{n}",
                              model=HAIKU_API, usage=Usage(1500, 80))
        fake.script_text(f"rewritten {name}", model=HAIKU_API,
                         usage=Usage(1500 + 80 + FILE_TOKENS, REWRITE_TOKENS))
    fake.script_text("Refactored all three providers.", model=OPUS_API,
                     usage=Usage(PLANNER_CONTEXT + 600 + len(FILES) * REWRITE_TOKENS, 300))


def script_alone(fake: FakeProvider) -> None:
    """The planner reads the three files and writes the three rewrites itself."""
    fake.script_tool_calls([ToolCall("read_file", {"path": f"auth/{name}"}, id=f"toolu_r{n}")
                            for n, name in enumerate(FILES)],
                           model=OPUS_API, usage=Usage(PLANNER_CONTEXT, 200))
    fake.script_text("Refactored all three providers.", model=OPUS_API,
                     usage=Usage(PLANNER_CONTEXT + 200 + len(FILES) * FILE_TOKENS,
                                 len(FILES) * REWRITE_TOKENS + 300))


async def workload_cost(fake: FakeProvider, delegated: bool) -> Decimal:
    """The session's total cost (workers included) for one run of the workload."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "config").mkdir()
        (root / "config" / "models.yaml").write_text(models_yaml(fake))
        service, workspace = engine(root)
        (script_delegated if delegated else script_alone)(fake)
        result = await service.chat(workspace, None, "@opus refactor the three auth providers "
                                                     "to share the token check")
        assert result.status == "completed", result.error
        total = service.queries.cost(result.session_id).total_usd
        service.store.db.close()
        return total


class TimedAdapter(ScriptedAdapter):
    """The in-memory adapter, noting when each call's final event is produced."""

    def __init__(self) -> None:
        super().__init__()
        self.finished_at: list[float] = []

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        async for event in super().stream(request):
            if isinstance(event, Finished):
                self.finished_at.append(asyncio.get_running_loop().time())
            yield event


async def step_gaps(runs: int, tool: str) -> list[float]:
    """Seconds from a call asking for ``tool`` finishing to the next LLM request."""
    gaps = []
    with tempfile.TemporaryDirectory() as folder:
        adapter = TimedAdapter()
        service, workspace = engine(Path(folder), adapters=adapter)
        arguments: dict[str, Any] = {"tier": "fast", "task": "Format this JSON: {}",
                                     "context": {"mode": "minimal"},
                                     # read-only, so no approval wait is measured
                                     "allowed_tools": ["read_file"]} if tool == "delegate" \
            else {"path": "auth/github.py"}
        for run in range(runs):
            adapter.calls((f"toolu_{run}", tool, arguments), model="anthropic:claude-opus-4-7")
            adapter.text("{}", model="anthropic:claude-haiku-4-5")
            adapter.text("done", model="anthropic:claude-opus-4-7")
            first = len(adapter.requests)
            await service.chat(workspace, None, f"@opus step {run}")
            gaps.append(adapter.request_times[first + 1] - adapter.finished_at[first])
        service.store.db.close()
    return gaps[WARM_UP:]  # the first runs warm caches and imports


def p50_p90(samples: list[float]) -> tuple[float, float]:
    """p50 and p90 in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e3, ordered[int(len(ordered) * 0.9)] * 1e3


async def main(runs: int) -> None:
    """Run both benchmarks and print Markdown tables."""
    with FakeProvider() as fake:
        delegated = await workload_cost(fake, delegated=True)
        alone = await workload_cost(fake, delegated=False)
    reference = await step_gaps(runs, "read_file")
    delegate = await step_gaps(runs, "delegate")
    r50, r90 = p50_p90(reference)
    d50, d90 = p50_p90(delegate)
    print(f"{machine()}\n")
    print("| workload (spec 001 §12) | cost |")
    print("|---|---|")
    print(f"| planner on Opus alone | ${alone:.6f} |")
    print(f"| planner on Opus, three sub-tasks delegated to Haiku | ${delegated:.6f} |")
    print(f"| **ratio delegated / alone** | **{delegated / alone:.3f}** |\n")
    print("| step | runs | p50 ms | p90 ms |")
    print("|---|---|---|---|")
    print(f"| reference: read_file call finished → next LLM request | {len(reference)} | "
          f"{r50:.2f} | {r90:.2f} |")
    print(f"| delegate call finished → worker's first LLM request | {len(delegate)} | "
          f"{d50:.2f} | {d90:.2f} |")
    print(f"| ratio (p50) | | {d50 / r50:.2f} | |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=at_least(WARM_UP + 1), default=60,
                        help=f"steps of each kind, the first {WARM_UP} not counted (default 60)")
    asyncio.run(main(parser.parse_args().runs))
