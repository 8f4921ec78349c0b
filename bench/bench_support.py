"""What the bench scripts share; not a benchmark itself (run the ``bench_*.py`` scripts).

* Importing it puts the checkout on the import path, so the scripts that reuse the test
  suite's fake provider and clients (``tests.support``) run as
  ``.venv/bin/python bench/bench_daemon.py`` as well as with ``PYTHONPATH=.`` in front.
* :func:`at_least` and :func:`between`: argument types that refuse a value the script
  cannot use (``--runs 0``) with argparse's usage message, before anything is started.
* :func:`machine`: the line each script prints first (Python, CPUs, load average), so a
  figure can be read against how busy the machine was.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(1, str(REPO))  # after bench/ itself, which Python puts first


def at_least(low: int) -> Callable[[str], int]:
    """An argparse type: a whole number, ``low`` or more."""

    def whole_number(text: str) -> int:
        value = int(text)  # a ValueError is argparse's "invalid whole_number value"
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {low} or more, not {value}")
        return value

    return whole_number


def between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number from ``low`` to ``high`` (both included; ``math.inf``:
    no upper bound)."""

    def number(text: str) -> float:
        value = float(text)  # a ValueError is argparse's "invalid number value"
        if not low <= value <= high:  # a NaN is refused too
            bounds = f"{low:g} or more" if high == math.inf else f"from {low:g} to {high:g}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, not {text}")
        return value

    return number


def machine() -> str:
    """Python's version, the CPUs and the load average, for the first line of a report."""
    return (f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    raise SystemExit("bench_support.py is shared by the bench scripts and measures nothing; "
                     "run one of bench/bench_*.py (see docs/performance.md)")
