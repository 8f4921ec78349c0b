"""The system prompt every chat turn starts with."""

from __future__ import annotations

from pathlib import Path

from switchman.engine.providers.base import ToolSpec


def system_prompt(workspace: Path, model: str, tools: list[ToolSpec]) -> str:
    """Instructions for the model: where it works and what it can do."""
    names = ", ".join(t.name for t in tools)
    return (
        "You are a coding assistant working inside the user's editor, through Switchman.\n"
        f"You are running as {model}.\n"
        f"The user's workspace is {workspace}. You can read it with these tools: {names}. "
        "Paths are relative to the workspace root; files outside it cannot be read.\n"
        "Read files before answering questions about them, quote file paths, and keep answers "
        "concise. Format answers in Markdown."
    )
