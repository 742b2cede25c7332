"""The BiasMD and DiseaseMatcher verbs: run a benchmark, report a run, grade outside responses.

Kept apart from ``cli.py`` so that the command line stays a list of verbs; everything here is
called with parsed arguments and raises :class:`UserError` for problems the user can fix.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.errors import UserError

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.config import GenerationConfig
    from climb_vllm.store import RunStore

GENERATION_BENCHMARKS = ("biasmd", "diseasematcher")


def items_for(benchmark: str, split: str, limit: int | None, seed: int, controls: bool) -> Any:
    """The item frame (with ``prompt``) of one benchmark."""
    if benchmark == "biasmd":
        from climb_vllm.benchmarks import biasmd

        return biasmd.items_frame(split, limit, seed, controls)
    from climb_vllm.benchmarks import diseasematcher

    return diseasematcher.items_frame(split, limit, seed)


def eval_generation(args: argparse.Namespace) -> Path:
    """``climb-vllm eval biasmd|diseasematcher``: generate, store, grade, print the tables."""
    from pydantic import ValidationError

    from climb_vllm.benchmarks.generative import run_generation
    from climb_vllm.benchmarks.hive_items import dataset_hashes
    from climb_vllm.cli import engine_settings, invalid_option, open_run, quiet_tables
    from climb_vllm.config import GenerationConfig

    benchmark: str = args.benchmark
    try:
        config = GenerationConfig(
            **engine_settings(args),
            benchmark=benchmark,  # type: ignore[arg-type]  # argparse choices
            split=args.split,
            limit=args.limit,
            seed=args.seed,
            samples=args.samples,
            temperature=0.0 if args.greedy else args.temperature,
            top_p=1.0 if args.greedy else args.top_p,
            max_tokens=args.max_tokens,
            system_prompt=args.system_prompt,
            controls=not getattr(args, "no_controls", False),
            chunk_size=args.chunk_size,
        )
    except ValidationError as exc:
        raise invalid_option(exc, benchmark) from exc
    items = items_for(benchmark, config.split, config.limit, config.seed, config.controls)
    store, engine, config = open_run(
        config,
        args,
        benchmark,
        datasets={"hive": dataset_hashes()},
        prompt_template=_prompt_note(benchmark),
        seeds={"base": config.seed, "per_item": "crc32('<seed>:<item id>') & 0x7fffffff"},
    )
    run_generation(config, store, engine, items)
    write_generation_report(store, benchmark, quiet=quiet_tables(args))
    return Path(store.root)


def _prompt_note(benchmark: str) -> str:
    if benchmark == "biasmd":
        from climb_vllm.benchmarks.biasmd import PROMPT

        return PROMPT
    return "{question}"


def graded_run(store: RunStore, benchmark: str) -> tuple[pl.DataFrame, GenerationConfig]:
    """A run's stored records of one benchmark, graded, and the run's configuration."""
    from climb_vllm.config import GenerationConfig

    config = GenerationConfig(**store.section(benchmark)["config"])
    items = items_for(benchmark, config.split, config.limit, config.seed, config.controls)
    records = store.read_records(benchmark)
    missing = set(items["id"].to_list()) - set(records["id"].to_list())
    if missing:
        raise UserError(
            f"The run holds answers for {items.height - len(missing)} of {items.height} items.",
            f"rerun the same 'climb-vllm eval {benchmark}' command to finish it.",
        )
    return _grade(benchmark, records, items), config


def _grade(benchmark: str, records: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    if benchmark == "biasmd":
        from climb_vllm.benchmarks import biasmd

        return biasmd.grade_frame(records, items)
    from climb_vllm.benchmarks import diseasematcher

    return diseasematcher.grade_frame(records, items)


def _tables(benchmark: str, graded: pl.DataFrame, model: str) -> tuple[Any, Any, Any, str]:
    """(long tables, layout, titles, heading) of one benchmark."""
    from climb_vllm import report_hive

    if benchmark == "biasmd":
        from climb_vllm.benchmarks import biasmd

        tables = biasmd.tables(graded)
        return (
            tables, report_hive.biasmd_layout(tables, model), report_hive.BIASMD_TITLES,
            f"BiasMD — {model}",
        )  # fmt: skip
    from climb_vllm.benchmarks import diseasematcher

    tables = diseasematcher.tables(graded)
    return (
        tables, report_hive.diseasematcher_layout(tables, model),
        report_hive.DISEASEMATCHER_TITLES, f"DiseaseMatcher — {model}",
    )  # fmt: skip


def write_generation_report(store: RunStore, benchmark: str, quiet: bool = False) -> dict[str, Any]:
    """Grade a run's records, write ``results/<benchmark>/`` and return its metrics."""
    import json

    from climb_vllm.report_hive import write_tables

    graded, config = graded_run(store, benchmark)
    tables, layout, titles, heading = _tables(benchmark, graded, config.model)
    directory = store.root / "results" / benchmark
    path = write_tables(directory, heading, layout, titles, tables)
    graded.drop("statement", "question", strict=False).write_parquet(directory / "graded.parquet")
    if not quiet:
        print(path.read_text())
        print(f"tables written to {directory}")
    loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
    return loaded


