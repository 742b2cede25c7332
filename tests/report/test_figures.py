"""The report's figures: PNG bytes for the data they are given, nothing without it."""

from __future__ import annotations

from typing import Any

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


def _captured(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, list[str]]]:
    """Every figure saved from now on, with what the PNG cuts off: the box of everything drawn
    (axis and tick labels, legend, colour-bar label) against the area kept, the figure or,
    when saved tight, everything drawn (read at save time, as closing the figure drops its
    renderer)."""
    from matplotlib.figure import Figure

    saved: list[tuple[Any, list[str]]] = []
    original = Figure.savefig

    def savefig(self: Figure, *args: Any, **kwargs: Any) -> Any:
        self.canvas.draw()
        renderer = self.canvas.get_renderer()  # type: ignore[attr-defined]
        kept = (
            self.get_tightbbox(renderer).transformed(self.dpi_scale_trans)
            if kwargs.get("bbox_inches") == "tight"
            else self.bbox
        )
        # Everything drawn (texts, ticks in view, legend, colour bar) against the area kept.
        drawn = self.get_tightbbox(renderer).transformed(self.dpi_scale_trans)
        cut = []
        if min(drawn.x0 - kept.x0, drawn.y0 - kept.y0) < -1:
            cut.append(f"drawn from {drawn.x0:.0f}, {drawn.y0:.0f} px")
        if max(drawn.x1 - kept.x1, drawn.y1 - kept.y1) > 1:
            cut.append(
                f"drawn to {drawn.x1:.0f}, {drawn.y1:.0f} px, kept {kept.x1:.0f}, {kept.y1:.0f}"
            )
        saved.append((self, cut))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


LONG = "a-model-label-as-long-as-a-hub-id/with-a-revision"


@pytest.mark.parametrize("key", [figure.key for _, figure in report_figures()])
def test_no_text_of_a_figure_is_cut_off(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every visible text (axis labels, tick labels, legend, colour-bar label) lies inside the
    area the PNG keeps: the figure, or everything drawn when it is saved tight."""
    saved = _captured(monkeypatch)
    draw = next(f.draw for _, f in report_figures() if f.key == key)
    assert draw([(LONG, METRICS), (LONG + "-2", METRICS)]) is not None
    ((_, cut),) = saved
    assert cut == [], cut


def test_each_legend_entry_plots_the_column_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The AssocMAD figure's "(corrected)" series is Table 1's corrected column and its
    "(calibrated, corrected)" series the calibrated table's; DiseaseMatcher's "(first)" bars
    are the correct-first accuracy and "(second)" the correct-second one."""
    from matplotlib.patches import Rectangle

    from climb_vllm.benchmarks.diseasematcher.figures import diseasematcher_accuracy
    from climb_vllm.benchmarks.intrinsic.figures import assoc_mad_by_level

    def levels(scale: float) -> list[dict[str, Any]]:
        return [
            {"level": lv, "assoc_mad": 0.9, "corrected": scale * i, "ci_low": 0.0, "ci_high": 1.0}
            for i, lv in enumerate(["L1", "L2", "L3", "L4", "L5", "mean"], start=1)
        ]

    metrics = {"intrinsic": {"table1": levels(0.1), "calibrated_table1": levels(0.03)}}
    saved = _captured(monkeypatch)
    assert assoc_mad_by_level([("m", metrics)]) is not None
    axis = saved[-1][0].axes[0]
    handles, labels = axis.get_legend_handles_labels()
    series = dict(zip(labels, handles))
    assert set(series) == {"m (corrected)", "m (calibrated, corrected)"}
    for label, scale in (("m (corrected)", 0.1), ("m (calibrated, corrected)", 0.03)):
        line = series[label][0]  # an errorbar container's data line
        assert list(line.get_ydata()) == pytest.approx([scale * i for i in range(1, 6)]), label

    table = [{"split": "eval", "attribute": "race", "accuracy_first": 0.2, "accuracy_second": 0.7}]
    assert diseasematcher_accuracy([("m", {"diseasematcher": {"table1": table}})]) is not None
    axis = saved[-1][0].axes[0]
    handles, labels = axis.get_legend_handles_labels()
    for label, handle in zip(labels, handles):
        heights = [p.get_height() for p in handle.patches if isinstance(p, Rectangle)]
        expected = 20.0 if label.endswith("(first)") else 70.0
        assert heights == pytest.approx([expected]), label
    # The hatched series' legend entry differs from the solid one's (a white face).
    faces = [tuple(p.get_facecolor()) for p in axis.get_legend().get_patches()]
    assert len(set(faces)) == len(faces) == 2


def test_the_heatmap_names_groups_in_plain_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from climb_vllm.benchmarks.intrinsic.figures import chapter_heatmap

    saved = _captured(monkeypatch)
    assert chapter_heatmap([("m", METRICS)]) is not None
    ticks = [t.get_text() for t in saved[-1][0].axes[0].get_xticklabels()]
    assert ticks and all(t != t.upper() for t in ticks), ticks
    assert "Asian and Pacific Islander women" in ticks or "Asian women" in ticks, ticks
