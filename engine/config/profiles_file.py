"""``profiles.yaml`` (user) and ``.switchman/profiles.yaml`` (workspace): declarations and checks.

Both files have the same shape::

    default: reviewer            # the global (user file) or workspace default profile
    profiles:
      reviewer:
        description: Reviews changes without editing anything
        system_prompt: |
          You are a careful reviewer ...
        tools: [read_file, list_files, grep]
        skills: [python-style]
        model: sonnet            # or tier: balanced
        tiers: {fast: haiku}     # this profile's workers use these tier models
        approval: read_only      # or ask (the default)

A workspace file comes with a cloned repository, so it is untrusted: it can
never give a profile more tools or a looser approval mode than the user's
own profile of that name (or, for a new name, the user's global default
profile), and the profile its ``default:`` names gives the workspace's sessions
no more than the user's global default profile (see ``ProfileSet.resolve``).
Every attempt is reported where it is written, as an ``untrusted-setting``
warning, and narrowed — never silently accepted.
Providers, base URLs and key sources cannot be named at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from switchman.engine.config import schema as s
from switchman.engine.config.effort_support import check_effort_support
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.tier_order import check_tier_order
from switchman.engine.config.walker import Walker, shorten
from switchman.engine.config.yamldoc import YamlDocument, parse_yaml
from switchman.engine.profiles.profile import (
    BUILTIN_PROFILES,
    ApprovalMode,
    ModelPolicy,
    Profile,
    ProfileSet,
    ProfileSource,
)
from switchman.engine.wording import closest, unknown_name

PROFILE_TOOLS = ("read_file", "list_files", "grep", "skill_load", "edit_file", "create_file",
                 "delete_file", "memory_add", "memory_replace", "run_command", "delegate")
"""Every tool a profile may name (a test keeps this equal to the tools that exist)."""
_READS = "Reads only: never asks."
_WRITES = "It asks you first, showing the change (unless you always allow it here)."
TOOL_DESCRIPTIONS = {
    "read_file": f"Reads a text file of the workspace, or some of its lines. {_READS}",
    "list_files": f"Lists the files under a folder of the workspace. {_READS}",
    "grep": f"Searches the workspace's files for a regular expression. {_READS}",
    "skill_load": f"Loads the full text of one of the listed skills. {_READS}",
    "edit_file": f"Replaces one exact snippet of a workspace file. {_WRITES}",
    "create_file": f"Creates a file in the workspace (or overwrites one). {_WRITES}",
    "delete_file": f"Deletes one file of the workspace. {_WRITES}",
    "memory_add": f"Adds an entry to the workspace's MEMORY.md or USER.md. {_WRITES}",
    "memory_replace": f"Changes or removes an entry of MEMORY.md or USER.md. {_WRITES}",
    "run_command": "Runs a shell command in the workspace folder. It asks you first, showing "
                   "the command line (unless you always allow it here).",
    "delegate": "Hands a sub-task to a worker on another model (a worker never delegates). "
                "It asks you first when the worker may change files or run commands.",
}
"""What each tool does and when it asks, shown on hover and in completion."""
_MODEL_AND_TIER = (
    "A profile's default is either a model or a tier, not both: with 'model: {model}' the "
    "'tier: {tier}' would be ignored for its turns. Remove one of them (to change the models "
    "of its tiers, use 'tiers').")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")

_PROFILE_TIERS = s.Obj(
    "Tier models for this profile, replacing the routing policy's for its workers and its "
    "default tier. Any subset of the tiers.",
    fields={tier: s.Field(s.Scalar(f"The model for tier {tier} in this profile.",
                                   format="model")) for tier in s.TIER_NAMES},
    title="tiers",
)

_PROFILE_FIELDS: Mapping[str, s.Field] = {
    "description": s.Field(s.Scalar("One line saying what the profile is for; shown in the "
                                     "profile picker and to a planner choosing a worker.",
                                     text_only=True)),
    "system_prompt": s.Field(s.Scalar("Instructions added to the system prompt of the "
                                      "profile's turns (use a | block for several lines).",
                                      text_only=True)),
    "tools": s.Field(s.ListOf("The tools the profile may use; leave it out for every tool. "
                              "Tools that change files or run commands still ask first.",
                              item=s.Scalar("A tool name.", enum=PROFILE_TOOLS,
                                            choices=tuple(TOOL_DESCRIPTIONS.items()))),
                     snippet="[read_file, list_files, grep]"),
    "skills": s.Field(s.ListOf("The skills listed to the profile's model (by name); leave it "
                               "out for every skill.",
                               item=s.Scalar("A skill name.", format="skill"))),
    "model": s.Field(s.Scalar("The profile's default model (id or alias). Your rules, @alias "
                              "and /model still come first. Not together with tier.",
                              format="model")),
    "tier": s.Field(s.Scalar("The profile's default tier, instead of a model (not together "
                             "with model); a delegated worker with this profile uses it when "
                             "the planner gives no tier.", enum=s.TIER_NAMES)),
    "tiers": s.Field(_PROFILE_TIERS),
    "effort": s.Field(s.Scalar("Reasoning effort for the profile's turns and workers, sent to "
                               "models with a reasoning-effort setting (OpenAI reasoning effort, "
                               "Anthropic extended thinking); it replaces a tier's effort.",
                               enum=s.EFFORT_LEVELS)),
    "approval": s.Field(s.Scalar("ask (default): file changes and commands ask first. "
                                 "read_only: no tool that changes files or runs commands.",
                                 enum=tuple(m.value for m in ApprovalMode),
                                 choices=(("ask", "The default: file changes and commands ask "
                                                  "you first."),
                                          ("read_only", "The profile gets no tool that changes "
                                                        "files or runs commands at all.")))),
}

_UNTRUSTED = {key: s.SpecialKey(Code.UNTRUSTED_SETTING, Severity.WARNING,
                                f"A profile cannot set '{key}': providers, base URLs and API-key "
                                "sources only come from your own models.yaml. This setting is "
                                "ignored.") for key in s.UNTRUSTED_KEYS}

PROFILE = s.Obj("One agent profile.", fields=_PROFILE_FIELDS, special=_UNTRUSTED,
                title="profile")

_DEFAULT = s.Field(s.Scalar("The profile sessions use unless they choose another."))
_PROFILES = s.Field(s.MapOf("Profiles by name (letters, digits, '-', '_', '.').", value=PROFILE,
                            key=s.Scalar("Profile name.")))
_SCHEMA_VERSION = s.Field(s.Scalar("The format version of this file. Only 1 exists.", "integer",
                                   minimum=1))

PROFILES_FILE = s.Obj(
    "Switchman agent profiles (profiles.yaml in your config folder). 'default' is the global "
    "default profile.",
    fields={"schema_version": _SCHEMA_VERSION, "default": _DEFAULT, "profiles": _PROFILES},
    special=_UNTRUSTED, title="profiles.yaml")

WORKSPACE_PROFILES_FILE = s.Obj(
    "Workspace agent profiles (.switchman/profiles.yaml). Untrusted: a profile here never gets "
    "more tools or a looser approval mode than your own. 'default' is the workspace's default "
    "profile.",
    fields={"schema_version": _SCHEMA_VERSION, "default": _DEFAULT, "profiles": _PROFILES},
    special=_UNTRUSTED, title=".switchman/profiles.yaml")


@dataclass(frozen=True)
class ProfilesFile:
    """A checked profiles file: its profiles and its default (if it names one)."""

    profiles: tuple[Profile, ...] = ()
    default: str | None = None


def check_profiles_text(text: str, path: str, registry: ModelRegistry,
                        user: ProfileSet | None = None) -> tuple[ProfilesFile | None,
                                                                 list[Problem]]:
    """Validate a profiles file. ``user`` is given for a workspace file: the user's
    profiles (built-in ones included) that bound what the workspace may allow."""
    return check_profiles_doc(parse_yaml(text, path), registry, user)


def check_profiles_doc(doc: YamlDocument, registry: ModelRegistry,
                       user: ProfileSet | None = None) -> tuple[ProfilesFile | None,
                                                                list[Problem]]:
    """:func:`check_profiles_text` for an already parsed document."""
    if doc.problems:
        return None, doc.problems
    walker = Walker(doc, registry.resolve, registry.names())
    spec = PROFILES_FILE if user is None else WORKSPACE_PROFILES_FILE
    raw: dict[str, Any] = {}
    if doc.root is not None:
        value = walker.walk(doc.root, spec, ())
        raw = value if isinstance(value, dict) else {}
    source: ProfileSource = "user" if user is None else "workspace"
    profiles = []
    for name, body in raw.get("profiles", {}).items():
        if not _NAME.match(name):
            walker.report(walker.range_at(("profiles", name), key=True), Code.INVALID_VALUE,
                          f"Profile name '{shorten(name)}' must start with a letter or digit and "
                          "use only letters, digits, '-', '_' and '.' (at most 64).")
            continue
        written = walker.node_at(("profiles", name, "model"))
        if written is not None and "tier" in body:
            walker.report(walker.range_at(("profiles", name, "tier"), key=True),
                          Code.INVALID_VALUE, _MODEL_AND_TIER.format(
                              model=shorten(written.text),
                              tier=body["tier"]))
        profile = _profile(walker, name, body, source)
        check_tier_order(walker, registry, {
            tier: (model, ("profiles", name, "tiers", tier))
            for tier, model in profile.model_policy.tiers.items()})
        policy = profile.model_policy
        if policy.effort is not None:
            check_effort_support(
                walker, registry, ("profiles", name, "effort"), policy.effort,
                [*([policy.model] if policy.model else []), *policy.tiers.values()],
                "Its turns and workers on other models use it.")
        if user is not None:
            profile = _narrowed(walker, profile, user)
        profiles.append(profile)
    default = raw.get("default")
    known = {p.name for p in (*BUILTIN_PROFILES, *profiles)} | set(user.names() if user else ())
    if default is not None and default not in known:
        names = sorted(known)
        walker.report(walker.range_at(("default",)), Code.UNKNOWN_PROFILE,
                      unknown_name(f"No profile is called '{shorten(str(default))}'.",
                                   str(default), names, "Known:") + ".",
                      data={"suggestions": closest(str(default), names)})
    elif default is not None and user is not None:
        _bound_default(walker, str(default), profiles, user)
    if any(p.severity is Severity.ERROR for p in walker.problems):
        return None, walker.problems
    return ProfilesFile(tuple(profiles), default), walker.problems


def _profile(walker: Walker, name: str, body: Mapping[str, Any],
             source: ProfileSource) -> Profile:
    key = walker.node_at(("profiles", name), key=True)
    tools = body.get("tools")
    skills = body.get("skills")
    approval = body.get("approval")
    return Profile(
        # one line, as the picker, /profile and the planner's delegate tool show it: a
        # workspace profile's line breaks would read as further profiles there
        name=name, description=" ".join(str(body.get("description") or "").split()),
        system_prompt=body.get("system_prompt", ""),
        tools=frozenset(tools) if tools is not None else None,
        skills=frozenset(skills) if skills is not None else None,
        model_policy=ModelPolicy(model=body.get("model"), tier=body.get("tier"),
                                 tiers=dict(body.get("tiers") or {}),
                                 effort=body.get("effort")),
        approval=ApprovalMode(approval) if approval else ApprovalMode.ASK,
        source=source, file=walker.doc.path, line=key.start[0] if key is not None else 0)


def _narrowed(walker: Walker, profile: Profile, user: ProfileSet) -> Profile:
    """``profile`` (from a workspace) bounded by the user's profile of that name, or by the
    user's global default profile for a new name; each widening attempt is reported."""
    ceiling = user.get(profile.name) or user.resolve(None).profile
    body = walker.node_at(("profiles", profile.name))
    written = {k.text for k, _ in body.pairs} if body is not None and body.kind == "mapping" \
        else set()
    tools = profile.tools if "tools" in written else ceiling.tools
    if ceiling.tools is not None and tools is not None:
        for index, tool in enumerate(_listed(walker, profile.name)):
            if tool in PROFILE_TOOLS and tool not in ceiling.tools:  # no tool: an error already
                walker.report(walker.range_at(("profiles", profile.name, "tools", index)),
                              Code.UNTRUSTED_SETTING,
                              f"A workspace profile cannot add '{tool}': your profile "
                              f"'{ceiling.name}' does not allow it. It is left out.",
                              Severity.WARNING, data={"ceiling": ceiling.name})
        tools = tools & ceiling.tools
    elif ceiling.tools is not None:
        tools = ceiling.tools
    approval = profile.approval if "approval" in written else ceiling.approval
    if approval.at_most(ceiling.approval) is not approval:
        walker.report(walker.range_at(("profiles", profile.name, "approval")),
                      Code.UNTRUSTED_SETTING,
                      f"A workspace profile cannot loosen approval: your profile "
                      f"'{ceiling.name}' is {ceiling.approval.value}, so this one is too.",
                      Severity.WARNING, data={"ceiling": ceiling.name})
        approval = ceiling.approval
    if tools == profile.tools and approval is profile.approval:
        return profile
    return replace(profile, tools=tools, approval=approval, as_written=profile,
                   narrowed_by=ceiling.name, narrowed_by_default=user.get(profile.name) is None)


