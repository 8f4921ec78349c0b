"""What each ``switchman`` sub-command does: call the engine, print the result."""

from __future__ import annotations

import argparse
import os
import sqlite3
import stat
import sys
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import msgspec

from switchman.engine.availability import Unavailability
from switchman.engine.clock import SystemClock
from switchman.engine.config.check import WORKSPACE_KINDS, FileKind, check_doc, file_kind
from switchman.engine.config.jsonschema import schema_text
from switchman.engine.config.paths import (
    data_dir,
    find_workspace,
    workspace_profiles_file,
    workspace_routing_file,
)
from switchman.engine.config.problems import Problem, Severity, sort_problems
from switchman.engine.config.registry import ModelRegistry, ProviderSpec
from switchman.engine.config.report import format_ignored, format_problems, format_rules
from switchman.engine.config.skill_names import unknown_skills_of_file
from switchman.engine.config.store import ConfigStore, read_config
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.errors import (
    EmptyMessage,
    NoModelAvailable,
    RoutingError,
    UnknownCommand,
    UnknownModel,
    UnknownProfile,
)
from switchman.engine.files import entry_signature
from switchman.engine.keys import KeyRing, missing_key_hint
from switchman.engine.learning import database as patterns_db
from switchman.engine.learning.report import format_stats, stats_data
from switchman.engine.learning.store import MAX_ROWS, LearnedPatternStore, WorkspaceStats
from switchman.engine.plain import to_plain
from switchman.engine.policytest import load_policy, load_test_file, run_cases
from switchman.engine.profiles.apply import offers_tools
from switchman.engine.profiles.profile import Profile
from switchman.engine.router import Router
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import RouteDecided, ValidationFailure
from switchman.engine.routing.explain import render
from switchman.engine.routing.predicates import describe
from switchman.engine.routing.tiers import ESTIMATED, GIVEN, estimate_complexity, model_tier
from switchman.engine.skills import SkillIndex, skill_folders
from switchman.engine.tokens import estimate_text
from switchman.engine.tools.toolbox import TOOLBOX_NAMES
from switchman.engine.wording import closest, counted

_ENCODER = msgspec.json.Encoder()


def _print_json(value: Any) -> None:
    encoded = _ENCODER.encode(to_plain(value))
    sys.stdout.write(msgspec.json.format(encoded, indent=2).decode() + "\n")


def _workspace(args: argparse.Namespace) -> Path:
    if args.workspace:
        return Path(args.workspace).expanduser().resolve()
    return find_workspace(Path.cwd())


# -- rules check ---------------------------------------------------------------------


def rules_check(args: argparse.Namespace) -> int:
    """Validate configuration files; exit 1 when any has an error."""
    config = ConfigStore()
    workspace = _workspace(args)
    targets = [Path(f) for f in args.files] or _default_targets(config, workspace)
    folder = None if args.files else config.folder_problem()
    problems: list[Problem] = [folder] if folder is not None else []
    for path in targets:
        problems += _check_file(path, config, workspace)
    if folder is not None:  # listed first among the files checked
        targets.insert(0, config.directory)
    problems = sort_problems(problems)
    if args.json:
        _print_json(problems)
    else:
        _print_problems(problems, targets)
    return 1 if any(p.severity is Severity.ERROR for p in problems) else 0


def _default_targets(config: ConfigStore, workspace: Path) -> list[Path]:
    candidates = [config.models_path, config.routing_path, config.profiles_path]
    if not config.holds_config(workspace):  # its .switchman is your config folder
        candidates += [workspace_routing_file(workspace), workspace_profiles_file(workspace)]
    # A broken link, or a path under a looping folder, is reported too.
    return [p for p in candidates if entry_signature(p) is not None]


def _check_file(path: Path, config: ConfigStore, workspace: Path) -> list[Problem]:
    kind = file_kind(path, config.directory) or FileKind.ROUTING
    text, unreadable = read_config(path, workspace_file=kind in WORKSPACE_KINDS)
    if text is None:
        return [unreadable] if unreadable is not None else []
    registry = config.registry()
    if kind is not FileKind.MODELS:
        registry = _registry_beside(path, kind, registry)
    doc = parse_yaml(text, str(path))
    # a workspace's profiles are bounded by the user's own
    problems = check_doc(kind, doc, registry, config.user_profiles())
    return problems + unknown_skills_of_file(path, kind, doc, config.directory, workspace)


