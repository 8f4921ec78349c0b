"""What a worker starts with: its prompt, and the context the planner handed over.

Files (and file ranges) are *references*: the worker reads them itself, so it
sees their current content. Earlier tool results and messages of the
planner's session, and the planner's inline notes, are looked up now and
inlined; an id that names nothing is an error the planner can correct.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from switchman.engine.delegation.contract import (
    REQUEST_CONTEXT,
    ArgumentProblem,
    DelegateCall,
    FileInclude,
    FileRangeInclude,
    InlineInclude,
    MessageInclude,
    ToolResultInclude,
)
from switchman.engine.messages import Message, ToolResultBlock, ToolUseBlock
from switchman.engine.tools.arguments import ToolRefused
from switchman.engine.tools.confinement import WorkspaceRoot
from switchman.engine.tools.secret_files import is_secret_file, refusal


@dataclass(frozen=True)
class Handoff:
    """The worker's first message and the summary its prompt lists."""

    message: str
    summary: str
    reference_count: int


def prepare(call: DelegateCall, folder: Path,
            read_transcript: Callable[[], list[Message]]) -> Handoff:
    """Resolve ``call``'s context against the planner's workspace and transcript (read only
    if an include needs it: it includes the turn in progress, so it comes from the store)."""
    needs = any(isinstance(i, ToolResultInclude | MessageInclude) for i in call.context.include)
    transcript = read_transcript() if needs else []
    references: list[str] = []
    inlined: list[str] = []
    for item in call.context.include:
        if isinstance(item, FileInclude):
            references.append(f"- file {_inside(folder, item.path)} (read it with read_file)")
        elif isinstance(item, FileRangeInclude):
            first, last = item.lines
            references.append(f"- lines {first}-{last} of {_inside(folder, item.path)} (read "
                              f"only those: read_file with start_line {first}, end_line {last})")
        elif isinstance(item, ToolResultInclude):
            references.append(f"- the result of the planner's tool call {item.tool_use_id} "
                              "(below)")
            inlined.append(_tool_result(transcript, item.tool_use_id))
        elif isinstance(item, MessageInclude):
            references.append(f"- the planner's message {item.message_id} (below)")
            inlined.append(_message(transcript, item.message_id))
        elif isinstance(item, InlineInclude):
            references.append(f"- a note from the planner: {item.label} (below)")
            inlined.append(f"## Note from the planner: {item.label}\n{item.text}")
    summary = "Context provided:\n" + "\n".join(references) if references else \
        "No context was provided beyond the task."
    message = call.task if not inlined else call.task + "\n\n" + "\n\n".join(inlined)
    return Handoff(message, summary, len(call.context.include))


def _inside(folder: Path, raw: str) -> str:
    """``raw`` relative to the workspace, confined as the worker's read_file is (``.git/``
    refused too: the worker could not read it, so the planner is told now)."""
    root = WorkspaceRoot(folder)
    try:
        candidate = root.resolve(raw)
    except ToolRefused as refused:  # outside the workspace, or inside .git/
        raise ArgumentProblem(f"file {str(refused).rstrip('.')}") from None
    except ValueError:  # a NUL in the path
        raise ArgumentProblem(f"file {raw!r} is not a path") from None
    if not candidate.is_file():
        raise ArgumentProblem(f"file '{raw}' does not exist in the workspace")
    if is_secret_file(candidate.name):  # the worker's read_file would refuse it
        raise ArgumentProblem(f"file {refusal(root.relative(candidate)).rstrip('.')}")
    return root.relative(candidate)


def _tool_result(transcript: list[Message], tool_use_id: str) -> str:
    call = next((b for m in transcript for b in m.content
                 if isinstance(b, ToolUseBlock) and b.id == tool_use_id), None)
    result = next((b for m in transcript for b in m.content
                   if isinstance(b, ToolResultBlock) and b.tool_use_id == tool_use_id), None)
    if result is None:
        raise ArgumentProblem(f"no tool result with tool_use_id '{tool_use_id}' in this session")
    what = f"{call.name} {json.dumps(call.input)}" if call is not None else "a tool call"
    return f"## Result of {what}\n{result.content}"


def _message(transcript: list[Message], message_id: str) -> str:
    message = next((m for m in transcript if m.id == message_id), None)
    if message is None:
        raise ArgumentProblem(f"no message with message_id '{message_id}' in this session")
    text = message.text() or "\n".join(b.content for b in message.content
                                        if isinstance(b, ToolResultBlock))
    return f"## Earlier message ({message.role}, {message_id})\n{text}"


def worker_prompt(model: str, task_summary: str, tools: list[str],
                  output_schema: dict[str, object] | None, *, from_user: bool = False) -> str:
    """The worker's system prompt (spec 000 §6.5, in our words); ``from_user``: the user
    delegated directly (``/delegate``), so there is no planner, and the user reads the answer."""
    giver = "the user" if from_user else "the planner"
    schema = "" if output_schema is None else (
        "- Your final answer must be JSON only (no prose, no code fence) matching this "
        f"JSON Schema:\n{json.dumps(output_schema, indent=2)}\n")
    opening = "You are a worker: the user handed you one task directly. " if from_user else \
        'You are a worker: another agent (the "planner") gave you one sub-task. '
    return (
        f"{opening}You are running on model {model}.\n\n"
        f"{task_summary}\n\n"
        "Guidelines:\n"
        "- Do only this task; do not pursue tangents.\n"
        "- If you need information you were not given, fetch it with your tools.\n"
        "- You cannot ask questions while you work. If you cannot finish without information "
        f"only {giver} has, call {REQUEST_CONTEXT} with what is missing; that ends your work.\n"
        f"- Be terse: {giver} reads your final answer and uses it.\n"
        f"{schema}"
        "- Stop when the task is done; do not add a summary unless asked.\n\n"
        f"Available tools: {', '.join(tools) or 'none'}"
    )
