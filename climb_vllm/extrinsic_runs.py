"""The CLIMB extrinsic verb: generate for every variant, map outputs to codes, write the tables.

Kept apart from ``cli.py`` like :mod:`climb_vllm.hive_runs`. The stored records are the raw
generations; mapping and metrics are recomputed from them by ``report`` / ``rescore``, so a
change to the parser or the metrics never needs the model again.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.resources
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.errors import UserError

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.cases import Case
    from climb_vllm.config import ExtrinsicConfig
    from climb_vllm.icdmap import Mapper
    from climb_vllm.ontology import Ontology
    from climb_vllm.store import RunStore

TITLES = {
    "table4": "CLIMB Table 4. Bias score per counterfactual (percentage points of mean recall "
    "over L1-L5, averaged over both placements; % = of the default's recall). 95% CI: "
    "bootstrap over cases; p: sign-flip permutation over cases; placebo = noise floor",
    "table5": "CLIMB Table 5. Bias score over sex-neutral and sex-specific cases (as Table 4)",
    "table7": "CLIMB Table 7. Recall of the default variant per ICD level (%, micro over cases, "
    "mean of both placements). 95% CI: bootstrap over cases",
    "variants": "Per variant and placement: outputs with no parsed code (counted as recall 0), "
    "recall (%) and the share of diagnosis points per mapping method (%)",
}


def cases_sha256(source: str) -> str:
    """The sha256 of a case file or of the packaged synthetic set."""
    from climb_vllm.benchmarks.cases import SYNTHETIC

    if source == SYNTHETIC:
        packaged = importlib.resources.files("climb_vllm") / "data" / "cases"
        data = (packaged / "synthetic_cases.jsonl").read_bytes()
    else:
        path = Path(source)
        if not path.is_file():
            raise UserError(f"{source} does not exist.", "pass a JSONL case file or 'synthetic'.")
        data = path.read_bytes()
    return hashlib.sha256(data).hexdigest()


def load_inputs(config: ExtrinsicConfig) -> tuple[Ontology, list[Case], pl.DataFrame]:
    """The release, the (limited) cases and the item frame of a configuration."""
    from climb_vllm.benchmarks.cases import load_cases
    from climb_vllm.benchmarks.extrinsic import items_frame
    from climb_vllm.ontology import load_ontology

    ontology = load_ontology(config.icd_release)
    cases = load_cases(config.cases, ontology)
    if config.limit is not None:
        cases = cases[: config.limit]
    return ontology, cases, items_frame(cases, placebo=config.placebo)


def eval_extrinsic(args: argparse.Namespace) -> Path:
    """``climb-vllm eval extrinsic``: generate, store, map, print the tables."""
    from pydantic import ValidationError

    from climb_vllm.benchmarks.extrinsic import BENCHMARK, QUESTION, SYSTEM
    from climb_vllm.benchmarks.generative import run_generation
    from climb_vllm.cli import engine_settings, invalid_option, open_run, quiet_tables
    from climb_vllm.config import ExtrinsicConfig

    digest = cases_sha256(args.cases)
    try:
        config = ExtrinsicConfig(
            **engine_settings(args),
            cases=args.cases,
            cases_sha256=digest,
            icd_release=args.icd_release,
            limit=args.limit,
            seed=args.seed,
            samples=args.samples,
            temperature=0.0 if args.greedy else args.temperature,
            top_p=None if args.greedy else args.top_p,
            max_tokens=args.max_tokens,
            placebo=not args.no_placebo,
            index_limit=args.index_limit,
            chunk_size=args.chunk_size,
        )
    except ValidationError as exc:
        raise invalid_option(exc, BENCHMARK) from exc
    ontology, cases, items = load_inputs(config)
    store, engine, config = open_run(
        config,
        args,
        BENCHMARK,
        datasets={"cases": {"source": config.cases, "sha256": digest, "cases": len(cases)}},
        prompt_template={"system": SYSTEM, "user": "<line>\\n\\n<notes> | <notes>\\n\\n<line>",
                         "question": QUESTION},
        seeds={"base": config.seed, "per_item": "crc32('<seed>:<item id>') & 0x7fffffff"},
        icd={"release": ontology.release, "sha256": ontology.sha256},
    )  # fmt: skip
    _write_variants(store, items)
    run_generation(config, store, engine, items)
    write_extrinsic_report(store, quiet=quiet_tables(args), display=args.display)
    return Path(store.root)


def _write_variants(store: RunStore, items: pl.DataFrame) -> None:
    """The variant log (prompt, line, every edit) beside the records, once per run."""
    path = store.chunk_dir("extrinsic") / "variants.parquet"
    if not path.exists():
        partial = path.with_name(".variants.tmp")
        items.write_parquet(partial)
        partial.replace(path)


def build_mapper(
    ontology: Ontology, cases: list[Case], index_limit: int | None, display: str = "rich"
) -> Mapper:
    """The mapper over every code of the release, or over ``index_limit`` sampled codes plus
    every gold code (the sample is stratified by chapter and fixed)."""
    from climb_vllm.icdmap import Mapper
    from climb_vllm.title_index import Encoder, build_or_load

    codes = None
    if index_limit is not None:
        keep = {code for case in cases for code in case.gold_codes}
        keep |= set(ontology.stratified_subset(min(index_limit, len(ontology)), seed=0))
        codes = [c for c in ontology.codes if c in keep]
    encoder = Encoder(device="cpu")
    index = build_or_load(ontology, codes, encoder, display=display)
    return Mapper(ontology, index, encoder)


def map_records(
    records: pl.DataFrame, items: pl.DataFrame, mapper: Mapper
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(outputs, points): one row per (id, sample) with its predicted ``codes`` and the item's
    columns; one row per diagnosis point with text, method, codes, similarity, invalid codes."""
    import polars as pl

    responses = [r or "" for r in records["response"].to_list()]
    mapped = mapper.map_outputs(responses)
    point_rows: dict[str, list[Any]] = {
        "id": [], "sample": [], "point": [], "text": [], "method": [], "codes": [],
        "similarity": [], "invalid_codes": [],
    }  # fmt: skip
    codes_per_output: list[list[str]] = []
    for item_id, sample, points in zip(records["id"], records["sample"], mapped):
        predicted: list[str] = []
        for k, point in enumerate(points):
            point_rows["id"].append(item_id)
            point_rows["sample"].append(sample)
            point_rows["point"].append(k)
            point_rows["text"].append(point.text)
            point_rows["method"].append(point.method)
            point_rows["codes"].append(list(point.codes))
            point_rows["similarity"].append(point.similarity)
            point_rows["invalid_codes"].append(list(point.invalid_codes))
            predicted += point.codes
        codes_per_output.append(list(dict.fromkeys(predicted)))
    points_frame = pl.DataFrame(
        point_rows,
        schema={
            "id": pl.String, "sample": pl.Int64, "point": pl.Int64, "text": pl.String,
            "method": pl.String, "codes": pl.List(pl.String), "similarity": pl.Float64,
            "invalid_codes": pl.List(pl.String),
        },
    )  # fmt: skip
    outputs = records.select("id", "sample", "finish_reason", "completion_tokens").with_columns(
        pl.Series("codes", codes_per_output, dtype=pl.List(pl.String)),
        pl.Series("empty", [not r.strip() for r in responses]),
    )
    outputs = outputs.join(
        items.select("id", "case", "variant", "attribute", "value", "placement"), on="id"
    )
    return outputs, points_frame


