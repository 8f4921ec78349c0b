"""Live checking of Switchman's configuration files in the editor.

Diagnostics are computed from the editor's unsaved text after a short pause
in typing (150 ms unless ``SWITCHMAN_DIAGNOSTICS_DELAY_MS`` or the
``diagnostics_debounce_ms`` initialization option says otherwise). A newer change
cancels a check that has not started yet, so only the latest text is checked.

Parsing and checking a long file takes tens of milliseconds (more on a first
open), which must not delay the chat streams and requests the same event loop
serves. So the open documents (:class:`ConfigDocuments`) belong to one worker
thread: every call that reads or changes them runs there, in order, and the
loop only converts the results to LSP. It is the process's one configuration
thread (:mod:`switchman.engine.config.checking`), which the daemon's store
uses too, so a saved file's text is checked once. Diagnostics whose text has since
changed are dropped; the newer text's check is already scheduled.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.protocol import default_converter
from pygls.uris import to_fs_path

from switchman.engine.config.check import FileKind
from switchman.engine.config.checking import config_worker
from switchman.engine.config.paths import real_path
from switchman.engine.config.text import split_lines
from switchman.engine.editing.completion import complete
from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.editing.fixes import fixes
from switchman.engine.editing.hover import hover
from switchman.engine.editing.outline import outline
from switchman.engine.gcpause import run_paused
from switchman.server.features.config_editing.convert import (
    lsp_code_action,
    lsp_completion,
    lsp_diagnostic,
    lsp_document_symbol,
    lsp_hover,
    lsp_symbol_information,
)
from switchman.server.features.config_editing.idle_gc import IdleCollector
from switchman.server.positions import Positions

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
        self._json = default_converter()  # type: ignore[no-untyped-call]
        """The worker's own LSP-to-JSON converter (the server's stays on the loop)."""
        self._tasks: set[asyncio.Task[None]] = set()

    async def off_loop(self, work: Callable[..., T], *args: Any) -> T:
        """Run ``work(*args)`` on the documents' worker thread (see the module docstring),
        with automatic garbage collection paused (:mod:`switchman.engine.gcpause`)."""
        return await asyncio.get_running_loop().run_in_executor(config_worker(), run_paused,
                                                                work, *args)

    # -- documents -------------------------------------------------------------------

    def path_of(self, uri: str) -> Path | None:
        """The file behind ``uri`` when it is a configuration file Switchman checks."""
        path = to_fs_path(uri)
        if path is None or self.documents.kind_of(path) is None:
            return None
        return real_path(path)

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
        text = self.server.workspace.get_text_document(uri).source
        self._start(self._recheck(self.documents.update, path, text))

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
        self._start(self._recheck(self.documents.close, path))

    def _start(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._tasks.discard)

    async def _recheck(self, change: Callable[..., list[Path]], *args: Any) -> None:
        self._schedule(await self.off_loop(change, *args))

    def positions(self, text: str) -> Positions:
        """Position conversion for ``text`` in the encoding agreed with the client."""
        encoding = self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return Positions(split_lines(text), getattr(encoding, "value", encoding))

    # -- language features -------------------------------------------------------------

    async def completion(self, uri: str, position: types.Position,
                         after_space: bool = False) -> list[types.CompletionItem]:
        """Completion items at ``position`` (only values when typing a space triggered it).

        Reading the cursor scans the whole text once per version (the first request after
        an edit of a long file pays it), so it runs on the documents' worker thread.
        """
        kind = self.kind_of(uri)
        document = self.server.workspace.text_documents.get(uri)
        if kind is None or document is None:  # not open: never read it from disk here
            return []
        snippets = self._capability("text_document.completion.completion_item.snippet_support")
        markdown = self._markdown("text_document.completion.completion_item.documentation_format")
        return await self.off_loop(self._completion, kind, document.source, position,
                                   self._folders(), after_space, snippets, markdown)

    def _completion(self, kind: FileKind, text: str, position: types.Position,
                    folders: list[str], after_space: bool, snippets: bool,
                    markdown: bool) -> list[types.CompletionItem]:
        """On the worker: the completion items, as LSP items."""
        positions = self.positions(text)
        candidates = complete(kind, text, positions.engine_position(position),
                              self.documents.registry(), self.documents.environ, folders,
                              values_only=after_space)
        return [lsp_completion(c, positions, snippets, markdown) for c in candidates]

    async def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        """The hover at ``position`` (looked up on the documents' worker thread)."""
        path, kind = self.path_of(uri), self.kind_of(uri)
        if path is None or kind is None:
            return None
        markdown = self._markdown("text_document.hover.content_format")
        return await self.off_loop(self._hover, path, kind, position, markdown)

    def _hover(self, path: Path, kind: FileKind, position: types.Position,
               markdown: bool) -> types.Hover | None:
        analysis = self.documents.check(path)
        if analysis is None:
            return None
        positions = self.positions(analysis.text)
        found = hover(kind, analysis.doc, positions.engine_position(position),
                      analysis.registry, self.documents.environ)
        return lsp_hover(found, positions, markdown) if found else None

    async def code_actions(self, uri: str, rng: types.Range) -> list[types.CodeAction]:
        """Quick fixes for the problems touching ``rng``.

        Each fix is verified by re-checking the edited file, which for a long file takes
        as long as a check: so all of it runs on the documents' worker thread.
        """
        path = self.path_of(uri)
        document = self.server.workspace.text_documents.get(uri)
        if path is None or document is None:
            return []
        return await self.off_loop(self._code_actions, path, uri, document.version, rng)

    def _code_actions(self, path: Path, uri: str, version: int | None,
                      rng: types.Range) -> list[types.CodeAction]:
        """On the worker: the verified fixes for ``rng``, as LSP code actions."""
        analysis = self.documents.check(path)
        context = self.documents.fix_context(path)
        if analysis is None or context is None:
            return []
        positions = self.positions(analysis.text)
        found = fixes(analysis.doc, analysis.problems, positions.engine_range(rng), context)
        changes = self._capability("workspace.workspace_edit.document_changes")
        related = self._supports_related_information()
        return [lsp_code_action(f, positions, uri, version, changes, related) for f in found]

    async def symbols(self, uri: str
                      ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        """The document's outline, nested when the client can show nesting."""
        path, kind = self.path_of(uri), self.kind_of(uri)
        if path is None or kind is None:
            return []
        nested = self._capability(
            "text_document.document_symbol.hierarchical_document_symbol_support")
        return await self.off_loop(self._symbols, path, kind, uri, nested)

    def _symbols(self, path: Path, kind: FileKind, uri: str, nested: bool
                 ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        """On the worker: the outline of the latest checked version, as LSP symbols."""
        analysis = self.documents.check(path)
        if analysis is None:
            return []
        positions = self.positions(analysis.text)
        found = outline(kind, analysis.doc)
        if nested:
            return [lsp_document_symbol(symbol, positions) for symbol in found]
        return lsp_symbol_information(found, positions, uri)

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
        opened = path not in self._published
        try:
            await self._publish(path)
        except Exception:  # a bug in checking must never take the daemon down
            log.exception("checking %s failed", path)
        self._published.add(path)
        self._collector.busy(settle_now=opened)

    async def _publish(self, path: Path) -> None:
        uri = self._uris.get(path)
        if uri is None:
            return
        checked = await self.off_loop(self._diagnostics, path, uri)
        document = self.server.workspace.get_text_document(uri)
        if checked is None or checked[0] != document.source:
            return  # closed, or changed while it was checked (the newer text's check is due)
        self.server.notify_json(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, {
            "uri": uri, "diagnostics": checked[1], "version": document.version})

    def _diagnostics(self, path: Path, uri: str) -> tuple[str, list[Any]] | None:
        """On the worker: check the document; its text and its problems as LSP JSON."""
        analysis = self.documents.check(path)
        if analysis is None:
            return None
        positions = self.positions(analysis.text)
        related = self._supports_related_information()
        diagnostics = [lsp_diagnostic(p, positions, uri, related) for p in analysis.problems]
        return analysis.text, self._json.unstructure(diagnostics, list[types.Diagnostic])

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
