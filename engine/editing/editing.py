"""Configuration files open in an editor, checked from their unsaved text.

Switchman checks its own files only: ``models.yaml`` and ``routing.yaml`` in
the user's config folder and any workspace's ``.switchman/routing.yaml``.
Other files that happen to share those names belong to other tools and are
left alone.

Routing files are checked against the ``models.yaml`` being edited beside them
while it is open (its last valid text while it has errors), otherwise against
the one on disk, so deleting a model in one buffer flags its uses in another
before anything is saved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from switchman.engine.config.builtin import builtin_models_values, builtin_routing_values
from switchman.engine.config.check import WORKSPACE_KINDS, FileKind, check_doc, check_value
from switchman.engine.config.checking import LAST_CHECKS
from switchman.engine.config.models_file import check_models_doc
from switchman.engine.config.paths import (
    WORKSPACE_DIR,
    config_path,
    real_path,
    same_folder,
    through_workspace_link,
)
from switchman.engine.config.policy import RoutingPolicy, Tiers
from switchman.engine.config.problems import Problem, sort_problems
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_doc
from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.config.store import ConfigStore, outside_problem
from switchman.engine.config.yamldoc import YamlDocument, parse_yaml
from switchman.engine.editing.advice import advise
from switchman.engine.editing.chunked import ChunkedParser
from switchman.engine.editing.fixes import FixContext
from switchman.engine.keys import KeyRing

MODELS_FILE = "models.yaml"
ROUTING_FILE = "routing.yaml"
PROFILES_FILE = "profiles.yaml"


@dataclass(frozen=True)
class Analysis:
    """One checked version of a document."""

    text: str
    doc: YamlDocument
    problems: list[Problem]
    registry: ModelRegistry


@dataclass
class _Open:
    """An open document: its latest text and how it was last checked."""

    kind: FileKind
    text: str
    parser: ChunkedParser = field(default_factory=ChunkedParser)
    analysis: Analysis | None = None
    trial_parser: ChunkedParser = field(default_factory=ChunkedParser)
    """For texts a quick fix would produce; kept apart so the document's own memo stays."""


