"""How well did a turn go? The heuristic v1 rubric, as a pure function of evidence.

Evidence arrives over time (spec 001 §12, late-arriving scores): the turn's
own end, then the user's next action, explicit feedback, the planner's
delegations. The store keeps the evidence, not just a number, and
recomputes the score from it each time something new is known, so the rubric
can change without losing what was observed.

Rubric (documented for users in docs/routing.md):

* how the turn ended: completed 0.7, cancelled 0.3, failed 0.0;
* each tool call that returned an error: -0.1 (at most -0.3), except a ``delegate`` call
  whose worker ran and failed, which counts as a failed delegation (below) only;
* the user's next action: moving on to a different message +0.1, keeping the
  model after a suggestion (``/route ignore``) +0.2; re-sending the same
  message, re-sending it to another model with ``@alias``, ``/route override`` or changing the
  model with ``/model`` right away caps the score at 0.1;
* a planner's delegations: -0.3 times the share of workers that failed (only
  the workers' success flags, never their scores: no double counting);
* explicit feedback decides: 👍 is 1.0, 👎 is 0.0.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Iterable, Sequence

import msgspec

from switchman.engine.messages import AttachmentBlock, Block, ImageBlock

BASE_SCORE = {"completed": 0.7, "cancelled": 0.3}
TOOL_ERROR_PENALTY = 0.1
MAX_TOOL_PENALTY = 0.3
DELEGATION_PENALTY = 0.3
REJECTED_CAP = 0.1


class NextAction(enum.StrEnum):
    """What the user did after a turn, as far as it says something about the answer."""

    MOVED_ON = "moved_on"
    """Sent a different message."""
    DISMISSED = "dismissed"
    """Kept this model against a pattern suggestion (``/route ignore``)."""
    RESENT = "resent"
    """Sent the same message again."""
    REROUTED = "rerouted"
    """Sent the same message again to a different model with ``@alias``."""
    OVERRIDDEN = "overridden"
    """Ran the turn again on the suggested model (``/route override``)."""
    MODEL_CHANGED = "model_changed"
    """Chose another model with ``/model`` before sending anything else."""


POSITIVE = {NextAction.MOVED_ON: 0.1, NextAction.DISMISSED: 0.2}


class Evidence(msgspec.Struct, frozen=True, kw_only=True):
    """Everything known about how one turn went."""

    status: str
    tool_errors: int = 0
    next_action: NextAction | None = None
    feedback: int | None = None
    """+1 (👍), -1 (👎) or None."""
    delegations: int = 0
    delegations_failed: int = 0


def success_score(evidence: Evidence) -> float:
    """The turn's success score in [0, 1] under the v1 rubric."""
    if evidence.feedback is not None:
        return 1.0 if evidence.feedback > 0 else 0.0
    score = BASE_SCORE.get(evidence.status, 0.0)
    score -= min(MAX_TOOL_PENALTY, TOOL_ERROR_PENALTY * evidence.tool_errors)
    if evidence.delegations:
        score -= DELEGATION_PENALTY * evidence.delegations_failed / evidence.delegations
    action = evidence.next_action
    if action is not None and action not in POSITIVE:
        score = min(score, REJECTED_CAP)
    elif action is not None and evidence.status == "completed":
        score += POSITIVE[action]
    return round(min(1.0, max(0.0, score)), 6)


def next_action(previous_hash: str, previous_model: str, message_hash: str,
                rerouted_to: str | None, *, continuation: bool = False) -> NextAction:
    """Classify a new message against the turn before it in the same session.

    The same message again counts against the previous answer, whether re-sent
    as it was or with ``@alias`` naming another model (``rerouted_to``), unless it
    is a ``continuation`` (:func:`is_continuation`: "continue" after an answer that
    stopped, "yes" to a second question) sent to the same model: that is moving on.
    """
    rerouted = rerouted_to is not None and rerouted_to != previous_model
    if message_hash != previous_hash or (continuation and not rerouted):
        return NextAction.MOVED_ON
    return NextAction.REROUTED if rerouted else NextAction.RESENT


_WORDS = re.compile(r"[^\W_]+", re.UNICODE)

CONTINUATION_WORDS = frozenset((
    "continue", "go", "on", "ahead", "keep", "going", "proceed", "next", "more",
    "yes", "yeah", "yep", "y", "ok", "okay", "k", "sure", "please", "thanks", "thank",
    "you", "and", "then"))
"""Words of a reply that only says "go on" or "yes"."""
CONTINUATION_MAX_WORDS = 5


def is_continuation(text: str) -> bool:
    """Whether a message only tells the model to go on or says yes ("continue",
    "yes please", "ok, go ahead"): sent twice in a row, it answers two different
    answers, so the second is not the first re-sent. A short request ("fix it")
    is not: sent again, it is asked again."""
    words = _WORDS.findall(text.lower())
    return 0 < len(words) <= CONTINUATION_MAX_WORDS and CONTINUATION_WORDS.issuperset(words)


def message_hash(text: str, attached: Sequence[str] = ()) -> str:
    """A short digest of a message, equal for the same words in the same order with the
    same attachments (``attached``: :func:`attached_keys`); without any, of the words alone."""
    normalised = " ".join(_WORDS.findall(text.lower()))
    for key in sorted(attached):
        normalised += "\0" + key
    return hashlib.blake2b(normalised.encode(), digest_size=12).hexdigest()


def attached_keys(blocks: Iterable[Block]) -> tuple[str, ...]:
    """What a message attached, for :func:`message_hash`: each file or selection (its path and
    lines, not its text: the same request about a file the answer edited is still the same
    request) and image (a digest of its data). "Explain this" about another selection is
    another request, not the same one re-sent."""
    keys = []
    for block in blocks:
        if isinstance(block, AttachmentBlock):
            keys.append(f"{block.kind}:{block.path}:{block.start_line}-{block.end_line}")
        elif isinstance(block, ImageBlock):
            digest = hashlib.blake2b(block.data.encode(), digest_size=12).hexdigest()
            keys.append(f"image:{digest}")
    return tuple(keys)
