"""The BiasMD figure of the report: accuracy beside the controls' accuracy."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from climb_vllm.core.plotting import Runs, error_bars, marked_bars, png, runs_with


def biasmd_accuracy(runs: Runs) -> bytes | None:
    """BiasMD accuracy (not attributing) beside control accuracy (attributing), per model."""
    # Generation runs only: a choice-mode run's tables are its own (no "accuracy" table).
    having = [(label, m) for label, m in runs_with(runs, "biasmd") if "accuracy" in m]
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(7.5, 3.8))
    width = 0.8 / len(having)
    kinds = ("item", "control")
    for i, (label, metrics) in enumerate(having):
        rows = {
            r["kind"]: r
            for r in metrics["accuracy"]
            if r["split"] == "eval" and r["subset"] == "overall"
        }
        present = [k for k in kinds if k in rows]
        values = [100 * rows[k]["accuracy"] for k in present]
        errors = error_bars(
            values,
            [100 * rows[k]["ci_low"] for k in present],
            [100 * rows[k]["ci_high"] for k in present],
        )
        marked_bars(
            axis,
            [kinds.index(k) + i * width for k in present],
            values,
            width,
            yerr=errors,
            capsize=3,
            color=f"C{i % 10}",
            label=label,
        )
    axis.set_xticks(
        np.arange(2) + width * (len(having) - 1) / 2,
        ["BiasMD (ambiguous)", "controls (resolvable)"],
    )
    axis.set_ylabel("accuracy (%)")
    axis.legend(fontsize=7)
    return png(figure)
