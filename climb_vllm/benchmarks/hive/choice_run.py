"""Running a HIVE benchmark in choice mode: its prompts scored (resuming), then its tables.

The results folder holds the same files as a generation run's (``tables.md``, a CSV per table,
``metrics.json``) and ``graded.parquet`` with ``id, sample, correct`` per original item by the
headline score, which the report's paired comparison of two runs reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError
from climb_vllm.core.store import model_label, results_folder

if TYPE_CHECKING:
    from climb_vllm.benchmarks.hive.choice import ChoiceKind
    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.benchmarks.hive.kind import Kind
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext


def choice_of(kind: Kind) -> ChoiceKind:
    """The benchmark's choice-mode declaration.

    Raises:
        UserError: the benchmark has none.
    """
    if kind.choice is None:
        raise UserError(
            f"{kind.title} has no choice mode.",
            f"run 'climb-vllm eval {kind.name}' without --answer.",
        )
    return kind.choice


def run_hive_choice(kind: Kind, config: GenerationConfig, context: RunContext) -> Path:
    """Score every option of every item (resuming), write the tables; returns the run folder."""
    from climb_vllm.benchmarks.hive.choice import CONTENT_FREE, run_choice
    from climb_vllm.benchmarks.hive.items import dataset_hashes
    from climb_vllm.runner.run import open_run

    choice = choice_of(kind)
    items = kind.items(config.split, config.limit, config.seed, config.controls)
    store, engine, config = open_run(
        config,
        context,
        kind.name,
        scores=True,
        datasets={"hive": dataset_hashes(kind.datasets)},
        prompt_template=choice.template,
        choice={"content_free": list(CONTENT_FREE), "headline": choice.headline},
    )
    prompts = choice.prompts(items)
    run_choice(kind.name, store, engine, prompts, config.chunk_size, config.display)
    write_choice_report(store, kind, quiet=context.quiet or config.display == "none")
    return Path(store.root)


def write_choice_report(store: RunStore, kind: Kind, quiet: bool = False) -> dict[str, Any]:
    """Tabulate a choice-mode run's records into ``results/<name>/``; returns its metrics."""
    import json

    import polars as pl

    from climb_vllm.benchmarks.hive.choice import choices_frame
    from climb_vllm.benchmarks.hive.config import GenerationConfig
    from climb_vllm.core.results import write_tables

    choice = choice_of(kind)
    config = GenerationConfig(**store.section(kind.name).config)
    items = kind.items(config.split, config.limit, config.seed, config.controls)
    records = store.read_records(kind.name)
    expected = {(p.id, p.variant) for p in choice.prompts(items)}
    found = set(records.select("id", "variant").unique().iter_rows())
    if expected - found:
        raise UserError(
            f"The run holds scores for {len(expected & found)} of {len(expected)} prompts.",
            f"rerun the same 'climb-vllm eval {kind.name} --answer choice' command to finish it.",
        )
    choices = choices_frame(records, choice.headline)
    tables = choice.tables(choices, items)
    model = model_label(config.model)
    method = pl.DataFrame(
        [(model, *row) for row in choice.method], schema=["Model", "Choice", "Value"], orient="row"
    )
    layout = {"choice_method": method, **choice.layout(tables, model)}
    titles = {"choice_method": f"{kind.title}, choice mode: method", **choice.titles}
    directory = results_folder(store.root, kind.name)
    heading = f"{kind.title}, choice mode — {model}"
    path = write_tables(directory, heading, layout, titles, tables, percent=choice.percent)
    graded = choice.correct(choices, items).with_columns(pl.lit(0, dtype=pl.Int64).alias("sample"))
    graded.write_parquet(directory / "graded.parquet")
    if not quiet:
        print(path.read_text())
        print(f"tables written to {directory}")
    loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
    loaded["grade_changes"] = []
    return loaded
