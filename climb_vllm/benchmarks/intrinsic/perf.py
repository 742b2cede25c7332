"""The intrinsic scoring bench (``climb-vllm bench``'s default), as ratios in one run.

Four scorers, on the same model, the same requests and the same token budget, in this
process (one warm-up each, then ``repeats`` rounds that time each scorer once in turn; the best
time of each is kept):

naive   every (prompt + name) as its own sequence (``LocalEngine(scorer="naive")``);
prefix  each prompt once, its names' trie after it (``scorer="prefix"``);
tree    shared description heads: prompts packed as token trees (``scorer="tree"``, the
        default);
hflm    lm-evaluation-harness's ``HFLM._loglikelihood_tokens`` on the same token ids, when
        ``lm_eval`` is installed (it caches one-token continuations of the same context).

The sample is runs of 64 consecutive codes of the 2021 release from uniformly drawn starts, so
its prompts share heads as a full run's chunks do.

P1  forward tokens per (code, name) pair of each scorer, and (``--full-run``) of naive, prefix
    and tree over the whole release, from the layouts alone (no model), in the run's chunks.
P2  wall time of each scorer; the largest log-prob difference of each from naive.
Memory (``--full-run``): a full-release run with the default scorer in a child process; its
    peak resident set size is read from the kernel's accounting of finished children.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.local import SCORERS, LocalEngine
from climb_vllm.engines.trie import Trie

#: consecutive release codes per run of the bench sample
RUN = 64
#: the chunk size of a run (codes scored together), for the release-wide token counts
CHUNK = 1024


def _requests(tokenizer: Any, codes: int, run: int = RUN) -> tuple[list[ScoreRequest], int]:
    """The sample's requests and its number of (code, name) pairs (top-5 names).

    Args:
        tokenizer: the model's tokenizer.
        codes: codes in the sample.
        run: consecutive release codes per run (1: a stratified sample).
    """
    from climb_vllm.benchmarks.intrinsic.task import sample_requests

    requests = sample_requests(tokenizer, codes, run=run)
    return requests, sum(len(r.continuations) for r in requests)


Scorer = Callable[[list[ScoreRequest]], list[list[float]]]


def _timed(
    scorers: dict[str, Scorer], requests: list[ScoreRequest], repeats: int
) -> tuple[dict[str, float], dict[str, list[list[float]]]]:
    """Best wall time of each scorer over ``repeats`` rounds, and its last log-probs.

    Every scorer is warmed up first; each round then times every scorer once, in turn, so a
    change in the machine's load during the bench weighs on all of them alike.
    """
    for score in scorers.values():
        score(requests[:8])  # warm-up: first-call allocations and kernel selection
    best = dict.fromkeys(scorers, float("inf"))
    values: dict[str, list[list[float]]] = {}
    for _ in range(repeats):
        for name, score in scorers.items():
            start = time.perf_counter()
            values[name] = score(requests)
            best[name] = min(best[name], time.perf_counter() - start)
    return best, values


def _engine_scorer(engine: LocalEngine) -> Scorer:
    def score(requests: list[ScoreRequest]) -> list[list[float]]:
        engine.stats.forward_tokens = engine.stats.padded_tokens = engine.stats.head_rows = 0
        engine.stats.batches = 0
        return [list(r.logprobs) for r in engine.score(requests)]

    return score


def _hflm_scorer(engine: LocalEngine, requests: list[ScoreRequest]) -> tuple[Scorer, int] | None:
    """lm-eval's HFLM on the same token ids and the engine's model object (batch rows cut to
    the same token budget), or None when lm_eval is not installed."""
    try:
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        return None
    longest = max(len(r.prefix) + len(c) for r in requests for c in r.continuations)
    batch_size = max(1, engine.batch_tokens // longest)
    lm = HFLM(pretrained=engine.model, tokenizer=engine.tokenizer, batch_size=batch_size)

    def score(chosen: list[ScoreRequest]) -> list[list[float]]:
        items = [(("", ""), list(r.prefix), list(c)) for r in chosen for c in r.continuations]
        flat = iter(value for value, _ in lm._loglikelihood_tokens(items, disable_tqdm=True))
        return [[next(flat) for _ in r.continuations] for r in chosen]

    return score, batch_size


def release_tokens(
    tokenizer: Any, row_tokens: int, chunk: int = CHUNK, codes: int | None = None
) -> dict[str, float]:
    """Forward tokens per (code, name) pair over every 2021 code, per scorer, from the layouts.

    Args:
        tokenizer: the model's tokenizer.
        row_tokens: nodes per row of the tree scorer.
        chunk: codes scored together (release order), as a run's chunks are.
        codes: only the release's first ``codes`` codes (None: all).
    """
    from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE
    from climb_vllm.engines.boundary import BoundaryEncoder
    from climb_vllm.engines.token_tree import forward_tokens
    from climb_vllm.resources.names import load_names
    from climb_vllm.resources.ontology import load_ontology

    descriptions = list(load_ontology().table["description"])[:codes]
    names = load_names().distinct(5)
    encoder = BoundaryEncoder(tokenizer)
    tries: dict[tuple[tuple[int, ...], ...], Trie] = {}
    totals = {"naive": 0, "prefix": 0, "tree": 0}
    pairs = 0
    for start in range(0, len(descriptions), chunk):
        chunk_descriptions = descriptions[start : start + chunk]
        texts = [DEFAULT_TEMPLATE.format(description=d) for d in chunk_descriptions]
        requests = [p.request for p in encoder.plan(texts, names)]
        chosen = [tries.setdefault(r.continuations, Trie.build(r.continuations)) for r in requests]
        pairs += sum(len(r.continuations) for r in requests)
        totals["naive"] += sum(
            len(r.prefix) * len(r.continuations) + sum(map(len, r.continuations)) for r in requests
        )
        totals["prefix"] += sum(len(r.prefix) + len(t.tokens) for r, t in zip(requests, chosen))
        totals["tree"] += forward_tokens([r.prefix for r in requests], chosen, row_tokens)
    return {f"release_{k}_tokens_per_pair": v / pairs for k, v in totals.items()} | {
        "release_pairs": pairs
    }


def _full_run(model: Path, device: str, dtype: str, batch_tokens: int | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable,
            "-m",
            "climb_vllm",
            "eval",
            "intrinsic",
            "--model",
            str(model),
            "--device",
            device,
            "--dtype",
            dtype,
            "--out",
            str(Path(tmp) / "run"),
            "--display",
            "plain",
            *(["--batch-tokens", str(batch_tokens)] if batch_tokens else []),
        ]
        start = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if completed.returncode != 0:
            raise RuntimeError(f"full run failed:\n{completed.stderr[-2000:]}")
        manifest = json.loads((Path(tmp) / "run" / "manifest.json").read_text())
        phases = manifest["benchmarks"]["intrinsic"].get("phase_seconds_this_session", {})
    # ru_maxrss of finished children is in KiB on Linux: the largest child so far.
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": seconds, "peak_rss_gib": peak_kib / 2**20, "phases": phases}


def _throughput(
    engine: LocalEngine, stats: Any, seconds: float, peak: float | None
) -> dict[str, Any]:
    """Forward tokens/s, achieved dense TFLOP/s, the fraction of the device's bf16 peak and the
    peak memory of the tree scorer's timed call (see :mod:`climb_vllm.engines.flops`)."""
    import torch

    from climb_vllm.engines.flops import forward_flops, peak_tflops

    achieved = forward_flops(engine.model, stats.forward_tokens, stats.head_rows) / seconds / 1e12
    gpu = engine.device.type == "cuda"
    found = peak or (peak_tflops(torch.cuda.get_device_name(engine.device)) if gpu else None)
    memory = (
        torch.cuda.max_memory_allocated(engine.device)
        if gpu
        else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    )
    return {
        "tree_forward_tokens_per_second": stats.forward_tokens / seconds,
        "tree_achieved_tflops": achieved,
        "device_peak_bf16_tflops": found if found else "unknown (give --peak-tflops)",
        "tree_fraction_of_bf16_peak": achieved / found if found else "unknown",
        "peak_memory_gib": memory / 2**30,
        "peak_memory_of": "GPU allocations" if gpu else "process resident set",
    }


