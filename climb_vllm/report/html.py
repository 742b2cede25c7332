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
from climb_vllm.core.store import results_folder
from climb_vllm.report.compare import Compared, compare_runs, shown, shown_ranking
from climb_vllm.report.findings import findings, findings_html, findings_markdown
from climb_vllm.report.render import STYLE, html_table
from climb_vllm.report.runs import RunView, load_runs

#: Rows of a table the page shows; the rest are in its CSV, linked below it.
SHOWN_ROWS = 25


def report_tables() -> list[tuple[str, ReportTable]]:
    """(benchmark, table) of every registered benchmark, in report order: benchmark by
    benchmark (the registry's order), each benchmark's tables by rank (the paper's first)."""
    order = {name: i for i, name in enumerate(REGISTRY)}
    tables = [(name, t) for name, b in REGISTRY.items() for t in b.report_tables()]
    return sorted(tables, key=lambda pair: (order[pair[0]], pair[1].rank))


def report_figures() -> list[tuple[str, ReportFigure]]:
    """(benchmark, figure) of every registered benchmark, in report order."""
    figures = [(name, f) for name, b in REGISTRY.items() for f in b.figures()]
    return sorted(figures, key=lambda pair: pair[1].rank)


def stacked_tables(runs: list[RunView]) -> dict[tuple[str, str], pl.DataFrame]:
    """Every report table stacked over the runs, with the runs' labels as ``Model``."""
    out: dict[tuple[str, str], pl.DataFrame] = {}
    for benchmark, table in report_tables():
        key = table.key
        frames = []
        for run in runs:
            path = results_folder(run.root, benchmark) / f"{key}.csv"
            if benchmark in run.benchmarks and path.is_file():
                frame = pl.read_csv(path, infer_schema_length=None)
                labelled = frame.drop("Model", strict=False).select(
                    pl.lit(run.label).alias("Model"), pl.all()
                )
                frames.append(labelled)
        if frames:
            out[(benchmark, key)] = pl.concat(frames, how="diagonal_relaxed")
    return out


def _endpoint(facts: dict[str, Any]) -> str:
    """One endpoint of an http run: server, version, address and the probe's findings."""
    line = f"{facts.get('server')} {facts.get('version')} at {facts.get('url')}"
    if "completions" not in facts:  # runs recorded before the probe said more
        return line
    seeds = {True: "repeat", False: "do not repeat", None: "not probed"}[facts.get("seeds")]
    found = [
        f"prompt log-probs: {facts.get('strategy') or 'none'}",
        f"chat: {'yes' if facts.get('chat') else 'no'}",
        f"n samples per request: {'yes' if facts.get('samples_n') else 'no'}",
        f"seeds: {seeds}",
    ]
    return f"{line} ({'; '.join(found)})"


def provenance(run: RunView) -> list[dict[str, str]]:
    """One row per benchmark of a run: what produced its records."""
    rows = []
    for benchmark in run.benchmarks:
        section = run.manifest.benchmarks[benchmark]
        config = section.config
        engine = section.engine
        datasets = section.datasets
        icd = datasets.get("icd10cm", {}).get("release") or section.fact("icd", {}).get("release")
        names = datasets.get("names", {})
        prompt = section.prompt_template if section.prompt_template is not None else ""
        packages = section.packages
        rows.append(
            {
                "benchmark": benchmark,
                "model": str(config.get("model")),
                "revision": str(config.get("revision") or engine.get("model_fingerprint", "")[:12]),
                "engine": " ".join(
                    [str(engine.get(k)) for k in ("engine", "device", "dtype") if engine.get(k)]
                    + [  # http runs: each server, its version and what it can do
                        _endpoint(e) for e in engine.get("endpoints", []) if isinstance(e, dict)
                    ]
                ),
                "ICD-10-CM": str(icd or ""),
                "names": f"{names.get('set')} top-{names.get('top_k')}" if names else "",
                "prompt": prompt if isinstance(prompt, str) else json.dumps(prompt),
                "seeds": json.dumps(
                    section.seeds if section.seeds is not None else {"base": config.get("seed")}
                )
                + (
                    " (not sent: the server takes no per-request seeds; sampled unseeded)"
                    if engine.get("per_request_seeds") is False
                    else ""
                ),
                "packages": ", ".join(f"{k} {v}" for k, v in packages.items() if v),
                "commit": str(section.git_commit or ""),
                "started": str(section.started or ""),
            }
        )
    return rows