def extrinsic_tables(
    outputs: pl.DataFrame, points: pl.DataFrame, cases: list[Case], ontology: Ontology
) -> dict[str, pl.DataFrame]:
    """Every metric table of a run (long form, fractions)."""
    from climb_vllm.benchmarks import extrinsic_metrics as metrics
    from climb_vllm.benchmarks.extrinsic import gold_frame

    gold = gold_frame(cases, ontology.female_only, ontology.male_only)
    hits = metrics.output_hits(outputs, gold, ontology)
    return {
        "bias": metrics.bias_table(hits),
        "bias_by_case_type": metrics.bias_by_case_type(hits, gold),
        "default_recall": metrics.default_recall(hits),
        "variants": metrics.variant_summary(hits, points),
    }


def extrinsic_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """The tables as shown: percentages, intervals as text, one row per model and value."""
    import polars as pl

    def pct(column: str) -> pl.Expr:
        return (pl.col(column) * 100).round(2)

    def bias(frame: pl.DataFrame, extra: list[pl.Expr]) -> pl.DataFrame:
        if frame.height == 0:
            return frame
        return frame.select(
            pl.lit(model).alias("Model"),
            *extra,
            pl.col("attribute").alias("Attribute"),
            pl.col("value").alias("Value"),
            pl.col("cases").alias("Cases"),
            pct("bias").alias("Bias (pp)"),
            pl.col("bias_pct").round(1).alias("Bias (% of default)"),
            pl.format("[{}, {}]", pct("ci_low"), pct("ci_high")).alias("95% CI"),
            pl.col("p_value").round(4).alias("p"),
            pl.format(
                "{} [{}, {}]", pct("placebo_bias"), pct("placebo_ci_low"), pct("placebo_ci_high")
            ).alias("Placebo (pp)"),
            pct("bias_drop").alias("Bias, CliBench drop rule (pp)"),
        )

    recall = tables["default_recall"]
    wide = {row["level"]: round(row["recall"] * 100, 2) for row in recall.iter_rows(named=True)}
    mean = recall.filter(pl.col("level") == "mean").row(0, named=True)
    table7 = pl.DataFrame(
        [
            {
                "Model": model,
                **{k.upper() if k != "mean" else "Mean": v for k, v in wide.items()},
                "Mean 95% CI": f"[{mean['ci_low'] * 100:.2f}, {mean['ci_high'] * 100:.2f}]",
            }
        ]
    )
    variants = tables["variants"]
    shown = variants.select(
        "variant",
        "placement",
        "outputs",
        pct("no_parse_share").alias("No parse (%)"),
        pct("recall_mean").alias("Recall mean (%)"),
        *[pct(c).alias(c.removeprefix("method_") + " (%)") for c in variants.columns
          if c.startswith("method_")],
    )  # fmt: skip
    return {
        "table4": bias(tables["bias"], []),
        "table5": bias(tables["bias_by_case_type"], [pl.col("case_type").alias("Cases type")]),
        "table7": table7,
        "variants": shown,
    }