def _registry_beside(path: Path, kind: FileKind, registry: ModelRegistry) -> ModelRegistry:
    """A routing file is checked against the models.yaml next to it, if there is one."""
    sibling = path.with_name("models.yaml")
    if kind is FileKind.ROUTING and sibling.exists():
        return ConfigStore(path.parent).registry()
    return registry


def _print_problems(problems: list[Problem], targets: list[Path]) -> None:
    print(format_problems(problems, [str(t) for t in targets]))


# -- rules show ----------------------------------------------------------------------


def rules_show(args: argparse.Namespace) -> int:
    """Print the rules in evaluation order, with synthetic names."""
    config = ConfigStore()
    folder = str(_workspace(args))
    policy = config.effective(folder)
    rows = [{"name": r.name, "synthetic_name": r.synthetic_name, "when": describe(r.when),
             "use": r.use, "source": r.source,
             "line": None if r.line is None else r.line + 1} for r in policy.rules]
    if args.json:
        _print_json({"workspace": folder, "rules": rows,
                     "workspace_default": policy.workspace_default,
                     "global_default": policy.global_default, "tiers": policy.tiers})
        return 0
    print(format_rules(folder, policy))
    _note_config_errors(config, folder, sys.stdout, "this list")
    return 0


def _note_config_errors(config: ConfigStore, folder: str, stream: TextIO, what: str,
                        only: Path | None = None) -> None:
    """Say which config files (of all, or just ``only``) have errors and what ``what`` (this
    command's answer) used instead, so a result that differs from the editor's is not a
    surprise: one note per file, its first errors located."""
    errors: dict[str, list[Problem]] = {}
    for problem in config.problems(folder):
        if problem.severity is Severity.ERROR and (only is None or problem.file == str(only)):
            errors.setdefault(problem.file, []).append(problem)
    for path, found in errors.items():
        if path == str(config.directory):  # the folder itself: say why
            print(f"Note: {path}: {found[0].message}", file=stream)
        else:
            print(format_ignored(found, what), file=stream)


# -- rules test ----------------------------------------------------------------------


def rules_test(args: argparse.Namespace) -> int:
    """Run a policy test file; exit 1 if any case fails (2 if the files are invalid)."""
    path = Path(args.file)
    try:
        raw, problems = load_test_file(path)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    under_test = load_policy(path.parent, raw) if not problems else None
    if under_test is not None and under_test.registry is not None:  # now models can be checked
        raw, problems = load_test_file(path, under_test.registry)
    problems += under_test.problems if under_test else []
    if any(p.severity is Severity.ERROR for p in problems) or under_test is None:
        if args.json:  # as `rules check --json` prints them: still JSON for whoever reads it
            _print_json(sort_problems(problems))
        else:
            _print_problems(sort_problems(problems), [path])
        return 2
    results = run_cases(under_test, raw["cases"], SystemClock())
    if args.json:
        _print_json([{"name": r.name, "passed": r.passed, "decision": r.decision,
                      "error": r.error, "failures": r.failures} for r in results])
    else:
        for r in results:
            status = "PASS" if r.passed else "FAIL"
            print(f"{status}  {r.name}")
            for failure in r.failures:
                print(f"      {failure}")
        passed = sum(r.passed for r in results)
        print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if all(r.passed for r in results) else 1


# -- route ---------------------------------------------------------------------------


def route(args: argparse.Namespace) -> int:
    """Dry-run routing: print the decision and its chain; no provider is called."""
    folder = str(_workspace(args))
    refused = _slash_command(args)
    if refused is not None:
        return refused
    config = ConfigStore()
    clock = SystemClock()
    unknown = _unknown_unavailable(args.unavailable, config.registry())
    if unknown is not None:
        return _report_failure(args, unknown, None, code=UnknownModel.code)
    try:  # slot 4 as the daemon would decide it, from what was learned in this workspace
        patterns, _ = _patterns()
    except _PatternsUnreadable as error:
        print(f"switchman route: {error}; deciding without learned patterns", file=sys.stderr)
        patterns = None
    router = Router(config, clock=clock, configured=_configured(args),
                    availability=_pretend_unavailable(args.unavailable, config.registry()),
                    patterns=patterns)
    try:
        text, override = router.parse(args.message)
        if not text.strip() and not args.images:  # the chat refuses it too: nothing to route
            raise EmptyMessage(override.token if override else "")
        sticky = router.resolve_model(args.sticky) if args.sticky else None
        profiles = config.profiles(folder)
        if args.profile is not None and profiles.get(args.profile) is None:
            return _report_failure(args, str(UnknownProfile(args.profile, profiles.names())),
                                   None, code=UnknownProfile.code)
        profile = profiles.resolve(args.profile)
        context = _route_context(args, text, folder, config, profile.profile)
        decision = router.decide(RouteRequest(context=context, turn_id="dry-run",
                                              override=override, sticky_model=sticky,
                                              profile=profile,
                                              **_delegation(args, router, config, context)))
    except NoModelAvailable as failure:
        return _report_failure(args, str(failure) + _dry_run_hint(args, failure.decision)
                               + _chat_advice_here(str(failure)), failure.decision)
    except RoutingError as error:
        return _report_failure(args, str(error), None, code=error.code)
    finally:
        # on stderr, which keeps --json output clean
        _note_config_errors(config, folder, sys.stderr, "this dry run")
    if args.json:
        _print_json({"message": text, "decision": decision, "error": None})
    else:
        print(render(decision))
    return 0


