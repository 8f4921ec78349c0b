"""The live configuration: read fresh on every use, cached by file signature.

Each call stats the files (microseconds) and re-validates only a file whose
modification time or size changed, or whose dependencies changed (a routing
file depends on the model registry); after :meth:`settle`, the rest of that
pass of the event loop (a turn's start) reuses the look it took. A file that
turns invalid keeps its last valid version in force (or the built-in one if it
never was valid) and emits one ``routing.policy_invalid`` event per broken
version.

In the daemon (``background=True``) a changed file is never parsed on the
event loop, which also streams chats: a 1,000-rule file takes a quarter of a
second to check. The check runs in the daemon's configuration check process
(:mod:`switchman.engine.config.checking`, shared with the editor, whose check
of the same text it reuses) and callers keep getting the last value until it
is done; then the new value is applied on the loop, its events are emitted
there and ``on_change`` is called. If that process dies during the check, the
file keeps its last good value and shows a ``check-stopped`` problem until it
changes again. :meth:`settle` waits for those checks, so a
turn is routed with the file as saved.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from switchman.engine.clock import Clock, SystemClock
from switchman.engine.config.builtin import (
    builtin_models_values,
    builtin_policy,
    builtin_registry,
    builtin_routing_values,
)
from switchman.engine.config.check import WORKSPACE_KINDS, FileKind
from switchman.engine.config.checking import CHECKS, LAST_CHECKS, Checked, forget_checks
from switchman.engine.config.models_file import check_models_text
from switchman.engine.config.paths import (
    CONFIG_DIR_ENV,
    WORKSPACE_DIR,
    config_dir,
    outside_workspace,
    same_folder,
    workspace_profiles_file,
    workspace_routing_file,
)
from switchman.engine.config.policy import (
    EffectivePolicy,
    RoutingPolicy,
    WorkspacePolicy,
    effective_policy,
)
from switchman.engine.config.problems import ZERO_RANGE, Code, Problem, Range, Severity
from switchman.engine.config.profiles_file import ProfilesFile, check_profiles_text
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_text, check_workspace_text
from switchman.engine.errors import UnreadableFile
from switchman.engine.events import EventBus, PolicyInvalid
from switchman.engine.files import entry_signature, read_text
from switchman.engine.profiles.profile import BUILTIN_PROFILES, DEFAULT_PROFILE, ProfileSet

T = TypeVar("T")
Checker = tuple[Callable[..., Checked], tuple[Any, ...]]
"""A module-level check function and its arguments after the text and the path (it is sent to
the check process, so it cannot be a closure)."""
Read = tuple[Checked, str | None]
"""A file's check and the text it checked (None: the file could not be read)."""

WHOLE_SECONDS = 1.0
"""How long a file must have stayed as it is before a valid version of it becomes the "last
good" one as soon as it is read: a file read moments after it changed may be a save caught
half-way (truncated, then written), which :class:`_Fresh` holds until that is ruled out."""

IN_FORCE_FILE = "file"
IN_FORCE_LAST_GOOD = "last-known-good"
IN_FORCE_BUILTIN = "built-in"
log = logging.getLogger(__name__)
_MISSING = object()


@dataclass(frozen=True)
class _Fresh(Generic[T]):
    """A valid version in force that is not yet the last good one: its file had changed
    moments before it was read, so it may be a save caught half-way (the empty file between
    truncating and writing, or the valid first lines of a file still being written)."""

    value: T
    text: str
    mtime_ns: int

    def torn_by(self, signature: tuple[int, int] | None, text: str | None) -> bool:
        """Whether the version that replaced this one (its ``signature`` and ``text``) shows it
        was a save caught half-way: the new text goes on from this one's (a file is written
        from its start) and came within :data:`WHOLE_SECONDS` of it."""
        return signature is not None and text is not None and len(text) > len(self.text) \
            and text.startswith(self.text) \
            and signature[0] - self.mtime_ns < WHOLE_SECONDS * 1e9