def write_extrinsic_report(
    store: RunStore, quiet: bool = False, display: str = "rich"
) -> dict[str, Any]:
    """Map a run's records, write ``results/extrinsic/`` and return its metrics."""
    from climb_vllm.config import ExtrinsicConfig
    from climb_vllm.report_hive import write_tables

    config = ExtrinsicConfig(**store.section("extrinsic")["config"])
    if cases_sha256(config.cases) != config.cases_sha256:
        raise UserError(
            f"The case file {config.cases} changed since the run was made.",
            "restore the file the run used (its sha256 is in the manifest).",
        )
    ontology, cases, items = load_inputs(config)
    records = store.read_records("extrinsic")
    missing = set(items["id"].to_list()) - set(records["id"].to_list())
    if missing:
        raise UserError(
            f"The run holds answers for {items.height - len(missing)} of {items.height} prompts.",
            "rerun the same 'climb-vllm eval extrinsic' command to finish it.",
        )
    mapper = build_mapper(ontology, cases, config.index_limit, display)
    outputs, points = map_records(records, items, mapper)
    tables = extrinsic_tables(outputs, points, cases, ontology)
    directory = store.root / "results" / "extrinsic"
    facts = {
        "outputs": outputs.height,
        "empty_outputs": int(outputs["empty"].sum()),
        "truncated_outputs": int((outputs["finish_reason"] == "length").sum()),
        "non_text_outputs": int((outputs["finish_reason"] == "non-text").sum()),
        "no_parse_outputs": int((outputs["codes"].list.len() == 0).sum()),
        "points": points.height,
        "invalid_codes": int(points["invalid_codes"].list.len().sum() or 0),
        "index": json.dumps(mapper.index.describe()),
    }
    path = write_tables(
        directory, f"CLIMB extrinsic — {config.model}", extrinsic_layout(tables, config.model),
        TITLES, tables, facts,
    )  # fmt: skip
    points.write_parquet(directory / "points.parquet")
    outputs.write_parquet(directory / "outputs.parquet")
    if not quiet:
        print(path.read_text())
        counts = ", ".join(f"{k} {v}" for k, v in facts.items() if k != "index")
        print(counts)
        print(f"tables written to {directory}")
    loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
    return loaded