class ConfigDocuments:
    """The Switchman configuration files open in the editor."""

    def __init__(self, directory: Path, environ: Mapping[str, str] = os.environ) -> None:
        self.directory = real_path(directory)
        self.keys = KeyRing(environ)
        """Whether each provider has a key (advice, hover): read as the daemon reads them."""
        self._store = ConfigStore(self.directory)
        self._open: dict[Path, _Open] = {}
        self._models: tuple[str, ModelRegistry | None] | None = None
        self._models_good: ModelRegistry | None = None

    # -- which files ------------------------------------------------------------

    def named(self, path: str | Path) -> Path:
        """The path Switchman knows the file at ``path`` by (:func:`.paths.config_path`); a
        file of the user's config folder is named in :attr:`directory`, however the editor
        reached the folder: ``SWITCHMAN_CONFIG_DIR`` may be a symbolic link, or be called
        ``.switchman``, and its files are still the user's, not a workspace's. A file named
        by the target of a workspace's ``.switchman`` linked within the workspace is named
        in that ``.switchman`` (:func:`.paths.through_workspace_link`)."""
        named = config_path(path)
        if named.parent != self.directory and same_folder(named.parent, self.directory):
            return self.directory / named.name
        if named.parent.name != WORKSPACE_DIR and named.name in (ROUTING_FILE, PROFILES_FILE):
            linked = through_workspace_link(named)  # Neovim names it by the link's target
            if linked.parent.name == WORKSPACE_DIR:
                return linked
        return named

    def kind_of(self, path: str | Path) -> FileKind | None:
        """The kind of a file Switchman checks; None for every other file. Decided on the
        path the editor has (:meth:`named`), not where a link leads: a workspace's
        ``.switchman/routing.yaml`` linked elsewhere is still the workspace's."""
        named = self.named(path)
        if named.parent == self.directory:
            return {MODELS_FILE: FileKind.MODELS, ROUTING_FILE: FileKind.ROUTING,
                    PROFILES_FILE: FileKind.PROFILES}.get(named.name)
        if named.parent.name == WORKSPACE_DIR:
            return {ROUTING_FILE: FileKind.WORKSPACE,
                    PROFILES_FILE: FileKind.WORKSPACE_PROFILES}.get(named.name)
        return None

    def linked_out(self, path: str | Path) -> Problem | None:
        """The ``outside-workspace`` error of an open workspace file that leads out of its
        workspace (the daemon does not read it); None for every other document."""
        named = self.named(path)
        entry = self._open.get(named)
        if entry is None or entry.kind not in WORKSPACE_KINDS:
            return None
        return outside_problem(named)

    @property
    def models_path(self) -> Path:
        """The user's models.yaml."""
        return self.directory / MODELS_FILE

    # -- the editor's buffers ------------------------------------------------------

    def update(self, path: str | Path, text: str) -> list[Path]:
        """Record a document's new text (on open or change); return the documents to re-check."""
        resolved = self.named(path)
        kind = self.kind_of(resolved)
        if kind is None:
            return []
        entry = self._open.get(resolved)
        if entry is None:
            self._open[resolved] = _Open(kind, text)
        else:
            entry.text = text
        if resolved == self.models_path:
            self.registry()  # every valid version counts as the last valid one
        return [resolved, *self._dependents(resolved)]

    def close(self, path: str | Path) -> list[Path]:
        """Forget a closed document; return the open documents to re-check."""
        resolved = self.named(path)
        if self._open.pop(resolved, None) is None:
            return []
        if resolved == self.models_path:
            self._models = self._models_good = None
        return self._dependents(resolved)

    def is_open(self, path: str | Path) -> bool:
        """Whether a checked document is open at ``path``."""
        return self.named(path) in self._open

    def text(self, path: str | Path) -> str | None:
        """The latest text of an open document."""
        entry = self._open.get(self.named(path))
        return entry.text if entry else None

    def _dependents(self, path: Path) -> list[Path]:
        if path != self.models_path:
            return []
        return [p for p, entry in self._open.items() if entry.kind is not FileKind.MODELS]

    # -- checking ------------------------------------------------------------------

    def check(self, path: str | Path) -> Analysis | None:
        """Check an open document's latest text (re-used while text and registry are unchanged)."""
        resolved = self.named(path)
        entry = self._open.get(resolved)
        if entry is None:
            return None
        registry = self.registry()
        outside = self.linked_out(resolved)
        if outside is not None:  # not the workspace's own file: none of its text is checked
            entry.analysis = None
            doc = entry.parser.parse(entry.text, str(resolved))
            return Analysis(entry.text, doc, [outside], registry)
        last = entry.analysis
        if last is not None and last.text == entry.text and last.registry is registry:
            return last
        doc = entry.parser.parse(entry.text, str(resolved))
        problems = self._checked(entry.kind, doc, entry.text, registry)
        entry.analysis = Analysis(entry.text, doc, problems, registry)
        return entry.analysis

    def fix_context(self, path: str | Path,
                    also: Callable[[YamlDocument], list[Problem]] | None = None,
                    ) -> FixContext | None:
        """What quick fixes for an open document need, including how to check a fix's result
        (``also``: problems found apart from the document's check, such as unknown skills)."""
        resolved = self.named(path)
        entry = self._open.get(resolved)
        if entry is None:
            return None
        registry = self.registry()

        def recheck(text: str) -> list[Problem]:
            doc = entry.trial_parser.parse(text, str(resolved))
            return self._problems(entry.kind, doc, registry) + (also(doc) if also else [])

        return FixContext(entry.kind, self.global_tiers(entry.kind), recheck)

    def _problems(self, kind: FileKind, doc: YamlDocument,
                  registry: ModelRegistry) -> list[Problem]:
        problems = check_doc(kind, doc, registry, self._store.user_profiles()) \
            + advise(kind, doc, registry, self.keys)
        return sort_problems(problems)

    def _checked(self, kind: FileKind, doc: YamlDocument, text: str,
                 registry: ModelRegistry) -> list[Problem]:
        """:meth:`_problems` of a document's own text, through :data:`LAST_CHECKS`: a text the
        daemon's store has just checked (a save) is not checked again, and the store re-uses
        this check when the text is saved."""
        profiles = self._store.user_profiles()
        context: object = registry
        if kind is FileKind.MODELS:
            context = None
        elif kind is FileKind.WORKSPACE_PROFILES:
            context = (registry, profiles)
        _, problems = LAST_CHECKS.check(kind, doc.path, text, context,
                                        lambda: check_value(kind, doc, registry, profiles))
        return sort_problems(problems + advise(kind, doc, registry, self.keys))

    def registry(self) -> ModelRegistry:
        """The model registry routing files are checked against (see the module docstring)."""
        models = self._open.get(self.models_path)
        if models is None:
            return self._store.registry()
        if self._models is None or self._models[0] != models.text:
            registry, _ = check_models_doc(parse_yaml(models.text, str(self.models_path)),
                                           builtin_models_values())
            self._models = (models.text, registry)
            self._models_good = registry or self._models_good
        return self._models[1] or self._models_good or self._store.registry()

    def global_policy(self) -> RoutingPolicy | None:
        """The user's routing policy: the open routing.yaml when it is valid, else the store's."""
        registry = self.registry()
        routing = self._open.get(self.directory / ROUTING_FILE)
        if routing is not None:
            policy, _ = check_routing_doc(parse_yaml(routing.text, ROUTING_FILE), registry,
                                          builtin_routing_values(registry))
            if policy is not None:
                return policy
        return self._store.policy()

    def global_tiers(self, kind: FileKind) -> dict[str, str]:
        """The tier mapping a partial ``tiers`` block should be completed from.

        For the user's routing.yaml that is the built-in mapping; for a
        workspace it is the user's global one.
        """
        registry = self.registry()
        tiers: Tiers | Mapping[str, object] | None
        if kind is FileKind.ROUTING:
            tiers = builtin_routing_values(registry).get("tiers")
        else:
            policy = self.global_policy()
            tiers = policy.tiers if policy is not None else None
        found = {t: tier_text(tiers, t) or registry.model_for_tier(t) for t in TIER_NAMES}
        return {t: model for t, model in found.items() if model}


def tier_text(tiers: Tiers | Mapping[str, object] | None, name: str) -> str | None:
    """The tier's models as YAML text: one model plainly, several as a flow list."""
    if isinstance(tiers, Tiers):
        models: object = tiers.models(name)
    else:
        models = tiers.get(name) if tiers else None
    if isinstance(models, str):
        return models
    if not isinstance(models, list | tuple) or not models:
        return None
    return str(models[0]) if len(models) == 1 else "[" + ", ".join(map(str, models)) + "]"
