"""The benchmark command computes its ratios from real runs (no timing is asserted here)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from climb_vllm.bench import run_bench


def test_bench_reports_work_ratios_and_agreement(tiny_model: Path, tmp_path: Path) -> None:
    args = argparse.Namespace(
        model=tiny_model, codes=30, device="cpu", dtype="auto", batch_tokens=4096,
        full_run=False, json=tmp_path / "bench.json",
    )  # fmt: skip
    results = run_bench(args)
    assert results["pairs"] == 30 * 30
    assert results["P1_ratio"] > 10
    assert results["P1_max_abs_logprob_diff"] < 1e-4
    assert (tmp_path / "bench.json").exists()


@pytest.mark.parametrize("option", ["--grading", "--mapping"])
def test_bench_sizes_below_one_are_refused(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    from climb_vllm.cli import main

    assert main(["bench", option, "0"]) == 2
    assert f"{option} must be at least 1" in capsys.readouterr().err
