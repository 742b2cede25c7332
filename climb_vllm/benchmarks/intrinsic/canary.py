"""The resume canary: before a run adds records, a few stored pairs are scored again on every
endpoint (or in-process) and must give the stored log-probs, so that records of two models never
mix, whatever the model is called and wherever it is served.

Tolerance (:func:`~climb_vllm.engines.identity.tolerance`): measured, not fixed. At a run's
first start the canary texts are scored twice and in a second batch composition on every
endpoint; the tolerance is ten times that spread, at least the dtype's floor (1e-3 nat for
fp32/fp64 in process, 0.02 for a server, 0.05 for half precision) and at most 0.5. The same
model and dtype reproduces its log-probs within float rounding (in fp32 within 4e-5 nat between
vLLM's CPU build and the in-process engine on the earlier hosts, 2.4e-4 on an AMD EPYC one); a
1% perturbation of the weights moved them by 0.43 nat on the tiny test model (0.41 was reported
for Gemma 3 270M); another model moves them by whole nats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError
from climb_vllm.engines.identity import tolerance

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.core.store import RunStore
    from climb_vllm.engines.base import Engine, ScoreResult
    from climb_vllm.engines.boundary import PlannedRequest

#: Stored codes scored again (each with all its names).
CANARY_CODES = 2


def _compare(stored: pl.DataFrame, now: pl.DataFrame, where: str, limit: float, root: Any) -> float:
    """The largest |stored - now| log-prob over the pairs both hold; UserError naming the
    endpoint ``where``, the pair, both values and the fix when it passes ``limit``."""
    import polars as pl

    joined = stored.select("code", "name", "logprob").join(now, on=["code", "name"], suffix="_now")
    joined = joined.with_columns((pl.col("logprob") - pl.col("logprob_now")).abs().alias("d"))
    row = joined.sort("d", descending=True).row(0, named=True)
    if row["d"] > limit:
        raise UserError(
            f"{where} does not give this run's stored log-probs: {row['code']} / "
            f"{row['name']} was {row['logprob']:.4f}, is {row['logprob_now']:.4f} (tolerance "
            f"{limit:g} nat). The engine holds another model than the one that wrote "
            f"{root}; resuming would mix two models' records.",
            "restore the run's model behind every endpoint (or in the folder), or start a "
            "new run with another --out / --run-id.",
        )
    return float(row["d"])


def check_canary(
    store: RunStore,
    benchmark: str,
    engine: Engine,
    plan: Callable[[Sequence[str]], list[PlannedRequest]],
    frame: Callable[[Sequence[str], list[PlannedRequest], list[ScoreResult]], pl.DataFrame],
    dtype: str | None,
    spread: float | None = None,
) -> dict[str, Any] | None:
    """Score the first stored codes again on every endpoint and compare with the records.

    Args:
        store: the run directory.
        benchmark: the records' benchmark (intrinsic).
        engine: the engine that will add records.
        plan: turns codes into the run's planned requests.
        frame: turns codes, their planned requests and results into records (``code, name,
            logprob``), as the run stores them.
        dtype: the engine's dtype (None for servers).
        spread: how far the engine's canary texts moved by themselves at the run's first
            start (:func:`~climb_vllm.engines.identity.canary_spread`; None: not measured).

    Returns what was compared (None when the run holds no records yet).

    Raises:
        UserError: a value differs by more than the tolerance (names the endpoint, the pair,
            both values and the fix).
    """
    import time

    import polars as pl

    start = time.perf_counter()
    done = sorted(store.finished_chunks(benchmark))
    if not done:
        return None
    stored = pl.read_parquet(store.chunk_path(benchmark, done[0]))
    codes = stored["code"].unique(maintain_order=True).head(CANARY_CODES).to_list()
    planned = plan(codes)
    requests = [p.request for p in planned]
    each: Callable[[Any], list[list[ScoreResult]]] | None = getattr(
        engine, "score_each_endpoint", None
    )
    results = each(requests) if each is not None else [engine.score(requests)]
    endpoints = [c.url for c in getattr(engine, "capabilities", [])] or ["the in-process model"]
    limit = tolerance(dtype, spread)
    worst = 0.0
    for where, found in zip(endpoints, results):
        now = frame(codes, planned, found).select("code", "name", "logprob")
        worst = max(worst, _compare(stored, now, where, limit, store.root))
    return {
        "codes": codes,
        "endpoints": len(results),
        "max_abs_diff": worst,
        "tolerance": limit,
        "seconds": time.perf_counter() - start,
    }
