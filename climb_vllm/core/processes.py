"""How many worker processes one step may start.

A step that fans work out to processes (grading many answers) asks :func:`process_budget`. A
caller that already runs such steps side by side in several processes (the report recomputing
runs) sets :data:`VARIABLE` to 1 in its workers' environment, so that they do not each start a
pool of their own.
"""

from __future__ import annotations

import os

#: Environment variable: the most worker processes a step may start (unset: one per usable CPU).
VARIABLE = "CLIMB_VLLM_PROCESSES"


def process_budget() -> int:
    """The worker processes a step may start: :data:`VARIABLE` if set, else the usable CPUs."""
    value = os.environ.get(VARIABLE, "").strip()
    if value.isdigit() and int(value) >= 1:
        return int(value)
    return len(os.sched_getaffinity(0))
