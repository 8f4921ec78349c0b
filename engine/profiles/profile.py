"""What an agent profile is, the built-in ones, and a set of profiles from every source.

A profile bundles what Copilot custom agents, Claude Code subagents and Roo
modes call an agent: a description, a system prompt, the tools it may use,
the skills it sees, a model policy and an approval mode. Profiles come from
three places — built in, the user's ``profiles.yaml`` and a workspace's
``.switchman/profiles.yaml`` — and a later source replaces an earlier
profile of the same name (a workspace profile only ever narrowed, see
:mod:`switchman.engine.config.profiles_file`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal

import msgspec

DEFAULT_PROFILE = "default"
SUBAGENT_PROFILE = "subagent"

ProfileSource = Literal["builtin", "user", "workspace"]
ResolvedFrom = Literal["session", "workspace", "global"]

ORIGIN_WORDS: dict[str, str] = {
    "session": "chosen for this session",
    "workspace": "the workspace's default",
    "global": "the global default",
}
"""Where the profile in force was chosen, in the words the editors use for it."""


def origin_words(resolved_from: str, bounded_by: str | None = None) -> str:
    """Where a profile in force was chosen, in words, and the profile that bounds it:
    ``the workspace's default, bounded by your default 'reviewer'``."""
    words = ORIGIN_WORDS.get(resolved_from, f"from {resolved_from}")
    return words if bounded_by is None else f"{words}, bounded by your default '{bounded_by}'"


class ApprovalMode(StrEnum):
    """How a profile's file changes and commands are approved."""

    ASK = "ask"
    """Writes and commands ask first (unless the user always allows the tool)."""
    READ_ONLY = "read_only"
    """No write or execute tool is offered at all."""

    def at_most(self, ceiling: ApprovalMode) -> ApprovalMode:
        """The stricter of this mode and ``ceiling``."""
        return ApprovalMode.READ_ONLY if ApprovalMode.READ_ONLY in (self, ceiling) else self


class ModelPolicy(msgspec.Struct, frozen=True):
    """Which model a profile's turns prefer.

    ``model`` (an id) or else ``tier`` names the profile's default; it takes
    the place of the workspace and global defaults for the profile's turns
    (rules, ``@alias`` and ``/model`` still come first). ``tiers`` overrides
    single tiers for the profile's workers and its default ``tier``.
    """

    model: str | None = None
    tier: str | None = None
    tiers: dict[str, str] = {}
    effort: str | None = None
    """Reasoning effort (low, medium, high) for the profile's turns and workers, sent to
    models that have such a setting; it replaces a tier's own effort."""

    @property
    def is_empty(self) -> bool:
        """Whether the profile leaves model choice to the routing policy."""
        return self.model is None and self.tier is None and not self.tiers \
            and self.effort is None


@dataclass(frozen=True)
class Profile:
    """One agent profile (validated)."""

    name: str
    description: str = ""
    system_prompt: str = ""
    tools: frozenset[str] | None = None
    """The tools the profile may use; None: every tool the turn would have."""
    skills: frozenset[str] | None = None
    """The skills the profile sees; None: every indexed skill."""
    model_policy: ModelPolicy = field(default_factory=ModelPolicy)
    approval: ApprovalMode = ApprovalMode.ASK
    source: ProfileSource = "builtin"
    file: str | None = None
    line: int = 0
    """Where the profile is written (0-based line), for messages."""
    bound: str | None = None
    """The user's global default profile that narrowed this one as a workspace's default
    (see :meth:`bounded_by`); None when nothing was taken away."""

    as_written: Profile | None = None
    """A workspace profile as its file wrote it, when your profile bounded it there
    (:attr:`narrowed_by`) or as the workspace's default (:attr:`bound`) and something was
    taken away; None otherwise. A tool it permits that this one does not was taken by a
    bound, not refused by the profile itself."""
    narrowed_by: str | None = None
    """Your profile that bounded this workspace profile when its file was read (the
    same-named one, else your global default), when it took something away."""
    narrowed_by_default: bool = False
    """Whether :attr:`narrowed_by` is your global default (no profile of yours has this
    profile's name)."""

    def allows(self, tool: str) -> bool:
        """Whether the profile lets its turns use ``tool`` (approval aside)."""
        return self.tools is None or tool in self.tools

    def bounded_by(self, ceiling: Profile) -> Profile:
        """This profile with no tool ``ceiling`` lacks and no looser approval mode (its
        prompt, skills and model policy kept)."""
        tools = self.tools if ceiling.tools is None else ceiling.tools if self.tools is None \
            else self.tools & ceiling.tools
        approval = self.approval.at_most(ceiling.approval)
        if tools == self.tools and approval is self.approval:
            return self
        return replace(self, tools=tools, approval=approval, bound=ceiling.name,
                       as_written=self.as_written or self)

    def bound_words(self) -> str:
        """Why a tool :attr:`as_written` permits is not this profile's (for a refusal)."""
        if self.narrowed_by is not None:
            whose = "your default" if self.narrowed_by_default else "your profile"
            return (f"the workspace's profile '{self.name}' is bounded by {whose} "
                    f"'{self.narrowed_by}', which does not allow it")
        return (f"the workspace's default profile '{self.name}' gets only what your default "
                f"profile '{self.bound}' allows")


