"""Plain-text reports about configuration, shared by the CLI and chat commands."""

from __future__ import annotations

from collections.abc import Sequence

from switchman.engine.config.builtin import BUILTIN_ROUTING
from switchman.engine.config.check import FileKind, file_kind
from switchman.engine.config.policy import EffectivePolicy, Rule
from switchman.engine.config.problems import Problem, Severity
from switchman.engine.config.store import IN_FORCE_FILE, IN_FORCE_LAST_GOOD
from switchman.engine.routing.predicates import describe
from switchman.engine.wording import counted

_USED_INSTEAD = {
    FileKind.MODELS: "uses the built-in models in its place",
    FileKind.ROUTING: "uses the built-in policy in its place",
    FileKind.WORKSPACE: "leaves out the workspace's rules and default (your own policy "
                        "alone applies)",
    FileKind.PROFILES: "uses the built-in profiles in its place",
    FileKind.WORKSPACE_PROFILES: "leaves out the workspace's profiles (yours alone apply)",
}
MAX_NOTED = 3
"""Errors quoted per file in :func:`format_ignored`; ``rules check`` lists them all."""


def format_ignored(errors: Sequence[Problem], what: str) -> str:
    """Why a command that reads the configuration once (``what``: "this dry run") did without
    a file: its first errors, located, and what it used instead. A daemon keeps the last valid
    version it saw; this process never saw one, so its answer can differ from the editor's."""
    path = errors[0].file
    kind = file_kind(path) or FileKind.ROUTING
    lines = [f"Note: {path} has errors, so {what} {_USED_INSTEAD[kind]}. A running Switchman "
             "keeps the last valid version it saw of the file, so in the editor the result can "
             "differ until the file is fixed:"]
    lines += [f"  {line}" for line in format_problems(errors[:MAX_NOTED], [path]).splitlines()[:-1]]
    if len(errors) > MAX_NOTED:
        lines.append(f"  ({len(errors) - MAX_NOTED} more: run 'switchman rules check')")
    return "\n".join(lines)


def format_in_force(in_force: dict[str, str], problems: Sequence[Problem]) -> list[str]:
    """A note for each file with errors that the daemon does without (``in_force``: each
    file's ``IN_FORCE_*`` state, as :meth:`ConfigStore.state` gives it): what is used in its
    place, so a listing of rules or defaults is not taken for the file's."""
    broken = {p.file for p in problems if p.severity is Severity.ERROR}
    notes = []
    for path, state in in_force.items():
        if path not in broken or state == IN_FORCE_FILE:
            continue
        kind = file_kind(path) or FileKind.ROUTING
        instead = ("its last valid version is in force" if state == IN_FORCE_LAST_GOOD
                   else f"Switchman {_USED_INSTEAD[kind]}")
        notes.append(f"Note: {path} has errors, so {instead} (/rules check lists them).")
    return notes


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
        lines.append(f"{counted(errors, 'error')}, {counted(warnings, 'warning')} in {checked}")
    return "\n".join(lines)


def _where(rule: Rule) -> str:
    """Where a rule came from: ``file:line``, or ``built-in`` (the package's own policy, which
    a user cannot edit; its rules kept by a routing.yaml without ``rules`` have no line)."""
    if rule.source == BUILTIN_ROUTING or rule.line is None:
        return "built-in"
    return f"{rule.source}:{rule.line + 1}"


def format_rules(folder: str, policy: EffectivePolicy) -> str:
    """The rules in evaluation order, then the defaults."""
    lines = [f"Rules for {folder} (first match whose model validates wins):"]
    for number, rule in enumerate(policy.rules, start=1):
        lines.append(f"  {number}. {rule.name}: {describe(rule.when)} -> {rule.use}   "
                     f"({_where(rule)})")
    if not policy.rules:
        lines.append("  (no rules)")
    lines.append(f"Workspace default: {policy.workspace_default or '-'}")
    lines.append(f"Global default:    {policy.global_default}")
    return "\n".join(lines)
