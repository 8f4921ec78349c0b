"""Routing-engine benchmarks, each a ratio against a reference measured in the same run.

Run with ``make bench`` (or ``.venv/bin/python bench/bench_routing.py``).

1. Route decision, 8 KB message, policy validated once: 100 mixed rules
   (regexes, keyword lists, any_of/not, thresholds) against 100 regex-only
   rules through the same policy chain. No rule matches until the last, so every rule is evaluated.
2. Route decision as the number of mixed rules grows (10 → 5,000), against 100.
3. Route decision as the message grows (1 KB → 1 MB, 100 mixed rules), against 1 KB.
4. Shadowing check: validating 1,000 keyword-list rules and 1,000 threshold
   rules, against 1,000 regex rules (which never needed a comparison).
5. Cold parse + validate of a 3,000-line routing.yaml, against PyYAML's C loader
   reading the same text (which builds plain Python objects and checks nothing).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from bench_support import at_least, machine

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import SystemClock
from switchman.engine.config.builtin import builtin_registry, builtin_routing_values
from switchman.engine.config.policy import RoutingPolicy, Rule, effective_policy
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.validation import CandidateValidator

MODELS = ["opus", "sonnet", "haiku", "gpt-5", "gpt-5-mini"]
HEAD = ["schema_version: 1", "global_default: sonnet", "rules:"]


def regex_rule(i: int) -> list[str]:
    """A rule with one RE2 regex that the benchmark message never matches."""
    return [f"  - name: rule {i}",
            f'    when: {{message_matches: "(?i)(deploy|migrat|refactor)-{i}[a-z]+\\\\b"}}',
            f"    use: {MODELS[i % len(MODELS)]}"]


def mixed_rule(i: int) -> list[str]:
    """One of four rule shapes, none matching the benchmark message."""
    use = f"    use: {MODELS[i % len(MODELS)]}"
    shapes = [
        regex_rule(i)[:2],
        [f"  - name: rule {i}", f'    when: {{message_contains_any: ["kw{i}a", "Kw{i}b"]}}'],
        [f"  - name: rule {i}", "    when:", "      any_of:",
         f'        - message_matches: "ticket-{i}[0-9]+$"',
         "        - not: {has_images: false}"],
        [f"  - name: rule {i}", "    when:", f"      estimated_input_tokens_gt: {10**6 + i}",
         f'      message_contains_any: ["plan{i}"]'],
    ]
    return [*shapes[i % 4], use]


def routing_file(count: int, rule: Callable[[int], list[str]], start: int = 0,
                 last: bool = True) -> str:
    """Non-matching rules ``start`` .. ``count - 2``, then (``last``) one that matches the
    benchmark message."""
    lines = list(HEAD)
    for i in range(start, count - 1):
        lines += rule(i)
    if last:
        lines += ["  - name: last", '    when: {message_matches: "needle-[0-9]+$"}',
                  "    use: haiku"]
    return "\n".join(lines) + "\n"


def policy_of(count: int, rule: Callable[[int], list[str]]) -> RoutingPolicy:
    """The validated policy of :func:`routing_file`, built from files of at most 1,000 rules
    (a configuration file is limited to 256 KB; the rules are simply concatenated)."""
    registry = builtin_registry()
    rules: list[Rule] = []
    policy: RoutingPolicy | None = None
    for start in range(0, count, 1000):
        end = min(start + 1000, count)
        text = routing_file(end, rule, start, last=end == count)
        policy, problems = check_routing_text(text, "routing.yaml", registry,
                                              builtin_routing_values(registry))
        assert policy is not None, problems[:3]
        rules += policy.rules
    assert policy is not None
    return dataclasses.replace(policy, rules=tuple(rules))


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


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99, in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3


def measure(fn: Callable[[], object], runs: int, warmup: int = 5) -> list[float]:
    """Wall-clock seconds of ``runs`` calls after ``warmup`` unmeasured calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def message_of(size: int) -> str:
    """A message of ``size`` bytes that only the last rule matches."""
    return ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size - 10] + " needle-42"