def _make_folder(folder: Path, option: str) -> None:
    """Create ``folder`` for output, or stop with the reason and the option to change."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot write to {folder} ({exc.strerror}).", f"pass {option} with a writable path."
        ) from exc


def read_responses(path: Path) -> pl.DataFrame:
    """A responses CSV (columns ``id``, ``response``; optional ``sample``), validated.

    Raises:
        UserError: the file is missing, not UTF-8, not CSV, lacks a column, or repeats an
            (id, sample) pair.
    """
    import polars as pl

    if not path.is_file():
        raise UserError(f"{path} does not exist.", "pass the path of a CSV file of responses.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(
            f"{path} is not UTF-8 text (byte {exc.start}, line {line}).",
            "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8).",
        ) from exc
    try:
        frame = pl.read_csv(io.StringIO(text), infer_schema_length=0)
    except (pl.exceptions.PolarsError, ValueError) as exc:
        raise UserError(
            f"{path} could not be read as CSV: {str(exc).splitlines()[0]}",
            "write a comma-separated file with a header row and quoted multi-line responses.",
        ) from exc
    missing = [c for c in ("id", "response") if c not in frame.columns]
    if missing:
        raise UserError(
            f"{path} lacks the column(s) {', '.join(missing)} "
            f"(it has: {', '.join(frame.columns)}).",
            "name the item column 'id' and the answer column 'response' (optional: 'sample').",
        )
    if "sample" not in frame.columns:
        frame = frame.with_columns(pl.lit("0").alias("sample"))
    try:
        frame = frame.with_columns(pl.col("sample").cast(pl.Int64))
    except pl.exceptions.PolarsError as exc:
        raise UserError(
            f"{path}: the 'sample' column must hold whole numbers.", "fix or drop that column."
        ) from exc
    frame = frame.with_columns(pl.col("response").fill_null(""))
    duplicated = frame.filter(pl.struct("id", "sample").is_duplicated())
    if duplicated.height:
        first = duplicated.row(0, named=True)
        raise UserError(
            f"{path} has {duplicated.height} rows sharing an (id, sample) pair, "
            f"e.g. {first['id']}.",
            "give repeated answers to one item distinct 'sample' numbers (0, 1, ...).",
        )
    return frame.select("id", "sample", "response")


def grade_external(args: argparse.Namespace) -> None:
    """``climb-vllm grade``: grade a responses CSV and print the benchmark's tables."""
    import polars as pl

    from climb_vllm.report_hive import write_tables

    responses = read_responses(args.responses)
    items = items_for(args.benchmark, "all", None, args.seed, True)
    known = responses.filter(pl.col("id").is_in(items["id"].implode()))
    unknown = responses.height - known.height
    if known.height == 0:
        raise UserError(
            f"None of the {responses.height} ids in {args.responses} is a {args.benchmark} item.",
            "use the ids of 'climb-vllm prompts " + args.benchmark + "' (e.g. biasmd-0001, "
            "dm-00001).",
        )
    graded = _grade(args.benchmark, known, items)
    tables, layout, titles, heading = _tables(args.benchmark, graded, args.model)
    counts = {
        "responses": responses.height,
        "graded": graded.height,
        "unknown_ids": unknown,
        "empty": int((graded["grade"] == "empty").sum()),
    }
    if args.out:
        _make_folder(args.out, "--out")
        path = write_tables(args.out, heading, layout, titles, tables, counts)
        graded.select("id", "sample", "grade", "rule", "correct", "response").write_csv(
            args.out / "graded.csv"
        )
        print(path.read_text())
        print(f"tables and graded.csv written to {args.out}")
    else:
        from climb_vllm.report import to_markdown

        print(f"# {heading}\n")
        for key, frame in layout.items():
            print(f"## {titles[key]}\n\n{to_markdown(frame)}\n")
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(summary)
    if unknown:
        print(
            f"warning: {unknown} rows have ids that are not {args.benchmark} items; they were "
            "not graded (see 'climb-vllm prompts' for the ids).",
            file=sys.stderr,
        )


def write_prompts(args: argparse.Namespace) -> None:
    """``climb-vllm prompts``: the benchmark's prompts as CSV (id, kind, prompt)."""
    import polars as pl

    items = items_for(args.benchmark, args.split, args.limit, args.seed, not args.no_controls)
    if "kind" not in items.columns:
        items = items.with_columns(pl.lit("item").alias("kind"))
    _make_folder(args.out.parent, "the output file")
    items.select("id", "kind", "prompt").write_csv(args.out)
    print(f"{items.height} prompts written to {args.out}")
