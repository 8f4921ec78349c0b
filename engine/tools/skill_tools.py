"""``skill_load``: the full text of a skill from the session's skill index.

The index (``engine/skills.py``) holds each skill's name and description;
this tool reads the Markdown body when the model decides it needs it. Only
files the index lists can be read, so it cannot be used to read anything
else. Workers may load skills; no tool writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from switchman.engine.providers.base import ToolSpec
from switchman.engine.skills import SkillIndex
from switchman.engine.tools.arguments import ToolOutcome, ToolRefused, text_argument

MAX_SKILL_BYTES = 64 * 1024

DEFINITION = ToolSpec(
    "skill_load", "Load the instructions of a skill by name (the system prompt lists them).", {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name."}},
        "required": ["name"]})


def load_skill(index: SkillIndex, args: dict[str, Any]) -> ToolOutcome:
    """The skill's Markdown, front matter included."""
    name = text_argument(args, "name", required=True) or ""
    skill = index.skills.get(name.strip())
    if skill is None:
        known = ", ".join(sorted(index.skills)) or "none"
        raise ToolRefused(f"No skill named '{name}'. Known skills: {known}.")
    with Path(skill.path).open("rb") as handle:
        data = handle.read(MAX_SKILL_BYTES + 1)
    text = data[:MAX_SKILL_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_SKILL_BYTES:
        text += "\n[… truncated]"
    return ToolOutcome(text, summary=f"skill {skill.name}")


def skills_prompt(index: SkillIndex) -> str:
    """The system-prompt lines listing the skills a model can load ("" when none)."""
    if not index.skills:
        return ""
    lines = [f"- {s.name}: {s.description}" for s in index.skills.values()]
    return "## Skills (load one with skill_load when it applies)\n" + "\n".join(lines[:50])
