"""The ``switchman`` command line: argument parsing and dispatch only."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from io import TextIOWrapper
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlparse

from switchman.engine import __version__

SERVE_DESCRIPTION = ("Run the Switchman daemon: a language server that VS Code and Neovim "
                     "start over stdio. You rarely run it yourself; see docs/protocol.md.")


def _workspace_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", metavar="DIR",
                        help="workspace folder (default: the nearest folder with .switchman/, "
                             "else the current folder)")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser."""
    from switchman.engine.config.schema import (  # noqa: PLC0415 - not for `switchman serve`
        COMPLEXITY_LEVELS,
        TIER_NAMES,
    )

    parser = argparse.ArgumentParser(
        prog="switchman",
        description="Per-turn AI model routing for your editor.",
    )
    parser.add_argument("--version", action="version", version=f"switchman {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rules = sub.add_parser("rules", help="check, show and test routing policies")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    check = rules_sub.add_parser("check", help="validate routing.yaml / models.yaml files")
    check.add_argument("files", nargs="*", metavar="FILE",
                       help="files to check (default: your config files and the workspace's)")
    check.add_argument("--json", action="store_true", help="print LSP-shaped diagnostics")
    _workspace_arg(check)
    show = rules_sub.add_parser("show", help="print the active rules, in evaluation order")
    show.add_argument("--json", action="store_true", help="print the rules as JSON")
    _workspace_arg(show)
    test = rules_sub.add_parser("test", help="run routing-policy unit tests")
    test.add_argument("file", metavar="FILE",
                      help="a policy test file (*.test.yaml; see docs/policy-tests.md)")
    test.add_argument("--json", action="store_true", help="print each case's result as JSON")

    route = sub.add_parser("route", help="dry-run routing for a message (no provider called)")
    route.add_argument("message", help="the chat message to route, as you would type it "
                                       "(an @alias at its start counts)")
    _workspace_arg(route)
    route.add_argument("--sticky", metavar="MODEL", help="pretend this sticky model is set")
    route.add_argument("--assume-configured", action="store_true",
                       help="treat every provider as having an API key")
    route.add_argument("--unavailable", action="append", default=[], metavar="MODEL|PROVIDER",
                       help="pretend this model or provider is unavailable (repeatable)")
    route.add_argument("--tokens", type=int, metavar="N", help="estimated input tokens")
    route.add_argument("--images", action="store_true", help="the message carries images")
    route.add_argument("--cost-today", type=float, metavar="USD", help="today's spend so far")
    route.add_argument("--files", metavar="PATHS", help="comma-separated files touched by tools")
    route.add_argument("--delegate-tier", choices=TIER_NAMES, metavar="TIER",
                       help="route the message as a delegated worker's task of this tier")
    route.add_argument("--planner", metavar="MODEL",
                       help="with --delegate-tier: the planner's model (sets the tier floor)")
    route.add_argument("--complexity", choices=COMPLEXITY_LEVELS, metavar="LEVEL",
                       help="with --delegate-tier: the complexity the planner gives "
                            "(default: estimated from the message and --files)")
    route.add_argument("--profile", metavar="NAME",
                       help="route as a session using this agent profile (default: the "
                            "workspace's or global default profile)")
    route.add_argument("--json", action="store_true",
                       help="print the decision (the route.decided record) as JSON")

    models = sub.add_parser("models", help="list the models and whether their keys are set")
    models.add_argument("--json", action="store_true", help="print the list as JSON")

    schema = sub.add_parser("schema", help="print the JSON Schema of a configuration file")
    schema.add_argument("kind", choices=["routing", "workspace", "models", "profiles",
                                             "workspace-profiles"],
                        help="routing.yaml, a workspace's .switchman/routing.yaml, models.yaml, "
                             "profiles.yaml or a workspace's .switchman/profiles.yaml")
    schema.add_argument("--output", metavar="FILE", help="write it to FILE instead")

    patterns = sub.add_parser("patterns", help="what the learned pattern store remembers")
    patterns_sub = patterns.add_subparsers(dest="patterns_command", required=True,
                                           metavar="ACTION")
    stats = patterns_sub.add_parser("stats", help="turns remembered per workspace and model")
    stats.add_argument("--json", action="store_true", help="print the counts as JSON")
    forget = patterns_sub.add_parser("forget", help="delete remembered turns")
    forget.add_argument("--workspace", metavar="DIR",
                        help="only this workspace folder's turns (default: all)")
    export = patterns_sub.add_parser("export",
                                     help="print every row as JSON lines (no message text)")
    for command in (check, show, test, route, models, schema, stats, forget, export):
        command.set_defaults(command_parser=command)  # its usage line for _check_arguments

    _serve_arguments(sub.add_parser("serve", help="run the language server (started by your "
                                                  "editor)", description=SERVE_DESCRIPTION))
    return parser


def _serve_arguments(serve: argparse.ArgumentParser) -> argparse.ArgumentParser:
    serve.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", type=_tcp_address,
                       help="listen on TCP instead (debugging)")
    return serve


