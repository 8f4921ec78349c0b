"""What a profile changes in a turn: its tools, its skills and its part of the system prompt."""

from __future__ import annotations

from collections.abc import Iterable

from switchman.engine.profiles.profile import ApprovalMode, Profile
from switchman.engine.skills import SkillIndex
from switchman.engine.tools.approval import ToolClass
from switchman.engine.tools.toolbox import TOOL_CLASSES


def permitted(profile: Profile, tool: str) -> bool:
    """Whether ``profile`` lets a turn use ``tool``: listed (or no list), and not a write or
    execute tool under ``read_only``. Tools the profile cannot know (a worker's
    ``_request_context``) are not the profile's to take away."""
    if profile.approval is ApprovalMode.READ_ONLY \
            and TOOL_CLASSES.get(tool, ToolClass.READ) is not ToolClass.READ:
        return False
    return profile.allows(tool) or tool.startswith("_")


def allowed_tools(profile: Profile, tools: Iterable[str]) -> list[str]:
    """``tools`` less those ``profile`` does not permit, in order."""
    return [t for t in tools if permitted(profile, t)]


def offers_tools(profile: Profile, tools: Iterable[str]) -> bool:
    """Whether a turn with ``profile`` sends tool definitions, ``tools`` being those it could
    be offered: a profile with ``tools: []`` (or ``read_only`` and only writing tools listed)
    sends none, so a model that cannot call tools (``supports_tools: false``) may take its
    turns. ``delegate`` is left out of the reckoning: only a model that can delegate is
    offered it."""
    return bool(allowed_tools(profile, [t for t in tools if t != "delegate"]))


def visible_skills(profile: Profile, skills: SkillIndex) -> SkillIndex:
    """The skills a profile's model is told about and may load."""
    if profile.skills is None:
        return skills
    return SkillIndex(s for s in skills.skills.values() if s.name in profile.skills)


def prompt_section(profile: Profile) -> str:
    """The profile's part of the system prompt (empty when it adds nothing)."""
    if not profile.system_prompt.strip():
        return ""
    return f"## Profile: {profile.name}\n{profile.system_prompt.strip()}"