def _delegation(args: argparse.Namespace, router: Router, config: ConfigStore,
                context: TurnContext) -> dict[str, Any]:
    """For ``--delegate-tier``: the worker's tier, complexity and tier floor, decided as a
    real delegation decides them (the message is the task, ``--files`` its files)."""
    if args.delegate_tier is None:
        return {}
    found: dict[str, Any] = {"delegate_tier": args.delegate_tier}
    if args.complexity is not None:
        found.update(complexity=args.complexity, complexity_source=GIVEN)
    else:
        found.update(complexity=estimate_complexity(estimate_text(context.message),
                                                    len(context.files_touched)),
                     complexity_source=ESTIMATED)
    effective = config.effective(context.workspace_path)
    if args.planner is not None and effective.delegation.tier_floor:
        planner = router.resolve_model(args.planner)
        found["tier_floor"] = model_tier(planner, effective.tiers, config.registry())
    return found


def _slash_command(args: argparse.Namespace) -> int | None:
    """What the chat does with a slash command instead of routing it (None: route it)."""
    from switchman.engine.sessions import slash_commands  # noqa: PLC0415

    command = slash_commands.command_name(args.message)
    if command is None:
        return None
    if command not in slash_commands.COMMANDS:  # /modle
        typo = UnknownCommand(command, slash_commands.mistyped(command))
        return _report_failure(args, str(typo), None, code=typo.code)
    note = (f"'{args.message.strip()[:80]}' is the slash command {command}: in the chat "
            "Switchman answers it itself, and no model is routed.")
    if command == "/delegate":
        note += " To dry-run a worker's task, use --delegate-tier TIER."
    if args.json:
        _print_json({"message": None, "decision": None, "error": None, "command": command})
    else:
        print(note)
    return 0


def _report_failure(args: argparse.Namespace, message: str, decision: Any,
                    code: str = "no_model_available") -> int:
    if args.json:
        _print_json({"message": None, "decision": decision,
                     "error": {"code": code, "message": message}})
    else:
        if decision is not None:
            print(render(decision))
            print()
        print(message)
    return 1


def _chat_advice_here(message: str) -> str:
    """The failure's advice is the chat's ("Run /model <id>"): what stands for it here."""
    if "/model <id>" not in message:
        return ""
    return "\n(In this dry run, --sticky <id> stands for /model <id>, and '@alias message' " \
        "works as in the chat.)"


def _dry_run_hint(args: argparse.Namespace, decision: RouteDecided) -> str:
    """For a decision that found no model because keys are missing: how to see, before
    setting any, what Switchman would choose once they are (a new user's first try)."""
    if args.assume_configured or args.json or not any(
            e.validation_failure is ValidationFailure.NOT_CONFIGURED for e in decision.chain):
        return ""
    return ("\nTo see what Switchman would choose once a key is set, run this again with "
            "--assume-configured (it then treats every provider as having a key).")


def _configured(args: argparse.Namespace) -> Any:
    if args.assume_configured:
        return lambda provider: True
    return KeyRing().present


def _unknown_unavailable(names: list[str], registry: ModelRegistry) -> str | None:
    """Why an ``--unavailable`` name is neither a model nor a provider (None: all are): a
    typo would otherwise pretend nothing is down and show a decision the user did not ask
    about."""
    for name in names:
        if name.strip() not in registry.providers and registry.resolve(name) is None:
            suggestions = closest(name, [*registry.names(), *registry.providers])
            hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
            return (f"--unavailable {name}: no model or provider has that name.{hint} "
                    "Run 'switchman models' to list them.")
    return None


