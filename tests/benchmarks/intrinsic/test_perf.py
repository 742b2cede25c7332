"""The benchmark command computes its ratios from real runs (no timing is asserted here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from climb_vllm.benchmarks.intrinsic.perf import (
    float32_reference,
    release_tokens,
    requests_for,
    scoring_bench,
)
from climb_vllm.cli import main


def test_bench_reports_work_ratios_and_agreement(tiny_model: Path, tmp_path: Path) -> None:
    results = scoring_bench(tiny_model, codes=64, device="cpu", batch_tokens=4096)
    assert results["pairs"] == 64 * 30
    naive, prefix, tree = (results[f"P1_{s}_tokens_per_pair"] for s in ("naive", "prefix", "tree"))
    assert naive > 10 * prefix and prefix > 1.2 * tree
    assert results["P1_tree_vs_prefix_ratio"] == pytest.approx(prefix / tree)
    assert results["prefix_max_abs_logprob_diff_vs_naive"] < 1e-4
    assert results["tree_max_abs_logprob_diff_vs_naive"] < 1e-4
    if "P2_hflm_seconds" in results:  # lm_eval installed: the same requests, the same numbers
        assert results["hflm_max_abs_logprob_diff_vs_naive"] < 1e-4
    else:
        assert "not installed" in results["hflm"]
    for scorer in ("naive", "prefix", "tree"):
        assert results[f"P2_{scorer}_seconds"] > 0
        # float32 run: the reference is the naive scorer itself.
        assert results[f"{scorer}_max_abs_diff_vs_fp32"] < 2e-4
        assert (
            results[f"{scorer}_mean_abs_diff_vs_fp32"] <= results[f"{scorer}_max_abs_diff_vs_fp32"]
        )
    assert results["tree_achieved_tflops"] > 0 and results["peak_memory_gib"] > 0
    assert results["tree_fraction_of_bf16_peak"] == "unknown"  # a CPU: no peak in the table


def test_bench_in_bfloat16_states_its_distance_from_fp32(tiny_model: Path) -> None:
    results = scoring_bench(tiny_model, codes=16, device="cpu", dtype="bfloat16", peak=2.0)
    assert results["dtype"] == "bfloat16"
    for scorer in ("naive", "prefix", "tree"):
        # bf16 moves log-probs by far more than the fp32 scorers differ (see PERFORMANCE.md).
        assert 1e-3 < results[f"{scorer}_max_abs_diff_vs_fp32"] < 2.0
    assert results["tree_fraction_of_bf16_peak"] == results["tree_achieved_tflops"] / 2.0


def test_bench_profile_shares_the_tree_scorers_time(tiny_model: Path) -> None:
    results = scoring_bench(tiny_model, codes=24, device="cpu", profile=True)
    shares = [results[f"profile_tree_{k}_share"] for k in ("matmul", "attention", "other")]
    assert all(0 <= share <= 1 for share in shares) and sum(shares) == pytest.approx(1.0)
    assert results["profile_tree_matmul_share"] > 0
    # the products alone run faster than the whole call, which also waits for the rest
    assert results["profile_tree_matmul_tflops"] > results["tree_achieved_tflops"]
    assert "aten::mm" in results["profile_tree_top_ops"]


def test_bench_compile_times_the_compiled_tree_against_the_eager_scorers(
    tiny_model: Path,
) -> None:
    results = scoring_bench(tiny_model, codes=16, device="cpu", peak=2.0, compile_layers=True)
    best = results["P2_tree_compiled_seconds"]
    # the first call pays the compile, the timed calls do not
    assert results["tree_compiled_first_call_seconds"] > best > 0
    for baseline in ("tree", "naive"):
        assert results[f"P2_tree_compiled_speedup_vs_{baseline}"] == pytest.approx(
            results[f"P2_{baseline}_seconds"] / best
        )
    assert results["tree_compiled_fraction_of_bf16_peak"] == pytest.approx(
        results["tree_compiled_achieved_tflops"] / 2.0
    )
    assert results["tree_compiled_max_abs_logprob_diff_vs_tree"] < 1e-4
    assert results["tree_compiled_max_abs_diff_vs_fp32"] < 1e-4


def test_float32_reference_sizes_its_passes_for_float32(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference's passes fit the memory left after the cast, not the half-precision
    budget (which ran an 8B model out of GPU memory)."""
    import torch

    from climb_vllm.engines import memory
    from climb_vllm.engines.local import LocalEngine

    engine = LocalEngine(str(tiny_model), device="cpu", dtype="bfloat16")
    assert engine.batch_tokens == memory.CPU_CAP  # sized from this machine's free memory
    per_position = memory.bytes_per_position(engine.model.config, 4, 512)
    # free memory that holds 256 float32 positions at the default share
    monkeypatch.setattr(memory, "free_bytes", lambda device: int(256 * per_position * 2))
    reference = float32_reference(engine)
    assert engine.model.dtype == torch.float32 and reference.scorer == "naive"
    assert reference.batch_tokens == 256 and reference.row_tokens <= 256
    requests = requests_for(tiny_model, 24)[:6]
    scored = reference.score(requests)
    assert [len(r.logprobs) for r in scored] == [len(r.continuations) for r in requests]
    assert reference.stats.padded_tokens > 0


def test_release_token_counts_order_the_layouts(tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    counts = release_tokens(tokenizer, 256, chunk=512, codes=1500)
    assert counts["release_pairs"] == 1500 * 30
    naive, prefix, tree = (
        counts[f"release_{s}_tokens_per_pair"] for s in ("naive", "prefix", "tree")
    )
    assert naive > 10 * prefix and prefix > 1.1 * tree


def test_bench_command_writes_json(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    argv = [
        "bench",
        "--model",
        str(tiny_model),
        "--codes",
        "24",
        "--device",
        "cpu",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    assert json.loads(out.read_text())["codes"] == 24


@pytest.mark.parametrize("option", ["--grading", "--mapping", "--index-build"])
def test_bench_sizes_below_one_are_refused(option: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", option, "0"]) == 2
    assert f"{option} must be at least 1" in capsys.readouterr().err


def test_names_growth_bench_scores_every_k_on_shared_descriptions(
    tiny_model: Path, tmp_path: Path
) -> None:
    """The command runs every K on one engine; forward tokens grow with K, yet every (code, name)
    pair costs about one or two positions (a name's own sub-tokens after the first), not the
    prompt again."""
    out = tmp_path / "growth.json"
    argv = [
        "bench",
        "--names-growth",
        "--model",
        str(tiny_model),
        "--codes",
        "24",
        "--device",
        "cpu",
        "--json",
        str(out),
    ]
    assert main(argv) == 0
    results = json.loads(out.read_text())
    assert results["K5_distinct_names"] == 30 and results["K5_seconds_vs_K5"] == 1.0
    assert results["K50_names_vs_K5"] > 5
    per_pair = [results[f"K{k}_forward_tokens_per_pair"] for k in (5, 10, 20, 50)]
    totals = [p * results[f"K{k}_pairs"] for p, k in zip(per_pair, (5, 10, 20, 50))]
    assert totals == sorted(totals)
    assert max(per_pair) < 2.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "--codes", "4", "--peak-tflops", "-5"], "is not a peak"),
        (["bench", "--requests", "--model", "/nonexistent"], "Cannot load a tokenizer"),
        (["bench", "--requests"], "needs a tokenizer"),
    ],
)
def test_bad_bench_options_are_one_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and "Fix:" in err and "Traceback" not in err
