"""File-system traps a cloned repository can hold, for tests of every file Switchman reads."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

TRAPS = ("fifo", "folder", "loop", "dangling", "dev-zero", "dev-stdin", "not-utf8", "huge")
"""Every trap :func:`make_trap` can lay; each must be refused with a clear reason."""

REASONS = {
    "fifo": "named pipe (FIFO)",
    "folder": "is a folder",
    "loop": "symbolic link loop",
    "dangling": "symbolic link to nothing",
    "dev-zero": "is a device",
    "dev-stdin": "not a regular file",
    "not-utf8": "not valid UTF-8",
    "huge": "larger than the",
}
"""A phrase of the problem each trap must produce."""


def make_trap(path: Path, trap: str) -> Path:
    """Put ``trap`` at ``path`` (its folder must exist) and return ``path``."""
    if trap == "fifo":
        os.mkfifo(path)
    elif trap == "folder":
        path.mkdir()
    elif trap == "loop":
        other = path.with_name(path.name + ".other")
        os.symlink(other, path)
        os.symlink(path, other)
    elif trap == "dangling":
        os.symlink(path.with_name("nowhere.yaml"), path)
    elif trap == "dev-zero":
        os.symlink("/dev/zero", path)
    elif trap == "dev-stdin":
        os.symlink("/dev/stdin", path)
    elif trap == "not-utf8":
        path.write_bytes(b"schema_version: 1\nglobal_default: caf\xe9\n")
    elif trap == "huge":
        path.write_bytes(b"# filler\n" * (1024 * 1024 // 9 + 1))
    else:  # pragma: no cover - a typo in a test
        raise ValueError(trap)
    return path


def within(seconds: float, call: Callable[[], T]) -> T:
    """``call()``'s result, failing the test if it takes longer than ``seconds``.

    The call runs in a daemon thread, so a read that blocks forever fails the
    test instead of hanging the whole run.
    """
    results: queue.Queue[tuple[bool, object]] = queue.Queue()

    def run() -> None:
        try:
            results.put((True, call()))
        except BaseException as exc:  # handed to the test thread below
            results.put((False, exc))

    threading.Thread(target=run, daemon=True).start()
    try:
        ok, value = results.get(timeout=seconds)
    except queue.Empty:
        raise AssertionError(f"still running after {seconds} s (blocked?)") from None
    if not ok:
        assert isinstance(value, BaseException)
        raise value
    return value  # type: ignore[return-value]


CONFIG_FOLDER_NAMINGS = ("a folder", "a link leading out")
"""How :func:`dot_switchman_config` makes the user's config folder ``<home>/.switchman``."""


def dot_switchman_config(home: Path, elsewhere: Path, named: str, routing: str) -> Path:
    """The user's config folder ``<home>/.switchman``: a folder, or a link to ``elsewhere``
    (a dotfiles folder outside ``home``), as ``named`` says, with ``routing`` as its
    routing.yaml; its path (what ``SWITCHMAN_CONFIG_DIR`` names)."""
    home.mkdir(exist_ok=True)
    folder = home / ".switchman"
    if named == "a folder":
        folder.mkdir()
    else:
        folder.symlink_to(elsewhere, target_is_directory=True)
    (folder / "routing.yaml").write_text(routing, "utf-8")
    return folder
