"""``climb-vllm report`` over several run directories, rendered in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from climb_vllm.cli import main
from climb_vllm.report.html import report_figures

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def two_runs(suite_run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The suite run and a copy of it: two models' worth of run directories."""
    base = tmp_path_factory.mktemp("runs")
    first, second = base / "monday", base / "tuesday"
    shutil.copytree(suite_run, first)
    shutil.copytree(suite_run, second)
    return first, second


@pytest.fixture(scope="module")
def report(two_runs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert main(["report", str(two_runs[0]), str(two_runs[1]), "--out", str(out)]) == 0
    return out


def test_tables_have_one_row_per_model(report: Path) -> None:
    table1 = pl.read_csv(report / "tables" / "intrinsic_table1.csv")
    labels = table1["Model"].unique().to_list()
    assert len(labels) == 2 and all(("monday" in x) != ("tuesday" in x) for x in labels)
    assert table1.height == 4  # two models x (paper, calibrated)
    assert {"L1 corrected 95% CI", "Mean corrected 95% CI"} <= set(table1.columns)
    for name in (
        "extrinsic_table4",
        "extrinsic_table5",
        "extrinsic_table7",
        "intrinsic_table2",
        "intrinsic_table3",
        "intrinsic_table8",
        "intrinsic_design",
        "diseasematcher_table1",
        "diseasematcher_table2",
        "biasmd_accuracy",
        "intrinsic_sensitivity",
    ):
        frame = pl.read_csv(report / "tables" / f"{name}.csv")
        assert frame["Model"].n_unique() == 2, name
    markdown = (report / "report.md").read_text()
    for title in (
        "CLIMB Table 1.",
        "CLIMB Table 4.",
        "CLIMB Table 7.",
        "HIVE Table 1.",
        "HIVE Table 2.",
        "BiasMD accuracy by type",
        "Template sensitivity",
    ):
        assert title in markdown, title


def test_html_is_self_contained(report: Path) -> None:
    page = (report / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page
    assert page.count("src='data:image/png;base64,") == len(report_figures())
    assert "Provenance" in page and "simple-icd-10-cm" not in page or "2021" in page


def test_report_renders_in_headless_chromium(report: Path) -> None:
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(
            f"Chromium is not installed ({CHROMIUM}, {CHROMEDRIVER}): the report cannot be "
            "rendered. Install Debian's packages: apt-get install chromium chromium-driver "
            "(.ci/run does)."
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.set_window_size(1280, 1000)
        driver.get((report / "report.html").as_uri())
        # Nothing wider than the window: not the page, not a table inside it.
        overflow = driver.execute_script(
            "const w = document.scrollingElement.clientWidth;"
            "return [document.scrollingElement.scrollWidth - w].concat("
            "Array.from(document.querySelectorAll('table')).map("
            "t => Math.ceil(t.getBoundingClientRect().right) - w))"
        )
        tables = driver.execute_script(
            "return Array.from(document.querySelectorAll('table')).map("
            "t => t.querySelectorAll('tbody tr').length)"
        )
        images = driver.execute_script(
            "return Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)"
        )
        headings = driver.execute_script(
            "return Array.from(document.querySelectorAll('h3')).map(h => h.textContent)"
        )
        logs = driver.get_log("browser")  # type: ignore[no-untyped-call]
    finally:
        driver.quit()
    assert max(overflow) <= 0, overflow
    stacked = len(list((report / "tables").glob("*.csv")))
    # Every stacked table, the findings, the scope, the provenance of each run.
    assert len(tables) == stacked + 4
    assert all(rows > 0 for rows in tables)
    assert images == [True] * len(report_figures())
    assert any(h.startswith("CLIMB Table 1.") for h in headings)
    errors = [entry for entry in logs if entry["level"] in ("SEVERE", "WARNING")]
    assert errors == []


def test_rescore_says_what_changed_and_rewrites_the_report(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run = two_runs[1]
    path = run / "results" / "biasmd" / "metrics.json"
    metrics = json.loads(path.read_text())
    metrics["accuracy"][0]["accuracy"] = 0.123456
    path.write_text(json.dumps(metrics))
    capsys.readouterr()
    assert main(["rescore", str(run)]) == 0
    out = capsys.readouterr().out
    assert "biasmd: 1 values changed" in out and "0.123456 ->" in out
    assert "intrinsic: no metric changed" in out
    assert f"report written to {run / 'report' / 'report.html'}" in out


def test_report_of_a_folder_that_is_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_an_unfinished_benchmark_is_left_out_and_named(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run with an unfinished benchmark still reports (and rescores) the others, saying which
    is missing; a run with no finished benchmark is one clear error (raised in a worker)."""
    broken = tmp_path / "broken"
    shutil.copytree(two_runs[0], broken)
    for chunk in (broken / "records" / "biasmd").glob("chunk-*.parquet"):
        chunk.unlink()
    out = tmp_path / "r"
    assert main(["report", str(broken), str(two_runs[1]), "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert "Missing benchmarks" in page and "biasmd is not in this report" in page
    accuracy = pl.read_csv(out / "tables" / "biasmd_accuracy.csv")
    assert accuracy["Model"].n_unique() == 1  # only the finished run's rows
    capsys.readouterr()
    assert main(["rescore", str(broken)]) == 0
    assert "biasmd: not finished, left out" in capsys.readouterr().out
    empty = tmp_path / "empty"
    shutil.copytree(broken, empty)
    for chunk in (empty / "records").glob("*/chunk-*.parquet"):
        chunk.unlink()
    capsys.readouterr()
    assert main(["report", str(empty), str(two_runs[1]), "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error:") and "holds no finished benchmark" in err and "Fix:" in err


def test_unwritable_report_folder_is_refused_first(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["report", str(two_runs[0]), "--out", str(blocker / "report")]) == 2
    assert "pass --out with a writable folder" in capsys.readouterr().err


def test_every_figure_has_a_visible_mark(report: Path) -> None:
    """Each figure holds coloured pixels (marks in the runs' colours), not an empty frame."""
    import matplotlib.image

    for path in sorted((report / "figures").glob("*.png")):
        pixels = matplotlib.image.imread(str(path))[..., :3]
        saturation = pixels.max(axis=2) - pixels.min(axis=2)
        assert (saturation > 0.3).sum() > 200, path.name


def test_the_page_has_a_scope_banner_and_contents(report: Path) -> None:
    page = (report / "report.html").read_text()
    assert "<h2 id='scope'>Scope</h2>" in page and "<nav class='toc'>" in page
    assert "stratified sample" in page and "answers of at most" in page
    # Figures sit next to their tables: the AssocMAD figure right after Table 1.
    assert page.index("id='fig-assoc_mad'") < page.index("id='intrinsic_table2'")


def test_sections_go_benchmark_by_benchmark_and_long_tables_link_their_csv(report: Path) -> None:
    """Each benchmark's tables lie under its own heading, in the registry's order, and a table
    longer than the page shows gives its first rows and links the CSV that holds every row."""
    from climb_vllm.benchmarks.registry import REGISTRY
    from climb_vllm.report.html import SHOWN_ROWS

    page = (report / "report.html").read_text()
    starts = [page.index(f"<h2 id='{name}'>") for name in REGISTRY]
    assert starts == sorted(starts)
    bounds = dict(zip(REGISTRY, [*starts[1:], page.index("<h2 id='provenance'>")]))
    for name, start in zip(REGISTRY, starts):
        for table in re.findall(rf"<h3 id='({name}_[a-z0-9_]+)'>", page):
            assert start < page.index(f"<h3 id='{table}'>") < bounds[name], table
    long = 0
    for csv in sorted((report / "tables").glob("*.csv")):
        key = csv.stem
        # A benchmark's own tables (the side-by-side section's compare_ and ranking_ files are
        # shown in their own reading, beside the table).
        if f"<h3 id='{key}'>" not in page or not key.startswith(tuple(f"{n}_" for n in REGISTRY)):
            continue
        rows = pl.read_csv(csv, infer_schema_length=None).height
        section = page[page.index(f"<h3 id='{key}'>") :].split("<h3", 2)[1]
        shown = section.split("</table>")[0].count("<tr>") - 1  # less the heading row
        assert shown == min(rows, SHOWN_ROWS), key
        if rows > SHOWN_ROWS:
            long += 1
            assert f"<a href='tables/{key}.csv'>" in section and f"{rows:,} rows" in section, key
    assert long >= 1  # the drill-down at least


def test_the_random_model_banner_names_only_random_models(suite_run: Path, tmp_path: Path) -> None:
    """A real model's run (its model kind filled with its source and licence) gets no "random
    demo model" banner; a random one beside it is named in the banner, alone."""
    real, noise = tmp_path / "gemma", tmp_path / "tiny"
    shutil.copytree(suite_run, real)
    shutil.copytree(suite_run, noise)
    manifest = json.loads((real / "manifest.json").read_text())
    for section in manifest["benchmarks"].values():
        section["engine"]["demo_model"] = False
        section["engine"]["source"] = {"title": "Gemma 3 270M", "licence": "Gemma terms"}
    (real / "manifest.json").write_text(json.dumps(manifest))
    alone = tmp_path / "alone"
    assert main(["report", str(real), "--out", str(alone)]) == 0
    page = (alone / "report.html").read_text()
    assert "Gemma 3 270M; licence: Gemma terms" in page
    assert "<div class='scope-warning'>" not in page and "random demo model" not in page.lower()
    both = tmp_path / "both"
    assert main(["report", str(real), str(noise), "--out", str(both)]) == 0
    banner = re.search(
        r"<div class='scope-warning'>(.*?)</div>", (both / "report.html").read_text()
    )
    assert banner is not None and "tiny" in banner.group(1) and "gemma" not in banner.group(1)


def _chromium(size: tuple[int, int]) -> Any:
    """A headless Chromium driver of window ``size`` (fails, naming the fix, without it)."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(
            f"Chromium is not installed ({CHROMIUM}, {CHROMEDRIVER}). Install Debian's "
            "packages: apt-get install chromium chromium-driver (.ci/run does)."
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_window_size(*size)
    return driver


def test_the_first_screen_states_every_benchmarks_finding(suite_run: Path, tmp_path: Path) -> None:
    """One run's report at 1400 x 1000: the findings table, one row per benchmark with its
    headline, reference and verdict, ends within the first screen, before the scope."""
    from climb_vllm.benchmarks.registry import REGISTRY

    out = tmp_path / "report"
    assert main(["report", str(suite_run), "--out", str(out)]) == 0
    page = (out / "report.html").read_text()
    assert page.index("id='findings'") < page.index("<h2 id='scope'>")
    driver = _chromium((1400, 1000))
    try:
        driver.get((out / "report.html").as_uri())
        bottom, rows = driver.execute_script(
            "const t = document.querySelector('table.findings');"
            "return [t.getBoundingClientRect().bottom,"
            " Array.from(t.querySelectorAll('tbody tr')).map("
            "  r => Array.from(r.cells).map(c => c.textContent))];"
        )
        inner = driver.execute_script("return window.innerHeight")
    finally:
        driver.quit()
    assert bottom <= inner, (bottom, inner)
    assert [row[1] for row in rows] == [b.title for b in REGISTRY.values()]
    assert all(all(cell.strip() for cell in row) for row in rows)
    markdown = (out / "report.md").read_text()
    assert markdown.index("## What the run found") < markdown.index("## Scope")
