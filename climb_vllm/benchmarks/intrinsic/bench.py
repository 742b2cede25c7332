"""The intrinsic scoring bench (``climb-vllm bench``'s default), as ratios against a baseline in
the same run.

P1  forward tokens per (code, name) pair: prefix-shared scoring vs naive full sequences, on the
    same requests from the same tokenizer, with the largest log-prob difference between them.
P2  wall time of the same two scorers on the same model and requests (after one warm-up each).
Memory (``--full-run``): a full-release intrinsic run in a child process; its peak resident set
    size is read from the kernel's accounting of finished children.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import ScoreRequest, ScoreResult
from climb_vllm.engines.local import LocalEngine


def _requests(tokenizer: Any, codes: int) -> tuple[list[ScoreRequest], int]:
    """The sample's requests and its number of (code, name) pairs (top-5 names)."""
    from climb_vllm.benchmarks.intrinsic.task import sample_requests
    from climb_vllm.names import load_names

    return sample_requests(tokenizer, codes), codes * len(load_names().distinct(5))


def _timed(engine: LocalEngine, requests: list[ScoreRequest]) -> tuple[float, list[ScoreResult]]:
    engine.score(requests[:8])  # warm-up: first-call allocations and kernel selection
    engine.stats.forward_tokens = engine.stats.padded_tokens = engine.stats.head_rows = 0
    engine.stats.batches = 0
    start = time.perf_counter()
    results = engine.score(requests)
    return time.perf_counter() - start, results


def _full_run(model: Path, device: str, dtype: str, batch_tokens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable, "-m", "climb_vllm", "eval", "intrinsic", "--model", str(model),
            "--device", device, "--dtype", dtype, "--batch-tokens", str(batch_tokens),
            "--out", str(Path(tmp) / "run"), "--display", "plain",
        ]  # fmt: skip
        start = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if completed.returncode != 0:
            raise RuntimeError(f"full run failed:\n{completed.stderr[-2000:]}")
    # ru_maxrss of finished children is in KiB on Linux: the largest child so far.
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": seconds, "peak_rss_gib": peak_kib / 2**20}


def requests_for(tokenizer_path: Path, codes: int) -> list[ScoreRequest]:
    """The requests of the ``codes``-code sample, tokenized by a saved tokenizer (for ``bench
    --endpoint``)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path))
    return _requests(tokenizer, codes)[0]


def scoring_bench(
    model: Path | None,
    codes: int = 256,
    device: str = "auto",
    dtype: str = "auto",
    batch_tokens: int = 8192,
    full_run: bool = False,
) -> dict[str, Any]:
    """P1 and P2 on one model (and, with ``full_run``, a full-release run's time and memory).

    Args:
        model: the model folder (None: build the tiny demo model now).
        codes: codes in the comparison sample.
        device: "auto", "cpu" or "cuda".
        dtype: "auto", "float32", "bfloat16" or "float16".
        batch_tokens: positions per forward pass.
        full_run: also time a full-release intrinsic run in a child process.
    """
    label = str(model or "tiny demo model (built now)")
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if model is None:
        from climb_vllm.demo_model import build_demo_model

        tmp = tempfile.TemporaryDirectory()
        model = build_demo_model(Path(tmp.name) / "tiny")
    shared = LocalEngine(str(model), device=device, dtype=dtype, batch_tokens=batch_tokens)
    naive = LocalEngine(
        str(model),
        device=device,
        dtype=dtype,
        batch_tokens=batch_tokens,
        prefix_sharing=False,
    )
    start = time.perf_counter()
    requests, pairs = _requests(shared.tokenizer, codes)
    encode_seconds = time.perf_counter() - start
    naive_seconds, naive_results = _timed(naive, requests)
    shared_seconds, shared_results = _timed(shared, requests)
    worst = max(
        abs(a - b)
        for x, y in zip(shared_results, naive_results)
        for a, b in zip(x.logprobs, y.logprobs)
    )
    facts = shared.describe()
    results: dict[str, Any] = {
        "model": label,
        "parameters": facts["parameters"],
        "device": facts["device"],
        "dtype": facts["dtype"],
        "codes": codes,
        "pairs": pairs,
        "encode_seconds": encode_seconds,
        "P1_naive_tokens_per_pair": naive.stats.forward_tokens / pairs,
        "P1_shared_tokens_per_pair": shared.stats.forward_tokens / pairs,
        "P1_ratio": naive.stats.forward_tokens / shared.stats.forward_tokens,
        "P1_naive_head_rows": naive.stats.head_rows,
        "P1_shared_head_rows": shared.stats.head_rows,
        "P1_max_abs_logprob_diff": worst,
        "P2_naive_seconds": naive_seconds,
        "P2_shared_seconds": shared_seconds,
        "P2_ratio": naive_seconds / shared_seconds,
        "P2_shared_codes_per_second": codes / shared_seconds,
    }
    if full_run:
        full = _full_run(Path(model), facts["device"], facts["dtype"], batch_tokens)
        results["full_run_seconds"] = full["seconds"]
        results["full_run_peak_rss_gib"] = full["peak_rss_gib"]
    if tmp is not None:
        tmp.cleanup()
    return results