def _whole(signature: tuple[int, int] | None) -> bool:
    """Whether a file whose signature is ``signature`` has stayed as it is long enough to be
    no save caught half-way (its modification time is :data:`WHOLE_SECONDS` past)."""
    return signature is not None and time.time_ns() - signature[0] >= WHOLE_SECONDS * 1e9


@dataclass
class _Slot(Generic[T]):
    """The cached state of one file."""

    path: Path
    signature: tuple[int, int] | None = None
    deps: object = None
    current: T | None = None
    good: T | None = None
    problems: list[Problem] = field(default_factory=list)
    in_force: str = IN_FORCE_BUILTIN
    loaded: bool = False
    checking: asyncio.Future[Read] | None = None
    """The check running in the check process (background mode), if any."""
    fresh: _Fresh[T] | None = None
    """The version in force when it is valid but not yet :attr:`good` (see :class:`_Fresh`)."""
    yours: bool = False
    """A workspace's file that is the user's own (:meth:`ConfigStore.holds_config`): read as
    the user's, and as no file of the workspace."""


def _first_check_running(slot: _Slot[Any]) -> bool:
    """The file's first check (at start-up, or since the file appeared) has not finished:
    nothing is known of it yet, so it is not said to have errors (the status said "has
    errors; the built-in defaults are in use" of every valid file until its check ended).
    A file checked before keeps what its last check found while it is checked again."""
    return slot.checking is not None and slot.in_force == IN_FORCE_BUILTIN \
        and not slot.problems


def _check_file(path: Path, kind: FileKind, context: object, checker: Checker) -> Read:
    """Read and check one file (in the check process in background mode), re-using the
    latest check of the same text in the same context (the editor's, on a save)."""
    text, unreadable = read_config(path, workspace_file=kind in WORKSPACE_KINDS)
    if unreadable is not None:
        return (None, [unreadable]), None
    check, extra = checker
    return LAST_CHECKS.check(kind, str(path), text or "", context,
                             lambda: check(text or "", str(path), *extra)), text or ""


def _check_models(text: str, path: str) -> Checked:
    return check_models_text(text, path, builtin_models_values())


def _check_routing(text: str, path: str, registry: ModelRegistry) -> Checked:
    return check_routing_text(text, path, registry, builtin_routing_values(registry))


def outside_problem(path: Path) -> Problem | None:
    """The ``outside-workspace`` error of a workspace's ``<folder>/.switchman/<file>`` that
    leads out of ``<folder>`` (:func:`.paths.outside_workspace`); None when it stays inside."""
    target = outside_workspace(path)
    return _outside(path, target) if target is not None else None


def _outside(path: Path, target: Path) -> Problem:
    """The problem of a workspace file that leads out of its workspace (``target``)."""
    root, folder = os.path.realpath(path.parent.parent), os.path.realpath(path.parent)
    what = "it is a symbolic link" if folder == root or folder.startswith(root + os.sep) \
        else f"its {WORKSPACE_DIR} folder is a symbolic link"
    return Problem(str(path), ZERO_RANGE, Severity.ERROR, Code.OUTSIDE_WORKSPACE,
                   f"This file is not read: {what} leading out of the workspace, to {target}. "
                   "A workspace's configuration is read only from inside the workspace (a "
                   "repository's files must not make Switchman read yours), so your own "
                   "configuration and the built-in defaults apply here. Put the file itself in "
                   f"the workspace's {WORKSPACE_DIR} folder instead of a link.")


def _stopped(path: Path) -> Problem:
    """The problem shown when the check process died checking ``path``."""
    return Problem(str(path), Range.at(0, 0, 0), Severity.ERROR, Code.CHECK_STOPPED,
                   "Checking this file stopped unexpectedly (the check process exited); "
                   "the last good version stays in force. Save the file again to re-check it.")


