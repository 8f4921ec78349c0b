"""How often and how patiently a failed provider call is retried.

Retries have one owner, the turn (:mod:`.turn`): the SDKs are created with
``max_retries=0``. A failed call worth retrying (rate limit, overload, 5xx,
network, timeout) is tried again at most ``retries`` times, with exponential
backoff or the provider's ``Retry-After``, and never after a wait longer than
:data:`MAX_RETRY_WAIT_SECONDS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from switchman.engine.providers.errors import MAX_RETRY_WAIT_SECONDS, ProviderError

RETRIES_ENV = "SWITCHMAN_RETRIES"
RETRY_BASE_ENV = "SWITCHMAN_RETRY_BASE_SECONDS"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failed call is retried."""

    retries: int = 2
    base_seconds: float = 0.5

    @classmethod
    def from_environment(cls) -> RetryPolicy:
        """The policy, with ``SWITCHMAN_RETRIES`` / ``SWITCHMAN_RETRY_BASE_SECONDS`` applied."""
        return cls(int(os.environ.get(RETRIES_ENV, cls.retries)),
                   float(os.environ.get(RETRY_BASE_ENV, cls.base_seconds)))

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before retry ``attempt`` (0-based); None: do not retry."""
        if not error.retryable or attempt >= self.retries:
            return None
        wait = error.retry_after if error.retry_after is not None \
            else self.base_seconds * 2 ** attempt
        return wait if wait <= MAX_RETRY_WAIT_SECONDS else None
