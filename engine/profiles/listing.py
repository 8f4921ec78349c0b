"""Profiles as the editor and ``/profile`` show them."""

from __future__ import annotations

from switchman.engine.config.profiles_file import PROFILE_TOOLS
from switchman.engine.profiles.apply import allowed_tools
from switchman.engine.profiles.profile import ActiveProfile, Profile, ProfileSet, origin_words
from switchman.engine.sessions.records import ProfileInfo, ProfileInForce, ProfileList


def tools_of(profile: Profile) -> list[str]:
    """The tools ``profile``'s turns may use (its approval mode applied), sorted."""
    return sorted(allowed_tools(profile, PROFILE_TOOLS))


def left_out(active: ActiveProfile, profiles: ProfileSet) -> list[str]:
    """The tools the profile in force would have on its own but its bound takes away."""
    own = profiles.get(active.name) or active.profile
    return sorted(set(tools_of(own)) - set(tools_of(active.profile)))


def profile_info(profile: Profile, dropped: list[str] | None = None) -> ProfileInfo:
    """One profile for the picker: its tools are what its turns may use (``dropped``: those
    a bound took away, the profile being the workspace's default in force)."""
    return ProfileInfo(
        name=profile.name, description=profile.description, source=profile.source,
        tools=tools_of(profile), model_policy=profile.model_policy,
        approval=profile.approval.value,
        skills=sorted(profile.skills) if profile.skills is not None else None,
        bounded_by=profile.bound, tools_left_out=dropped or [])


def profile_in_force(active: ActiveProfile, profiles: ProfileSet) -> ProfileInForce:
    """The profile a session runs with, where it was chosen and, when the workspace's default
    is bounded by the user's global default, what it is left."""
    if active.profile.bound is None:
        return ProfileInForce(active.name, active.resolved_from)
    return ProfileInForce(active.name, active.resolved_from, bounded_by=active.profile.bound,
                          tools=tools_of(active.profile), approval=active.profile.approval.value,
                          tools_left_out=left_out(active, profiles))


def profile_list(profiles: ProfileSet, active: ActiveProfile) -> ProfileList:
    """Every profile, and the one in force with where it was chosen. The one in force is
    listed as it runs: a bounded workspace default with the tools and approval it is left
    (chosen in the session, the same profile is not bounded, so the others are listed as
    their own)."""
    def info(name: str) -> ProfileInfo:
        if name == active.name and active.profile.bound is not None:
            return profile_info(active.profile, left_out(active, profiles))
        return profile_info(profiles.profiles[name])
    return ProfileList([info(n) for n in profiles.names()], profile_in_force(active, profiles))


def profile_text(profiles: ProfileSet, active: ActiveProfile) -> str:
    """``/profile`` without an argument: the profiles, the active one marked."""
    lines = [f"Active profile: {active.name} ({origin_words(active.resolved_from)})", ""]
    if active.profile.bound is not None:
        lines[1:1] = [f"(with only the tools and approval of your default profile "
                      f"'{active.profile.bound}': a workspace's default cannot widen it)"]
    for name in profiles.names():
        profile = active.profile if name == active.name else profiles.profiles[name]
        mark = "*" if name == active.name else " "
        policy = profile.model_policy
        model = policy.model or (f"tier {policy.tier}" if policy.tier else "your rules")
        about = profile.description or "(no description)"
        lines.append(f"{mark} {name} [{profile.source}] — {about} · model: {model} · "
                     f"approval: {profile.approval.value}")
    lines += ["", "/profile <name> to use one in this session, /profile clear for the default."]
    return "\n".join(lines)