def _profiled(engine: LocalEngine, score: Scorer, requests: list[ScoreRequest]) -> dict[str, Any]:
    """One more call of the tree scorer under the profiler: the shares of its operators' time
    (:mod:`climb_vllm.engines.pass_profile`) and the TFLOP/s inside the matrix products alone,
    which the whole call's figure divides by everything else as well."""
    from climb_vllm.engines.flops import forward_flops
    from climb_vllm.engines.pass_profile import profile_call

    found = profile_call(lambda: score(requests), engine.device.type)
    stats = engine.stats  # of the profiled call (the scorer resets them)
    flops = forward_flops(engine.model, stats.forward_tokens, stats.head_rows)
    results = {f"profile_tree_{key}": value for key, value in found.items()}
    matmul = found["matmul_seconds"]
    results["profile_tree_matmul_tflops"] = flops / matmul / 1e12 if matmul else "unknown"
    return results


def _compiled_tree(
    engine: LocalEngine,
    requests: list[ScoreRequest],
    eager: dict[str, Any],
    eager_values: list[list[float]],
    repeats: int,
    peak: float | None,
) -> tuple[dict[str, Any], list[list[float]]]:
    """The tree scorer again with its decoder layers compiled (:mod:`climb_vllm.engines.
    compiled`): the first call's time (the compile included), the best of ``repeats`` timed
    calls, its TFLOP/s and fraction of the peak, and its speed-ups and log-prob differences
    against the eager scorers timed before it in the same process.

    Args:
        engine: the bench's tree engine (its model is shared, not copied).
        requests: the bench's sample.
        eager: the results so far (the eager scorers' ``P2_*_seconds``).
        eager_values: the eager tree scorer's log-probs on ``requests``.
        repeats: timed calls; the best is kept.
        peak: as in :func:`scoring_bench`.

    Returns:
        The figures, and the compiled scorer's log-probs (for the float32 comparison).
    """
    compiled = engine.with_scorer("tree", compile_layers=True)
    score = _engine_scorer(compiled)
    start = time.perf_counter()
    score(requests)
    results: dict[str, Any] = {"tree_compiled_first_call_seconds": time.perf_counter() - start}
    seconds, values = _timed({"tree_compiled": score}, requests, repeats)
    best = seconds["tree_compiled"]
    results["P2_tree_compiled_seconds"] = best
    speed = _throughput(compiled, compiled.stats, best, peak)
    for key in ("achieved_tflops", "fraction_of_bf16_peak"):
        results[f"tree_compiled_{key}"] = speed[f"tree_{key}"]
    for baseline in ("tree", "hflm", "naive"):
        if f"P2_{baseline}_seconds" in eager:
            speedup = eager[f"P2_{baseline}_seconds"] / best
            results[f"P2_tree_compiled_speedup_vs_{baseline}"] = speedup
    results["tree_compiled_max_abs_logprob_diff_vs_tree"] = max(
        abs(a - b) for x, y in zip(values["tree_compiled"], eager_values) for a, b in zip(x, y)
    )
    return results, values["tree_compiled"]


