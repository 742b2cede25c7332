"""Running CLIMB extrinsic: generate for every variant, map outputs to codes, write the tables.

The stored records are the raw generations; mapping and metrics are recomputed from them by
``report`` / ``rescore``, so a change to the parser or the metrics never needs the model again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError
from climb_vllm.core.store import model_label, results_folder
from climb_vllm.resources.data import packaged
from climb_vllm.rewrite.identity import rewrite_sha256 as rewrite_sha256  # tests replace it here

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.extrinsic.cases import Case
    from climb_vllm.benchmarks.extrinsic.config import ExtrinsicConfig
    from climb_vllm.benchmarks.extrinsic.prompts import Fitter
    from climb_vllm.core.store import RunStore
    from climb_vllm.icd_mapping.icdmap import Mapper
    from climb_vllm.resources.ontology import Ontology
    from climb_vllm.rewrite.review import Decision, Key
    from climb_vllm.runner.run import RunContext


def cases_sha256(source: str) -> str:
    """The sha256 of a case file or of the packaged synthetic set."""
    from climb_vllm.benchmarks.extrinsic.cases import SYNTHETIC

    if source == SYNTHETIC:
        data = packaged("cases", "synthetic_cases.jsonl").read_bytes()
    else:
        path = Path(source)
        if not path.is_file():
            raise UserError(f"{source} does not exist.", "pass a JSONL case file or 'synthetic'.")
        data = path.read_bytes()
    return hashlib.sha256(data).hexdigest()


def load_inputs(config: ExtrinsicConfig) -> tuple[Ontology, list[Case], pl.DataFrame]:
    """The release, the (limited) cases and the item frame of a configuration."""
    from climb_vllm.benchmarks.extrinsic.cases import load_cases
    from climb_vllm.benchmarks.extrinsic.prompts import items_frame
    from climb_vllm.resources.ontology import load_ontology

    ontology = load_ontology(config.icd_release)
    cases = load_cases(config.cases, ontology)
    if config.limit is not None:
        cases = cases[: config.limit]
    fit = _fitter(config)
    items = items_frame(
        cases,
        config.placebo,
        config.protocol,
        config.served_model or config.model,
        fit,
        config.intersections,
        _decisions(config),
    )
    return ontology, cases, items


def _decisions(config: ExtrinsicConfig) -> dict[Key, Decision] | None:
    """The run's decisions on uncertain words, refused when the file changed since the run
    was configured."""
    from climb_vllm.rewrite.review import file_sha256, load_decisions

    if not config.rewrite_decisions:
        return None
    if file_sha256(config.rewrite_decisions) != config.rewrite_decisions_sha256:
        raise UserError(
            f"The decisions file {config.rewrite_decisions} changed since the run was made.",
            "restore the file the run used (its sha256 is in the manifest), or run the changed "
            "file in a new run folder",
        )
    return load_decisions(config.rewrite_decisions)


def _fitter(config: ExtrinsicConfig) -> Fitter | None:
    """Cuts notes to the configured context with the model's tokenizer (None: never cut)."""
    from climb_vllm.benchmarks.extrinsic.layout import OUTPUT_TOKENS, fit_sections

    if not config.context_tokens:
        return None
    source = config.tokenizer or config.model
    # CliBench reserves 650 tokens for the answer whatever the limit; the project reserves the
    # run's own limit.
    reserve = OUTPUT_TOKENS if config.protocol == "clibench" else config.max_tokens
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise UserError(
            f"Cannot load the tokenizer of {source} to fit the notes to "
            f"{config.context_tokens} tokens ({exc}).",
            "pass --tokenizer with a local model folder, or --context-tokens 0 to never cut.",
        ) from exc

    def tokenize(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    def detokenize(ids: list[int]) -> str:
        return str(tokenizer.decode(ids))

    def fit(
        sections: dict[str, str], line: str, fixed: Sequence[str]
    ) -> tuple[dict[str, str], float]:
        return fit_sections(
            sections, line, fixed, config.context_tokens, tokenize, detokenize, reserve
        )

    return fit


def run_extrinsic(config: ExtrinsicConfig, context: RunContext) -> Path:
    """Generate for every variant prompt (resuming), store, map, write the tables; returns the
    run directory."""
    from climb_vllm.benchmarks.extrinsic.prompts import BENCHMARK, QUESTION, SYSTEM
    from climb_vllm.runner.generation import run_generation
    from climb_vllm.runner.run import open_run

    ontology, cases, items = load_inputs(config)
    store, engine, config = open_run(
        config,
        context,
        BENCHMARK,
        datasets={
            "cases": {"source": config.cases, "sha256": config.cases_sha256, "cases": len(cases)}
        },
        prompt_template={
            "system": SYSTEM,
            "user": "<line>\\n\\n<notes> | <notes>\\n\\n<line>",
            "question": QUESTION,
        },
        seeds={"base": config.seed, "per_item": "crc32('<seed>:<item id>') & 0x7fffffff"},
        icd={"release": ontology.release, "sha256": ontology.sha256},
    )
    _write_variants(store, items)
    run_generation(config, store, engine, items)
    write_extrinsic_report(
        store, quiet=context.quiet or config.display == "none", display=config.display
    )
    return Path(store.root)


def _write_variants(store: RunStore, items: pl.DataFrame) -> None:
    """The variant log (prompt, line, every edit) beside the records, once per run."""
    path = store.chunk_dir("extrinsic") / "variants.parquet"
    if not path.exists():
        partial = path.with_name(".variants.tmp")
        items.write_parquet(partial)
        partial.replace(path)


def build_mapper(
    ontology: Ontology,
    cases: list[Case],
    index_limit: int | None,
    display: str = "rich",
    protocol: str = "default",
) -> Mapper:
    """The mapper over every code of the release, or over ``index_limit`` sampled codes plus
    every gold code (the sample is stratified by chapter and fixed)."""
    from climb_vllm.icd_mapping.icdmap import Mapper
    from climb_vllm.icd_mapping.title_index import build_or_load
    from climb_vllm.resources.encoder import Encoder

    codes = None
    if index_limit is not None:
        keep = {code for case in cases for code in case.gold_codes}
        keep |= set(ontology.stratified_subset(min(index_limit, len(ontology)), seed=0))
        codes = [c for c in ontology.codes if c in keep]
    encoder = Encoder(device="cpu")
    # CliBench's rules know each code by its title only.
    index = build_or_load(ontology, codes, encoder, display=display, names=protocol == "default")
    return Mapper(ontology, index, encoder, protocol)


def _points_frame(records: pl.DataFrame, mapped: Sequence[Any]) -> pl.DataFrame:
    """One row per diagnosis point of every mapped answer (:func:`map_records`)."""
    import polars as pl

    schema: dict[str, Any] = {
        "id": pl.String,
        "sample": pl.Int64,
        "point": pl.Int64,
        "text": pl.String,
        "method": pl.String,
        "codes": pl.List(pl.String),
        "similarity": pl.Float64,
        "invalid_codes": pl.List(pl.String),
        "qualifier": pl.String,
        "sense": pl.String,
        "sense_by_context": pl.Boolean,
    }
    rows = [
        (item_id, sample, k, p.text, p.method, list(p.codes), p.similarity)
        + (list(p.invalid_codes), p.qualifier, p.sense, p.by_context)
        for item_id, sample, output in zip(records["id"], records["sample"], mapped)
        for k, p in enumerate(output.points)
    ]
    return pl.DataFrame(rows, schema=schema, orient="row")


def map_records(
    records: pl.DataFrame,
    items: pl.DataFrame,
    mapper: Mapper,
    notes: dict[str, str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(outputs, points): one row per (id, sample) with its predicted ``codes``, ``kind``
    (answer, refusal, non_answer, empty), ``refusal``, ``dropped`` (by CliBench's rule) and the
    item's columns; one row per diagnosis point with text, method, codes, similarity, invalid
    codes, qualifier, the abbreviation ``sense`` chosen and whether the context chose it.

    Args:
        records: the run's answers (``id, sample, response, ...``).
        items: the prompts (``id, case, ...``).
        mapper: the mapper.
        notes: case id -> the case's note as given (shared by all its counterfactual
            variants, so a sense never depends on the demographic change); None: no context.
    """
    import polars as pl

    responses = [r or "" for r in records["response"].to_list()]
    contexts = None
    if notes is not None:
        case_of = dict(zip(items["id"].to_list(), items["case"].to_list()))
        contexts = [notes.get(case_of[i], "") for i in records["id"].to_list()]
    mapped = mapper.map_outputs(responses, contexts)
    points_frame = _points_frame(records, mapped)
    outputs = records.select("id", "sample", "finish_reason", "completion_tokens").with_columns(
        pl.Series("codes", [o.codes for o in mapped], dtype=pl.List(pl.String)),
        pl.Series("empty", [not r.strip() for r in responses]),
        pl.Series("kind", [o.kind for o in mapped]),
        pl.Series("refusal", [o.kind in ("refusal", "non_answer") for o in mapped]),
        pl.Series("dropped", [o.dropped for o in mapped]),
    )
    outputs = outputs.join(
        items.select("id", "case", "variant", "attribute", "value", "placement"), on="id"
    )
    return outputs, points_frame


def extrinsic_tables(
    outputs: pl.DataFrame,
    points: pl.DataFrame,
    cases: list[Case],
    ontology: Ontology,
    certain: list[str] | None = None,
) -> dict[str, pl.DataFrame]:
    """Every metric table of a run (long form, fractions); ``certain``: the cases whose sex
    rewrite holds no uncertain word (every case when None)."""
    from climb_vllm.benchmarks.extrinsic import metrics
    from climb_vllm.benchmarks.extrinsic.chapters import bias_by_chapter
    from climb_vllm.benchmarks.extrinsic.intersections import interaction_table
    from climb_vllm.benchmarks.extrinsic.prompts import gold_frame

    gold = gold_frame(cases, ontology.female_only, ontology.male_only)
    hits = metrics.output_hits(outputs, gold, ontology)
    return {
        "bias": metrics.bias_table(hits),
        "bias_certain": metrics.bias_on_certain(
            hits, [c.id for c in cases] if certain is None else certain
        ),
        "bias_by_case_type": metrics.bias_by_case_type(hits, gold),
        "bias_by_chapter": bias_by_chapter(outputs, gold, ontology),
        "intersections": interaction_table(hits),
        "default_recall": metrics.default_recall(hits),
        "variants": metrics.variant_summary(hits, points),
    }


def _check_unchanged(config: ExtrinsicConfig) -> None:
    """UserError when the case file or the sex rewrite changed since the run was made."""
    if cases_sha256(config.cases) != config.cases_sha256:
        raise UserError(
            f"The case file {config.cases} changed since the run was made.",
            "restore the file the run used (its sha256 is in the manifest).",
        )
    if config.rewrite_sha256 is not None and rewrite_sha256() != config.rewrite_sha256:
        raise UserError(
            "The sex rewrite changed since the run was made, so its counterfactual notes would "
            "not be the ones the model answered.",
            "score the run with the climb-vllm version that made it, or run it again in a new "
            "folder.",
        )


def _facts(
    outputs: pl.DataFrame, points: pl.DataFrame, items: pl.DataFrame, uncertain: int, mapper: Mapper
) -> dict[str, Any]:
    """The run's counts for ``metrics.json``: outputs, cuts, edits, parses and the index."""
    import polars as pl

    return {
        "outputs": outputs.height,
        "empty_outputs": int(outputs["empty"].sum()),
        "truncated_outputs": int((outputs["finish_reason"] == "length").sum()),
        "non_text_outputs": int((outputs["finish_reason"] == "non-text").sum()),
        "truncated_prompts": int(items["truncated"].sum()),
        "uncertain_edits": uncertain,
        "decided_edits": int(items.filter(pl.col("placement") == "before")["n_decided"].sum()),
        "no_parse_outputs": int((outputs["codes"].list.len() == 0).sum()),
        "refusal_outputs": int(outputs["refusal"].sum()),
        "dropped_by_clibench_rule": int(outputs["dropped"].sum()),
        "points": points.height,
        "invalid_codes": int(points["invalid_codes"].list.len().sum() or 0),
        "senses_chosen_by_context": int(points["sense_by_context"].sum()),
        "index": json.dumps(mapper.index.describe()),
    }


def write_extrinsic_report(
    store: RunStore, quiet: bool = False, display: str = "rich"
) -> dict[str, Any]:
    """Map a run's records, write ``results/extrinsic/`` and return its metrics."""

    from climb_vllm.benchmarks.extrinsic import tables as tables_layout
    from climb_vllm.benchmarks.extrinsic.config import ExtrinsicConfig
    from climb_vllm.benchmarks.extrinsic.prompts import certain_cases, edit_summary, review_frame
    from climb_vllm.core.results import write_tables
    from climb_vllm.rewrite.review import write_review

    config = ExtrinsicConfig(**store.section("extrinsic").config)
    _check_unchanged(config)
    ontology, cases, items = load_inputs(config)
    records = store.read_records("extrinsic")
    missing = set(items["id"].to_list()) - set(records["id"].to_list())
    if missing:
        raise UserError(
            f"The run holds answers for {items.height - len(missing)} of {items.height} prompts.",
            "rerun the same 'climb-vllm eval extrinsic' command to finish it.",
        )
    mapper = build_mapper(ontology, cases, config.index_limit, display, config.protocol)
    from climb_vllm.benchmarks.extrinsic.prompts import notes_text

    notes = {case.id: notes_text(case.sections) for case in cases}
    outputs, points = map_records(records, items, mapper, notes)
    tables = extrinsic_tables(outputs, points, cases, ontology, certain_cases(items))
    tables["edits"] = edit_summary(items)
    tables["review"] = review_frame(items)
    directory = results_folder(store.root, "extrinsic")
    facts = _facts(outputs, points, items, tables["review"].height, mapper)
    path = write_tables(
        directory,
        f"CLIMB extrinsic — {model_label(config.model)}",
        tables_layout.extrinsic_layout(tables, model_label(config.model)),
        tables_layout.TITLES,
        tables,
        facts,
    )
    write_review(directory / "uncertain_edits.csv", tables["review"].to_dicts())
    points.write_parquet(directory / "points.parquet")
    outputs.write_parquet(directory / "outputs.parquet")
    if not quiet:
        print(path.read_text())
        counts = ", ".join(f"{k} {v}" for k, v in facts.items() if k != "index")
        print(counts)
        print(f"tables written to {directory}")
    loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
    return loaded
