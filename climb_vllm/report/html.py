"""One report over several run directories: a self-contained HTML page, Markdown and CSV.

Each run's results are recomputed from its records first (so the report never shows stale
numbers), then every registered benchmark's tables are stacked over the runs (one row per model,
in the papers' layouts), its figures drawn, and each manifest's provenance listed. The HTML
embeds its images as data URIs and loads nothing from the network.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
from pathlib import Path
from typing import Any

import polars as pl

from climb_vllm.benchmarks.base import ReportFigure, ReportTable
from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.core.errors import UserError
from climb_vllm.core.results import to_markdown
from climb_vllm.report.runs import RunView, load_runs


def report_tables() -> list[tuple[str, ReportTable]]:
    """(benchmark, table) of every registered benchmark, in report order: the CLIMB paper's
    tables, then the HIVE paper's, then the extras."""
    tables = [(name, t) for name, b in REGISTRY.items() for t in b.report_tables()]
    return sorted(tables, key=lambda pair: pair[1].rank)


def report_figures() -> list[ReportFigure]:
    """Every registered benchmark's figures, in report order."""
    return sorted((f for b in REGISTRY.values() for f in b.figures()), key=lambda f: f.rank)


def stacked_tables(runs: list[RunView]) -> dict[tuple[str, str], pl.DataFrame]:
    """Every report table stacked over the runs, with the runs' labels as ``Model``."""
    out: dict[tuple[str, str], pl.DataFrame] = {}
    for benchmark, table in report_tables():
        key = table.key
        frames = []
        for run in runs:
            path = run.root / "results" / benchmark / f"{key}.csv"
            if benchmark in run.benchmarks and path.is_file():
                frame = pl.read_csv(path, infer_schema_length=None)
                labelled = frame.drop("Model", strict=False).select(
                    pl.lit(run.label).alias("Model"), pl.all()
                )
                frames.append(labelled)
        if frames:
            out[(benchmark, key)] = pl.concat(frames, how="diagonal_relaxed")
    return out


def provenance(run: RunView) -> list[dict[str, str]]:
    """One row per benchmark of a run: what produced its records."""
    rows = []
    for benchmark in run.benchmarks:
        section = run.manifest["benchmarks"][benchmark]
        config = section.get("config", {})
        engine = section.get("engine", {})
        datasets = section.get("datasets", {})
        icd = datasets.get("icd10cm", {}).get("release") or section.get("icd", {}).get("release")
        names = datasets.get("names", {})
        prompt = section.get("prompt_template", "")
        packages = section.get("packages", {})
        rows.append(
            {
                "benchmark": benchmark,
                "model": str(config.get("model")),
                "revision": str(config.get("revision") or engine.get("model_fingerprint", "")[:12]),
                "engine": " ".join(
                    [str(engine.get(k)) for k in ("engine", "device", "dtype") if engine.get(k)]
                    + [  # http runs: each server and its version
                        f"{e.get('server')} {e.get('version')} at {e.get('url')}"
                        for e in engine.get("endpoints", [])
                        if isinstance(e, dict)
                    ]
                ),
                "ICD-10-CM": str(icd or ""),
                "names": f"{names.get('set')} top-{names.get('top_k')}" if names else "",
                "prompt": prompt if isinstance(prompt, str) else json.dumps(prompt),
                "seeds": json.dumps(section.get("seeds", {"base": config.get("seed")}))
                + (" (not sent: the server takes no per-request seeds; sampled unseeded)"
                   if engine.get("per_request_seeds") is False else ""),
                "packages": ", ".join(f"{k} {v}" for k, v in packages.items() if v),
                "commit": str(section.get("git_commit") or ""),
                "started": str(section.get("started", "")),
            }
        )
    return rows