def read_config(path: Path, *,
                workspace_file: bool = False) -> tuple[str | None, Problem | None]:
    """A configuration file's text, or the problem that kept it from being read.

    Only a regular UTF-8 file of at most :data:`files.MAX_CONFIG_BYTES` is read,
    never blocking (see :mod:`switchman.engine.files`). A ``workspace_file``
    (``<folder>/.switchman/…``, untrusted) is read only from inside its workspace
    folder: one that is, or is inside, a symbolic link leading out is not read.
    """
    if workspace_file and (outside := outside_problem(path)) is not None:
        return None, outside
    try:
        return read_text(path), None
    except UnreadableFile as exc:
        rng = Range.at(exc.line, exc.column, exc.column)
        return None, Problem(str(path), rng, Severity.ERROR, Code.UNREADABLE_FILE,
                             f"The file {exc.reason}.")


class ConfigStore:
    """The user's models.yaml, routing.yaml and profiles.yaml, and each workspace's routing
    and profiles files."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        bus: EventBus | None = None,
        clock: Clock | None = None,
        background: bool = False,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.directory = directory if directory is not None else config_dir()
        self.bus = bus
        self.clock = clock or SystemClock()
        self.on_change = on_change
        self._background = background
        self._models: _Slot[ModelRegistry] = _Slot(self.directory / "models.yaml")
        self._routing: _Slot[RoutingPolicy] = _Slot(self.directory / "routing.yaml")
        self._workspaces: dict[str, _Slot[WorkspacePolicy]] = {}
        self._profiles: _Slot[ProfilesFile] = _Slot(self.directory / "profiles.yaml")
        self._workspace_profiles: dict[str, _Slot[ProfilesFile]] = {}
        self._user_set: tuple[ModelRegistry, ProfilesFile | None, ProfileSet] | None = None
        self._profile_sets: dict[str, tuple[ProfileSet, ProfilesFile | None, ProfileSet]] = {}
        self._effective: dict[str | None, tuple[RoutingPolicy, WorkspacePolicy | None,
                                                EffectivePolicy]] = {}
        self._builtin: tuple[ModelRegistry, RoutingPolicy] | None = None
        """The built-in policy for the registry it was built for (parsing it takes ~5 ms,
        and with no routing.yaml it is asked for several times per turn)."""
        self._builtin_registry: ModelRegistry | None = None
        self._looks: dict[Path, tuple[int, int] | None] | None = None
        """The file signatures :meth:`settle` saw, used until its pass of the event loop ends."""
        self._answers: dict[object, Any] | None = None
        """While :attr:`_looks` holds: what the public methods answered from those signatures
        (the same until a check is applied; a turn's start asks about thirty times)."""

    def holds_config(self, folder: str | Path) -> bool:
        """Whether ``<folder>/.switchman`` is the user's config folder (``SWITCHMAN_CONFIG_DIR``
        may be ``~/.switchman``, or a symbolic link either way): its files are the user's own,
        so ``folder`` has none of its own (they would be read twice, the second time as a
        workspace's, checked for keys a workspace may not set or taken for leading out)."""
        return same_folder(Path(folder) / WORKSPACE_DIR, self.directory)

    @property
    def models_path(self) -> Path:
        """The user's models.yaml (it may not exist)."""
        return self._models.path

    @property
    def routing_path(self) -> Path:
        """The user's routing.yaml (it may not exist)."""
        return self._routing.path

    @property
    def profiles_path(self) -> Path:
        """The user's profiles.yaml (it may not exist)."""
        return self._profiles.path

    def _answer(self, key: object, compute: Callable[..., Any], *args: Any) -> Any:
        """``compute(*args)``, asked once per look at the files (see :meth:`settle`)."""
        answers = self._answers
        if answers is None:
            return compute(*args)
        found = answers.get(key, _MISSING)
        if found is _MISSING:
            found = answers[key] = compute(*args)
        return found

    def user_profiles(self) -> ProfileSet:
        """The built-in profiles and the user's own, with the user's global default."""
        return cast("ProfileSet", self._answer("user_profiles", self._user_profiles))

    def _user_profiles(self) -> ProfileSet:
        registry = self.registry()

        checker: Checker = (check_profiles_text, (registry,))
        value = self._refresh(self._profiles, checker, registry, FileKind.PROFILES, registry)
        known = self._user_set
        if known is None or known[0] is not registry or known[1] is not value:
            layers = [BUILTIN_PROFILES, value.profiles if value else ()]
            merged = ProfileSet.of(layers, (value.default if value else None) or DEFAULT_PROFILE)
            known = self._user_set = (registry, value, merged)
        return known[2]

    def profiles(self, folder: str | None) -> ProfileSet:
        """Every profile usable in ``folder``: built-in, the user's, the workspace's (narrowed
        to the user's), with the global and workspace defaults."""
        return cast("ProfileSet", self._answer(("profiles", folder), self._folder_profiles,
                                               folder))

    def _folder_profiles(self, folder: str | None) -> ProfileSet:
        user = self.user_profiles()
        if folder is None:
            return user
        slot = self._workspace_profiles.get(folder)
        if slot is None:
            slot = self._workspace_profiles[folder] = _Slot(workspace_profiles_file(folder),
                                                            yours=self.holds_config(folder))
        registry = self.registry()

        checker: Checker = (check_profiles_text, (registry, user))
        value = self._refresh(slot, checker, user, FileKind.WORKSPACE_PROFILES, (registry, user))
        known = self._profile_sets.get(folder)
        if known is None or known[0] is not user or known[1] is not value:
            merged = user if value is None else ProfileSet.of(
                [user.profiles.values(), value.profiles], user.global_default, value.default,
                ceiling=user.resolve(None).profile)
            known = self._profile_sets[folder] = (user, value, merged)
        return known[2]

    def registry(self) -> ModelRegistry:
        """The model registry in force."""
        return cast("ModelRegistry", self._answer("registry", self._registry))

    def _registry(self) -> ModelRegistry:
        checker: Checker = (_check_models, ())
        value = self._refresh(self._models, checker, None, FileKind.MODELS, None)
        if value is not None:
            return value
        if self._builtin_registry is None:
            self._builtin_registry = builtin_registry()
        return self._builtin_registry

    def policy(self) -> RoutingPolicy:
        """The user-level routing policy in force."""
        return cast("RoutingPolicy", self._answer("policy", self._policy))

    def _policy(self) -> RoutingPolicy:
        registry = self.registry()

        checker: Checker = (_check_routing, (registry,))
        value = self._refresh(self._routing, checker, registry, FileKind.ROUTING, registry)
        if value is not None:
            return value
        if self._builtin is not None and self._builtin[0] is registry:
            return self._builtin[1]
        fallback = builtin_policy(registry)
        if fallback is None:  # the registry lacks the built-in models: keep only a floor
            fallback = RoutingPolicy(global_default=next(iter(registry.models), ""))
        self._builtin = (registry, fallback)
        return fallback

    def workspace(self, folder: str | None) -> WorkspacePolicy | None:
        """The workspace's own ``.switchman/routing.yaml`` policy, if it has a usable one."""
        if folder is None:
            return None
        return cast("WorkspacePolicy | None", self._answer(("workspace", folder),
                                                           self._workspace_policy, folder))

    def _workspace_policy(self, folder: str) -> WorkspacePolicy | None:
        registry = self.registry()
        slot = self._workspaces.get(folder)
        if slot is None:
            slot = self._workspaces[folder] = _Slot(workspace_routing_file(folder),
                                                    yours=self.holds_config(folder))

        checker: Checker = (check_workspace_text, (registry, folder))
        return self._refresh(slot, checker, registry, FileKind.WORKSPACE, registry)

    def effective(self, folder: str | None) -> EffectivePolicy:
        """The policy that routes turns in ``folder`` (global plus workspace overlays)."""
        return cast("EffectivePolicy", self._answer(("effective", folder),
                                                    self._effective_policy, folder))

    def _effective_policy(self, folder: str | None) -> EffectivePolicy:
        policy, workspace = self.policy(), self.workspace(folder)
        known = self._effective.get(folder)
        if known is None or known[0] is not policy or known[1] is not workspace:
            known = self._effective[folder] = (policy, workspace,
                                               effective_policy(policy, folder, workspace))
        return known[2]  # the same object while nothing changed, so its rule index is kept

    def problems(self, folder: str | None = None) -> list[Problem]:
        """The current problems of every file in use (after refreshing them)."""
        return self.state(folder)[0]

    def in_force(self, folder: str | None = None) -> dict[str, str]:
        """For each existing file: whether it, its last good version, or the built-in is used."""
        return self.state(folder)[1]

    def state(self, folder: str | None = None) -> tuple[list[Problem], dict[str, str]]:
        """Both :meth:`problems` and :meth:`in_force`, from one refresh of the files."""
        slots = self._in_use(folder)
        problems = [p for slot in slots for p in slot.problems]
        in_force = {str(s.path): s.in_force for s in slots
                    if s.signature is not None and not _first_check_running(s)}
        if (unusable := self.folder_problem()) is not None:
            problems.insert(0, unusable)
            in_force = {unusable.file: IN_FORCE_BUILTIN, **in_force}
        return problems, in_force

    def folder_problem(self) -> Problem | None:
        """The config folder exists but is no folder (SWITCHMAN_CONFIG_DIR naming a file, say):
        none of the user's files can be read, which "no configuration files found" would hide."""
        try:
            mode = self.directory.stat().st_mode
        except OSError:  # not made yet (fine: none of the files is required), or unreachable
            return None
        if stat.S_ISDIR(mode):
            return None
        return Problem(str(self.directory), ZERO_RANGE, Severity.ERROR, Code.UNREADABLE_FILE,
                       "The configuration folder is not a folder, so your models.yaml, "
                       "routing.yaml and profiles.yaml cannot be read from it and the built-in "
                       f"defaults are in use: point {CONFIG_DIR_ENV} at the folder that holds "
                       "them.")

    async def settle(self, folder: str | None = None) -> None:
        """Wait until every file ``folder`` uses is checked in its current version.

        Returns at once when nothing changed; the event loop keeps running meanwhile.
        Each file is looked at afresh, and that look serves every use of the
        configuration until this pass of the event loop ends: a turn's start asks for
        it some thirty times (registry, policy, profiles; for routing, tools and the
        prompt), and one ``stat`` per file is enough for all of them.
        """
        while True:
            self._look_afresh()
            checks = [s.checking for s in self._in_use(folder) if s.checking is not None]
            if not checks:
                return
            await asyncio.wait(checks)  # applying a registry may start the routing file's check

    def _in_use(self, folder: str | None) -> list[_Slot[Any]]:
        """Refresh the files ``folder`` uses; return their slots."""
        self.policy()
        self.profiles(folder)
        slots: list[_Slot[Any]] = [self._models, self._routing, self._profiles]
        if folder is not None:
            self.workspace(folder)
            slots += [self._workspaces[folder], self._workspace_profiles[folder]]
        return slots

    def reload(self) -> None:
        """Forget every cache so the next use re-reads all files (``/rules reload``)."""
        for slot in self._slots():
            slot.signature = None
            slot.loaded = False
        self._looks = self._answers = None
        LAST_CHECKS.forget()
        if self._background:
            CHECKS.submit(forget_checks)  # runs before any check asked for after it

    def _slots(self) -> list[_Slot[Any]]:
        """Every file's slot."""
        return [self._models, self._routing, self._profiles, *self._workspaces.values(),
                *self._workspace_profiles.values()]

    def _look_afresh(self) -> None:
        """Start a new look at the files, kept until this pass of the event loop ends."""
        if self._looks is None:
            asyncio.get_running_loop().call_soon(self._forget_looks)
        self._looks, self._answers = {}, {}

    def _forget_looks(self) -> None:
        self._looks = self._answers = None

    def _signature(self, path: Path) -> tuple[int, int] | None:
        """The file's signature: as :meth:`settle` saw it during its pass, else looked up."""
        looks = self._looks
        if looks is None:
            return entry_signature(path)
        if path not in looks:
            looks[path] = entry_signature(path)
        return looks[path]

    def _refresh(self, slot: _Slot[T], checker: Checker, deps: object, kind: FileKind,
                 context: object) -> T | None:
        """The slot's value, checking its file again if it changed (``deps`` is what its value
        depends on besides the file; ``context`` what its check reads, for :data:`LAST_CHECKS`)."""
        signature = None if slot.yours else self._signature(slot.path)
        if slot.loaded and slot.signature == signature and slot.deps is deps:
            if slot.fresh is not None and _whole(signature):  # it stayed: no save half-way
                slot.good, slot.fresh = slot.fresh.value, None
            return slot.current
        if slot.checking is not None:
            return slot.current  # a check is running; its done callback looks again
        slot.loaded, slot.signature, slot.deps = True, signature, deps
        if signature is None:
            slot.current, slot.problems, slot.in_force = None, [], IN_FORCE_BUILTIN
            return None
        loop = self._loop()
        if loop is None:
            return self._apply(slot, _check_file(slot.path, kind, context, checker))
        slot.checking = asyncio.wrap_future(
            CHECKS.submit(_check_file, slot.path, kind, context, checker), loop=loop)
        slot.checking.add_done_callback(lambda done: self._checked(slot, done))
        return slot.current

    def _loop(self) -> asyncio.AbstractEventLoop | None:
        """The running event loop when checks go to the check process, else None."""
        if not self._background:
            return None
        try:
            return asyncio.get_running_loop()
        except RuntimeError:  # not on the loop (start-up, the CLI): check right here
            return None

    def _checked(self, slot: _Slot[Any], done: asyncio.Future[Read]) -> None:
        """A check finished in the check process: apply it on the loop and say so."""
        slot.checking = None
        if done.cancelled():  # the store was closed
            return
        try:
            self._apply(slot, self._result(slot, done))
        except Exception:  # a bug in checking must not take the daemon down
            log.exception("checking %s failed", slot.path)
            return
        if self.on_change is not None:
            self.on_change()

    @staticmethod
    def _result(slot: _Slot[Any], done: asyncio.Future[Read]) -> Read:
        """The check's result; a located problem if the check process died meanwhile."""
        try:
            return done.result()
        except BrokenProcessPool:
            log.error("the check process exited while checking %s", slot.path)
            return (None, [_stopped(slot.path)]), None

    def _apply(self, slot: _Slot[T], read: Read) -> T | None:
        if self._answers is not None:  # a file's new value: everything is asked afresh
            self._answers.clear()
        (value, problems), text = read
        slot.problems = [p for p in problems if p is not None]
        fresh, slot.fresh = slot.fresh, None
        if any(p.code is Code.OUTSIDE_WORKSPACE for p in slot.problems):
            fresh = slot.good = None  # not the workspace's own file: none of it is used
        if fresh is not None and (slot.signature is None or fresh.mtime_ns != slot.signature[0]) \
                and not fresh.torn_by(slot.signature, text):
            slot.good = fresh.value  # the version before this one was whole after all
        if value is not None:
            slot.current = cast("T", value)
            slot.in_force = IN_FORCE_FILE
            now = entry_signature(slot.path)  # the file may have changed while it was read
            if text is not None and now is not None \
                    and not (now == slot.signature and _whole(now)):
                slot.fresh = _Fresh(slot.current, text, now[0])  # not yet the last good one
            else:
                slot.good = slot.current
            return slot.current
        slot.current = slot.good
        slot.in_force = IN_FORCE_LAST_GOOD if slot.good is not None else IN_FORCE_BUILTIN
        self._announce_invalid(slot)
        return slot.current

    def close(self) -> None:
        """Stop checking in the check process (checks in flight are abandoned)."""
        self._background = False  # later uses (the last status at exit) check in place
        for slot in self._slots():
            if slot.checking is not None:
                slot.checking.cancel()

    def _announce_invalid(self, slot: _Slot[Any]) -> None:
        if self.bus is None:
            return
        errors = [p for p in slot.problems if p.severity is Severity.ERROR]
        self.bus.emit(PolicyInvalid(timestamp=self.clock.now(), file=str(slot.path),
                                    problems=errors, in_force=slot.in_force))

