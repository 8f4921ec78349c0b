"""Asking once before a delegation whose worker may change the workspace (spec 003, 001 §13).

A worker that may write or execute — its tool set holds a tool classed
*write* or *execute* — is approved by the user before it starts, through the
same :class:`ApprovalPolicy` as any other tool: one ``switchman/approve``
request for the tool ``delegate``, showing the tier, the task and the write
and execute tools the worker will have. The tier is the one the worker will
run on: when the tier floor lowers the one asked for (``deep`` from a balanced
planner), the question names the lower tier and says it was capped
(``requested_tier``). "Always" is remembered for ``delegate`` in the workspace
like any tool's trust. A read-only worker starts without asking. The worker's
own calls still go through the policy one by one (with ``is_worker`` set, so
their "always" is not remembered).
"""

from __future__ import annotations

from collections.abc import Iterable

from switchman.engine.delegation.contract import DELEGATE, DelegateCall
from switchman.engine.ids import new_id
from switchman.engine.routing.tiers import tier_rank
from switchman.engine.tools.approval import ApprovalRequest, ToolClass
from switchman.engine.tools.registry import ToolContext
from switchman.engine.tools.toolbox import TOOL_CLASSES


def changing_tools(tools: Iterable[str]) -> list[str]:
    """The write and execute tools among ``tools``, sorted (other tools are reads)."""
    return sorted(n for n in tools if TOOL_CLASSES.get(n, ToolClass.READ) is not ToolClass.READ)


def floored_tier(tier: str, floor: str | None) -> str:
    """``tier`` capped at the tier floor ``floor`` (None: no floor), as the worker's routing
    caps it."""
    return floor if floor is not None and tier_rank(tier) > tier_rank(floor) else tier


def floor_note(tier: str, floor: str | None) -> str:
    """`` (deep, capped by the tier floor)`` when the floor lowers ``tier``; else nothing."""
    return f" ({tier}, capped by the tier floor)" if floored_tier(tier, floor) != tier else ""


def delegation_request(planner: ToolContext, call: DelegateCall, tools: Iterable[str],
                       tier_floor: str | None = None, model: str | None = None,
                       routed_by: str | None = None, asked_again: str | None = None,
                       tool_use_id: str | None = None) -> ApprovalRequest | None:
    """The approval request for starting a worker with ``tools`` (on ``call.tier`` capped at
    ``tier_floor``, the planner's tier when the floor is on, and on ``model``, chosen by
    ``routed_by`` when its tier did not choose it; ``asked_again``: why an answered question
    is asked again; ``tool_use_id``: the delegation's id); None when it only reads."""
    changing = changing_tools(tools)
    if not changing:
        return None
    executes = any(TOOL_CLASSES[n] is ToolClass.EXECUTE for n in changing)
    writes = any(TOOL_CLASSES[n] is ToolClass.WRITE for n in changing)
    may = " and ".join(what for what, yes in (("change files", writes),
                                              ("run commands", executes)) if yes)
    tier, capped = floored_tier(call.tier, tier_floor), floor_note(call.tier, tier_floor)
    return ApprovalRequest(
        id=new_id(), workspace=planner.workspace, session_id=planner.session_id,
        turn_id=planner.turn_id, tool=DELEGATE,
        tool_class=ToolClass.EXECUTE if executes else ToolClass.WRITE,
        title=f"Delegate to a {tier} worker{capped} that may {may}", tier=tier,
        requested_tier=call.tier if capped else None, model=model, routed_by=routed_by,
        task=call.task, worker_tools=changing, asked_again=asked_again, tool_use_id=tool_use_id)