def _pretend_unavailable(names: list[str], registry: ModelRegistry) -> Any:
    down = {registry.resolve(n) or n for n in names}

    def check(provider: str, model: str) -> Unavailability | None:
        if provider in down:
            return Unavailability("provider", provider, model,
                                  f"all {provider} models temporarily unavailable (--unavailable)")
        if model in down:
            return Unavailability("model", provider, model,
                                  f"{model} model-specific outage (--unavailable)")
        return None

    return check


def _route_context(args: argparse.Namespace, text: str, folder: str,
                   config: ConfigStore, profile: Profile) -> TurnContext:
    skills = SkillIndex.build(skill_folders(Path(folder), config.directory),
                              workspace=Path(folder))
    files = tuple(f.strip() for f in (args.files or "").split(",") if f.strip())
    return TurnContext(
        message=text,
        has_images=args.images,
        estimated_input_tokens=args.tokens if args.tokens is not None else estimate_text(text),
        has_tool_definitions=offers_tools(profile, TOOLBOX_NAMES),
        has_system_prompt=True,
        files_touched=files,
        workspace_path=folder,
        local_time=SystemClock().local_time(),
        cost_today_usd=Decimal(str(args.cost_today or 0)),
        skills_matching=skills.matching(text),
    )


# -- schema --------------------------------------------------------------------------


def schema(args: argparse.Namespace) -> int:
    """Print (or write) the JSON Schema of one kind of configuration file."""
    text = schema_text(FileKind(args.kind))
    if args.output:
        if Path(args.output).suffix.lower() in (".yaml", ".yml"):  # models.yaml, say: lost
            print(f"switchman schema: {args.output} is a YAML file name, and a JSON Schema "
                  "written there would replace what it holds (your configuration?); nothing "
                  "was written. Give a .json file.", file=sys.stderr)
            return 1
        try:
            Path(args.output).write_text(text, "utf-8")
        except OSError as error:
            print(f"switchman schema: cannot write {args.output}: {error.strerror or error}",
                  file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


# -- models --------------------------------------------------------------------------


def models(args: argparse.Namespace) -> int:
    """List the registry's models with their aliases, tier and key status."""
    config = ConfigStore()
    registry = config.registry()
    _note_config_errors(config, str(find_workspace(Path.cwd())), sys.stderr, "this list",
                        only=config.models_path)
    rows: list[dict[str, Any]] = []
    keys = KeyRing()  # what the daemon reads; it says where each key comes from, never the key
    for model in registry.models.values():
        provider: ProviderSpec = registry.providers[model.provider]
        configured = keys.present(provider)
        rows.append({"id": model.id, "aliases": list(model.aliases), "tier": model.tier,
                     "provider": model.provider, "configured": configured,
                     "key_source": keys.source(provider),
                     "key_file_open": keys.file_open(provider),
                     "missing_key": None if configured else missing_key_hint(provider,
                                                                              check_file=True),
                     "capabilities": model.capabilities, "pricing": model.pricing})
    if args.json:
        _print_json(rows)
        return 0
    for row in rows:
        key = ("no key needed" if not registry.providers[row["provider"]].needs_key
               else "key set" if row["configured"] else f"no key ({row['missing_key']})")
        if row["key_file_open"]:  # the README says: a file only you can read
            key += f", but others can read its file: chmod 600 {row['key_source']}"
        aliases = ", ".join(row["aliases"]) or "-"
        print(f"{row['id']:<32} {row['tier'] or '-':<9} {aliases:<18} {key}")
    return 0


# -- patterns ------------------------------------------------------------------------


class _PatternsUnreadable(Exception):
    """The pattern database cannot be opened; the message says where and why."""


def _patterns() -> tuple[LearnedPatternStore | None, Path]:
    """The pattern store of the data folder, or None when nothing was ever learned there.

    Reading what was learned must not create the data folder or an empty database, and a
    folder or file that cannot be used is a one-line error, not a traceback.
    """
    folder = data_dir()
    path = folder / patterns_db.FILE_NAME
    _check_data_folder(folder)
    try:
        if not path.exists() and not path.is_symlink():
            return None, path
        if not path.is_file():
            raise _PatternsUnreadable(f"{path} is not a file")
    except OSError as error:  # a folder on the way that cannot be searched
        raise _PatternsUnreadable(f"{path} cannot be read ({error.strerror})") from error
    try:
        # one process, one question: read a large workspace at once instead of "still loading"
        return LearnedPatternStore(patterns_db.connect(path), SystemClock(), background=False,
                                   sync_load_rows=MAX_ROWS), path
    except (OSError, sqlite3.Error) as error:
        raise _PatternsUnreadable(f"{path} cannot be read as a pattern database "
                                  f"({error}): it is damaged or not Switchman's, and until it "
                                  "is out of the way the daemon sends no messages. Move it "
                                  "aside (Switchman then starts a new, empty one; what it "
                                  "learned is forgotten)") from None


def _check_data_folder(folder: Path) -> None:
    """Raise _PatternsUnreadable naming the data folder and why when it cannot be a folder
    (the daemon refuses it as ``data_folder_unusable``); a folder not made yet is fine: nothing
    was learned there. ``Path.exists`` would take a path under a file for a missing one."""
    try:
        if stat.S_ISDIR(os.stat(folder).st_mode):
            return
        reason = "it is not a folder"
    except FileNotFoundError:
        uncreatable = None if folder.is_symlink() else _uncreatable(folder)
        if uncreatable is None and not folder.is_symlink():
            return
        reason = uncreatable or "it is a link to nothing"
    except NotADirectoryError:
        blocking = next((p for p in folder.parents if os.path.lexists(p)), folder)
        reason = f"{blocking} is a file, not a folder"
    except OSError as error:
        reason = error.strerror or str(error)
    raise _PatternsUnreadable(f"the data folder {folder} cannot be used ({reason}); make it a "
                              "folder you can read, or set SWITCHMAN_DATA_DIR to one")


def _uncreatable(folder: Path) -> str | None:
    """Why a data folder not made yet could not be made (None if it could): the daemon would
    refuse it, so it is not merely a folder where nothing was learned. Probed by making and
    removing a folder of another name in the nearest folder that exists (permissions alone do
    not tell: /proc refuses new entries even to root), so the data folder itself is not made."""
    parent = next((p for p in folder.parents if os.path.lexists(p)), None)
    if parent is None:
        return None
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".switchman-probe-", dir=parent))
    except OSError as error:
        return f"it cannot be created in {parent}: {error.strerror or error}"
    return None


