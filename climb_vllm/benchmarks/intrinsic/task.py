"""CLIMB intrinsic bias: P(name | "{description} is related to the name:") for every code.

Records: one row per (code, distinct name) with the joint log-probability of the name's tokens.
Distinct names (the run's, and those of any names-sensitivity variant) are scored once per code;
groups reuse them through the name slots (a name in three groups counts in each). Codes are
processed in chunks (release order, or the stratified sample's order); each chunk is scored
and written atomically before the next starts, so memory stays flat and a killed run resumes
at the first missing chunk.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.intrinsic.canary import check_canary
from climb_vllm.benchmarks.intrinsic.config import DEFAULT_TEMPLATE, IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.name_variants import NameVariant, name_variants
from climb_vllm.benchmarks.intrinsic.request_cache import RequestCache
from climb_vllm.core.phases import PhaseTimes
from climb_vllm.core.progress import Progress, Retries
from climb_vllm.core.store import RunStore
from climb_vllm.engines.base import Engine, ScoreRequest, ScoreResult
from climb_vllm.engines.boundary import BoundaryEncoder, PlannedRequest
from climb_vllm.resources.names import NameSet, load_names
from climb_vllm.resources.ontology import Ontology, load_ontology

if TYPE_CHECKING:
    import polars as pl

BENCHMARK = "intrinsic"
#: Records of the calibration and sensitivity prompts (one chunk per template), beside the run's.
TEMPLATES = "intrinsic-templates"


@dataclass(frozen=True)
class IntrinsicTask:
    """The resolved inputs of a run: codes, their prompts, and the names to score.

    Attributes:
        ontology: the ICD-10-CM release.
        names: the name set.
        codes: codes to score, in processing order.
        distinct_names: the distinct names of the top-K slots (the run's tables).
        variants: the name sets of the names-sensitivity table (empty: none asked).
        scored_names: every name scored once per code: ``distinct_names``, then the variants'
            other names.
    """

    ontology: Ontology
    names: NameSet
    codes: tuple[str, ...]
    distinct_names: tuple[str, ...]
    variants: tuple[NameVariant, ...] = ()
    scored_names: tuple[str, ...] = ()

    @staticmethod
    def from_config(config: IntrinsicConfig) -> IntrinsicTask:
        """Resolve the release, names and codes; raises UserError on names a set cannot give."""
        ontology = load_ontology(config.icd_release)
        base = load_names(config.name_set)
        names = base if config.distinctive is None else base.distinctive_of(config.distinctive)
        distinct = tuple(names.distinct(config.top_k))
        variants = name_variants(base, config.top_k, config.names_sensitivity, config.distinctive)
        scored = tuple(dict.fromkeys([*distinct, *(n for v in variants for n in v.distinct_names)]))
        if config.limit is not None:
            codes = tuple(ontology.stratified_subset(config.limit, config.seed))
        else:
            codes = tuple(ontology.codes)
        return IntrinsicTask(ontology, names, codes, distinct, variants, scored)

    def chunks(self, size: int) -> list[tuple[str, ...]]:
        """Codes cut into consecutive chunks of ``size``."""
        return [self.codes[i : i + size] for i in range(0, len(self.codes), size)]

    def sensitivity_sample(self, size: int, seed: int) -> tuple[str, ...]:
        """The codes scored under every sensitivity template: ``size`` of the run's codes, a
        stratified sample of the release for a full run (all the run's codes when it has no
        more)."""
        if size <= 0:
            return ()
        if len(self.codes) <= size:
            return self.codes
        if len(self.codes) == len(self.ontology):
            return tuple(self.ontology.stratified_subset(size, seed))
        # A --limit run's codes are already a stratified sample in release order: evenly
        # spaced picks keep its spread over chapters.
        step = len(self.codes) / size
        return tuple(self.codes[int(i * step)] for i in range(size))

    def template_prompts(self, config: IntrinsicConfig) -> list[tuple[str, list[str], list[str]]]:
        """(template, keys, descriptions) per template chunk of the calibration records.

        Chunk 0 is the run's own template with the content-free descriptions only (its codes are
        the run's records); chunk i > 0 is sensitivity template i with the content-free
        descriptions and the sensitivity sample. Keys are ``cf:<description>`` or the code.
        """
        descriptions = dict(zip(self.ontology.table["code"], self.ontology.table["description"]))
        free_keys = [f"cf:{text}" for text in config.content_free]
        sample = list(self.sensitivity_sample(config.sensitivity_codes, config.seed))
        out = [(config.template, free_keys, list(config.content_free))]
        if sample:
            for template in config.sensitivity_templates:
                out.append(
                    (
                        template,
                        free_keys + sample,
                        list(config.content_free) + [descriptions[c] for c in sample],
                    )
                )
        return [chunk for chunk in out if chunk[1]]


def sample_codes(codes: int, seed: int = 0, run: int = 1) -> list[str]:
    """A sample of 2021 codes, in release order.

    Args:
        codes: how many codes.
        seed: sampling seed.
        run: 1 for a stratified sample (every chapter, both sex lists); with ``run > 1``, runs
            of ``run`` consecutive codes of the release from uniformly drawn starting codes, as
            the chunks of a full run are: their prompts share heads as a full run's do.
    """
    import random

    ontology = load_ontology()
    if run <= 1:
        return ontology.stratified_subset(codes, seed=seed)
    # Runs start at uniformly drawn codes, so the sample has the release's own mix of long,
    # head-sharing families (injuries, neoplasms) and short descriptions.
    draw = random.Random(seed)
    chosen: set[int] = set()
    while len(chosen) < min(codes, len(ontology.codes)):
        start = draw.randrange(len(ontology.codes))
        chosen.update(range(start, min(start + run, len(ontology.codes))))
    return [ontology.codes[k] for k in sorted(chosen)[:codes]]


def sample_requests(
    tokenizer: Any, codes: int, top_k: int = 5, seed: int = 0, run: int = 1
) -> list[ScoreRequest]:
    """Score requests for a sample of 2021 codes (:func:`sample_codes`) and the top-K names.

    For benchmarks and tests: the real prompts of a run, without a run directory.
    """
    ontology = load_ontology()
    chosen = sample_codes(codes, seed, run)
    described = dict(zip(ontology.table["code"], ontology.table["description"]))
    texts = [DEFAULT_TEMPLATE.format(description=described[c]) for c in chosen]
    names = load_names().distinct(top_k)
    return [p.request for p in BoundaryEncoder(tokenizer).plan(texts, names)]


def plan_chunk(
    encoder: BoundaryEncoder,
    codes: Sequence[str],
    descriptions: dict[str, str],
    names: Sequence[str],
    template: str,
    cache: RequestCache | None = None,
) -> list[PlannedRequest]:
    """Score requests for one chunk of codes under the token-boundary contract.

    With a ``cache``, a stored plan is read instead, and a plan is stored when the encoder had
    to encode pairs in full for it: reading a plan back is slower than planning by tails
    (``bench --requests``), and 8 to 14 times faster than the full path.
    """
    texts = [template.format(description=descriptions[code]) for code in codes]
    planned = cache.load(texts, names) if cache is not None else None
    if planned is None:
        before = encoder.counts.full_texts
        planned = encoder.plan(texts, names)
        if cache is not None and encoder.counts.full_texts > before:
            cache.save(texts, names, planned)
    return planned


def records_frame(
    codes: Sequence[str],
    names: Sequence[str],
    planned: Sequence[PlannedRequest],
    results: Sequence[ScoreResult],
) -> pl.DataFrame:
    """The chunk's record frame, one row per (code, name) in code then name order.

    Columns: ``code, name, logprob, token_logprobs, split``; ``split`` is True for pairs scored
    as a full sequence because the prompt's tokens were not a prefix of prompt + name.
    """
    import polars as pl

    text_index: list[int] = []
    name_index: list[int] = []
    logprob: list[float] = []
    split: list[bool] = []
    token_values: list[float] = []
    token_pair: list[int] = []  # which pair row each per-token value belongs to
    for plan, result in zip(planned, results):
        k = len(plan.name_indices)
        for j, values in enumerate(result.token_logprobs):
            token_pair += [len(text_index) + j] * len(values)
            token_values += values
        text_index += [plan.text_index] * k
        name_index += plan.name_indices
        logprob += result.logprobs
        split += [plan.split] * k
    # Per-token values become a list column by grouping flat values (vectorized), rather than
    # by converting one Python sequence per row.
    per_token = (
        pl.DataFrame({"pair": token_pair, "value": token_values})
        .group_by("pair", maintain_order=True)
        .agg(pl.col("value").alias("token_logprobs"))
    )
    frame = (
        pl.DataFrame(
            {"t": text_index, "n": name_index, "logprob": logprob, "split": split},
            schema={"t": pl.Int64, "n": pl.Int64, "logprob": pl.Float64, "split": pl.Boolean},
        )
        .with_row_index("pair")
        .join(per_token.with_columns(pl.col("pair").cast(pl.UInt32)), on="pair", how="left")
        .sort("t", "n")
    )
    if frame.height != len(codes) * len(names):
        raise RuntimeError(f"engine returned {frame.height} pairs for {len(codes)} codes")
    return frame.select(
        pl.Series("code", codes, dtype=pl.String).gather(frame["t"]),
        pl.Series("name", names, dtype=pl.String).gather(frame["n"]),
        "logprob",
        "token_logprobs",
        "split",
    )


def run_intrinsic(
    config: IntrinsicConfig, store: RunStore, engine: Engine, task: IntrinsicTask
) -> int:
    """Score every chunk that the run directory does not hold yet. Returns chunks scored now.

    Three phases overlap: a worker encodes the next chunk (Rust, outside the GIL) and another
    builds and writes the previous chunk's records while the engine scores the current one, so
    the wall time is close to the longest phase rather than their sum. Each phase's seconds are
    written to the run record (``phase_seconds_this_session``) and printed at the end.
    """
    descriptions = dict(zip(task.ontology.table["code"], task.ontology.table["description"]))
    encoder = BoundaryEncoder(engine.tokenizer)
    cache = RequestCache(engine.tokenizer)
    chunks = task.chunks(config.chunk_size)
    done = store.finished_chunks(BENCHMARK)
    pending = [(index, codes) for index, codes in enumerate(chunks) if index not in done]
    phases = PhaseTimes()

    def plan(codes: Sequence[str]) -> list[PlannedRequest]:
        with phases.timing("encode"):
            return plan_chunk(
                encoder, codes, descriptions, task.scored_names, config.template, cache
            )

    def write(index: int, codes: Sequence[str], planned: list[PlannedRequest], found: Any) -> None:
        with phases.timing("write"):
            store.write_chunk(
                BENCHMARK, index, records_frame(codes, task.scored_names, planned, found)
            )

    # A resumed run first checks that the engine still gives the stored values.
    canary = check_canary(
        store,
        BENCHMARK,
        engine,
        plan,
        lambda codes, planned, found: records_frame(codes, task.scored_names, planned, found),
        # The dtype the engine runs in (``auto`` resolved) and the spread its first start saw.
        store.section(BENCHMARK).engine.get("dtype") if config.engine == "local" else None,
        store.section(BENCHMARK).engine.get("canary_spread"),
    )
    if canary is not None:
        store.annotate(BENCHMARK, canary=canary)

    extra = sum(len(keys) for _, keys, _ in task.template_prompts(config))
    start = time.perf_counter()
    retries = Retries(engine)  # this benchmark's, though a suite shares the engine
    with (
        Progress(
            "intrinsic prompts",
            len(task.codes) + extra,
            config.display,
            shrink="--limit N scores a stratified sample of N codes (in eval all: "
            "--limit-intrinsic N), --sensitivity-codes 0 skips the further templates",
        ) as progress,
        ThreadPoolExecutor(max_workers=1) as encoding,
        ThreadPoolExecutor(max_workers=1) as writing,
    ):
        progress.skip(sum(len(codes) for index, codes in enumerate(chunks) if index in done))
        upcoming: Future[list[PlannedRequest]] | None = (
            encoding.submit(plan, pending[0][1]) if pending else None
        )
        written: Future[None] | None = None
        for k, (index, codes) in enumerate(pending):
            assert upcoming is not None
            with phases.timing("wait_encode"):
                planned = upcoming.result()
            upcoming = encoding.submit(plan, pending[k + 1][1]) if k + 1 < len(pending) else None
            with phases.timing("score"):
                results = engine.score([p.request for p in planned])
            # One write in flight at most: records stay bounded, and chunks land in order.
            if written is not None:
                with phases.timing("wait_write"):
                    written.result()
            written = writing.submit(write, index, codes, planned, results)
            progress.advance(len(codes), retries)
        if written is not None:
            with phases.timing("wait_write"):
                written.result()
        with phases.timing("templates"):
            _score_templates(config, store, engine, task, encoder, progress, retries)
    phases.seconds["wall"] = time.perf_counter() - start
    store.annotate(
        BENCHMARK,
        chunks=len(chunks),
        codes=len(task.codes),
        distinct_names=list(task.distinct_names),
        scored_names=len(task.scored_names),
        boundary_split_pairs_this_session=encoder.mismatched_pairs,
        boundary_this_session=asdict(encoder.counts),
        request_cache_this_session={"hits": cache.hits, "misses": cache.misses},
        phase_seconds_this_session=phases.rounded(),
        retries_this_session=retries.causes(),
    )
    if pending and config.display != "none":
        print(f"intrinsic phases: {phases.line()}", file=sys.stderr)
    return len(pending)


def _score_templates(
    config: IntrinsicConfig,
    store: RunStore,
    engine: Engine,
    task: IntrinsicTask,
    encoder: BoundaryEncoder,
    progress: Progress,
    retries: Retries,
) -> None:
    """Score the calibration and sensitivity prompts that the run directory lacks (the
    benchmark's ``retries`` are shown as they go).

    Records: ``template, kind ("content-free" | "code"), code, name, logprob`` where ``code``
    is the content-free description (kind content-free) or the ICD code.
    """
    import polars as pl

    done = store.finished_chunks(TEMPLATES)
    for index, (template, keys, texts) in enumerate(task.template_prompts(config)):
        if index in done:
            progress.skip(len(keys))
            continue
        described = dict(zip(keys, texts))
        planned = plan_chunk(encoder, keys, described, task.scored_names, template)
        frame = records_frame(
            keys, task.scored_names, planned, engine.score([p.request for p in planned])
        )
        free = frame["code"].str.starts_with("cf:")
        store.write_chunk(
            TEMPLATES,
            index,
            frame.select(
                pl.lit(template).alias("template"),
                pl.when(free).then(pl.lit("content-free")).otherwise(pl.lit("code")).alias("kind"),
                pl.when(free).then(pl.col("code").str.slice(3)).otherwise("code").alias("code"),
                "name",
                "logprob",
            ),
        )
        progress.advance(len(keys), retries)
