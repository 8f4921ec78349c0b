"""Workspace memory: ``MEMORY.md`` and ``USER.md``, and the tools that write them.

Both files live in the workspace's ``.switchman/`` folder: ``MEMORY.md`` for
facts about the project worth keeping between sessions, ``USER.md`` for the
user's preferences. Their text is put into the system prompt of every
top-level turn, within a token budget (the end of an over-long file is left
out, with a note saying so). ``memory_add`` and ``memory_replace`` change
them; they are writes, so the user approves them like any edit, and they are
never offered to worker sessions (spec 001 §5.4).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from switchman.engine.config.paths import WORKSPACE_DIR
from switchman.engine.providers.base import ToolSpec
from switchman.engine.tokens import CHARS_PER_TOKEN
from switchman.engine.tools.arguments import ToolRefused, text_argument
from switchman.engine.tools.changes import FileChange
from switchman.engine.tools.confinement import WorkspaceRoot
from switchman.engine.tools.edits import FileEdits
from switchman.engine.tools.secret_files import holds_secrets

MEMORY_FILES = {"memory": "MEMORY.md", "user": "USER.md"}
MEMORY_BUDGET_TOKENS = 2000
"""Tokens of memory (both files together) put into the system prompt."""
MAX_ENTRY_CHARS = 2000

_FILE = {"type": "string", "enum": list(MEMORY_FILES),
         "description": "'memory' for facts about this project (MEMORY.md), 'user' for the "
                        "user's preferences (USER.md)."}
DEFINITIONS = [
    ToolSpec("memory_add", "Remember something for later sessions in this workspace: adds one "
             "entry to MEMORY.md or USER.md. Keep entries short and durable. The user approves "
             "each change.", {
                 "type": "object",
                 "properties": {"file": _FILE,
                                "text": {"type": "string", "description": "The entry."}},
                 "required": ["file", "text"]}),
    ToolSpec("memory_replace", "Correct or remove an entry of MEMORY.md or USER.md: replaces "
             "one exact, unique snippet (an empty new_text removes it). The user approves each "
             "change.", {
                 "type": "object",
                 "properties": {"file": _FILE,
                                "old_text": {"type": "string"},
                                "new_text": {"type": "string"}},
                 "required": ["file", "old_text", "new_text"]}),
]


def memory_path(folder: Path, which: str) -> Path:
    """Where a workspace keeps ``MEMORY.md`` (``memory``) or ``USER.md`` (``user``)."""
    return folder / WORKSPACE_DIR / MEMORY_FILES[which]


_Signature = tuple[int, int, int, int, int] | None
_COMPOSED: dict[tuple[str, int], tuple[tuple[_Signature, ...], str]] = {}
"""The last memory section of each folder (and budget), with the signatures of the files it
was read from; at most :data:`COMPOSED_KEPT` folders."""
COMPOSED_KEPT = 64
SETTLED_NS = 2_000_000_000
"""A file whose last change is older than this is trusted to show its next one in its
``stat`` (timestamps may be as coarse as a clock tick)."""
_PATHS: dict[str, tuple[str, ...]] = {}
"""Each folder's memory files, as strings, in :func:`compose_memory`'s order."""


def compose_memory(folder: Path, budget_tokens: int = MEMORY_BUDGET_TOKENS) -> str:
    """The memory section of the system prompt ("" when there is no memory).

    Every top-level turn puts it into its system prompt before its request can leave: it
    is read again only when one of the files changed (its ``stat``: device, inode, size,
    modification and change times, through symlinks), so a turn costs one ``stat`` per
    file.
    """
    key = (str(folder), budget_tokens)
    paths = _PATHS.get(key[0])
    if paths is None:
        paths = _PATHS[key[0]] = tuple(str(memory_path(folder, which))
                                       for which in ("user", "memory"))
        while len(_PATHS) > COMPOSED_KEPT:
            del _PATHS[next(iter(_PATHS))]
    signatures = tuple(_signature(path) for path in paths)
    known = _COMPOSED.get(key)
    if known is not None and known[0] == signatures:
        return known[1]
    composed = _compose(folder, budget_tokens)
    _COMPOSED.pop(key, None)
    # A file changed within the file system's timestamp granularity of its last change may
    # change again with the same signature: such a file is read each time until it settles.
    settled = time.time_ns() - SETTLED_NS
    if all(s is None or s[4] < settled for s in signatures):
        _COMPOSED[key] = (signatures, composed)
    while len(_COMPOSED) > COMPOSED_KEPT:
        del _COMPOSED[next(iter(_COMPOSED))]
    return composed


def _signature(path: str) -> _Signature:
    """What changes when the file (followed through symlinks) is replaced or written."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _compose(folder: Path, budget_tokens: int) -> str:
    """Both files within the budget: each gets at least an equal share of it (a long USER.md
    used to take it all, and MEMORY.md was left out without a note), and what one does not
    need goes to the other."""
    budget = budget_tokens * CHARS_PER_TOKEN
    files = [(which, heading, text) for which, heading in (
        ("user", "About the user (USER.md)"), ("memory", "Workspace memory (MEMORY.md)"))
        if (text := _read(folder, memory_path(folder, which)))]
    parts: list[str] = []
    for place, (which, heading, whole) in enumerate(files):
        later = sum(len(other) for _, _, other in files[place + 1:])
        share = max(budget // (len(files) - place), budget - later)
        text = whole
        if len(whole) > share:
            note = f"\n[… the rest of {MEMORY_FILES[which]} is left out to save space]"
            text = whole[:max(0, share - len(note))].rsplit("\n", 1)[0] + note
        budget -= len(text)
        parts.append(f"## {heading}\n{text}")
    return "\n\n".join(parts)


def _read(folder: Path, path: Path) -> str:
    """The file's text, unless it is missing or leads where no tool reads for the model: a
    cloned repository's ``.switchman/USER.md`` may be a symlink to ``~/.aws/credentials``,
    or to the workspace's ``.env`` or ``.git/config``, which must not be put into the system
    prompt (and sent to the provider)."""
    try:
        if not path.is_file() or not WorkspaceRoot(folder).admits(path) \
                or holds_secrets(path):
            return ""
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return handle.read(MEMORY_BUDGET_TOKENS * CHARS_PER_TOKEN * 4).strip()
    except OSError:
        return ""


def propose_memory_change(edits: FileEdits, name: str, args: dict[str, Any]) -> FileChange:
    """The change ``memory_add`` / ``memory_replace`` would make."""
    which = text_argument(args, "file", required=True)
    if which not in MEMORY_FILES:
        raise ToolRefused("'file' must be 'memory' or 'user'.")
    relative = f"{WORKSPACE_DIR}/{MEMORY_FILES[which]}"
    if name == "memory_replace":
        # edit_file's own refusals ("is not a file", "use create_file") would point the model
        # at the wrong tool: a memory file is only ever started with memory_add
        if not text_argument(args, "old_text", required=True):
            raise ToolRefused("'old_text' is empty; give the exact text of the entry to change "
                              "(memory_add adds a new entry).")
        path = edits.workspace.resolve(relative)
        if not path.exists() and path not in edits.editor_texts():  # not even a new buffer
            raise ToolRefused(f"{MEMORY_FILES[which]} has no entries yet; add one with "
                              "memory_add.")
        return edits.propose("edit_file", {**args, "path": relative})
    entry = " ".join((text_argument(args, "text", required=True) or "").split())
    if not entry:
        raise ToolRefused("'text' is empty.")
    if len(entry) > MAX_ENTRY_CHARS:
        raise ToolRefused(f"The entry is too long ({len(entry)} characters); keep it under "
                          f"{MAX_ENTRY_CHARS}.")
    path = edits.workspace.resolve(relative)
    if not path.exists():
        return edits.propose("create_file", {"path": relative, "content": f"- {entry}\n"})
    original = edits.current_text(path)
    separator = "" if not original or original.endswith("\n") else "\n"
    return edits.propose("create_file", {"path": relative, "overwrite": True,
                                         "content": f"{original}{separator}- {entry}\n"})
