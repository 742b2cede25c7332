"""Running a HIVE benchmark (:class:`~climb_vllm.benchmarks.hive.kind.Kind`): items,
generation, grading and the tables of a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError
from climb_vllm.core.store import model_label, results_folder

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.benchmarks.hive.kind import Kind
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext


def run_hive(kind: Kind, config: GenerationConfig, context: RunContext) -> Path:
    """Generate answers for every item (resuming), store, grade, write the tables; returns the
    run directory."""
    from climb_vllm.benchmarks.hive.items import dataset_hashes
    from climb_vllm.runner.generation import run_generation
    from climb_vllm.runner.run import open_run

    if config.answer == "choice":
        from climb_vllm.benchmarks.hive.choice_run import run_hive_choice

        return run_hive_choice(kind, config, context)
    items = kind.items(config.split, config.limit, config.seed, config.controls)
    store, engine, config = open_run(
        config,
        context,
        kind.name,
        datasets={"hive": dataset_hashes(kind.datasets)},
        prompt_template=kind.prompt,
        seeds={"base": config.seed, "per_item": "crc32('<seed>:<item id>') & 0x7fffffff"},
    )
    run_generation(config, store, engine, items)
    write_generation_report(store, kind, quiet=context.quiet or config.display == "none")
    return Path(store.root)


def graded_run(store: RunStore, kind: Kind) -> tuple[pl.DataFrame, GenerationConfig]:
    """A run's stored records of one benchmark, graded, and the run's configuration."""
    from climb_vllm.benchmarks.hive.config import GenerationConfig

    config = GenerationConfig(**store.section(kind.name).config)
    items = kind.items(config.split, config.limit, config.seed, config.controls)
    records = store.read_records(kind.name)
    missing = set(items["id"].to_list()) - set(records["id"].to_list())
    if missing:
        raise UserError(
            f"The run holds answers for {items.height - len(missing)} of {items.height} items.",
            f"rerun the same 'climb-vllm eval {kind.name}' command to finish it.",
        )
    return kind.grade(records, items), config


def shown_tables(kind: Kind, graded: pl.DataFrame, model: str) -> tuple[Any, Any, Any, str]:
    """(long tables, layout, titles, heading) of one benchmark's graded answers."""
    tables = kind.tables(graded)
    return tables, kind.layout(tables, model), kind.titles, f"{kind.title} — {model}"


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


def write_generation_report(store: RunStore, kind: Kind, quiet: bool = False) -> dict[str, Any]:
    """Grade a run's records, write ``results/<name>/`` and return its metrics.

    The returned metrics also hold ``grade_changes``: how the grades differ from those of the
    previous ``graded.parquet`` (empty on a first grading), which ``rescore`` prints; it is not
    stored in metrics.json.
    """
    import json

    import polars as pl

    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.core.results import write_tables

    if GenerationConfig(**store.section(kind.name).config).answer == "choice":
        from climb_vllm.benchmarks.hive.choice_run import write_choice_report

        return write_choice_report(store, kind, quiet=quiet)
    graded, config = graded_run(store, kind)
    tables, layout, titles, heading = shown_tables(kind, graded, model_label(config.model))
    directory = results_folder(store.root, kind.name)
    previous = directory / "graded.parquet"
    before = None
    if previous.exists():
        before = pl.read_parquet(previous, columns=["id", "sample", "grade"])
    path = write_tables(directory, heading, layout, titles, tables, percent=kind.percent)
    graded.drop("statement", "question", strict=False).write_parquet(previous)
    if not quiet:
        print(path.read_text())
        print(f"tables written to {directory}")
    loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
    loaded["grade_changes"] = [] if before is None else grade_changes(before, graded)
    return loaded