def _unreadable(error: _PatternsUnreadable) -> int:
    print(f"switchman patterns: {error}", file=sys.stderr)
    return 1


def patterns_stats(args: argparse.Namespace) -> int:
    """Turns remembered per workspace and model."""
    try:
        store, path = _patterns()
    except _PatternsUnreadable as error:
        return _unreadable(error)
    stats = store.stats() if store is not None else []
    if args.json:
        _print_json(stats_data(stats))
    else:
        print(format_stats(stats, str(path)))
    return 0


def patterns_forget(args: argparse.Namespace) -> int:
    """Delete remembered turns, of one workspace or all."""
    try:
        store, path = _patterns()
    except _PatternsUnreadable as error:
        return _unreadable(error)
    workspace = str(Path(args.workspace).expanduser().resolve()) if args.workspace else None
    try:
        count = store.forget(workspace) if store is not None else 0
    except sqlite3.Error as error:  # another user's file, a full disk, a lock held too long
        print(f"switchman patterns: {path} cannot be written ({error}); nothing was forgotten",
              file=sys.stderr)
        return 1
    print(f"Forgot {counted(count, 'turn')}{f' of {workspace}' if workspace else ''}.")
    if workspace and not count:
        print(_nothing_remembered(workspace, store.stats() if store is not None else []),
              file=sys.stderr)
    return 0


def _nothing_remembered(workspace: str, stats: list[WorkspaceStats]) -> str:
    """Why forgetting one folder forgot nothing: a typo, or a folder never used, is told apart
    from a folder already forgotten by naming what is remembered."""
    missing = "" if os.path.isdir(workspace) else " (there is no such folder)"
    if not stats:
        return f"switchman patterns: nothing is remembered for {workspace}{missing}."
    known = "\n".join(f"  {s.workspace}" for s in stats)
    return (f"switchman patterns: nothing is remembered for {workspace}{missing}; "
            f"turns are remembered for:\n{known}")


def patterns_export(args: argparse.Namespace) -> int:
    """Every remembered turn as one JSON object per line."""
    try:
        store, _ = _patterns()
    except _PatternsUnreadable as error:
        return _unreadable(error)
    for row in store.export() if store is not None else ():
        sys.stdout.write(_ENCODER.encode(row).decode() + "\n")
    return 0