BUILTIN_PROFILES: tuple[Profile, ...] = (
    Profile(DEFAULT_PROFILE, "The general coding assistant: every tool, your routing rules."),
    Profile(SUBAGENT_PROFILE,
            "A generic worker for delegated sub-tasks: does one focused task and reports back.",
            system_prompt="Work on the one task you were given and report the result plainly."),
)


@dataclass(frozen=True)
class ActiveProfile:
    """The profile a session runs with, and where that choice came from."""

    profile: Profile
    resolved_from: ResolvedFrom

    @property
    def name(self) -> str:
        """The profile's name."""
        return self.profile.name


@dataclass(frozen=True)
class ProfileSet:
    """Every profile available in one workspace, with the defaults that apply there."""

    profiles: Mapping[str, Profile] = field(default_factory=dict)
    global_default: str = DEFAULT_PROFILE
    workspace_default: str | None = None
    ceiling: Profile | None = None
    """The user's global default profile, which bounds the profile the workspace's default
    gives a session (a workspace file is untrusted; see :meth:`resolve`)."""

    @classmethod
    def of(cls, layers: Iterable[Iterable[Profile]], global_default: str = DEFAULT_PROFILE,
           workspace_default: str | None = None, ceiling: Profile | None = None) -> ProfileSet:
        """Profiles from ``layers`` in order; later layers replace earlier names."""
        merged: dict[str, Profile] = {}
        for layer in layers:
            for profile in layer:
                merged[profile.name] = profile
        return cls(merged, global_default, workspace_default, ceiling)

    def get(self, name: str) -> Profile | None:
        """The profile called ``name``."""
        return self.profiles.get(name)

    def names(self) -> list[str]:
        """Every profile name, sorted."""
        return sorted(self.profiles)

    def resolve(self, session_override: str | None) -> ActiveProfile:
        """The profile in force: the session's choice, else the workspace's, else the global.

        A name that no longer exists (its file changed) is skipped, so a session
        never runs without a profile. The workspace's default comes from an untrusted file:
        the profile it names keeps its prompt and model policy but is bounded by the user's
        global default (:attr:`ceiling`), so naming a wider profile there (the built-in
        ``default``, say) widens nothing. A profile the session chose itself is the user's
        choice and is not bounded.
        """
        for name, origin in ((session_override, "session"),
                             (self.workspace_default, "workspace"),
                             (self.global_default, "global")):
            found = self.profiles.get(name) if name else None
            if found is not None:
                if origin == "workspace" and self.ceiling is not None:
                    found = found.bounded_by(self.ceiling)
                return ActiveProfile(found, origin)  # type: ignore[arg-type]
        return ActiveProfile(self.profiles.get(DEFAULT_PROFILE, BUILTIN_PROFILES[0]), "global")


BUILTIN_SET = ProfileSet.of([BUILTIN_PROFILES])