def is_demo(run: RunView) -> bool:
    """Whether ``run``'s model is a random one (the demo's tiny model, or a shape preset whose
    weights are drawn at load time): its numbers are noise."""
    return any(s.engine.get("demo_model") for s in run.manifest.benchmarks.values())


def scope_table(runs: list[RunView]) -> pl.DataFrame:
    """One row per run: what each benchmark covered (full release or a sample of how many, the
    mapping index, answer caps), and a warning when the model is the demo's random one."""
    rows = []
    for run in runs:
        sections = run.manifest.benchmarks
        demo = is_demo(run)
        sources = [s.engine.get("source") for s in sections.values()]
        source = next((found for found in sources if found), None)
        kind = ""
        if demo:
            kind = "RANDOM demo model: its numbers are noise"
        elif source:
            kind = f"{source['title']}; licence: {source['licence']}"
        row = {"Model": run.label, "Model kind": kind}
        for name, benchmark in REGISTRY.items():
            if name in run.benchmarks:
                row[name] = benchmark.scope(sections[name])
            else:
                row[name] = "not in this report" + (
                    f" ({run.missing[name]})" if name in run.missing else ""
                )
        rows.append(row)
    return pl.DataFrame(rows)


class _Page:
    """The report's HTML and Markdown lines, written side by side."""

    def __init__(self) -> None:
        self.html: list[str] = []
        self.markdown: list[str] = []

    def add(self, html_lines: list[str], markdown_lines: list[str]) -> None:
        """Append ``html_lines`` to the page and ``markdown_lines`` to the Markdown."""
        self.html += html_lines
        self.markdown += markdown_lines

    def figure(self, key: str, caption: str, png: bytes) -> None:
        """Embed the figure ``key`` (its PNG as a data URI; the Markdown links its file)."""
        data = base64.b64encode(png).decode()
        self.add(
            [
                f"<figure id='fig-{key}'><img alt='{html.escape(caption)}' "
                f"src='data:image/png;base64,{data}'><figcaption>{html.escape(caption)}"
                "</figcaption></figure>"
            ],
            [f"![{caption}](figures/{key}.png)", "", caption, ""],
        )


def _report_folder(out: Path) -> None:
    """Create ``out``'s tables/ and figures/, or raise one UserError naming the fix."""
    try:
        (out / "tables").mkdir(parents=True, exist_ok=True)
        (out / "figures").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot write the report to {out} ({exc.strerror}).",
            "pass --out with a writable folder.",
        ) from exc


def _opening(page: _Page, runs: list[RunView]) -> None:
    """The page's head, its title line, the missing benchmarks and the random-model banner."""
    models = ", ".join(run.label for run in runs)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page.add(
        [
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            "<title>climb-vllm report</title>",
            f"<style>{STYLE}</style></head><body>",
            "<h1>climb-vllm report</h1>",
            f"<p>Models: {html.escape(models)}. Written {stamp}.</p>",
        ],
        ["# climb-vllm report", "", f"Models: {models}. Written {stamp}.", ""],
    )
    absent = [
        f"{run.label}: {benchmark} is not in this report ({reason})"
        for run in runs
        for benchmark, reason in run.missing.items()
    ]
    if absent:
        page.add(
            [
                "<div class='missing'><strong>Missing benchmarks</strong><ul>"
                + "".join(f"<li>{html.escape(line)}</li>" for line in absent)
                + "</ul></div>"
            ],
            ["**Missing benchmarks**", "", *[f"* {line}" for line in absent], ""],
        )
    # Only a run of a random model gets the warning: a real model's kind (its source and
    # licence) fills the same column.
    noise = [run.label for run in runs if is_demo(run)]
    if noise:
        page.add(
            [
                "<div class='scope-warning'><strong>A random demo model:</strong> the numbers "
                f"of {html.escape(', '.join(noise))} are noise; they only show that the "
                "evaluation path works.</div>"
            ],
            [],
        )


