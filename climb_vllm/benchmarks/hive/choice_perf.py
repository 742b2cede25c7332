"""Choice mode's speed measurement (``climb-vllm bench --choice N``): the in-process engine,
whose options share their prompt, against scoring every option as its own sequence with
lm-evaluation-harness's HFLM (its way for multiple-choice tasks), on the same N items' prompts
and one model object, in one process.

Reported per benchmark: prompts, forward tokens with shared prompts and with one sequence per
option (counted from the requests), the engine's time, HFLM's time when ``lm_eval`` is
installed (``pip install -e ".[lmeval]"``) and its largest log-prob difference from the engine.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from climb_vllm.benchmarks.base import PerfSettings
    from climb_vllm.benchmarks.hive.kind import Kind


def choice_bench(kind: Kind, count: int, settings: PerfSettings) -> dict[str, Any]:
    """Time choice mode on ``count`` items of ``kind`` (every variant of each).

    Args:
        kind: the benchmark (its items and choice-mode prompts).
        count: items in the sample (the authors' split, spread over the categories).
        settings: ``bench``'s settings: the model folder (None: the tiny model, built now),
            device, dtype, pass size and repeats (the best time of each scorer is kept).
    """
    from climb_vllm.benchmarks.hive.choice import TokenCounts, score_prompts
    from climb_vllm.engines.local import LocalEngine

    assert kind.choice is not None
    from climb_vllm.models.demo_model import model_or_tiny

    model, cleanup = model_or_tiny(settings.model)
    engine = LocalEngine(
        str(model), device=settings.device, dtype=settings.dtype, batch_tokens=settings.batch_tokens
    )
    items = kind.items("eval", count, 0, True)
    prompts = kind.choice.prompts(items)
    score_prompts(engine, prompts[:4])  # warm-up
    counts = TokenCounts()
    best = float("inf")
    for _ in range(max(1, settings.repeats)):
        counts = TokenCounts()
        start = time.perf_counter()
        frame = score_prompts(engine, prompts, counts=counts)
        best = min(best, time.perf_counter() - start)
    name = kind.name
    results: dict[str, Any] = {
        f"{name} items": items.height,
        f"{name} prompts": len(prompts),
        f"{name} forward tokens, shared prompt": counts.shared,
        f"{name} forward tokens, one sequence per option": counts.separate,
        f"{name} forward tokens per prompt, shared": counts.shared / len(prompts),
        f"{name} forward tokens per prompt, per option": counts.separate / len(prompts),
        f"{name} engine seconds": best,
        f"{name} engine prompts/s": len(prompts) / best,
    }
    hflm = _hflm_seconds(engine, prompts, settings.repeats)
    if hflm is None:
        results[f"{name} HFLM"] = "not installed (pip install -e '.[lmeval]')"
    else:
        seconds, values = hflm
        results[f"{name} HFLM seconds"] = seconds
        results[f"{name} engine speed-up over HFLM"] = seconds / best
        ours = frame["logprob"].to_list()
        results[f"{name} largest |log-prob - HFLM|"] = max(abs(a - b) for a, b in zip(ours, values))
    cleanup()
    return results


def _hflm_seconds(engine: Any, prompts: Any, repeats: int) -> tuple[float, list[float]] | None:
    """HFLM's best time over the prompts' options (each its own sequence) and its log-probs in
    the engine's row order, or None when lm_eval is not installed."""
    try:
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        return None
    from climb_vllm.engines.boundary import BoundaryEncoder

    encoder = BoundaryEncoder(engine.tokenizer, tails=False)
    items: list[tuple[tuple[str, str], list[int], list[int]]] = []
    for prompt in prompts:
        by_option: dict[int, tuple[list[int], list[int]]] = {}
        for plan in encoder.plan((prompt.text,), prompt.options):
            for option, continuation in zip(plan.name_indices, plan.request.continuations):
                by_option[option] = (list(plan.request.prefix), list(continuation))
        items += [(("", ""), *by_option[k]) for k in range(len(prompt.options))]
    longest = max(len(p) + len(c) for _, p, c in items)
    lm = HFLM(
        pretrained=engine.model,
        tokenizer=engine.tokenizer,
        batch_size=max(1, engine.batch_tokens // longest),
    )
    best = float("inf")
    values: list[float] = []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        values = [v for v, _ in lm._loglikelihood_tokens(items, disable_tqdm=True)]
        best = min(best, time.perf_counter() - start)
    return best, values
