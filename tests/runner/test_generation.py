"""The generation runner end to end on the tiny model: seeds, records, resume after SIGKILL."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from climb_vllm.benchmarks.hive.config import GenerationConfig
from climb_vllm.cli import main
from climb_vllm.runner.generation import build_request, item_seed
from tests.helpers import kill_after_chunks


def command(model: Path, out: Path, benchmark: str, *extra: str) -> list[str]:
    return [
        "eval",
        benchmark,
        "--model",
        str(model),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--display",
        "none",
        "--max-tokens",
        "12",
        *extra,
    ]


def test_item_seed_is_stable_and_distinct() -> None:
    assert item_seed(0, "dm-00001") == item_seed(0, "dm-00001")
    assert item_seed(0, "dm-00001") != item_seed(1, "dm-00001")
    assert item_seed(0, "dm-00001") != item_seed(0, "dm-00002")
    assert 0 <= item_seed(7, "x") < 2**31


def test_requests_carry_the_authors_settings() -> None:
    config = GenerationConfig(model="m", benchmark="diseasematcher")
    request = build_request(config, "dm-00001", "Which person?")
    assert request.temperature == 0.8 and request.top_p == 0.9 and request.n == 1
    assert request.messages == ({"role": "user", "content": "Which person?"},)
    with_system = build_request(
        config.model_copy(update={"system_prompt": "Be fair."}), "dm-00001", "Q"
    )
    assert with_system.messages[0] == {"role": "system", "content": "Be fair."}


def test_biasmd_end_to_end_with_samples(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(command(tiny_model, out, "biasmd", "--limit", "5", "--samples", "2")) == 0
    records = pl.read_parquet(out / "records" / "biasmd" / "*.parquet")
    graded = pl.read_parquet(out / "results" / "biasmd" / "graded.parquet")
    controls = graded.filter(pl.col("kind") == "control").height // 2
    assert records.height == 2 * (5 + controls)
    assert set(records["sample"]) == {0, 1}
    assert (out / "results" / "biasmd" / "tables.md").read_text().startswith("# BiasMD")
    # Rescoring the same records changes nothing.
    assert main(["rescore", str(out)]) == 0


def test_killed_run_resumes_to_identical_records(tiny_model: Path, tmp_path: Path) -> None:
    args = ["--limit", "48", "--chunk-size", "2", "--split", "all"]
    reference = tmp_path / "reference"
    assert main(command(tiny_model, reference, "diseasematcher", *args)) == 0
    resumed = tmp_path / "resumed"
    full = [
        sys.executable,
        "-m",
        "climb_vllm",
        *command(tiny_model, resumed, "diseasematcher", *args),
    ]
    chunks = resumed / "records" / "diseasematcher"
    kill_after_chunks(full, chunks, 3)
    assert len(list(chunks.glob("chunk-*.parquet"))) < 24
    assert main(command(tiny_model, resumed, "diseasematcher", *args)) == 0

    def records(run: Path) -> pl.DataFrame:
        return pl.read_parquet(run / "records" / "diseasematcher" / "*.parquet").sort("id")

    assert records(resumed).equals(records(reference))
    assert records(resumed)["id"].n_unique() == 48
    for name in ("table1.csv", "table2.csv", "grades.csv"):
        a = (reference / "results" / "diseasematcher" / name).read_text()
        assert (resumed / "results" / "diseasematcher" / name).read_text() == a
