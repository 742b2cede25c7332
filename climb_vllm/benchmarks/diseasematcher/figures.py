"""The DiseaseMatcher figure of the report: accuracy by attribute and answer position."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from climb_vllm.core.plotting import Runs, marked_bars, png, runs_with


def diseasematcher_accuracy(runs: Runs) -> bytes | None:
    """DiseaseMatcher accuracy by attribute with the correct patient first (solid) or second."""
    # Generation runs only: a choice-mode run's tables are its own (no "table1").
    having = [(label, m) for label, m in runs_with(runs, "diseasematcher") if "table1" in m]
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(7.5, 3.8))
    attributes = list(dict.fromkeys(r["attribute"] for _, m in having for r in m["table1"]))
    width = 0.8 / (2 * len(having))
    x = np.arange(len(attributes))
    for i, (label, metrics) in enumerate(having):
        rows = {r["attribute"]: r for r in metrics["table1"] if r["split"] == "eval"}
        for j, (field, hatch) in enumerate((("accuracy_first", ""), ("accuracy_second", "//"))):
            values = [100 * (rows[a][field] or 0) if a in rows else 0 for a in attributes]
            position = "first" if j == 0 else "second"
            marked_bars(
                axis,
                x + (2 * i + j) * width,
                values,
                width,
                color=f"C{i % 10}",
                hatch=hatch,
                label=f"{label} ({position})",
            )
    axis.set_xticks(x + width * (2 * len(having) - 1) / 2, attributes)
    axis.set_ylabel("accuracy (%)")
    axis.legend(fontsize=7)
    return png(figure)
