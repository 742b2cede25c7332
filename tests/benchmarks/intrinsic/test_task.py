"""CLIMB intrinsic end to end on the tiny model, including a run killed part-way and resumed."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from climb_vllm.cli import main
from climb_vllm.resources.names import load_names
from tests.helpers import intrinsic_command, kill_after_chunks


def test_end_to_end_records_and_tables(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(intrinsic_command(tiny_model, out, "--limit", "60", "--chunk-size", "16")) == 0
    records = pl.read_parquet(sorted((out / "records" / "intrinsic").glob("*.parquet")))
    assert records.height == 60 * 30
    assert records.select("code", "name").is_duplicated().sum() == 0
    assert (records["logprob"] < 0).all()
    # A name's joint log-prob is the sum of its per-token values.
    summed = records["token_logprobs"].list.sum()
    assert ((summed - records["logprob"]).abs() < 1e-9).all()
    manifest = json.loads((out / "manifest.json").read_text())
    section = manifest["benchmarks"]["intrinsic"]
    for key in (
        "config",
        "config_hash",
        "engine",
        "datasets",
        "packages",
        "git_commit",
        "prompt_template",
    ):
        assert key in section
    assert section["datasets"]["icd10cm"]["release"] == "2021"
    assert section["engine"]["device"] == "cpu"
    # Each phase's seconds are recorded, and the encoder says how it checked the boundary.
    phases = section["phase_seconds_this_session"]
    assert {"encode", "score", "write", "wall"} <= set(phases)
    assert all(v >= 0 for v in phases.values())
    assert (
        section["boundary_this_session"]["tail_texts"]
        + section["boundary_this_session"]["full_texts"]
        >= 60
    )
    metrics = json.loads((out / "results" / "intrinsic" / "metrics.json").read_text())
    assert {"table1", "table2", "table3", "table8"} <= set(metrics)
    assert [r["k"] for r in metrics["table8"]][::6] == [1, 2, 3, 4, 5]
    tables = (out / "results" / "intrinsic" / "tables.md").read_text()
    assert "Table 1" in tables and "Table 3" in tables
    _check_drilldown(out, records, metrics)
    # Every computed table also lies in long form at full precision.
    long = pl.read_csv(out / "results" / "intrinsic" / "long" / "table1.csv")
    assert long["assoc_mad"].to_list() == [r["assoc_mad"] for r in metrics["table1"]]

    # Rescoring stored records reproduces the same metrics.
    capsys.readouterr()
    assert main(["rescore", str(out)]) == 0
    assert "no metric changed" in capsys.readouterr().out


def test_changed_config_is_refused(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(intrinsic_command(tiny_model, out, "--limit", "30")) == 0
    capsys.readouterr()
    assert main(intrinsic_command(tiny_model, out, "--limit", "30", "--top-k", "3")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "changed: top_k" in err and "Fix:" in err
    # The sex rule and the pooling change only the tables: the finished run is re-tabulated.
    assert (
        main(
            intrinsic_command(
                tiny_model, out, "--limit", "30", "--sex-rule", "listed", "--pooling", "names"
            )
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmarks"]["intrinsic"]["analysis"] == {
        "sex_rule": "listed",
        "pooling": "names",
    }
    method = json.loads((out / "results" / "intrinsic" / "metrics.json").read_text())["method"]
    choices = {row["choice"]: row["value"] for row in method}
    assert choices["Sex-specific rule"].startswith("listed")
    assert choices["Name pooling (Tables 2, 3)"].startswith("by distinct name")
    table1 = (out / "results" / "intrinsic" / "table1.csv").read_text()
    assert ",listed," in table1


def test_killed_run_resumes_to_identical_tables(tiny_model: Path, tmp_path: Path) -> None:
    args = ["--limit", "1200", "--chunk-size", "20", "--batch-tokens", "512"]
    reference = tmp_path / "reference"
    assert main(intrinsic_command(tiny_model, reference, *args)) == 0

    resumed = tmp_path / "resumed"
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        *intrinsic_command(tiny_model, resumed, *args),
    ]
    chunks = resumed / "records" / "intrinsic"
    written = kill_after_chunks(command, chunks, 5)
    assert 5 <= written < 60

    completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr

    def load(run: Path) -> pl.DataFrame:
        files = sorted((run / "records" / "intrinsic").glob("chunk-*.parquet"))
        return pl.read_parquet(files)

    assert load(resumed).equals(load(reference))
    assert not list(chunks.glob(".*tmp"))

    def read(run: Path) -> str:
        return (run / "results" / "intrinsic" / "metrics.json").read_text()

    assert read(resumed) == read(reference)


def test_a_failed_start_leaves_nothing_that_refuses_the_corrected_command(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    typo = str(tmp_path / "typo")
    assert main(intrinsic_command(tiny_model, out, "--limit", "30", "--tokenizer", typo)) == 2
    assert "tokenizer" in capsys.readouterr().err
    assert main(intrinsic_command(tiny_model, out, "--limit", "30")) == 0


def test_a_hub_id_offline_is_one_quick_error(tmp_path: Path) -> None:
    import os
    import subprocess
    import time

    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "climb_vllm",
            "eval",
            "intrinsic",
            "--model",
            "no-such-org/no-such-model",
            "--out",
            str(tmp_path / "run"),
            "--display",
            "none",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert "not available offline" in last or "cannot be reached (offline)" in last
    assert "--model PATH" in last and time.monotonic() - start < 30


def _check_drilldown(out: Path, records: pl.DataFrame, metrics: dict[str, Any]) -> None:
    """The drill-down's files, and one ratio recomputed from the records by hand."""
    full = pl.read_csv(out / "results" / "intrinsic" / "drilldown_all.csv.gz")
    neutral = full["code"].unique().to_list()
    assert full.height == 8 * len(neutral) and 0 < len(neutral) < 60
    shown = metrics["drilldown"]
    assert len(shown) == 8 * 2 * min(20, len(neutral))
    first = shown[0]
    assert (first["direction"], first["rank"]) == ("most", 1)
    slots = pl.DataFrame(
        [{"name": s.name, "sex": s.sex, "ethnicity": s.ethnicity} for s in load_names().top_k(5)]
    )
    centred = (
        records.filter(pl.col("code").is_in(neutral))
        .select("code", "name", "logprob")
        .with_columns(pl.col("logprob") - pl.col("logprob").mean().over("name"))
    )
    at_code = centred.filter(pl.col("code") == first["code"]).join(slots, on="name")
    group_means = at_code.group_by("sex", "ethnicity").agg(pl.col("logprob").mean())
    own = group_means.filter(
        (pl.col("sex") == first["sex"]) & (pl.col("ethnicity") == first["ethnicity"])
    )["logprob"].item()
    others = group_means.filter(
        (pl.col("sex") != first["sex"]) | (pl.col("ethnicity") != first["ethnicity"])
    )["logprob"].to_list()
    assert first["ratio"] == pytest.approx(math.exp(own - sum(others) / len(others)), rel=1e-9)
    assert first["ci_low"] <= first["ratio"] <= first["ci_high"]


def test_the_phases_are_printed_at_the_end(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = intrinsic_command(tiny_model, tmp_path / "run", "--limit", "30")
    argv[argv.index("--display") + 1] = "plain"
    assert main(argv) == 0
    line = [x for x in capsys.readouterr().err.splitlines() if x.startswith("intrinsic phases:")]
    assert len(line) == 1 and "encode" in line[0] and "score" in line[0] and "write" in line[0]
