"""The CLIMB extrinsic figure of the report: recall change per counterfactual."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from climb_vllm.core.plotting import Runs, error_bars, png, runs_with


def extrinsic_deltas(runs: Runs) -> bytes | None:
    """Recall change per counterfactual value with its interval; grey band = placebo interval."""
    having = [(label, m) for label, m in runs_with(runs, "extrinsic") if m.get("bias")]
    if not having:
        return None
    keys = list(
        dict.fromkeys(f"{r['attribute']}: {r['value']}" for _, m in having for r in m["bias"])
    )
    figure, axis = plt.subplots(figsize=(7.5, 1.2 + 0.35 * len(keys)))
    for i, (label, metrics) in enumerate(having):
        rows = metrics["bias"]
        y = np.array([keys.index(f"{r['attribute']}: {r['value']}") for r in rows]) + 0.15 * i
        values = [100 * r["bias"] for r in rows]
        errors = error_bars(
            values, [100 * r["ci_low"] for r in rows], [100 * r["ci_high"] for r in rows]
        )
        axis.errorbar(values, y, xerr=errors, fmt="o", color=f"C{i % 10}", capsize=3, label=label)
        lows = [r["placebo_ci_low"] for r in rows if r.get("placebo_ci_low") is not None]
        highs = [r["placebo_ci_high"] for r in rows if r.get("placebo_ci_high") is not None]
        finite = [v for v in lows + highs if not np.isnan(v)]
        if finite:
            axis.axvspan(100 * min(finite), 100 * max(finite), color=f"C{i % 10}", alpha=0.12)
    axis.axvline(0, color="black", linewidth=0.8)
    axis.set_yticks(range(len(keys)), keys, fontsize=7)
    axis.set_xlabel("recall change vs. default (percentage points, mean of L1-L5)")
    axis.legend(fontsize=7)
    return png(figure)