def _bound_default(walker: Walker, name: str, profiles: list[Profile],
                   user: ProfileSet) -> None:
    """Report, at a workspace file's ``default:``, what the user's global default profile
    takes away from the profile it names for the workspace's sessions (see
    :meth:`ProfileSet.resolve`): a wider profile named there is narrowed, never widening."""
    chosen = next((p for p in profiles if p.name == name), None) or user.get(name)
    if chosen is None:
        return
    ceiling = user.resolve(None).profile
    bounded = chosen.bounded_by(ceiling)
    where = walker.range_at(("default",))
    lost = [t for t in PROFILE_TOOLS if chosen.allows(t) and not bounded.allows(t)]
    if lost:
        them = "them" if len(lost) > 1 else "it"
        walker.report(where, Code.UNTRUSTED_SETTING,
                      f"A workspace default cannot add {', '.join(repr(t) for t in lost)}: your "
                      f"default profile '{ceiling.name}' does not allow {them}, so this "
                      f"workspace's sessions run '{name}' without {them} (choosing '{name}' "
                      "yourself with /profile gives the profile all its tools).",
                      Severity.WARNING, data={"ceiling": ceiling.name})
    if bounded.approval is not chosen.approval:
        walker.report(where, Code.UNTRUSTED_SETTING,
                      f"A workspace default cannot loosen approval: your default profile "
                      f"'{ceiling.name}' is {ceiling.approval.value}, so this workspace's "
                      f"sessions run '{name}' {ceiling.approval.value} too.",
                      Severity.WARNING, data={"ceiling": ceiling.name})


def _listed(walker: Walker, name: str) -> list[str]:
    """The tool names a profile's ``tools`` list holds, in order (for locating them)."""
    node = walker.node_at(("profiles", name, "tools"))
    if node is None:
        return []
    if node.kind == "scalar":
        return [node.text]
    return [item.text if item.kind == "scalar" else "" for item in node.items]