def _drawn(
    runs: list[RunView], tables: dict[tuple[str, str], pl.DataFrame], out: Path
) -> dict[tuple[str, str], list[tuple[str, str, bytes]]]:
    """Every benchmark's figures, written to ``out/figures/``, keyed by the table each follows
    (``("", "")``: after all tables, where the table it names is absent)."""
    metrics = [(run.label, run.metrics) for run in runs]
    drawn: dict[tuple[str, str], list[tuple[str, str, bytes]]] = {}
    for name, figure in report_figures():
        png = figure.draw(metrics)
        if png is not None:
            (out / "figures" / f"{figure.key}.png").write_bytes(png)
            where = (name, figure.after) if (name, figure.after) in tables else ("", "")
            drawn.setdefault(where, []).append((figure.key, figure.caption, png))
    return drawn


def _table(
    page: _Page, benchmark: str, table: ReportTable | None, key: str, frame: pl.DataFrame, out: Path
) -> None:
    """One table: its CSV written whole, its first :data:`SHOWN_ROWS` rows shown with a link
    to the CSV beyond them, and its note."""
    title = table.title if table is not None else f"{benchmark} {key}"
    name = f"{benchmark}_{key}"
    frame.write_csv(out / "tables" / f"{name}.csv")
    declared = table.percent if table is not None else ()
    top = frame.head(SHOWN_ROWS)
    page.add(
        [f"<h3 id='{name}'>{html.escape(title)}</h3>", html_table(top, percent=declared)],
        [f"### {title}", "", to_markdown(top, declared), ""],
    )
    if frame.height > SHOWN_ROWS:
        rest = f"The first {SHOWN_ROWS} of {frame.height:,} rows; every row is in"
        page.add(
            [f"<p class='note'>{rest} <a href='tables/{name}.csv'>tables/{name}.csv</a>.</p>"],
            [f"*{rest} [tables/{name}.csv](tables/{name}.csv).*", ""],
        )
    if table is not None and table.note:
        page.add([f"<p class='note'>{html.escape(table.note)}</p>"], [f"*{table.note}*", ""])


def _provenance(page: _Page, runs: list[RunView]) -> None:
    """The provenance section: each run's facts and its manifest."""
    page.add(["<h2 id='provenance'>Provenance</h2>"], ["## Provenance", ""])
    for run in runs:
        rows = pl.DataFrame(provenance(run))
        heading = f"{run.label} — {run.root}"
        manifest = json.dumps(
            run.manifest.model_dump(mode="json", exclude_unset=True),
            indent=1,
            sort_keys=True,
            default=str,
        )
        page.add(
            [
                f"<h3>{html.escape(heading)}</h3>",
                html_table(rows, fold=True),
                "<details><summary>manifest.json</summary><pre>"
                + html.escape(manifest)
                + "</pre></details>",
            ],
            [f"### {heading}", "", to_markdown(rows), ""],
        )


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
    _report_folder(out)
    runs = load_runs(run_dirs)
    declared = {(name, t.key): t for name, t in report_tables()}
    tables = stacked_tables(runs)
    compared = compare_runs(runs)
    page = _Page()
    _opening(page, runs)
    # The first screen: what each benchmark found, before the contents, the scope and tables.
    found = findings(runs)
    page.add(findings_html(found), findings_markdown(found))
    titles = {where: t.title for where, t in declared.items()}
    scope = scope_table(runs)
    page.add(
        [_contents(tables, titles, compared), "<h2 id='scope'>Scope</h2>", html_table(scope)],
        ["## Scope", "", to_markdown(scope), ""],
    )
    # Each figure follows the table it illustrates; the rest follow all tables.
    drawn = _drawn(runs, tables, out)
    current = ""
    for (benchmark, key), frame in tables.items():
        if benchmark != current:  # each benchmark's tables and figures under its own heading
            current = benchmark
            title = REGISTRY[benchmark].title
            page.add([f"<h2 id='{benchmark}'>{html.escape(title)}</h2>"], [f"## {title}", ""])
        _table(page, benchmark, declared.get((benchmark, key)), key, frame, out)
        for figure in drawn.get((benchmark, key), []):
            page.figure(*figure)
    for figure in drawn.get(("", ""), []):
        page.figure(*figure)
    if compared:
        page.add(*_side_by_side(compared, out))
    _provenance(page, runs)
    page.add(["</body></html>"], [])
    (out / "report.md").write_text("\n".join(page.markdown))
    path = out / "report.html"
    path.write_text("\n".join(page.html))
    return path


