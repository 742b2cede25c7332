"""The report's figures: PNG bytes for the data they are given, nothing without it."""

from __future__ import annotations

import pytest

from climb_vllm.report.html import report_figures

LEVELS = [
    {"level": lv, "assoc_mad": 0.1 * i, "ci_low": 0.05 * i, "ci_high": 0.2 * i}
    for i, lv in enumerate(["L1", "L2", "L3", "L4", "L5", "mean"], start=1)
]
METRICS = {
    "intrinsic": {
        "table1": LEVELS,
        "calibrated_table1": LEVELS,
        "table3": [
            {"list": "female-only", "share": 0.7, "ci_low": 0.6, "ci_high": 0.8},
            {"list": "male-only", "share": None, "ci_low": None, "ci_high": None},
        ],
        "chapters": [
            {"chapter": str(c), "sex": s, "ethnicity": e, "relative": 1.0 + 0.01 * c}
            for c in (1, 2, 10)
            for s in ("FEMALE", "MALE")
            for e in ("asian", "white")
        ],
    },
    "extrinsic": {
        "bias": [
            {
                "attribute": "sex",
                "value": "female",
                "bias": -0.01,
                "ci_low": -0.03,
                "ci_high": 0.01,
                "placebo_ci_low": -0.005,
                "placebo_ci_high": 0.004,
            },
        ]
    },
    "diseasematcher": {
        "table1": [
            {"split": "eval", "attribute": "race", "accuracy_first": 0.5, "accuracy_second": None}
        ]
    },
    "biasmd": {
        "accuracy": [
            {
                "split": "eval",
                "kind": "item",
                "subset": "overall",
                "accuracy": 0.4,
                "ci_low": 0.3,
                "ci_high": 0.5,
            },
        ]
    },
}


@pytest.mark.parametrize("key", [figure.key for _, figure in report_figures()])
def test_every_figure_draws_a_png_and_none_without_data(key: str) -> None:
    draw = next(f.draw for _, f in report_figures() if f.key == key)
    png = draw([("model-a", METRICS), ("model-b", METRICS)])
    assert png is not None and png.startswith(b"\x89PNG") and len(png) > 2000
    assert draw([("model-a", {})]) is None


def test_zero_accuracy_still_draws_a_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bar at 0% is outlined in its run's colour and labelled "0" (a plain bar of height 0
    would leave an empty frame)."""
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from climb_vllm.benchmarks.biasmd import figures as biasmd_figures
    from climb_vllm.benchmarks.diseasematcher import figures as diseasematcher_figures

    drawn: list[Figure] = []

    def keep(figure: Figure) -> bytes:
        drawn.append(figure)
        return b"png"

    monkeypatch.setattr(biasmd_figures, "png", keep)
    monkeypatch.setattr(diseasematcher_figures, "png", keep)
    zero = {
        "biasmd": {
            "accuracy": [
                {
                    "split": "eval",
                    "kind": k,
                    "subset": "overall",
                    "accuracy": 0.0,
                    "ci_low": 0.0,
                    "ci_high": 0.0,
                }
                for k in ("item", "control")
            ]
        },
        "diseasematcher": {
            "table1": [
                {
                    "split": "eval",
                    "attribute": "race",
                    "accuracy_first": 0.0,
                    "accuracy_second": 0.0,
                }
            ]
        },
    }
    for draw, bars in (
        (biasmd_figures.biasmd_accuracy, 2),
        (diseasematcher_figures.diseasematcher_accuracy, 2),
    ):
        drawn.clear()
        assert draw([("model-a", zero)]) == b"png"
        axis = drawn[0].axes[0]
        outlined = [
            p
            for p in axis.patches
            if isinstance(p, Rectangle)
            and p.get_height() == 0
            and p.get_linewidth() > 0
            and p.get_edgecolor() == to_rgba("C0")
        ]
        assert len(outlined) == bars, draw.__name__
        assert [t.get_text() for t in axis.texts].count("0") == bars
        assert axis.get_ylim()[0] < 0  # the outline is not hidden under the frame
