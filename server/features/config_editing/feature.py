"""Live checking of Switchman's configuration files in the editor.

Diagnostics are computed from the editor's unsaved text after a short pause
in typing (150 ms unless ``SWITCHMAN_DIAGNOSTICS_DELAY_MS`` or the
``diagnostics_debounce_ms`` initialization option says otherwise). A newer change
cancels a check that has not started yet, so only the latest text is checked.
With no pause configured, a change is applied and checked in one call to the
check process, and its diagnostics are published as that call returns.

Parsing and checking a long file takes tens of milliseconds (more on a first
open), which must not delay the chat streams and requests the same event loop
serves, nor take its interpreter lock. So the open documents
(:class:`ConfigDocuments`) live in the daemon's check process
(:mod:`switchman.engine.config.checking`): every call that reads or changes
them runs there, in order (:mod:`.checker`), and comes back as LSP objects or
JSON. The daemon's store checks saved files in the same process, so a saved
file's text is checked once. Diagnostics whose text has since changed are
dropped; the newer text's check is already scheduled. If the process dies, a
new one is given the open documents first, and the file being checked shows a
``check-stopped`` diagnostic until its next check.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.uris import to_fs_path

from switchman.engine.config.check import FileKind
from switchman.engine.config.checking import CHECKS, Work
from switchman.engine.config.problems import Code
from switchman.engine.editing.editing import ROUTING_FILE, ConfigDocuments
from switchman.engine.errors import CheckStopped
from switchman.engine.skills import in_skill_folder
from switchman.server.features.config_editing import checker
from switchman.server.features.config_editing.idle_gc import IdleCollector
from switchman.server.shared_text import shared_document

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

log = logging.getLogger(__name__)

DELAY_ENV = "SWITCHMAN_DIAGNOSTICS_DELAY_MS"
DELAY_OPTION = "diagnostics_debounce_ms"
DEFAULT_DELAY_MS = 150.0
T = TypeVar("T")


class ConfigEditing:
    """Open configuration documents and their diagnostics."""

    def __init__(self, server: SwitchmanServer, documents: ConfigDocuments) -> None:
        self.server = server
        self.documents = documents
        self._uris: dict[Path, str] = {}
        self._pending: dict[Path, asyncio.Task[None]] = {}
        self._collector = IdleCollector(turn_running=server.turns_running)
        self._published: set[Path] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        CHECKS.restore_with(self._open_documents)

    async def off_loop(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` run in the check process (see the module docstring); ``work`` is
        a function of :mod:`.checker` and its first argument the config folder."""
        return await CHECKS.run(work, self.documents.directory, *args)

    async def _answer(self, empty: T, work: Callable[..., T], *args: Any) -> T:
        """A request's answer from the check process; ``empty`` if the process died (the
        next request goes to a new one, which has been given the open documents)."""
        try:
            return await self.off_loop(work, *args)
        except CheckStopped:
            return empty

    def _open_documents(self) -> list[Work]:
        """What a new check process needs first: the text of every open document."""
        workspace = self.server.workspace
        shared = ((path, shared_document(workspace, uri)) for path, uri in self._uris.items())
        return [(checker.update, (self.documents.directory, path, document.source))
                for path, document in shared if document is not None]

    # -- documents -------------------------------------------------------------------

    def path_of(self, uri: str) -> Path | None:
        """The file behind ``uri`` when it is a configuration file Switchman checks."""
        path = to_fs_path(uri)
        if path is None or self.documents.kind_of(path) is None:
            return None
        return self.documents.named(path)

    def kind_of(self, uri: str) -> FileKind | None:
        """The configuration kind of the document at ``uri``, if Switchman checks it."""
        path = self.path_of(uri)
        return self.documents.kind_of(path) if path is not None else None

    def updated(self, uri: str) -> None:
        """A document was opened or changed: schedule checks of it and of what depends on it."""
        path = self.path_of(uri)
        if path is None:
            return
        self._uris[path] = uri
        if path == self._routing_path:  # its workspaces: blocks' skills, which no editor watches
            self.server.switchman.watch_block_skills(self._block_skills_changed,
                                                     wanted=self._routing_open)
        text = self.server.workspace.get_text_document(uri).source
        if self._delay_seconds() == 0:
            # Sent on the loop's next pass, as a task would start: in the order the editor's
            # messages came, with the requests and closes handled by tasks. Turn starts give
            # way from now until its diagnostics are shown (at most a bounded time).
            answered = self.server.turn_starts.editor_waits()
            asyncio.get_running_loop().call_soon(self._check_now, path, text, answered)
        else:
            self._start(self._recheck(checker.update, path, text))

    def closed(self, uri: str) -> None:
        """A document was closed: clear its diagnostics and re-check what depended on it."""
        path = self.path_of(uri)
        if path is None:
            return
        self._cancel(path)
        self._uris.pop(path, None)
        self._published.discard(path)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self._start(self._recheck(checker.close, path))

    @property
    def _routing_path(self) -> Path:
        """The user's routing.yaml, named as the open documents are."""
        return self.documents.directory / ROUTING_FILE

    def _routing_open(self) -> bool:
        return self._routing_path in self._uris

    def _block_skills_changed(self) -> None:
        """A skill of a ``workspaces:`` block's folders changed (the daemon's own poll): the
        open routing.yaml's warnings about them may have changed."""
        self._schedule([self._routing_path] if self._routing_open() else [])

    def skills_changed(self, paths: list[Path]) -> None:
        """Files changed on disk: when one is in a skills folder, check every open document
        again (their ``unknown-skill`` warnings depend on the skills, not on their text)."""
        if any(in_skill_folder(path, self.documents.directory) for path in paths):
            self._schedule(list(self._uris))

    def _start(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._tasks.discard)

    async def _recheck(self, change: Callable[..., list[Path]], *args: Any) -> None:
        try:
            paths = await self.off_loop(change, *args)
        except CheckStopped:  # a new process has the open documents: check them all again
            paths = list(self._uris)
        self._schedule(paths)

    def _check_now(self, path: Path, text: str, answered: Callable[[], None]) -> None:
        """With no debounce: update the document and publish what it affects, in one trip to
        the check process. The answer is shown by a callback that the process's answer
        schedules on the loop; no task waits for it, which would take one more pass of the
        loop to resume (under twenty streaming chats a pass takes milliseconds). Then
        ``answered()`` lets turn starts go on."""
        loop = asyncio.get_running_loop()
        try:
            future = CHECKS.submit(checker.update_and_diagnose, self.documents.directory, path,
                                   text, dict(self._uris), self._encoding(),
                                   self._supports_related_information(), self._folders())
        except BaseException:
            answered()
            raise

        def returned(done: Future[dict[Path, tuple[str, list[Any]]]]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the daemon is exiting
                loop.call_soon_threadsafe(self._checked_now, done, answered)

        future.add_done_callback(returned)

    def _checked_now(self, future: Future[dict[Path, tuple[str, list[Any]]]],
                     answered: Callable[[], None]) -> None:
        """Show what a :meth:`_check_now` found."""
        try:
            self._show_found(future)
        finally:
            answered()

    def _show_found(self, future: Future[dict[Path, tuple[str, list[Any]]]]) -> None:
        try:
            found = CHECKS.result(future)
        except CheckStopped:  # a new process has the open documents: check them all again
            self._schedule(list(self._uris))
            return
        except Exception:  # a bug in checking must never take the daemon down
            log.exception("checking failed")
            return
        for changed, checked in found.items():
            self._show(changed, checked)
            self._settle(changed)

    def _encoding(self) -> str:
        """The position encoding agreed with the client."""
        encoding = self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return str(getattr(encoding, "value", encoding))

    # -- language features -------------------------------------------------------------

    async def completion(self, uri: str, position: types.Position,
                         after_space: bool = False) -> list[types.CompletionItem]:
        """Completion items at ``position`` (only values when typing a space triggered it).

        Reading the cursor scans the whole text once per version (the first request after
        an edit of a long file pays it), so it runs in the check process with the documents.
        """
        path, kind = self.path_of(uri), self.kind_of(uri)
        document = shared_document(self.server.workspace, uri)
        if path is None or kind is None or document is None:  # not open: never read it here
            return []
        snippets = self._capability("text_document.completion.completion_item.snippet_support")
        markdown = self._markdown("text_document.completion.completion_item.documentation_format")
        return await self._answer([], checker.completion, path, kind, document.source, position,
                                   self._encoding(), self._folders(), after_space, snippets,
                                   markdown)

    async def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        """The hover at ``position`` (looked up in the check process)."""
        path, kind = self.path_of(uri), self.kind_of(uri)
        if path is None or kind is None:
            return None
        markdown = self._markdown("text_document.hover.content_format")
        return await self._answer(None, checker.hover_at, path, kind, position, self._encoding(),
                                   markdown)

    async def code_actions(self, uri: str, rng: types.Range) -> list[types.CodeAction]:
        """Quick fixes for the problems touching ``rng``.

        Each fix is verified by re-checking the edited file, which for a long file takes
        as long as a check: so all of it runs in the check process.
        """
        path = self.path_of(uri)
        document = shared_document(self.server.workspace, uri)
        if path is None or document is None:
            return []
        changes = self._capability("workspace.workspace_edit.document_changes")
        return await self._answer([], checker.code_actions, path, uri, document.version, rng,
                                   self._encoding(), changes,
                                   self._supports_related_information(), self._folders())

    async def symbols(self, uri: str
                      ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        """The document's outline, nested when the client can show nesting."""
        path, kind = self.path_of(uri), self.kind_of(uri)
        if path is None or kind is None:
            return []
        nested = self._capability(
            "text_document.document_symbol.hierarchical_document_symbol_support")
        return await self._answer([], checker.symbols, path, kind, uri, nested, self._encoding())

    def _folders(self) -> list[str]:
        paths = (to_fs_path(folder.uri) for folder in self.server.workspace.folders.values())
        return [path for path in paths if path]

    def _capability(self, name: str) -> bool:
        return bool(get_capability(self.server.client_capabilities, name, False))

    def _markdown(self, name: str) -> bool:
        formats = get_capability(self.server.client_capabilities, name, None)
        return formats is not None and types.MarkupKind.Markdown in formats

    # -- diagnostics -----------------------------------------------------------------

    def _schedule(self, paths: list[Path]) -> None:
        for path in paths:
            self._cancel(path)
            self._pending[path] = asyncio.get_running_loop().create_task(self._publish_later(path))

    def _cancel(self, path: Path) -> None:
        task = self._pending.pop(path, None)
        if task is not None:
            task.cancel()

    async def _publish_later(self, path: Path) -> None:
        await asyncio.sleep(self._delay_seconds())
        self._pending.pop(path, None)
        try:
            await self.publish(path)
        except Exception:  # a bug in checking must never take the daemon down
            log.exception("checking %s failed", path)
        self._settle(path)

    async def publish(self, path: Path) -> None:
        """Check the open document at ``path`` and publish its diagnostics."""
        uri = self._uris.get(path)
        if uri is None:
            return
        answered = self.server.turn_starts.editor_waits()  # turn starts give way meanwhile
        try:
            checked = await self.off_loop(checker.diagnostics, path, uri, self._encoding(),
                                          self._supports_related_information(),
                                          self._folders())
        except CheckStopped:
            checked = self._stopped(uri)
        finally:
            answered()
        self._show(path, checked)

    def _show(self, path: Path, checked: tuple[str, list[Any]] | None) -> None:
        """Publish ``checked`` (a text and its diagnostics as LSP JSON) if the document is
        still open with that text; else the newer text's check is due and will publish."""
        uri = self._uris.get(path)
        if uri is not None and checked is not None:
            document = self.server.workspace.get_text_document(uri)
            if checked[0] == document.source:
                self.server.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, {
                    "uri": uri, "diagnostics": checked[1], "version": document.version},
                    now=True)

    def _settle(self, path: Path) -> None:
        """A check of ``path`` ended: let the idle collector know (freezing at once after a
        document's first check, when its tree was built)."""
        opened = path not in self._published
        self._published.add(path)
        self._collector.busy(settle_now=opened)

    def _stopped(self, uri: str) -> tuple[str, list[Any]]:
        """The diagnostic shown when the check process died checking ``uri``'s text."""
        text = self.server.workspace.get_text_document(uri).source
        return text, [{
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "severity": types.DiagnosticSeverity.Error.value, "source": "switchman",
            "code": Code.CHECK_STOPPED.value,
            "message": "Checking this file stopped unexpectedly (the check process exited and "
                       "was restarted); the next change checks it again."}]

    def _delay_seconds(self) -> float:
        return diagnostics_delay(os.environ, self.server.initialization_options)

    def _supports_related_information(self) -> bool:
        return self._capability("text_document.publish_diagnostics.related_information")


def diagnostics_delay(environ: Mapping[str, str], options: Mapping[str, Any]) -> float:
    """Seconds to wait after a change before checking: the env var, the option, or 150 ms."""
    configured = environ.get(DELAY_ENV)
    value: Any = configured if configured is not None else options.get(DELAY_OPTION)
    try:
        milliseconds = float(value if value is not None else DEFAULT_DELAY_MS)
    except (TypeError, ValueError):
        milliseconds = DEFAULT_DELAY_MS
    if not math.isfinite(milliseconds):
        milliseconds = DEFAULT_DELAY_MS
    return max(0.0, milliseconds) / 1000
