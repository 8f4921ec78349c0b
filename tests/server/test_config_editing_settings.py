"""How long the daemon waits after a change before checking a config file."""

from __future__ import annotations

import pytest

from switchman.server.features.config_editing.feature import diagnostics_delay


@pytest.mark.parametrize(("environ", "options", "seconds"), [
    ({}, {}, 0.15),
    ({}, {"diagnostics_debounce_ms": 0}, 0.0),
    ({}, {"diagnostics_debounce_ms": 400}, 0.4),
    ({"SWITCHMAN_DIAGNOSTICS_DELAY_MS": "20"}, {"diagnostics_debounce_ms": 400}, 0.02),
    ({"SWITCHMAN_DIAGNOSTICS_DELAY_MS": "soon"}, {}, 0.15),
    ({}, {"diagnostics_debounce_ms": -5}, 0.0),
    ({}, {"diagnostics_debounce_ms": "nan"}, 0.15),
])
def test_the_env_var_wins_over_the_option_and_nonsense_means_the_default(
        environ: dict[str, str], options: dict[str, object], seconds: float) -> None:
    assert diagnostics_delay(environ, options) == pytest.approx(seconds)
