"""The write tools: ``edit_file``, ``create_file`` and ``delete_file``.

Each turns its arguments into a :class:`FileChange` proposal (nothing is
written here); the toolbox asks for approval and applies it. The file's
current text comes from the editor when it has the file open (so unsaved
changes are the base of the edit), otherwise from the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from switchman.engine.files import size_over, size_text
from switchman.engine.providers.base import ToolSpec
from switchman.engine.tools.arguments import (
    ToolRefused,
    bool_argument,
    path_argument,
    text_argument,
)
from switchman.engine.tools.buffers import EditorTexts, no_editor_texts
from switchman.engine.tools.changes import FileChange, file_uri, read_text, replacement
from switchman.engine.tools.confinement import WorkspaceRoot
from switchman.engine.tools.secret_files import change_refusal, is_secret_file

MAX_EDIT_BYTES = 2 * 1024 * 1024


def _too_large(name: str, size: int) -> str:
    """Why a file is not edited: its size, and the limit (it said only "too large")."""
    return (f"'{name}' is too large to edit here: it has {size_over(size, MAX_EDIT_BYTES)}, "
            f"and files of up to {size_text(MAX_EDIT_BYTES)} can be edited.")


_PATH = {"type": "string", "description": "Path relative to the workspace root."}

DEFINITIONS = [
    ToolSpec("edit_file", "Replace one exact, unique snippet of a workspace file. Read the file "
             "first; old_text must match exactly once, whitespace included. The user approves "
             "each change.", {
                 "type": "object",
                 "properties": {"path": _PATH,
                                "old_text": {"type": "string",
                                             "description": "The exact text to replace."},
                                "new_text": {"type": "string",
                                             "description": "The text to put in its place."}},
                 "required": ["path", "old_text", "new_text"]}),
    ToolSpec("create_file", "Create a new file in the workspace (folders are created as "
             "needed). The user approves each change.", {
                 "type": "object",
                 "properties": {"path": _PATH,
                                "content": {"type": "string", "description": "The file's text."},
                                "overwrite": {"type": "boolean",
                                              "description": "Replace the file if it exists."}},
                 "required": ["path", "content"]}),
    ToolSpec("delete_file", "Delete a file from the workspace. The user approves each change.", {
        "type": "object", "properties": {"path": _PATH}, "required": ["path"]}),
]


class FileEdits:
    """Proposes changes to the files of one workspace."""

    def __init__(self, workspace: WorkspaceRoot,
                 editor_texts: EditorTexts = no_editor_texts) -> None:
        self.workspace = workspace
        self.editor_texts = editor_texts

    def propose(self, name: str, args: dict[str, Any]) -> FileChange:
        """The change ``name`` would make; :class:`ToolRefused` when it cannot be made.

        A file that usually holds secrets is refused before anything is looked up in it:
        whether ``old_text`` occurs in a ``.env`` would tell the model what the file holds."""
        if name == "edit_file":
            return self._edit(args)
        if name == "create_file":
            return self._create(args)
        return self._delete(args)

    def current_text(self, path: Path) -> str:
        """The file's text as the user sees it (the editor's buffer, else the disk)."""
        text = self.editor_texts().get(path)
        if text is not None:
            if len(text) > MAX_EDIT_BYTES:
                raise ToolRefused(_too_large(self.workspace.relative(path), len(text)))
            if "\ufffd" in text and not _utf8_on_disk(path):
                raise ToolRefused(
                    f"'{self.workspace.relative(path)}' is not a UTF-8 text file: the editor "
                    "shows its other bytes as \ufffd, and the file saved after this edit would "
                    "lose them. The user can reopen it with its encoding (VS Code: Reopen with "
                    "Encoding), then ask again.")
            return text
        if not path.is_file():
            raise ToolRefused(f"'{self.workspace.relative(path)}' is not a file.")
        if (size := path.stat().st_size) > MAX_EDIT_BYTES:
            raise ToolRefused(_too_large(self.workspace.relative(path), size))
        try:
            return read_text(path)
        except UnicodeDecodeError:
            raise ToolRefused(f"'{self.workspace.relative(path)}' is not a UTF-8 text "
                              "file.") from None

    def _resolve(self, raw: str) -> Path:
        """The confined path of ``raw``; :class:`ToolRefused` for a file that usually holds
        secrets (by the name used or, through a symbolic link, the name it leads to)."""
        path = self.workspace.resolve(raw)
        if is_secret_file(path.name) or is_secret_file(Path(raw).name):
            raise ToolRefused(change_refusal(self.workspace.relative(self.workspace.entry(raw))))
        return path

    def _edit(self, args: dict[str, Any]) -> FileChange:
        path = self._resolve(path_argument(args))
        old = text_argument(args, "old_text", required=True) or ""
        new = text_argument(args, "new_text", required=True)
        assert new is not None
        if not old:
            raise ToolRefused("'old_text' is empty; give the exact text to replace "
                              "(use create_file for a new file).")
        original = self.current_text(path)
        rel = self.workspace.relative(path)
        count = original.count(old)
        if count == 0 and "\r\n" in original and "\n" in old and "\r" not in old:
            # Windows line ends: the model writes a snippet of several lines with "\n" only
            # (read_file's lines do not show the "\r"); it is matched, and the new text
            # written, with the file's "\r\n"
            old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
            count = original.count(old)
        if count == 0:
            raise ToolRefused(f"'old_text' was not found in {rel}. Read the file again and "
                              "copy the text exactly, whitespace and indentation included.")
        if count > 1:
            raise ToolRefused(f"'old_text' occurs {count} times in {rel}; include more "
                              "surrounding lines so it matches exactly once.")
        if new == old:  # the user would be asked to approve an empty diff
            raise ToolRefused(f"'new_text' is the same as 'old_text': the edit would change "
                              f"nothing in {rel}.")
        start = original.index(old)
        proposed = original[:start] + new + original[start + len(old):]
        return FileChange("edit", rel, file_uri(path), original, proposed,
                          [replacement(original, start, start + len(old), new)])

    def _create(self, args: dict[str, Any]) -> FileChange:
        path = self._resolve(path_argument(args))
        content = text_argument(args, "content", required=True)
        assert content is not None
        rel = self.workspace.relative(path)
        if path.is_dir():
            raise ToolRefused(f"'{rel}' is a folder.")
        if path.exists() or self.editor_texts().get(path):  # an empty new buffer is no file yet
            if not bool_argument(args, "overwrite"):
                raise ToolRefused(f"'{rel}' already exists; use edit_file to change it, or "
                                  "set overwrite to replace it.")
            original = self.current_text(path)
            if original == content:
                raise ToolRefused(f"{rel} already holds exactly this content: nothing would "
                                  "change.")
            return FileChange("edit", rel, file_uri(path), original, content,
                              [replacement(original, 0, len(original), content)])
        self._refuse_file_as_folder(path, rel)
        return FileChange("create", rel, file_uri(path), None, content)

    def _refuse_file_as_folder(self, path: Path, rel: str) -> None:
        """A new file whose folder would have to be made where a file is cannot be created:
        refused before the user is asked (the editor would only refuse it afterwards)."""
        for folder in path.parents:
            if folder == self.workspace.root or not folder.is_relative_to(self.workspace.root):
                return
            if folder.exists() and not folder.is_dir():
                raise ToolRefused(f"'{self.workspace.relative(folder)}' is a file, not a "
                                  f"folder: {rel} cannot be created.")

    def _delete(self, args: dict[str, Any]) -> FileChange:
        raw = path_argument(args)
        entry = self.workspace.entry(raw)
        self._resolve(raw)  # a secret file, or a link to one, is refused like an edit
        if entry.is_symlink():  # the link goes, not the file it leads to
            target = self.workspace.resolve(raw)  # a link leading out is refused, as for reads
            rel = self.workspace.relative(entry)
            if not target.is_file():
                raise ToolRefused(f"'{rel}' is a symbolic link to "
                                  f"{'a folder' if target.is_dir() else 'nothing'}; "
                                  "delete_file deletes files and links to files only.")
            return FileChange("delete", rel, file_uri(entry),
                              f"[a symbolic link to {self.workspace.relative(target)}]\n", None)
        path = self.workspace.resolve(raw)
        rel = self.workspace.relative(path)
        if path == self.workspace.root or path.is_dir():
            raise ToolRefused(f"'{rel}' is a folder; delete_file deletes files only.")
        return FileChange("delete", rel, file_uri(path), self._deleted_text(path), None)

    def _deleted_text(self, path: Path) -> str:
        """What the approval shows of a file to delete: its text, or, for a file that cannot
        be shown as text (binary, too large), a line saying so — it can still be deleted."""
        try:
            return self.current_text(path)
        except ToolRefused:
            if not path.is_file():
                raise
        size = path.stat().st_size
        why = "too large to show" if size > MAX_EDIT_BYTES else "not UTF-8 text, not shown"
        return f"[{self.workspace.relative(path)}: {size:,} bytes, {why}]\n"


def _utf8_on_disk(path: Path) -> bool:
    """Whether the file at ``path`` is UTF-8 text (or not on disk): an editor's buffer of one
    that is not, holding U+FFFD, read its bytes as UTF-8 and lost them."""
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    except OSError:
        return True
    return True
