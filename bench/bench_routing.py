"""Routing-engine benchmarks (run with `make bench`; figures go to docs/performance.md).

1. Route decision with the parsed config cached: 100 rules with RE2 regexes,
   an 8 KB message that matches none of them until the last, so every rule is
   evaluated. Reports p50 / p99 over many decisions.
2. Full re-parse and validation of a 3,000-line routing.yaml.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import SystemClock
from switchman.engine.config.builtin import builtin_registry, builtin_routing_values
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.config.store import ConfigStore
from switchman.engine.router import Router
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.context import TurnContext

MODELS = ["opus", "sonnet", "haiku", "gpt-5", "gpt-5-mini"]


def hundred_rules() -> str:
    """A routing.yaml with 100 regex rules (the last one matches the benchmark message)."""
    lines = ["schema_version: 1", "global_default: sonnet", "rules:"]
    for i in range(99):
        lines += [f"  - name: rule {i}",
                  f'    when: {{message_matches: "(?i)(deploy|migrat|refactor)-{i}[a-z]+\\\\b"}}',
                  f"    use: {MODELS[i % len(MODELS)]}"]
    lines += ["  - name: last", '    when: {message_matches: "needle-[0-9]+$"}', "    use: haiku"]
    return "\n".join(lines) + "\n"


def three_thousand_lines(header: str = "") -> str:
    """A realistic routing.yaml of about 3,000 lines (after an optional header line)."""
    rule = (
        "  - name: rule {i}\n"
        "    when:\n"
        "      any_of:\n"
        '        - message_matches: "(?i)(foo|bar){i}[a-z]+"\n'
        '        - message_contains_any: ["x{i}", "y{i}"]\n'
        "      estimated_input_tokens_gt: {i}\n"
        "    use: anthropic:claude-haiku-4-5\n"
    )
    head = f"{header}\n" if header else ""
    head += "schema_version: 1\nglobal_default: anthropic:claude-sonnet-4-6\nrules:\n"
    return head + "".join(rule.format(i=i) for i in range(2997 // 7))


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max, in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3, ordered[-1] * 1e3


def measure(fn: Callable[[], object], runs: int, warmup: int = 20) -> list[float]:
    """Wall-clock seconds of ``runs`` calls after ``warmup`` unmeasured calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def bench_decision(runs: int) -> tuple[float, float, float]:
    """Route decisions through the full Router with the config file cached."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "routing.yaml").write_text(hundred_rules(), "utf-8")
        clock = SystemClock()
        router = Router(ConfigStore(Path(folder)), clock=clock, configured=lambda p: True,
                        availability=AvailabilityTracker(clock))
        message = ("lorem ipsum dolor sit amet " * 320)[:8 * 1024 - 10] + " needle-42"
        assert len(message.encode()) >= 8 * 1024 - 16
        request = RouteRequest(context=TurnContext(message=message, workspace_path=folder),
                               turn_id="bench")
        decision = router.decide(request)
        assert decision.winner is not None
        assert decision.winner.rule_name == "last"
        return percentiles(measure(lambda: router.decide(request), runs))


def bench_reparse(runs: int) -> tuple[float, float, float, int]:
    """Parse and validate a 3,000-line routing.yaml from text, every time."""
    text = three_thousand_lines()
    registry = builtin_registry()
    base = builtin_routing_values(registry)
    policy, problems = check_routing_text(text, "routing.yaml", registry, base)
    assert policy is not None, problems[:3]
    samples = measure(lambda: check_routing_text(text, "routing.yaml", registry, base), runs, 3)
    return (*percentiles(samples), text.count("\n"))


def main() -> None:
    """Run both benchmarks and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--decisions", type=int, default=5000)
    parser.add_argument("--reparses", type=int, default=100)
    args = parser.parse_args()
    d50, d99, dmax = bench_decision(args.decisions)
    r50, r99, rmax, lines = bench_reparse(args.reparses)
    print(f"python {os.sys.version.split()[0]}, {os.cpu_count()} CPUs")  # type: ignore[attr-defined]
    print("| benchmark | runs | p50 ms | p99 ms | max ms | goal |")
    print("|---|---|---|---|---|---|")
    print(f"| route decision, 100 RE2 rules, 8 KB message, config cached | {args.decisions} "
          f"| {d50:.3f} | {d99:.3f} | {dmax:.3f} | p99 <= 1 ms |")
    print(f"| re-parse + validate routing.yaml ({lines} lines) | {args.reparses} "
          f"| {r50:.2f} | {r99:.2f} | {rmax:.2f} | <= 20 ms |")


if __name__ == "__main__":
    main()
