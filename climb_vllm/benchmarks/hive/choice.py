"""Choice mode (``--answer choice``): a HIVE item answered by the option the model scores
highest, not by a generated text, so that base models, which rarely write a gradable answer,
still give a number.

Each item becomes one or more :class:`ChoicePrompt`: a raw text prompt (no chat template, as
lm-evaluation-harness scores multiple-choice tasks) and its options. Every option is scored as
the continuation ``" " + option`` of the prompt under the engines' token-boundary contract
(:mod:`climb_vllm.engines.boundary`); the options of a prompt share its prefix, so the engine
computes the prompt once for all of them. Each option is also scored after the same template
filled with content-free texts (:data:`CONTENT_FREE`), whose mean probability is the option's
base rate: the calibrated score subtracts its log, as contextual calibration does (Zhao et al.
2021) and as the intrinsic benchmark calibrates names.

Records: one row per (prompt, option): ``id, variant, option, text, logprob, calibration,
bytes``. Prompts are stored in chunks written atomically, so a killed run resumes at the first
missing chunk without losing or repeating a record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from climb_vllm.core.progress import Progress, Retries

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.base import Finding
    from climb_vllm.core.store import RunStore
    from climb_vllm.engines.base import Engine

#: Texts that stand in for an item's content to read each option's base rate (Zhao et al.'s
#: content-free inputs; the intrinsic benchmark's first three).
CONTENT_FREE = ("N/A", "None", "[MASK]")
#: The three scores of an option, in the order tables show them: the summed log-prob, the
#: summed log-prob per byte of the option (lm-eval's ``acc_norm``) and the calibrated log-prob.
SCORES = ("sum", "per_byte", "calibrated")


@dataclass(frozen=True)
class ChoicePrompt:
    """One prompt of choice mode and its options.

    Attributes:
        id: the item's id.
        variant: which version of the item ("original", or a swap such as "name_swap").
        text: the prompt; each option is scored as ``text + " " + option``.
        content_free: the same template with the item's content replaced by each of
            :data:`CONTENT_FREE` (the option's base rate is read after these).
        options: the options, in a fixed order the tables refer to (index 0, 1, ...).
    """

    id: str
    variant: str
    text: str
    content_free: tuple[str, ...]
    options: tuple[str, ...]


@dataclass(frozen=True)
class ChoiceKind:
    """What a HIVE benchmark declares for choice mode.

    Attributes:
        prompts: the item frame -> its prompts (every variant of every item).
        template: the prompt template, recorded in the manifest.
        tables: ``(choices, items)`` -> the long tables; ``choices`` is :func:`choices_frame`.
        layout: ``(tables, model)`` -> the tables as shown, by key.
        titles: each shown table's title, by key.
        percent: each shown table's percent columns beyond those named so, by key.
        finding: the run's ``metrics.json`` -> what it found.
        headline: the one of :data:`SCORES` a choice is made by where one is reported alone
            (the finding, position, swaps, comparisons); each benchmark says why.
        method: the report's method table: (choice, value) rows, the headline and why among
            them.
        correct: ``(choices, items)`` -> ``id, kind, correct`` per original item by the headline
            score (what runs compare, and the report's paired comparison reads).
    """

    prompts: Callable[[pl.DataFrame], list[ChoicePrompt]]
    template: str
    tables: Callable[[pl.DataFrame, pl.DataFrame], dict[str, pl.DataFrame]]
    layout: Callable[[dict[str, pl.DataFrame], str], dict[str, pl.DataFrame]]
    titles: Mapping[str, str]
    percent: Mapping[str, tuple[str, ...]]
    finding: Callable[[Mapping[str, Any]], Finding]
    correct: Callable[[pl.DataFrame, pl.DataFrame], pl.DataFrame]
    headline: str
    method: tuple[tuple[str, str], ...]


@dataclass
class TokenCounts:
    """Tokens the scored requests feed the model (written to the run record).

    Attributes:
        shared: with each prompt computed once for all its options (what engines do).
        separate: had every option been scored as its own full sequence (lm-evaluation-harness's
            way for multiple-choice tasks).
    """

    shared: int = 0
    separate: int = 0


def _log_mean_exp(values: npt.ArrayLike) -> float:
    """log of the mean of exp(values), computed stably."""
    array = np.asarray(values, dtype=np.float64)
    top = float(array.max())
    return top + float(np.log(np.mean(np.exp(array - top))))


def score_prompts(
    engine: Engine,
    prompts: Sequence[ChoicePrompt],
    encoder: Any | None = None,
    counts: TokenCounts | None = None,
) -> pl.DataFrame:
    """Score every option of ``prompts`` after the prompt and after its content-free texts.

    Args:
        engine: any engine that scores (``Engine.score``).
        prompts: the prompts to score, in the order the rows come back.
        encoder: a :class:`~climb_vllm.engines.boundary.BoundaryEncoder` of the engine's
            tokenizer (made here when None).
        counts: adds the tokens of this call's requests (None: not counted).

    Returns:
        One row per (prompt, option): ``id, variant, option, text, logprob, calibration,
        bytes`` (``calibration``: log of the option's mean probability after the content-free
        texts; ``bytes``: UTF-8 bytes of ``" " + option``).
    """
    import polars as pl

    from climb_vllm.engines.boundary import BoundaryEncoder

    encoder = encoder or BoundaryEncoder(engine.tokenizer, tails=False)
    planned: list[tuple[int, Any]] = []
    for index, prompt in enumerate(prompts):
        planned += [(index, plan) for plan in encoder.plan((prompt.text,), prompt.options)]
    # The content-free texts are the same for many prompts (all of them, or one set per
    # pronoun): each (content-free text, option) pair is scored once per call.
    free: dict[tuple[str, ...], list[str]] = {}
    for prompt in prompts:
        if prompt.content_free:
            known = free.setdefault(prompt.content_free, [])
            known += [o for o in prompt.options if o not in known]
    free_planned = [
        (texts, options, plan)
        for texts, options in free.items()
        for plan in encoder.plan(texts, options)
    ]
    requests = [plan.request for _, plan in planned] + [plan.request for *_, plan in free_planned]
    if counts is not None:
        for request in requests:
            lengths = [len(c) for c in request.continuations]
            counts.shared += len(request.prefix) + sum(lengths)
            counts.separate += sum(len(request.prefix) + n for n in lengths)
    results = engine.score(requests)
    # values[prompt][option]; base[(content-free texts)][text, option].
    values = [np.full(len(p.options), np.nan) for p in prompts]
    for (index, plan), result in zip(planned, results):
        for option, logprob in zip(plan.name_indices, result.logprobs):
            values[index][option] = logprob
    base = {texts: np.full((len(texts), len(options)), np.nan) for texts, options in free.items()}
    for (texts, _, plan), result in zip(free_planned, results[len(planned) :]):
        for option, logprob in zip(plan.name_indices, result.logprobs):
            base[texts][plan.text_index, option] = logprob
    rows: dict[str, list[Any]] = {
        k: [] for k in ("id", "variant", "option", "text", "logprob", "calibration", "bytes")
    }
    for prompt, scored in zip(prompts, values):
        if np.isnan(scored).any():
            raise RuntimeError(f"an option of {prompt.id} ({prompt.variant}) was not scored")
        for option, text in enumerate(prompt.options):
            rows["id"].append(prompt.id)
            rows["variant"].append(prompt.variant)
            rows["option"].append(option)
            rows["text"].append(text)
            rows["logprob"].append(float(scored[option]))
            calibration = 0.0
            if prompt.content_free:
                column = free[prompt.content_free].index(text)
                calibration = _log_mean_exp(base[prompt.content_free][:, column])
            rows["calibration"].append(calibration)
            rows["bytes"].append(len((" " + text).encode()))
    return pl.DataFrame(
        rows,
        schema={
            "id": pl.String,
            "variant": pl.String,
            "option": pl.Int64,
            "text": pl.String,
            "logprob": pl.Float64,
            "calibration": pl.Float64,
            "bytes": pl.Int64,
        },
    )


def run_choice(
    benchmark: str,
    store: RunStore,
    engine: Engine,
    prompts: Sequence[ChoicePrompt],
    chunk_size: int,
    display: str,
) -> int:
    """Score every chunk of ``prompts`` not stored yet; returns the chunks scored in this call.

    Args:
        benchmark: the benchmark's registry name (its records folder).
        store: the run's store.
        engine: an engine that scores.
        prompts: every prompt of the run, in a fixed order (chunk k holds prompts
            ``k * chunk_size`` onwards).
        chunk_size: prompts per stored chunk.
        display: the progress display setting.
    """
    from climb_vllm.engines.boundary import BoundaryEncoder

    encoder = BoundaryEncoder(engine.tokenizer, tails=False)
    counts = TokenCounts()
    starts = range(0, len(prompts), chunk_size)
    done = store.finished_chunks(benchmark)
    shrink = f"--limit N asks a sample of N items (in eval all: --limit-{benchmark} N)"
    scored = 0
    with Progress(f"{benchmark} prompts", len(prompts), display, shrink=shrink) as progress:
        progress.skip(
            sum(len(prompts[s : s + chunk_size]) for s in starts if s // chunk_size in done)
        )
        retries = Retries(engine)
        for start in starts:
            index = start // chunk_size
            if index in done:
                continue
            chunk = prompts[start : start + chunk_size]
            store.write_chunk(benchmark, index, score_prompts(engine, chunk, encoder, counts))
            progress.advance(len(chunk), retries, 0)
            scored += 1
    store.annotate(
        benchmark,
        chunks=len(starts),
        items=len(prompts),
        retries_this_session=retries.causes(),
        boundary_mismatches=encoder.mismatched_pairs,
        tokens_this_session={"shared": counts.shared, "separate": counts.separate},
    )
    return scored


def choices_frame(records: pl.DataFrame, headline: str) -> pl.DataFrame:
    """Each prompt's choice by every score, from the records of :func:`score_prompts`.

    Args:
        records: the records.
        headline: the score of ``choice`` and ``margin`` (one of :data:`SCORES`).

    Returns:
        One row per (id, variant): ``options`` (how many), ``choice_<score>`` for each of
        :data:`SCORES` (the index of the option scored highest; the first on a tie),
        ``choice``: that of the headline score, and ``margin``: the headline score of option 0
        minus that of option 1, the log-odds of choosing option 0 over option 1 among the two.
    """
    import polars as pl

    scored = records.with_columns(
        pl.col("logprob").alias("sum"),
        (pl.col("logprob") / pl.col("bytes")).alias("per_byte"),
        (pl.col("logprob") - pl.col("calibration")).alias("calibrated"),
    ).sort("id", "variant", "option")
    keys = ["id", "variant"]
    choices = [
        pl.col("option").get(pl.col(score).arg_max()).alias(f"choice_{score}") for score in SCORES
    ]
    best = pl.col(headline)
    return scored.group_by(keys, maintain_order=True).agg(
        pl.len().alias("options"),
        *choices,
        pl.col("option").get(best.arg_max()).alias("choice"),
        (best.get(0) - best.get(1)).alias("margin"),
    )