def float32_reference(engine: LocalEngine) -> LocalEngine:
    """The naive scorer on ``engine``'s model cast to float32 in place, with a pass budget
    sized for float32 from the memory free after the cast.

    The engine's own budget was sized for its dtype: in float32 the same passes need about
    twice the memory (an 8B model's budget on an 80 GB GPU ran out of memory), so the
    reference takes the smaller of the two.

    Args:
        engine: the bench's engine; its model is float32 afterwards, so this runs last.
    """
    import torch

    from climb_vllm.engines.memory import positions_per_pass

    engine.model.to(torch.float32)
    if engine.device.type == "cuda":
        torch.cuda.empty_cache()  # the cast's freed half-precision blocks
    width = max(engine.row_tokens, 512)
    fits = positions_per_pass(engine.model.config, 4, str(engine.device), width)
    return engine.with_scorer("naive", batch_tokens=min(engine.batch_tokens, fits))


def _exactness(
    engine: LocalEngine, requests: list[ScoreRequest], values: dict[str, list[list[float]]]
) -> dict[str, Any]:
    """Max and mean |Δ log-prob| (nat) of each scorer (HFLM included) in the run's dtype
    against the naive scorer on the same weights in float32 (the model is cast in place, so
    this runs last)."""

    if engine.dtype_name == "float32":
        reference = values["naive"]
    else:
        reference = [list(r.logprobs) for r in float32_reference(engine).score(requests)]
    results: dict[str, Any] = {"exactness_reference": "naive scorer, same weights, float32"}
    for name, found in values.items():
        diffs = [abs(a - b) for x, y in zip(found, reference) for a, b in zip(x, y)]
        results[f"{name}_max_abs_diff_vs_fp32"] = max(diffs)
        results[f"{name}_mean_abs_diff_vs_fp32"] = sum(diffs) / len(diffs)
    return results


