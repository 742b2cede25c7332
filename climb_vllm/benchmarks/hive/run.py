"""Running BiasMD and DiseaseMatcher: items, generation, grading and the tables of a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError
from climb_vllm.core.store import model_label

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext

GENERATION_BENCHMARKS = ("biasmd", "diseasematcher")


def items_for(benchmark: str, split: str, limit: int | None, seed: int, controls: bool) -> Any:
    """The item frame (with ``prompt``) of one benchmark."""
    if benchmark == "biasmd":
        from climb_vllm.benchmarks.hive import biasmd

        return biasmd.items_frame(split, limit, seed, controls)
    from climb_vllm.benchmarks.hive import diseasematcher

    return diseasematcher.items_frame(split, limit, seed)


def run_hive(config: GenerationConfig, context: RunContext) -> Path:
    """Generate answers for every item (resuming), store, grade, write the tables; returns the
    run directory."""
    from climb_vllm.benchmarks.hive.items import dataset_hashes
    from climb_vllm.runner.generation import run_generation
    from climb_vllm.runner.run import open_run

    benchmark = config.benchmark
    items = items_for(benchmark, config.split, config.limit, config.seed, config.controls)
    store, engine, config = open_run(
        config,
        context,
        benchmark,
        datasets={"hive": dataset_hashes()},
        prompt_template=_prompt_note(benchmark),
        seeds={"base": config.seed, "per_item": "crc32('<seed>:<item id>') & 0x7fffffff"},
    )
    run_generation(config, store, engine, items)
    write_generation_report(store, benchmark, quiet=context.quiet or config.display == "none")
    return Path(store.root)


def _prompt_note(benchmark: str) -> str:
    if benchmark == "biasmd":
        from climb_vllm.benchmarks.hive.biasmd import PROMPT

        return PROMPT
    return "{question}"


def graded_run(store: RunStore, benchmark: str) -> tuple[pl.DataFrame, GenerationConfig]:
    """A run's stored records of one benchmark, graded, and the run's configuration."""
    from climb_vllm.benchmarks.hive.config import GenerationConfig

    config = GenerationConfig(**store.section(benchmark)["config"])
    items = items_for(benchmark, config.split, config.limit, config.seed, config.controls)
    records = store.read_records(benchmark)
    missing = set(items["id"].to_list()) - set(records["id"].to_list())
    if missing:
        raise UserError(
            f"The run holds answers for {items.height - len(missing)} of {items.height} items.",
            f"rerun the same 'climb-vllm eval {benchmark}' command to finish it.",
        )
    return grade(benchmark, records, items), config


def grade(benchmark: str, records: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    if benchmark == "biasmd":
        from climb_vllm.benchmarks.hive import biasmd

        return biasmd.grade_frame(records, items)
    from climb_vllm.benchmarks.hive import diseasematcher

    return diseasematcher.grade_frame(records, items)


def shown_tables(benchmark: str, graded: pl.DataFrame, model: str) -> tuple[Any, Any, Any, str]:
    """(long tables, layout, titles, heading) of one benchmark."""
    from climb_vllm.benchmarks.hive import tables as report_hive

    if benchmark == "biasmd":
        from climb_vllm.benchmarks.hive import biasmd

        tables = biasmd.tables(graded)
        return (
            tables,
            report_hive.biasmd_layout(tables, model),
            report_hive.BIASMD_TITLES,
            f"BiasMD — {model}",
        )
    from climb_vllm.benchmarks.hive import diseasematcher

    tables = diseasematcher.tables(graded)
    return (
        tables,
        report_hive.diseasematcher_layout(tables, model),
        report_hive.DISEASEMATCHER_TITLES,
        f"DiseaseMatcher — {model}",
    )


#: Grades of earlier versions of the graders and their names now: a change between these is a
#: renaming, not a different reading of the answer.
RENAMED = {"no_attribution": "declined", "unclear": "unparseable"}


def grade_changes(before: pl.DataFrame, after: pl.DataFrame) -> list[dict[str, Any]]:
    """How the grades of the same answers changed: ``{from, to, answers, renamed}`` per pair.

    Args:
        before: the previous ``graded.parquet`` (``id, sample, grade``).
        after: the answers graded now (``id, sample, grade``).
    """
    import polars as pl

    joined = before.select("id", "sample", pl.col("grade").alias("from")).join(
        after.select("id", "sample", pl.col("grade").alias("to")), on=["id", "sample"]
    )
    changed = (
        joined.filter(pl.col("from") != pl.col("to"))
        .group_by("from", "to")
        .agg(pl.len().alias("answers"))
        .sort("answers", "from", "to", descending=[True, False, False])
    )
    return [
        {**row, "renamed": RENAMED.get(row["from"]) == row["to"]}
        for row in changed.iter_rows(named=True)
    ]


def write_generation_report(store: RunStore, benchmark: str, quiet: bool = False) -> dict[str, Any]:
    """Grade a run's records, write ``results/<benchmark>/`` and return its metrics.

    The returned metrics also hold ``grade_changes``: how the grades differ from those of the
    previous ``graded.parquet`` (empty on a first grading), which ``rescore`` prints; it is not
    stored in metrics.json.
    """
    import json

    import polars as pl

    from climb_vllm.core.results import write_tables

    graded, config = graded_run(store, benchmark)
    tables, layout, titles, heading = shown_tables(benchmark, graded, model_label(config.model))
    directory = store.root / "results" / benchmark
    previous = directory / "graded.parquet"
    before = None
    if previous.exists():
        before = pl.read_parquet(previous, columns=["id", "sample", "grade"])
    path = write_tables(directory, heading, layout, titles, tables)
    graded.drop("statement", "question", strict=False).write_parquet(previous)
    if not quiet:
        print(path.read_text())
        print(f"tables written to {directory}")
    loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
    loaded["grade_changes"] = [] if before is None else grade_changes(before, graded)
    return loaded
