"""CLIMB intrinsic's speed and accuracy measurements, as ``climb-vllm bench`` offers them, and
its full-size synthetic records for the report's measurement. The work happens in
:mod:`~climb_vllm.benchmarks.intrinsic.perf` and
:mod:`~climb_vllm.benchmarks.intrinsic.coverage`, imported when a measurement runs (torch stays
out of the command line's start)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from climb_vllm.benchmarks.base import BenchHook, PerfSettings, Synthetic, deferred
from climb_vllm.core.errors import UserError

#: Codes of the 2021 release (``--requests`` given bare measures them all).
RELEASE_CODES = 95358


def _scoring(_: Any, settings: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.perf import scoring_bench

    return scoring_bench(
        settings.model,
        settings.codes,
        settings.device,
        settings.dtype,
        settings.batch_tokens,
        settings.full_run,
        settings.row_tokens,
        settings.repeats,
        settings.peak_tflops,
        settings.profile,
        settings.compile_layers,
    )


def _names_growth(_: Any, settings: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.perf import names_growth_bench

    return names_growth_bench(
        settings.model,
        settings.codes,
        settings.device,
        settings.dtype,
        settings.batch_tokens,
        repeats=settings.repeats,
    )


def _requests(codes: int, settings: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.request_perf import request_building_bench

    if settings.model is None:
        raise UserError("bench --requests needs a tokenizer.", "add --model DIR (or a source).")
    release = None if codes >= RELEASE_CODES else codes
    return request_building_bench(settings.model, release, settings.row_tokens)


def _assoc_coverage(replications: int, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.coverage import coverage_bench

    return coverage_bench(replications)


def _drilldown_coverage(run: Path, _: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.coverage import run_drilldown_coverage

    return run_drilldown_coverage(run)


def _served_model(settings: PerfSettings, flag: str) -> Path:
    """The served model's folder (a model source resolves to its converted folder)."""
    from climb_vllm.models.sources import resolve

    if settings.model is None:
        raise UserError(f"bench --{flag} needs the served model's weights.", "add --model DIR.")
    return Path(resolve(str(settings.model)))


def _endpoint(url: str, settings: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.perf import requests_for
    from climb_vllm.engines.serving_perf import serving_bench

    model = _served_model(settings, "endpoint")
    return serving_bench(url, str(model), requests_for(model, settings.codes), settings.codes)


def _agreement(urls: list[str], settings: PerfSettings) -> dict[str, Any]:
    from climb_vllm.benchmarks.intrinsic.task import sample_requests
    from climb_vllm.engines.serving_perf import agreement_bench

    model = _served_model(settings, "agreement")

    def build(tokenizer: Any) -> Any:
        return sample_requests(tokenizer, settings.codes, top_k=settings.top_k, seed=0)

    return agreement_bench(model, urls, build, settings.codes)


HOOKS: tuple[BenchHook, ...] = (
    BenchHook(
        "scoring",
        "compare the tree, prefix and naive scorers (and lm-eval's HFLM when installed) on "
        "--codes codes: tokens per pair, wall time, agreement (what bench runs by default)",
        _scoring,
        value="switch",
        runs_by_default=True,
    ),
    BenchHook(
        "names_growth",
        "time the default scorer on --codes codes with the top 5, 10, 20 and 50 names per "
        "group instead (ratios against 5)",
        _names_growth,
        value="switch",
    ),
    BenchHook(
        "requests",
        "time building the requests of the release's first N codes (all when bare) with "
        "--model's tokenizer: every pair encoded in full, the planner by tails (cold, and warm "
        "from its disk cache), and the token-tree layout; the plans must be identical",
        _requests,
        RELEASE_CODES,
    ),
    BenchHook(
        "assoc_coverage",
        "measure, by simulation with N replications per scenario, how often the printed "
        "AssocMAD and sex-preference intervals cover the population value instead",
        _assoc_coverage,
        200,
    ),
    BenchHook(
        "drilldown_coverage",
        "coverage of the drill-down intervals on a run that scored the top-50 names per "
        "group (--top-k 50 or --names-sensitivity ...,50): 5 of each group's 50 drawn 200 times",
        _drilldown_coverage,
        value="path",
    ),
    BenchHook(
        "endpoint",
        "measure the serving path against this vLLM server: prompts and bytes per code of the "
        "trie and prompt_logprobs strategies, prefix-cache hits, client overhead (needs --model)",
        _endpoint,
        value="url",
    ),
    BenchHook(
        "agreement",
        "served scores against the in-process engine on --codes codes (names: --top-k per "
        "group): |difference| and wall time per endpoint (repeatable; any server that serves "
        "--model's weights)",
        _agreement,
        value="urls",
    ),
)

SYNTHETIC = Synthetic(
    deferred("climb_vllm.benchmarks.intrinsic.table_perf:synthetic_records"),
    deferred("climb_vllm.benchmarks.intrinsic.table_perf:table_baseline"),
)