def requests_for(tokenizer_path: Path, codes: int) -> list[ScoreRequest]:
    """The requests of a ``codes``-code stratified sample, tokenized by a saved tokenizer (for
    ``bench --endpoint``)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path))
    return _requests(tokenizer, codes, run=1)[0]


def scoring_bench(
    model: Path | None,
    codes: int = 256,
    device: str = "auto",
    dtype: str = "auto",
    batch_tokens: int | None = None,
    full_run: bool = False,
    row_tokens: int = 256,
    repeats: int = 1,
    peak: float | None = None,
    profile: bool = False,
    compile_layers: bool = False,
) -> dict[str, Any]:
    """P1 and P2 of the four scorers on one model (and, with ``full_run``, release-wide token
    counts and a full-release run's time and memory).

    Args:
        model: the model folder (None: build the tiny demo model now).
        codes: codes in the comparison sample.
        device: "auto", "cpu" or "cuda".
        dtype: "auto", "float32", "bfloat16", "float16" or "float64" (rounding checks).
        batch_tokens: positions per forward pass, for every scorer (None: sized from the free
            memory, the same for all: the tree engine's size, which assumes the head at every
            position).
        full_run: also count release-wide tokens and time a full-release run.
        row_tokens: nodes per row of the tree scorer.
        repeats: timings per scorer; the best is kept.
        peak: the device's dense bf16 peak in TFLOP/s (None: from the table of known GPUs).
        profile: also profile one call of the tree scorer (:func:`_profiled`).
        compile_layers: also time the tree scorer with compiled layers (:func:`_compiled_tree`).
    """
    label = str(model or "tiny demo model (built now)")
    from climb_vllm.models.demo_model import model_or_tiny

    model, cleanup = model_or_tiny(model)
    # The tree engine sizes the passes (from the free memory unless given); every other scorer
    # and HFLM then use the same budget.
    tree = LocalEngine(
        str(model),
        device=device,
        dtype=dtype,
        batch_tokens=batch_tokens,
        scorer="tree",
        row_tokens=row_tokens,
    )
    # Every scorer shares the tree engine's model, and HFLM reads the same model object: one
    # copy of the weights, so an 8B model fits beside its activations.
    engines = {"tree": tree} | {s: tree.with_scorer(s) for s in SCORERS if s != "tree"}
    start = time.perf_counter()
    requests, pairs = _requests(tree.tokenizer, codes)
    facts = tree.describe()
    results: dict[str, Any] = {
        "model": label,
        "parameters": facts["parameters"],
        "device": facts["device"],
        "dtype": facts["dtype"],
        "codes": codes,
        "pairs": pairs,
        "batch_tokens": tree.batch_tokens,
        "batch_tokens_from": tree.batch_tokens_from,
        "row_tokens": tree.row_tokens,
        "encode_seconds": time.perf_counter() - start,
    }
    scorers = {name: _engine_scorer(engines[name]) for name in ("naive", "prefix", "tree")}
    hflm = _hflm_scorer(tree, requests)
    if hflm is not None:
        scorers["hflm"] = hflm[0]
        results["hflm_batch_size"] = hflm[1]
    else:
        results["hflm"] = "lm_eval not installed (pip install lm-eval==0.4.13 accelerate)"
    seconds, values = _timed(scorers, requests, repeats)
    for scorer in ("naive", "prefix", "tree"):
        stats = engines[scorer].stats  # of the scorer's last call: the whole sample
        results[f"P1_{scorer}_tokens_per_pair"] = stats.forward_tokens / pairs
        results[f"P1_{scorer}_padded_tokens"] = stats.padded_tokens
        results[f"P1_{scorer}_head_rows"] = stats.head_rows
    for scorer, taken in seconds.items():
        results[f"P2_{scorer}_seconds"] = taken
        if scorer != "naive":
            results[f"{scorer}_max_abs_logprob_diff_vs_naive"] = max(
                abs(a - b) for x, y in zip(values[scorer], values["naive"]) for a, b in zip(x, y)
            )
    results["P1_tree_vs_prefix_ratio"] = (
        results["P1_prefix_tokens_per_pair"] / results["P1_tree_tokens_per_pair"]
    )
    for baseline in ("naive", "prefix", "hflm"):
        if baseline in seconds:
            results[f"P2_tree_speedup_vs_{baseline}"] = seconds[baseline] / seconds["tree"]
    results["P2_tree_codes_per_second"] = codes / seconds["tree"]
    results.update(_throughput(tree, engines["tree"].stats, seconds["tree"], peak))
    if profile:  # before the float32 reference casts the model
        results.update(_profiled(engines["tree"], scorers["tree"], requests))
    if compile_layers:  # likewise
        compiled, values["tree_compiled"] = _compiled_tree(
            tree, requests, results, values["tree"], repeats, peak
        )
        results.update(compiled)
    results.update(_exactness(tree, requests, values))
    if full_run:
        results.update(release_tokens(tree.tokenizer, tree.row_tokens))
        full = _full_run(Path(model), facts["device"], facts["dtype"], batch_tokens)
        results["full_run_seconds"] = full["seconds"]
        results["full_run_peak_rss_gib"] = full["peak_rss_gib"]
        results.update({f"full_run_{k}_seconds": v for k, v in full["phases"].items()})
    cleanup()
    return results


def names_growth_bench(
    model: Path | None,
    codes: int = 2000,
    device: str = "auto",
    dtype: str = "auto",
    batch_tokens: int | None = None,
    ks: tuple[int, ...] = (5, 10, 20, 50),
    repeats: int = 1,
) -> dict[str, Any]:
    """How the default (tree) scorer's time grows with the names per group: the same stratified
    sample of ``codes`` codes scored with the top-K names for each K, in one process and one
    engine (one warm-up, then ``repeats`` rounds of every K in turn; the best time of each is
    kept). Ratios are against the smallest K.

    Args:
        model: the model folder (None: build the tiny demo model now).
        codes: codes in the sample.
        device / dtype / batch_tokens: as in :func:`scoring_bench`.
        ks: names per group to time.
        repeats: timings per K; the best is kept.
    """
    from climb_vllm.benchmarks.intrinsic.task import sample_requests
    from climb_vllm.models.demo_model import model_or_tiny
    from climb_vllm.resources.names import load_names

    model, cleanup = model_or_tiny(model)
    engine = LocalEngine(
        str(model), device=device, dtype=dtype, batch_tokens=batch_tokens, scorer="tree"
    )
    score = _engine_scorer(engine)
    requests = {k: sample_requests(engine.tokenizer, codes, top_k=k) for k in ks}
    score(requests[ks[0]][:8])  # warm-up
    best = dict.fromkeys(ks, float("inf"))
    tokens: dict[int, int] = {}
    pairs = {k: sum(len(r.continuations) for r in requests[k]) for k in ks}
    for _ in range(repeats):
        for k in ks:
            start = time.perf_counter()
            score(requests[k])
            best[k] = min(best[k], time.perf_counter() - start)
            tokens[k] = engine.stats.forward_tokens
    facts = engine.describe()
    results: dict[str, Any] = {
        "model": str(model),
        "device": facts["device"],
        "dtype": facts["dtype"],
        "codes": codes,
        "batch_tokens": engine.batch_tokens,
    }
    base = ks[0]
    for k in ks:
        names = len(load_names().distinct(k))
        results[f"K{k}_distinct_names"] = names
        results[f"K{k}_seconds"] = best[k]
        results[f"K{k}_pairs"] = pairs[k]
        results[f"K{k}_forward_tokens_per_pair"] = tokens[k] / pairs[k]
        results[f"K{k}_seconds_vs_K{base}"] = best[k] / best[base]
        results[f"K{k}_names_vs_K{base}"] = names / len(load_names().distinct(base))
    cleanup()
    return results