def _short(title: str, width: int = 70) -> str:
    """A table's title as its contents entry: its first sentence, cut at a word near ``width``."""
    first = title.split(". ")[0]
    return first if len(first) <= width else first[:width].rsplit(" ", 1)[0] + " …"


def _contents(
    tables: dict[tuple[str, str], pl.DataFrame],
    titles: dict[tuple[str, str], str],
    compared: dict[str, Compared],
) -> str:
    """The page's contents: the findings and scope, then each benchmark with its tables."""
    items: list[tuple[str, str, list[tuple[str, str]]]] = [
        ("findings", "What the run found", []),
        ("scope", "Scope", []),
    ]
    for benchmark in dict.fromkeys(b for b, _ in tables):
        inner = [
            (f"{b}_{k}", _short(titles.get((b, k), f"{b} {k}")))
            for b, k in tables
            if b == benchmark
        ]
        items.append((benchmark, REGISTRY[benchmark].title, inner))
    if compared:
        items.append(("compare", "Models side by side", []))
    items.append(("provenance", "Provenance", []))

    def entry(anchor: str, text: str) -> str:
        return f"<a href='#{anchor}'>{html.escape(text)}</a>"

    body = "".join(
        f"<li>{entry(a, t)}"
        + ("<ol>" + "".join(f"<li>{entry(x, y)}</li>" for x, y in inner) + "</ol>" if inner else "")
        + "</li>"
        for a, t, inner in items
    )
    return f"<nav class='toc'><strong>Contents</strong><ol>{body}</ol></nav>"


#: What the side-by-side section says before the tables.
SIDE_BY_SIDE = (
    "Each pair of runs compared on what both answered (the same codes and names, cases or "
    "items): the second run minus the first, with a 95% interval for the difference that "
    "uses the pairing. The ranking orders the models on each benchmark's headline measure; "
    "'order resolved' says whether the interval of the difference to the next model "
    "excludes 0."
)


def _side_by_side(compared: dict[str, Compared], out: Path) -> tuple[list[str], list[str]]:
    """The "Models side by side" section (HTML and Markdown lines); writes each benchmark's
    ``tables/compare_<benchmark>.csv`` and ``tables/ranking_<benchmark>.csv`` (full precision,
    with each row's sentence)."""
    page = [
        "<h2 id='compare'>Models side by side</h2>",
        f"<p class='note'>{html.escape(SIDE_BY_SIDE)}</p>",
    ]
    markdown = ["## Models side by side", "", f"*{SIDE_BY_SIDE}*", ""]
    for benchmark, found in compared.items():
        page.append(f"<h3 id='compare_{benchmark}'>{html.escape(found.title)}</h3>")
        markdown += [f"### {found.title}", ""]
        if found.table.height:
            found.table.write_csv(out / "tables" / f"compare_{benchmark}.csv")
            found.ranking.write_csv(out / "tables" / f"ranking_{benchmark}.csv")
            headline = found.table.filter(pl.col("headline"))["reading"].to_list()
            page.append("<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in headline) + "</ul>")
            markdown += [*[f"* {t}" for t in headline], ""]
            ranking, table = shown_ranking(found.ranking), shown(found.table)
            page += [html_table(ranking), html_table(table)]
            markdown += [to_markdown(ranking), "", to_markdown(table), ""]
        if found.skipped:
            page.append(
                "<p class='note'>Not compared: " + html.escape("; ".join(found.skipped)) + ".</p>"
            )
            markdown += ["Not compared: " + "; ".join(found.skipped) + ".", ""]
        page.append(f"<p class='note'>{html.escape(found.note)}</p>")
        markdown += [f"*{found.note}*", ""]
    return page, markdown
