"""The report's figures (matplotlib, rendered off-screen to PNG bytes), one model per colour.

Every function takes ``runs``: (model label, metrics) pairs where metrics maps a benchmark to
the contents of its ``results/<benchmark>/metrics.json``; models without that benchmark are left
out, and a figure with no data at all returns None. Error bars are the 95% intervals of the
tables, with the resampling unit named in each caption of the report.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # off-screen: the report is written without a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

Runs = Sequence[tuple[str, dict[str, Any]]]
LEVELS = ("L1", "L2", "L3", "L4", "L5")


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def _having(runs: Runs, benchmark: str) -> list[tuple[str, dict[str, Any]]]:
    return [(label, m[benchmark]) for label, m in runs if benchmark in m]


def _errors(points: Sequence[float], lows: Sequence[Any], highs: Sequence[Any]) -> np.ndarray:
    """Asymmetric error bar lengths; a missing interval draws none (and never a negative bar)."""
    p = np.asarray(points, dtype=float)
    lo = np.asarray([np.nan if v is None else v for v in lows], dtype=float)
    hi = np.asarray([np.nan if v is None else v for v in highs], dtype=float)
    bars: np.ndarray = np.nan_to_num(np.clip(np.vstack([p - lo, hi - p]), 0, None))
    return bars


def assoc_mad_by_level(runs: Runs) -> bytes | None:
    """AssocMAD per ICD level and model, paper scores (solid) and calibrated (dashed)."""
    having = _having(runs, "intrinsic")
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(7.5, 4))
    x = np.arange(len(LEVELS))
    for i, (label, metrics) in enumerate(having):
        color = f"C{i % 10}"
        for key, style, name in (("table1", "-", "paper"), ("calibrated_table1", "--", "calib.")):
            rows = [r for r in metrics.get(key, []) if r["level"] in LEVELS]
            if not rows:
                continue
            values = [r["assoc_mad"] for r in rows]
            axis.errorbar(
                x + (0.08 if style == "--" else 0) + 0.02 * i,
                values,
                yerr=_errors(values, [r.get("ci_low") for r in rows],
                             [r.get("ci_high") for r in rows]),
                fmt="o" + style, color=color, capsize=3, label=f"{label} ({name})",
            )  # fmt: skip
    axis.set_xticks(x, LEVELS)
    axis.set_xlabel("ICD-10-CM level (L1 chapter ... L5 full code)")
    axis.set_ylabel("AssocMAD (sex-neutral codes)")
    axis.legend(fontsize=7)
    axis.grid(alpha=0.3)
    return _png(figure)


def chapter_heatmap(runs: Runs) -> bytes | None:
    """Each chapter's group score relative to the chapter mean (log2 of s/mu), one panel per
    model; log2 so that twice and half as likely are equally far from 0."""
    having = [(label, m) for label, m in _having(runs, "intrinsic") if m.get("chapters")]
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
        axis.set_yticks(range(len(chapters)), chapters, fontsize=7)
        axis.set_xticks(
            range(len(groups)), [f"{s[0]}-{e[:5]}" for s, e in groups], rotation=60, fontsize=7
        )
        axis.set_title(label, fontsize=8)
        axis.set_ylabel("ICD chapter")
    if image is not None:
        figure.colorbar(
            image, ax=axes[0].tolist(), label="log2 s(chapter, group) / mean over groups"
        )
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def sex_preference(runs: Runs) -> bytes | None:
    """Correct sex preference on female-only and male-only codes per model (%), 50% = chance."""
    having = _having(runs, "intrinsic")
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(7.5, 3.8))
    width = 0.8 / len(having)
    for i, (label, metrics) in enumerate(having):
        rows = [r for r in metrics.get("table3", []) if r["share"] is not None]
        values = [100 * r["share"] for r in rows]
        errors = _errors(
            values,
            [None if r["ci_low"] is None else 100 * r["ci_low"] for r in rows],
            [None if r["ci_high"] is None else 100 * r["ci_high"] for r in rows],
        )
        positions = np.arange(len(rows)) + i * width
        axis.bar(positions, values, width, yerr=errors, capsize=3, label=label, color=f"C{i % 10}")
        axis.set_xticks(np.arange(len(rows)) + width * (len(having) - 1) / 2,
                        [r["list"] for r in rows])  # fmt: skip
    axis.axhline(50, color="grey", linestyle=":", label="chance")
    axis.set_ylabel("codes whose own sex scores higher (%)")
    axis.set_ylim(0, 100)
    axis.legend(fontsize=7)
    return _png(figure)


def extrinsic_deltas(runs: Runs) -> bytes | None:
    """Recall change per counterfactual value with its interval; grey band = placebo interval."""
    having = [(label, m) for label, m in _having(runs, "extrinsic") if m.get("bias")]
    if not having:
        return None
    keys = list(dict.fromkeys(f"{r['attribute']}: {r['value']}" for _, m in having
                              for r in m["bias"]))  # fmt: skip
    figure, axis = plt.subplots(figsize=(7.5, 1.2 + 0.35 * len(keys)))
    for i, (label, metrics) in enumerate(having):
        rows = metrics["bias"]
        y = np.array([keys.index(f"{r['attribute']}: {r['value']}") for r in rows]) + 0.15 * i
        values = [100 * r["bias"] for r in rows]
        errors = _errors(values, [100 * r["ci_low"] for r in rows],
                         [100 * r["ci_high"] for r in rows])  # fmt: skip
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
    return _png(figure)


def diseasematcher_accuracy(runs: Runs) -> bytes | None:
    """DiseaseMatcher accuracy by attribute with the correct patient first (solid) or second."""
    having = _having(runs, "diseasematcher")
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
            axis.bar(x + (2 * i + j) * width, values, width, color=f"C{i % 10}", hatch=hatch,
                     label=f"{label} ({'first' if j == 0 else 'second'})")  # fmt: skip
    axis.set_xticks(x + width * (2 * len(having) - 1) / 2, attributes)
    axis.set_ylabel("accuracy (%)")
    axis.set_ylim(0, 100)
    axis.legend(fontsize=7)
    return _png(figure)


def biasmd_accuracy(runs: Runs) -> bytes | None:
    """BiasMD accuracy (not attributing) beside control accuracy (attributing), per model."""
    having = _having(runs, "biasmd")
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
        errors = _errors(values, [100 * rows[k]["ci_low"] for k in present],
                         [100 * rows[k]["ci_high"] for k in present])  # fmt: skip
        axis.bar([kinds.index(k) + i * width for k in present], values, width, yerr=errors,
                 capsize=3, color=f"C{i % 10}", label=label)  # fmt: skip
    axis.set_xticks(np.arange(2) + width * (len(having) - 1) / 2,
                    ["BiasMD (ambiguous)", "controls (resolvable)"])  # fmt: skip
    axis.set_ylabel("accuracy (%)")
    axis.set_ylim(0, 100)
    axis.legend(fontsize=7)
    return _png(figure)


#: (key, title, caption) of every figure, in report order.
FIGURES = (
    ("assoc_mad", assoc_mad_by_level, "AssocMAD by ICD level per model (paper scores solid, "
     "calibrated dashed). Bars: 95% CI, bootstrap over names within groups."),
    ("chapters", chapter_heatmap, "Group scores by ICD chapter relative to the chapter's mean "
     "over the 8 groups, log2 (red: the group's names are more likely; raw scores, all codes)."),
    ("sex_preference", sex_preference, "Correctness of sex preference on sex-specific codes. "
     "Bars: 95% CI, bootstrap over names within groups; dotted: chance."),
    ("extrinsic", extrinsic_deltas, "CLIMB extrinsic recall change per counterfactual. Bars: 95% "
     "CI, bootstrap over cases; shaded: the placebo variants' intervals (noise floor)."),
    ("diseasematcher", diseasematcher_accuracy, "DiseaseMatcher accuracy by attribute with the "
     "correct patient first (plain) or second (hatched), authors' split."),
    ("biasmd", biasmd_accuracy, "BiasMD accuracy beside control accuracy, authors' split. Bars: "
     "95% CI, bootstrap over items."),
)  # fmt: skip