def _html_table(frame: pl.DataFrame) -> str:
    def cell(value: Any) -> str:
        if value is None:
            return "n/a"
        return f"{value:.4f}" if isinstance(value, float) else str(value)

    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>"
        for row in frame.iter_rows()
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5rem 0 1.5rem;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}
figure{margin:1rem 0 2rem}figcaption{font-size:13px;color:#444}img{max-width:100%}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem}pre{font-size:11px;overflow-x:auto}
.missing{border:1px solid #d9a400;background:#fff8e1;padding:.3rem 1rem;margin:1rem 0}
"""


def write_report(run_dirs: list[Path], out: Path) -> Path:
    """Write ``report.html``, ``report.md``, ``tables/*.csv`` and ``figures/*.png`` into ``out``.

    Args:
        run_dirs: run directories, one model each (the order of rows and colours).
        out: the report folder (created).

    Returns the path of report.html.
    """
    if not run_dirs:
        raise UserError("No run directory given.", "pass one or more run directories.")
    # The output folder first: a bad --out should not wait for every run to be recomputed.
    try:
        (out / "tables").mkdir(parents=True, exist_ok=True)
        (out / "figures").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot write the report to {out} ({exc.strerror}).",
            "pass --out with a writable folder.",
        ) from exc
    runs = load_runs(run_dirs)
    titles = {(name, t.key): t.title for name, t in report_tables()}
    tables = stacked_tables(runs)
    models = ", ".join(run.label for run in runs)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>climb-vllm report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>climb-vllm report</h1>",
        f"<p>Models: {html.escape(models)}. Written {stamp}.</p>",
    ]
    markdown = ["# climb-vllm report", "", f"Models: {models}. Written {stamp}.", ""]
    absent = [
        f"{run.label}: {benchmark} is not in this report ({reason})"
        for run in runs
        for benchmark, reason in run.missing.items()
    ]
    if absent:
        page.append(
            "<div class='missing'><strong>Missing benchmarks</strong><ul>"
            + "".join(f"<li>{html.escape(line)}</li>" for line in absent)
            + "</ul></div>"
        )
        markdown += ["**Missing benchmarks**", "", *[f"* {line}" for line in absent], ""]
    page.append("<h2>Tables</h2>")
    for (benchmark, key), frame in tables.items():
        title = titles.get((benchmark, key), f"{benchmark} {key}")
        name = f"{benchmark}_{key}"
        frame.write_csv(out / "tables" / f"{name}.csv")
        page += [f"<h3 id='{name}'>{html.escape(title)}</h3>", _html_table(frame)]
        markdown += [f"## {title}", "", to_markdown(frame), ""]
    page.append("<h2>Figures</h2>")
    markdown += ["## Figures", ""]
    metrics = [(run.label, run.metrics) for run in runs]
    for figure in report_figures():
        key, caption = figure.key, figure.caption
        png = figure.draw(metrics)
        if png is None:
            continue
        (out / "figures" / f"{key}.png").write_bytes(png)
        data = base64.b64encode(png).decode()
        page.append(
            f"<figure id='fig-{key}'><img alt='{html.escape(caption)}' "
            f"src='data:image/png;base64,{data}'><figcaption>{html.escape(caption)}</figcaption>"
            "</figure>"
        )
        markdown += [f"![{caption}](figures/{key}.png)", "", caption, ""]
    page.append("<h2>Provenance</h2>")
    markdown += ["## Provenance", ""]
    for run in runs:
        rows = pl.DataFrame(provenance(run))
        heading = f"{run.label} — {run.root}"
        page += [
            f"<h3>{html.escape(heading)}</h3>",
            _html_table(rows),
            "<details><summary>manifest.json</summary><pre>"
            + html.escape(json.dumps(run.manifest, indent=1, default=str))
            + "</pre></details>",
        ]
        markdown += [f"### {heading}", "", to_markdown(rows), ""]
    page.append("</body></html>")
    (out / "report.md").write_text("\n".join(markdown))
    path = out / "report.html"
    path.write_text("\n".join(page))
    return path
