"""Building the handoff envelope of one delegation from what the engine knows at its start."""

from __future__ import annotations

from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.delegation.contract import DelegateCall
from switchman.engine.delegation.envelope import (
    BudgetContext,
    CapabilityScope,
    HandoffEnvelope,
    HandoffInput,
    HandoffProfile,
    HandoffReason,
    HandoffSource,
    HandoffTarget,
    ModelPolicySnapshot,
    TraceIds,
    intent_of,
)
from switchman.engine.ids import new_id
from switchman.engine.messages import ZERO_USD
from switchman.engine.profiles.profile import ActiveProfile
from switchman.engine.sessions.live import LiveSession
from switchman.engine.sessions.manager import SessionManager
from switchman.engine.tools.registry import ToolContext


def handoff_envelope(sessions: SessionManager, planner: LiveSession, context: ToolContext,
                     tool_use_id: str, call: DelegateCall, worker: ActiveProfile, *,
                     worker_tier: str,
                     tools: frozenset[str], dropped: list[str], withheld: dict[str, str],
                     approval_required: bool,
                     timeout_seconds: float, max_concurrent_workers: int,
                     reason: HandoffReason = "planner_delegate") -> HandoffEnvelope:
    """The envelope for a worker about to start on ``worker_tier`` (``call.tier`` capped at
    the tier floor); its session id is set once it exists."""
    source_profile = sessions.profile(planner)
    chain = sessions.router.chain(str(planner.folder))
    policy = worker.profile.model_policy
    tiers = {}
    for tier in TIER_NAMES:
        model = policy.tiers.get(tier) or chain.resolve_tier(tier)
        if model:
            tiers[tier] = model
    info = sessions.store.session(planner.id)
    handoff_id = new_id()
    return HandoffEnvelope(
        id=handoff_id, created_at=sessions.clock.now(), reason=reason, intent=intent_of(call.task),
        source=HandoffSource(session_id=planner.id, turn_id=context.turn_id,
                             tool_use_id=tool_use_id, model=context.model,
                             profile=HandoffProfile(source_profile.name,
                                                    source_profile.resolved_from)),
        target=HandoffTarget(session_id=None, tier=call.tier, worker_tier=worker_tier,
                             profile=HandoffProfile(worker.name, worker.resolved_from)),
        input=HandoffInput(task=call.task, context=call.context,
                           output_schema=call.output_schema),
        capability_scope=CapabilityScope(tools=sorted(tools), dropped_tools=list(dropped),
                                         withheld_tools=dict(withheld),
                                         approval=worker.profile.approval.value,
                                         approval_required=approval_required),
        model_policy=ModelPolicySnapshot(tier=call.tier, profile_model=policy.model,
                                         tiers=tiers, reasoning_effort=policy.effort),
        budget=BudgetContext(max_tokens=call.max_tokens, timeout_seconds=timeout_seconds,
                             max_concurrent_workers=max_concurrent_workers,
                             planner_session_cost_usd=info.cost_usd if info else ZERO_USD,
                             cost_today_usd=sessions.cost_today()),
        trace=TraceIds(trace_id=context.turn_id, handoff_id=handoff_id,
                       parent_session_id=planner.id, parent_turn_id=context.turn_id,
                       parent_tool_use_id=tool_use_id))
