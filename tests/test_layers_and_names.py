"""Architecture rules, checked: the engine stands alone; the clients use the server's names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from switchman.engine import errors
from switchman.engine.sessions import slash_commands
from switchman.server import methods
from switchman.server.app import build_server

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editor-clients" / "vscode" / "src"
NEOVIM = ROOT / "editor-clients" / "neovim" / "lua"

_IMPORT_ALL_WITHOUT_LSP = """
import importlib, pkgutil, sys

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pygls", "lsprotocol"):
            raise ModuleNotFoundError(f"the engine imported {name}")
        return None

sys.meta_path.insert(0, Blocked())
import switchman.engine
for module in pkgutil.walk_packages(switchman.engine.__path__, "switchman.engine."):
    importlib.import_module(module.name)
print("ok")
"""


def test_the_engine_imports_without_pygls_or_lsprotocol() -> None:
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL_WITHOUT_LSP], capture_output=True,
                          text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-2000:]


def client_sources(folder: Path, suffix: str) -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted(folder.rglob(f"*{suffix}"))
                     if ".test." not in p.name)


def server_methods() -> set[str]:
    return {v for k, v in vars(methods).items() if k.isupper() and isinstance(v, str)}


def test_the_servers_method_names_are_the_ones_it_serves() -> None:
    served = {name for name in build_server().protocol.fm.features if name.startswith("switchman/")}
    notifications = {methods.CHAT_DELTA, methods.ROUTE_DECIDED, methods.STATUS,
                     methods.DELEGATION, methods.SESSION_CHANGED}
    sent_to_the_client = {methods.APPROVE}
    assert served == server_methods() - notifications - sent_to_the_client


def test_both_clients_use_exactly_the_servers_method_names() -> None:
    for source in (client_sources(VSCODE, ".ts"), client_sources(NEOVIM, ".lua")):
        assert set(re.findall(r"""['"](switchman/\w+)['"]""", source)) == server_methods()


def server_slash_commands() -> set[str]:
    """Every form ``/help`` lists (``/model``, ``/model -``, ``/rules check``, …) and ``/help``."""
    forms = re.findall(r"^  (/\w+(?: (?:-|\w+))?)", slash_commands.HELP, re.MULTILINE)
    return {*forms, "/help"}


def client_slash_commands(source: str) -> set[str]:
    return set(re.findall(r"""['"](/[a-z]+(?: (?:-|[a-z]+))?)['"]""", source))


def test_the_clients_send_only_slash_commands_the_server_answers() -> None:
    for source in (client_sources(VSCODE, ".ts"), client_sources(NEOVIM, ".lua")):
        sent = client_slash_commands(source)
        assert sent, "no slash command found: has the client's source moved?"
        assert sent <= server_slash_commands() | set(slash_commands.COMMANDS)


def test_neovim_completes_every_slash_command() -> None:
    listing = (NEOVIM / "switchman" / "protocol.lua").read_text("utf-8")
    block = listing[listing.index("M.slash_commands"):]
    assert client_slash_commands(block[:block.index("}")]) == server_slash_commands()


def test_the_clients_know_the_servers_error_codes() -> None:
    codes = {cls.code for cls in vars(errors).values()
             if isinstance(cls, type) and issubclass(cls, errors.SwitchmanError)}
    codes.add("invalid_params")
    for source, pattern in ((client_sources(VSCODE, ".ts"), r"\w+: '([a-z_]+)',"),
                            (client_sources(NEOVIM, ".lua"), r"[a-z_]+ = '([a-z_]+)',")):
        block = source[source.index("rrorCodes = {" if "ErrorCodes" in source else "M.error = {"):]
        known = set(re.findall(pattern, block[:block.index("}")]))
        assert known and known <= codes


def test_both_clients_give_back_the_same_refused_messages() -> None:
    """The codes after which nothing was sent or done, so the text goes back to the input:
    the same in both editors, all of them the daemon's, the newest refusals included."""
    lua = (NEOVIM / "switchman" / "protocol.lua").read_text("utf-8")
    block = lua[lua.index("M.not_sent = {"):]
    neovim = set(re.findall(r"\[M\.error\.([a-z_]+)\] = true", block[:block.index("}")]))
    ts = (VSCODE / "protocol" / "errors.ts").read_text("utf-8")
    block = ts[ts.index("NOT_SENT = new Set(["):]
    vscode = set(re.findall(r"'([a-z_]+)'", block[:block.index("]")]))
    codes = {cls.code for cls in vars(errors).values()
             if isinstance(cls, type) and issubclass(cls, errors.SwitchmanError)}
    assert neovim == vscode
    assert vscode <= codes
    assert {errors.OverrideUnusable.code, errors.DelegationDisabled.code,
            errors.InvalidText.code, errors.DataFolderUnusable.code} <= vscode
