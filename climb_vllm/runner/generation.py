"""Running a generation benchmark: prompts -> engine.generate -> stored, resumable records.

Shared by BiasMD, DiseaseMatcher and CLIMB extrinsic. Items are processed in chunks; a chunk's
requests go to the engine together (the HTTP engine sends them concurrently, bounded by its
worker pool) and the chunk's records are written atomically before the next one starts, so a
killed run resumes at the first missing chunk without losing or repeating a record.

Records: one row per (item, sample) with ``id, sample, seed, response, finish_reason,
completion_tokens, prompt_tokens``. The seed of an item is derived from the run's seed and the
item id (not from its position), so the same item gets the same seed in a subset or a full run.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from climb_vllm.core.progress import Progress, Retries
from climb_vllm.core.store import RunStore
from climb_vllm.engines.base import Engine, GenerateRequest, Generation

if TYPE_CHECKING:
    import polars as pl


class SamplingConfig(Protocol):
    """What a generation run reads of its benchmark's configuration (the BiasMD, DiseaseMatcher
    and CLIMB extrinsic configurations all have these fields)."""

    @property
    def benchmark(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def samples(self) -> int: ...
    @property
    def temperature(self) -> float | None: ...
    @property
    def top_p(self) -> float | None: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def system_prompt(self) -> str | None: ...
    @property
    def chunk_size(self) -> int: ...
    @property
    def display(self) -> str: ...


def item_seed(seed: int, item_id: str) -> int:
    """The sampling seed of one item: stable across subsets, 31 bits (what servers accept)."""
    return zlib.crc32(f"{seed}:{item_id}".encode()) & 0x7FFFFFFF


def build_request(
    config: SamplingConfig, item_id: str, prompt: str, system: str | None = None
) -> GenerateRequest:
    """The chat request for one item: a system turn (the item's own, else the configured one,
    else none), then the prompt as a user turn."""
    messages: list[dict[str, str]] = []
    system = system or config.system_prompt
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": prompt})
    return GenerateRequest(
        messages=tuple(messages),
        n=config.samples,
        seed=item_seed(config.seed, item_id),
        temperature=config.temperature,
        top_p=config.top_p,
        max_tokens=config.max_tokens,
    )


def records_frame(
    ids: Sequence[str], requests: Sequence[GenerateRequest], generations: Sequence[Generation]
) -> pl.DataFrame:
    """One row per (item, sample) in item then sample order."""
    import polars as pl

    rows: dict[str, list[object]] = {
        "id": [],
        "sample": [],
        "seed": [],
        "response": [],
        "finish_reason": [],
        "completion_tokens": [],
        "prompt_tokens": [],
    }
    for item_id, request, generation in zip(ids, requests, generations):
        if len(generation.texts) != request.n:
            raise RuntimeError(f"engine returned {len(generation.texts)} samples for {item_id}")
        for k, text in enumerate(generation.texts):
            rows["id"].append(item_id)
            rows["sample"].append(k)
            # A null seed: the engine sampled unseeded (its server takes no per-request seeds).
            rows["seed"].append(request.seed if generation.seeded else None)
            rows["response"].append(text)
            rows["finish_reason"].append(generation.finish_reasons[k])
            rows["completion_tokens"].append(generation.completion_tokens[k])
            rows["prompt_tokens"].append(generation.prompt_tokens)
    return pl.DataFrame(
        rows,
        schema={
            "id": pl.String,
            "sample": pl.Int64,
            "seed": pl.Int64,
            "response": pl.String,
            "finish_reason": pl.String,
            "completion_tokens": pl.Int64,
            "prompt_tokens": pl.Int64,
        },
    )


def run_generation(
    config: SamplingConfig,
    store: RunStore,
    engine: Engine,
    items: pl.DataFrame,
) -> int:
    """Generate for every chunk of ``items`` (columns ``id``, ``prompt``, optional ``system``)
    not stored yet.

    Returns:
        The number of chunks generated in this call.
    """
    ids: list[str] = items["id"].to_list()
    prompts: list[str] = items["prompt"].to_list()
    systems: list[str | None] = (
        items["system"].to_list() if "system" in items.columns else [None] * len(ids)
    )
    size = config.chunk_size
    chunks = [(i // size, range(i, min(i + size, len(ids)))) for i in range(0, len(ids), size)]
    done = store.finished_chunks(config.benchmark)
    shrink = (
        f"--limit N asks a sample of N items (in eval all: --limit-{config.benchmark} N), "
        "--max-tokens caps each answer"
    )
    with Progress(f"{config.benchmark} items", len(ids), config.display, shrink=shrink) as progress:
        progress.skip(sum(len(rows) for index, rows in chunks if index in done))
        generated = 0
        non_text = 0
        retries = Retries(engine)  # this benchmark's, though a suite shares the engine
        for index, rows in chunks:
            if index in done:
                continue
            chunk_ids = [ids[i] for i in rows]
            requests = [build_request(config, ids[i], prompts[i], systems[i]) for i in rows]
            generations = engine.generate(requests)
            store.write_chunk(
                config.benchmark, index, records_frame(chunk_ids, requests, generations)
            )
            # Shown: requests retried or failed over (nothing lost), and answers without text
            # ("failed": kept in the records, marked non-text, graded as unparseable or empty).
            non_text += sum(
                reason == "non-text" for g in generations for reason in g.finish_reasons
            )
            progress.advance(len(rows), retries, non_text)
            generated += 1
    store.annotate(
        config.benchmark, chunks=len(chunks), items=len(ids), retries_this_session=retries.causes()
    )
    return generated
