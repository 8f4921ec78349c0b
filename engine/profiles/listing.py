"""Profiles as the editor and ``/profile`` show them."""

from __future__ import annotations

from switchman.engine.config.profiles_file import PROFILE_TOOLS
from switchman.engine.profiles.apply import allowed_tools
from switchman.engine.profiles.profile import ActiveProfile, Profile, ProfileSet
from switchman.engine.routing.decision import ProfileChoice
from switchman.engine.sessions.records import ProfileInfo, ProfileList


def profile_info(profile: Profile) -> ProfileInfo:
    """One profile for the picker: its tools are what its turns may use."""
    return ProfileInfo(
        name=profile.name, description=profile.description, source=profile.source,
        tools=sorted(allowed_tools(profile, PROFILE_TOOLS)), model_policy=profile.model_policy,
        approval=profile.approval.value,
        skills=sorted(profile.skills) if profile.skills is not None else None)


def profile_list(profiles: ProfileSet, active: ActiveProfile) -> ProfileList:
    """Every profile, and the one in force with where it was chosen."""
    return ProfileList([profile_info(profiles.profiles[n]) for n in profiles.names()],
                       ProfileChoice(active.name, active.resolved_from))


def profile_text(profiles: ProfileSet, active: ActiveProfile) -> str:
    """``/profile`` without an argument: the profiles, the active one marked."""
    lines = [f"Active profile: {active.name} (resolved from {active.resolved_from})", ""]
    if active.profile.bound is not None:
        lines[1:1] = [f"(with only the tools and approval of your default profile "
                      f"'{active.profile.bound}': a workspace's default cannot widen it)"]
    for name in profiles.names():
        profile = profiles.profiles[name]
        mark = "*" if name == active.name else " "
        policy = profile.model_policy
        model = policy.model or (f"tier {policy.tier}" if policy.tier else "your rules")
        about = profile.description or "(no description)"
        lines.append(f"{mark} {name} [{profile.source}] — {about} · model: {model} · "
                     f"approval: {profile.approval.value}")
    lines += ["", "/profile <name> to use one in this session, /profile clear for the default."]
    return "\n".join(lines)