def _tcp_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:7077`` for IPv6; no host means 127.0.0.1) for ``serve --tcp``."""
    host, colon, port = text.strip().rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not HOST:PORT with a port from 0 to 65535 (e.g. 127.0.0.1:7077)")
    host = host.removeprefix("[").removesuffix("]") if host.startswith("[") else host
    return host or "127.0.0.1", int(port)


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse (exit 2, with the sub-command's usage line, as argparse refuses its own) what
    parses but cannot mean anything: a workspace folder that does not exist, negative counts,
    delegation options without ``--delegate-tier``; silently ignoring them would print a
    decision for another question."""
    parser: argparse.ArgumentParser = args.command_parser
    workspace = getattr(args, "workspace", None)
    if workspace is not None and not workspace.strip():  # `patterns forget` would forget all
        parser.error("--workspace: empty folder name")
    if workspace is not None and workspace.startswith("file://"):  # as the editors name it
        args.workspace = workspace = unquote(urlparse(workspace).path)
    if workspace is not None and args.command != "patterns" and \
            not Path(workspace).expanduser().is_dir():
        parser.error(f"--workspace {workspace}: no such folder")
    if args.command != "route":
        return
    try:
        args.message.encode("utf-8")
    except UnicodeEncodeError as error:  # bytes of another encoding, kept by Python as surrogates
        code = ord(args.message[error.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        where = f"after {args.message[:error.start][-20:]!r}" if error.start else "at its start"
        parser.error(f"the message is not valid UTF-8 ({what} {where}); write it in UTF-8, as "
                     f"the editors send it")
    if args.tokens is not None and args.tokens < 0:
        parser.error(f"--tokens {args.tokens}: must be 0 or more")
    if args.cost_today is not None and not args.cost_today >= 0:  # NaN too
        parser.error(f"--cost-today {args.cost_today}: must be 0 or more")
    for option, value in (("--planner", args.planner), ("--complexity", args.complexity)):
        if value is not None and args.delegate_tier is None:
            parser.error(f"{option} only applies with --delegate-tier")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``switchman`` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["serve"]:  # the editor's hot path: no other sub-command's parser or imports
        serve = _serve_arguments(argparse.ArgumentParser(prog="switchman serve",
                                                         description=SERVE_DESCRIPTION))
        from switchman.server.app import run  # noqa: PLC0415

        return run(tcp=serve.parse_args(argv[1:]).tcp)
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # argparse would refuse them with the top level's usage, which lists none
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    _check_arguments(args)
    from switchman.server import subcommands  # noqa: PLC0415

    handler = {
        ("rules", "check"): subcommands.rules_check,
        ("rules", "show"): subcommands.rules_show,
        ("rules", "test"): subcommands.rules_test,
        ("route", None): subcommands.route,
        ("models", None): subcommands.models,
        ("schema", None): subcommands.schema,
        ("patterns", "stats"): subcommands.patterns_stats,
        ("patterns", "forget"): subcommands.patterns_forget,
        ("patterns", "export"): subcommands.patterns_export,
    }[(args.command, getattr(args, "rules_command", None) or getattr(args, "patterns_command",
                                                                     None))]
    output = sys.stdout
    sys.stdout = _CheckedOutput(output)
    try:
        status = handler(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except _OutputFailed as failed:  # `patterns export > file` on a full disk, or `>&-`
        print(f"switchman {args.command}: could not write the output: {failed}",
              file=sys.stderr)
        return 1
    finally:
        sys.stdout = output
        if isinstance(output, TextIOWrapper):
            _forget_unwritten(output)


class _OutputFailed(Exception):
    """Standard output could not be written (other than a closed pipe)."""


class _CheckedOutput:
    """``sys.stdout`` while a sub-command runs: a write that fails (a full disk, standard
    output closed) ends the command with one line on stderr and status 1 instead of a
    traceback, so a truncated ``patterns export`` is never mistaken for a whole one."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        written: int = self._call(lambda stream: stream.write(text))
        return written

    def flush(self) -> None:
        self._call(lambda stream: stream.flush())

    def _call(self, action: Callable[[TextIO], Any]) -> Any:
        if self._stream is None:
            raise _OutputFailed("standard output is closed")
        try:
            return action(self._stream)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise _OutputFailed(error.strerror or str(error)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _forget_unwritten(stream: TextIOWrapper) -> None:
    """Drop what a failed write left in ``stream``'s buffer: flushed again at exit, it would
    fail again and print Python's "Exception ignored" trace after our one line."""
    try:
        stream.flush()
    except OSError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