def decisions(folder: Path, policy: RoutingPolicy, message: str, runs: int
              ) -> tuple[float, float]:
    """p50 / p99 ms of route decisions by the policy chain (the policy validated once, as
    the daemon's store does while the file is unchanged)."""
    registry = builtin_registry()
    effective = effective_policy(policy, str(folder), None)
    clock = SystemClock()
    validator = CandidateValidator(registry, lambda p: True, AvailabilityTracker(clock).check)
    request = RouteRequest(context=TurnContext(message=message, workspace_path=str(folder)),
                           turn_id="bench")

    def decide() -> RouteDecided:
        return PolicyChain(registry, effective, validator, clock).decide(request)

    decision = decide()
    assert decision.winner is not None
    assert decision.winner.rule_name == "last", decision.winner
    return percentiles(measure(decide, runs))


def checks(text: str, runs: int) -> float:
    """Median ms of validating ``text`` as a routing.yaml from scratch."""
    registry = builtin_registry()
    base = builtin_routing_values(registry)
    policy, problems = check_routing_text(text, "routing.yaml", registry, base)
    assert policy is not None, problems[:3]
    return percentiles(measure(lambda: check_routing_text(text, "routing.yaml", registry, base),
                               runs, 1))[0]


def keyword_rule(i: int) -> list[str]:
    """A keyword-list rule (distinct keywords)."""
    return [f"  - name: rule {i}", f'    when: {{message_contains_any: ["kw{i}", "alt{i}"]}}',
            "    use: haiku"]


def threshold_rule(i: int) -> list[str]:
    """A threshold rule (descending, so none shadows another)."""
    return [f"  - name: rule {i}", f"    when: {{estimated_input_tokens_gt: {5000 - i}}}",
            "    use: haiku"]


def row(what: str, figure: str, reference: str, ratio: float, goal: str) -> str:
    """One Markdown table row."""
    return f"| {what} | {figure} | {reference} | {ratio:.2f}x | {goal} |"


def main() -> None:
    """Run every routing benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--decisions", type=at_least(1), default=2000,
                        help="route decisions timed per figure (default 2000)")
    args = parser.parse_args()
    runs = args.decisions
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        msg8k = message_of(8 * 1024)
        regex = decisions(folder, policy_of(100, regex_rule), msg8k, runs)
        mixed = decisions(folder, policy_of(100, mixed_rule), msg8k, runs)
        rows.append(row("route decision, 100 mixed rules, 8 KB: p50 / p99 ms",
                        f"{mixed[0]:.3f} / {mixed[1]:.3f}",
                        f"100 regex-only rules: {regex[0]:.3f} / {regex[1]:.3f}",
                        mixed[1] / regex[1], "p99 ≤ 0.3 ms; ≤ 1.5x (p99)"))
        for count in (10, 1000, 5000):
            scaled = decisions(folder, policy_of(count, mixed_rule), msg8k,
                               max(20, runs * 100 // count // 4))
            rows.append(row(f"route decision, {count:,} mixed rules, 8 KB: p50 ms",
                            f"{scaled[0]:.3f}", f"100 mixed rules: {mixed[0]:.3f}",
                            scaled[0] / mixed[0],
                            "linear (5,000 ≤ 55x)" if count == 5000 else "linear"))
        small = decisions(folder, policy_of(100, mixed_rule), message_of(1024), runs)
        for size, label in ((64 * 1024, "64 KB"), (1024 * 1024, "1 MB")):
            big = decisions(folder, policy_of(100, mixed_rule), message_of(size), 30)
            rows.append(row(f"route decision, 100 mixed rules, {label} message: p50 ms",
                            f"{big[0]:.3f}", f"1 KB message: {small[0]:.3f}",
                            big[0] / small[0],
                            f"linear ({size // 1024}x)" + ("; ≤ 5 ms" if size > 65536 else "")))
    regexes = checks(routing_file(1000, regex_rule), 5)
    for name, shape in (("keyword-list", keyword_rule), ("threshold", threshold_rule)):
        ms = checks(routing_file(1000, shape), 5)
        rows.append(row(f"validate 1,000 {name} rules (shadowing check): ms", f"{ms:.1f}",
                        f"1,000 regex rules: {regexes:.1f}", ms / regexes, "near-linear (≈1x)"))
    text = three_thousand_lines()
    ours = checks(text, 20)
    libyaml = percentiles(measure(lambda: yaml.load(text, Loader=yaml.CLoader), 20, 1))[0]
    rows.append(row(f"cold parse + validate, {text.count(chr(10)):,} lines: ms", f"{ours:.1f}",
                    f"PyYAML CLoader: {libyaml:.1f}", ours / libyaml, "≤ 2.5x"))
    print(f"{machine()}\n")
    print("| benchmark | figure | reference (same run) | ratio | goal |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
