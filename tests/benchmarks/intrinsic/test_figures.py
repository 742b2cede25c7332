"""The intrinsic figures draw what a run holds, including levels without a corrected value."""

from __future__ import annotations

from climb_vllm.benchmarks.intrinsic.figures import assoc_mad_by_level


def test_levels_without_a_corrected_value_are_drawn_without_an_interval() -> None:
    # One name per group (--top-k 1): the corrected AssocMAD cannot be estimated at every
    # level; the paper's value is drawn there, with no interval of the corrected one.
    rows = [
        {"level": "L1", "assoc_mad": 0.2, "corrected": 0.1, "ci_low": 0.05, "ci_high": 0.3},
        {"level": "L2", "assoc_mad": 0.3, "corrected": None, "ci_low": None, "ci_high": None},
        {"level": "L3", "assoc_mad": 0.4, "corrected": None, "ci_low": 0.1, "ci_high": 0.9},
        {"level": "L4", "assoc_mad": None, "corrected": None},
        {"level": "L5", "assoc_mad": 0.5},
    ]
    drawn = assoc_mad_by_level([("model", {"intrinsic": {"table1": rows}})])
    assert drawn is not None and drawn.startswith(b"\x89PNG")
