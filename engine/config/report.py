"""Plain-text reports about configuration, shared by the CLI and chat commands."""

from __future__ import annotations

from collections.abc import Sequence

from switchman.engine.config.policy import EffectivePolicy
from switchman.engine.config.problems import Problem, Severity
from switchman.engine.routing.predicates import describe


def format_problems(problems: Sequence[Problem], files: Sequence[str]) -> str:
    """``file:line:col: severity [code] message`` lines and a summary (hints left out)."""
    if not files:
        return "No configuration files found; the built-in defaults are in use. ok"
    lines = []
    for p in problems:
        if p.severity is Severity.HINT:
            continue
        start = p.range.start
        lines.append(f"{p.file}:{start.line + 1}:{start.character + 1}: {p.severity.value} "
                     f"[{p.code.value}] {p.message}")
    errors = sum(p.severity is Severity.ERROR for p in problems)
    warnings = sum(p.severity is Severity.WARNING for p in problems)
    checked = ", ".join(files)
    if not errors and not warnings:
        lines.append(f"ok: {checked}")
    else:
        lines.append(f"{errors} error(s), {warnings} warning(s) in {checked}")
    return "\n".join(lines)


def format_rules(folder: str, policy: EffectivePolicy) -> str:
    """The rules in evaluation order, then the defaults."""
    lines = [f"Rules for {folder} (first match whose model validates wins):"]
    for number, rule in enumerate(policy.rules, start=1):
        lines.append(f"  {number}. {rule.name}: {describe(rule.when)} -> {rule.use}   "
                     f"({rule.source}:{rule.line + 1})")
    if not policy.rules:
        lines.append("  (no rules)")
    lines.append(f"Workspace default: {policy.workspace_default or '-'}")
    lines.append(f"Global default:    {policy.global_default}")
    return "\n".join(lines)
