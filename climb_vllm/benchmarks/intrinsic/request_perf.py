"""How long building a run's requests takes: ``climb-vllm bench --requests [N]``.

Over the first N codes of the 2021 release (all 95,358 when N is not given) x the 30 names,
chunked as a run chunks them, with one model's tokenizer, in one process:

- ``full``: every (prompt, name) pair encoded in full and checked (the planner before tails,
  and its fallback where a tokenizer's tails do not align), writing the disk cache;
- ``full_warm``: the same plans read back from the cache (what a repeated or resumed run of such
  a tokenizer pays);
- ``tails``: the planner as a run uses it (tails, random full checks);
- ``tree_layout``: the engine's token trees and row layout for those requests.

The plans of the three ways are compared and must be identical.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from climb_vllm.core.errors import UserError

CHUNK = 1024


def _tokenizer(model: Path) -> Any:
    """The tokenizer of a model folder or model source; UserError naming the fix."""
    from transformers import AutoTokenizer

    from climb_vllm.models.sources import resolve

    try:
        return AutoTokenizer.from_pretrained(resolve(str(model)))
    except (OSError, ValueError) as exc:
        raise UserError(
            f"Cannot load a tokenizer from {model} ({type(exc).__name__}).",
            "pass --model a model folder with tokenizer files, or a model source such as "
            "gemma-3-270m.",
        ) from exc


def _tree_nodes(chunks: list[Any], row_tokens: int) -> int:
    """Forward tokens of the tree layout of every chunk's planned requests."""
    from climb_vllm.engines.token_tree import forward_tokens
    from climb_vllm.engines.trie import Trie

    tries: dict[Any, Trie] = {}
    nodes = 0
    for planned in chunks:
        requests = [p.request for p in planned]
        chosen = [tries.setdefault(r.continuations, Trie.build(r.continuations)) for r in requests]
        nodes += forward_tokens([r.prefix for r in requests], chosen, row_tokens)
    return nodes


def request_building_bench(model: Path, codes: int | None, row_tokens: int) -> dict[str, Any]:
    """Seconds of each way of building the requests, their ratios, and whether they agree.

    Args:
        model: a model folder (its tokenizer is used) or a model source's name.
        codes: the release's first ``codes`` codes (None: all).
        row_tokens: nodes per row of the tree layout.
    """
    from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE
    from climb_vllm.benchmarks.intrinsic.request_cache import RequestCache
    from climb_vllm.engines.boundary import BoundaryEncoder
    from climb_vllm.resources.names import load_names
    from climb_vllm.resources.ontology import load_ontology

    tokenizer = _tokenizer(model)
    descriptions = list(load_ontology().table["description"])[:codes]
    names = load_names().distinct(5)
    chunks = [
        [DEFAULT_TEMPLATE.format(description=d) for d in descriptions[start : start + CHUNK]]
        for start in range(0, len(descriptions), CHUNK)
    ]
    seconds: dict[str, float] = {}
    plans: dict[str, list[Any]] = {}
    tails = BoundaryEncoder(tokenizer)
    full = BoundaryEncoder(tokenizer, tails=False)
    with tempfile.TemporaryDirectory() as folder:
        cache = RequestCache(tokenizer, Path(folder))
        ways: dict[str, Callable[[list[str]], Any]] = {
            "full": lambda texts: _plan_and_save(full, cache, texts, names),
            "full_warm": lambda texts: cache.load(texts, names),
            "tails": lambda texts: tails.plan(texts, names),
        }
        for way, plan in ways.items():
            start = time.perf_counter()
            plans[way] = [plan(texts) for texts in chunks]
            seconds[way] = time.perf_counter() - start
    start = time.perf_counter()
    nodes = _tree_nodes(plans["tails"], row_tokens)
    seconds["tree_layout"] = time.perf_counter() - start
    results: dict[str, Any] = {
        "tokenizer": tokenizer.name_or_path,
        "codes": len(descriptions),
        "pairs": sum(len(p.request.continuations) for c in plans["full"] for p in c),
        "tree_nodes": nodes,
        "tail_texts": tails.counts.tail_texts,
        "full_texts": tails.counts.full_texts,
        "verified_pairs": tails.counts.verified_pairs,
        "plans_identical": plans["full"] == plans["full_warm"] == plans["tails"],
    }
    results |= {f"{way}_seconds": value for way, value in seconds.items()}
    results["requests_seconds"] = seconds["tails"] + seconds["tree_layout"]
    results["speedup_tails_vs_full"] = seconds["full"] / seconds["tails"]
    results["speedup_cache_vs_full"] = seconds["full"] / seconds["full_warm"]
    return results


def _plan_and_save(encoder: Any, cache: Any, texts: list[str], names: list[str]) -> list[Any]:
    planned: list[Any] = encoder.plan(texts, names)
    cache.save(texts, names, planned)
    return planned
