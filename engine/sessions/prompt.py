"""The system prompt every chat turn starts with."""

from __future__ import annotations

from pathlib import Path

from switchman.engine.providers.base import ToolSpec
from switchman.engine.skills import SkillIndex
from switchman.engine.tools.memory import compose_memory
from switchman.engine.tools.skill_tools import skills_prompt


def system_prompt(workspace: Path, model: str, tools: list[ToolSpec],
                  skills: SkillIndex | None = None, *, with_memory: bool = True) -> str:
    """Instructions for the model: where it works, what it can do, what it remembers."""
    names = ", ".join(t.name for t in tools)
    parts = [
        "You are a coding assistant working inside the user's editor, through Switchman.\n"
        f"You are running as {model}.\n"
        f"The user's workspace is {workspace}. Your tools: {names}. "
        "Paths are relative to the workspace root; nothing outside it can be read or changed. "
        "The user approves every file change and command before it happens; when they deny "
        "one, respect their reason and do not retry the same thing.\n"
        "Read files before answering questions about them or editing them, quote file paths, "
        "and keep answers concise. Format answers in Markdown."]
    if with_memory:
        parts.append(compose_memory(workspace))
    if skills is not None and any(t.name == "skill_load" for t in tools):
        parts.append(skills_prompt(skills))  # listed only to a model that can load them
    return "\n\n".join(p for p in parts if p)
