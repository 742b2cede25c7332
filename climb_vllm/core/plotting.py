"""What every report figure shares: matplotlib off-screen, PNG bytes, one model per colour.

Every figure function (in each benchmark's ``figures.py``) takes ``runs``: (model label,
metrics) pairs where metrics maps a benchmark to the contents of its
``results/<benchmark>/metrics.json``; models without that benchmark are left out, and a figure
with no data at all returns None. Error bars are the 95% intervals of the tables, with the
resampling unit named in each caption of the report.
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

__all__ = ["LEVELS", "Runs", "error_bars", "marked_bars", "plt", "png", "runs_with"]

#: (model label, that run's metrics per benchmark) pairs, the input of every report figure.
Runs = Sequence[tuple[str, dict[str, Any]]]
LEVELS = ("L1", "L2", "L3", "L4", "L5")


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def runs_with(runs: Runs, benchmark: str) -> list[tuple[str, dict[str, Any]]]:
    return [(label, m[benchmark]) for label, m in runs if benchmark in m]


def error_bars(points: Sequence[float], lows: Sequence[Any], highs: Sequence[Any]) -> np.ndarray:
    """Asymmetric error bar lengths; a missing interval draws none (and never a negative bar)."""
    p = np.asarray(points, dtype=float)
    lo = np.asarray([np.nan if v is None else v for v in lows], dtype=float)
    # An unbounded end (inf) draws no bar rather than one off the axis.
    lo[~np.isfinite(lo)] = np.nan
    hi = np.asarray([np.nan if v is None else v for v in highs], dtype=float)
    hi[~np.isfinite(hi)] = np.nan
    bars: np.ndarray = np.nan_to_num(np.clip(np.vstack([p - lo, hi - p]), 0, None))
    return bars


def marked_bars(axis: Any, x: Any, values: Sequence[float], width: float, **style: Any) -> Any:
    """Bars that stay visible at zero: each outlined in its colour and labelled with its value
    (a zero accuracy would otherwise draw nothing at all), on a percent axis from just below 0;
    a ``hatch`` in ``style`` draws the bar hatched in its colour on white."""
    color = style.pop("color")
    # A hatch is drawn in the edge colour: on a face of the same colour it would not show, so a
    # hatched series gets a white face (its legend entry then differs from the solid one's).
    face = "white" if style.get("hatch") else color
    bars = axis.bar(x, values, width, color=face, edgecolor=color, linewidth=1.5, **style)
    axis.bar_label(bars, fmt="%.0f", fontsize=7, padding=2)
    axis.set_ylim(-4, 108)
    axis.axhline(0, color="black", linewidth=0.6)
    return bars
