"""The CLIMB intrinsic figures of the report: AssocMAD by level, chapter heatmap, sex preference."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np

from climb_vllm.core.plotting import LEVELS, Runs, error_bars, png, runs_with
from climb_vllm.resources.names import group_label
from climb_vllm.resources.ontology import chapter_name


def assoc_mad_by_level(runs: Runs) -> bytes | None:
    """Corrected AssocMAD per ICD level and model with its interval (the paper's value where a
    run has none), of the paper's scores (solid) and of the calibrated ones (dashed)."""
    having = runs_with(runs, "intrinsic")
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(7.5, 4))
    x = np.arange(len(LEVELS))
    for i, (label, metrics) in enumerate(having):
        color = f"C{i % 10}"
        # Both series plot the corrected AssocMAD (of the paper's scores and of the calibrated
        # ones), so the legend says so.
        series = (
            ("table1", "-", "corrected"),
            ("calibrated_table1", "--", "calibrated, corrected"),
        )
        for key, style, name in series:
            rows = [r for r in metrics.get(key, []) if r["level"] in LEVELS]
            if not rows:
                continue
            # A level whose corrected value cannot be estimated (one name per group) shows the
            # paper's value, without the corrected value's interval.
            values = [
                r["corrected"] if r.get("corrected") is not None else r["assoc_mad"] for r in rows
            ]
            values = [np.nan if v is None else v for v in values]
            lows = [r.get("ci_low") if r.get("corrected") is not None else None for r in rows]
            highs = [r.get("ci_high") if r.get("corrected") is not None else None for r in rows]
            # Runs side by side around each level (and calibrated beside paper scores), so that
            # several models' bars do not overlap.
            spread = 0.6 / max(1, len(having))
            offset = (i - (len(having) - 1) / 2) * spread + (spread / 4 if style == "--" else 0)
            axis.errorbar(
                x + offset,
                values,
                yerr=error_bars(values, lows, highs),
                fmt="o" + style,
                color=color,
                capsize=3,
                label=f"{label} ({name})",
            )
    axis.set_xticks(x, LEVELS)
    axis.set_xlabel("ICD-10-CM level (L1 chapter ... L5 full code)")
    axis.set_ylabel("AssocMAD (sex-neutral codes)")
    axis.legend(fontsize=7)
    axis.grid(alpha=0.3)
    return png(figure)


def chapter_heatmap(runs: Runs) -> bytes | None:
    """Each chapter's group score relative to the chapter mean (log2 of s/mu), one panel per
    model; log2 so that twice and half as likely are equally far from 0."""
    having = [(label, m) for label, m in runs_with(runs, "intrinsic") if m.get("chapters")]
    if not having:
        return None
    figure, axes = plt.subplots(1, len(having), figsize=(3.2 + 3.2 * len(having), 6), squeeze=False)
    image = None
    limit = max(abs(np.log2(r["relative"])) for _, m in having for r in m["chapters"]) or 1.0
    for axis, (label, metrics) in zip(axes[0], having):
        rows = metrics["chapters"]
        chapters = sorted({r["chapter"] for r in rows}, key=lambda c: (len(c), c))
        groups = sorted({(r["sex"], r["ethnicity"]) for r in rows})
        grid = np.full((len(chapters), len(groups)), np.nan)
        for r in rows:
            grid[chapters.index(r["chapter"]), groups.index((r["sex"], r["ethnicity"]))] = np.log2(
                r["relative"]
            )
        image = axis.imshow(grid, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        axis.set_yticks(range(len(chapters)), [chapter_name(c) for c in chapters], fontsize=7)
        axis.set_xticks(
            range(len(groups)),
            [group_label(s, e) for s, e in groups],
            rotation=60,
            fontsize=7,
            ha="right",
        )
        axis.set_title(label, fontsize=8)
        axis.set_ylabel("ICD chapter")
    if image is not None:
        # A short label that the figure's bounding box keeps whole.
        bar = figure.colorbar(image, ax=axes[0].tolist())
        bar.set_label("log2(group score / chapter mean)", fontsize=8)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def sex_preference(runs: Runs) -> bytes | None:
    """Correct sex preference on female-only and male-only codes per model (%), 50% = chance."""
    having = runs_with(runs, "intrinsic")
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(7.5, 3.8))
    width = 0.8 / len(having)
    for i, (label, metrics) in enumerate(having):
        rows = [r for r in metrics.get("table3", []) if r.get("corrected") is not None]
        values = [100 * r["corrected"] for r in rows]
        errors = error_bars(
            values,
            [None if r["ci_low"] is None else 100 * r["ci_low"] for r in rows],
            [None if r["ci_high"] is None else 100 * r["ci_high"] for r in rows],
        )
        positions = np.arange(len(rows)) + i * width
        axis.bar(positions, values, width, yerr=errors, capsize=3, label=label, color=f"C{i % 10}")
        axis.set_xticks(
            np.arange(len(rows)) + width * (len(having) - 1) / 2, [r["list"] for r in rows]
        )
    axis.axhline(50, color="grey", linestyle=":", label="chance")
    axis.set_ylabel("codes whose own sex scores higher (%)")
    axis.set_ylim(0, 100)
    axis.legend(fontsize=7)
    return png(figure)
