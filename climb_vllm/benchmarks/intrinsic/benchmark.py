"""CLIMB intrinsic as a registered benchmark: its options, run, results, report tables, figures.

Heavy imports (the engine, Polars, matplotlib) happen inside the methods, so the registry and
the command line load quickly.
"""

from __future__ import annotations

import gzip
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.base import (
    BenchHook,
    ExternalGrader,
    Finding,
    Option,
    Paired,
    ReportFigure,
    ReportTable,
    Synthetic,
    options_of,
)
from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.hooks import HOOKS, SYNTHETIC
from climb_vllm.core.store import model_label

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.manifest import Section
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext

NAME = "intrinsic"


#: The report's intrinsic tables and their places among every benchmark's tables.
_TABLE_RANKS = (
    ("method", 5),
    ("table1", 10),
    ("table2", 20),
    ("null", 25),
    ("table3", 30),
    ("table8", 70),
    ("design", 71),
    ("chapter_assoc", 80),
    ("worst_gap", 82),
    ("chapter_gap", 83),
    ("drilldown", 85),
    ("sensitivity", 110),
    ("sensitivity_preference", 111),
    ("names_sensitivity", 112),
    ("table1_all_codes", 120),
)
_OUTSIDE = (
    "Each interval belongs to the corrected value beside it. The paper's AssocMAD can lie "
    "above it: with few names per group, name noise inflates a mean absolute deviation."
)
#: The sentence under each table that needs one (how to read it).
_TABLE_NOTES = {
    "table1": _OUTSIDE,
    "table2": _OUTSIDE,
    "table3": "Each interval belongs to the corrected share beside it: the paper's share of K "
    "names per group is drawn towards 50% by name noise.",
    "table8": "Read each row's corrected value with its interval: at 2 to 5 names per group "
    "the interval is wide (about 1 on Gemma 3 270M), so a corrected value that "
    "jumps between rows, from near 1 to 0 say, moves within overlapping intervals: "
    "the estimator's noise at few names, not a change in the model. K = 1 has no "
    "spread of names to correct with. The next table says how many names would "
    "narrow the interval.",
    "design": "Projected from this run's names: their spread stands for each group's "
    "population of names, and the group effects are the corrected estimate's. For "
    "the recommended K (the smallest whose interval is at most half as wide) pass "
    "--top-k.",
    "chapter_assoc": _OUTSIDE,
    "worst_gap": "Each interval belongs to the corrected gap beside it: a range of K names' means "
    "is inflated by name noise even more than AssocMAD.",
    "chapter_gap": _OUTSIDE,
    "names_sensitivity": "Each interval belongs to the corrected value beside it; birth-weighted "
    "rows have no correction (it assumes equally weighted names).",
}


class IntrinsicBenchmark:
    """CLIMB intrinsic: P(name | "<description> is related to the name:") for every code."""

    name: str = NAME
    title: str = "CLIMB intrinsic"
    help: str = "CLIMB intrinsic bias: name probabilities for every ICD-10-CM code"
    description: str = (
        "Score P(name | '<description> is related to the name:') for every code and compute the "
        "paper's AssocMAD and sex-preference tables."
    )
    config_type = IntrinsicConfig
    # Its own fields' options, then the scoring options of the engine.
    options: tuple[Option, ...] = options_of(
        IntrinsicConfig,
        engine=(
            "strategy",
            "prompts_per_request",
            "batch_tokens",
            "scorer",
            "row_tokens",
            "compile_layers",
        ),
    )
    bench_hooks: tuple[BenchHook, ...] = HOOKS
    synthetic: Synthetic | None = SYNTHETIC
    external: ExternalGrader | None = None
    paired: Paired | None = Paired(
        "CLIMB intrinsic: corrected AssocMAD",
        "Corrected AssocMAD (sex-neutral codes) of both runs on the same codes and names, and "
        "the difference; 95% interval: each run's estimator re-run on name lists drawn from its "
        "fitted population, the same name slots for both runs (a paired parametric bootstrap; "
        "coverage by simulation in PERFORMANCE.md).",
        lambda root: _prepare(root),
        lambda first, second: _compare(first, second),
    )

    def configure(self, engine: EngineConfig, values: Mapping[str, Any]) -> IntrinsicConfig:
        """The run's configuration from the engine fields and the given option values."""
        from pydantic import ValidationError

        from climb_vllm.runner.run import invalid_option

        fields = dict(values)
        for name in ("content_free", "sensitivity_templates"):
            if name in fields:
                fields[name] = tuple(fields[name])
        if isinstance(fields.get("names_sensitivity"), str):
            fields["names_sensitivity"] = tuple(
                part.strip() for part in fields["names_sensitivity"].split(",") if part.strip()
            )
        try:
            return engine.extend(IntrinsicConfig, fields)
        except ValidationError as exc:
            raise invalid_option(exc, NAME, IntrinsicConfig) from exc

    def run(self, config: EngineConfig, context: RunContext) -> Path:
        """Score every code (resuming), then write the tables."""
        from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask, run_intrinsic
        from climb_vllm.runner.run import open_run

        assert isinstance(config, IntrinsicConfig)
        task = IntrinsicTask.from_config(config)  # validates release, names and K before loading
        store, engine, opened = open_run(
            config,
            context,
            NAME,
            scores=True,
            datasets={
                "icd10cm": {
                    "release": task.ontology.release,
                    "source": task.ontology.source,
                    "sha256": task.ontology.sha256,
                    "codes_in_release": len(task.ontology),
                },
                "names": {
                    "set": task.names.key,
                    "sha256": task.names.sha256,
                    "top_k": config.top_k,
                    "distinctive": config.distinctive,
                    # The exact names of every group, as the tables use them.
                    "groups": {
                        f"{sex} / {ethnicity}": [
                            s.name
                            for s in task.names.top_k(config.top_k)
                            if (s.sex, s.ethnicity) == (sex, ethnicity)
                        ]
                        for sex, ethnicity in task.names.sizes()
                    },
                    "names_per_group_available": {
                        f"{sex} / {ethnicity}": size
                        for (sex, ethnicity), size in task.names.sizes().items()
                    },
                    "names_sensitivity": [v.label for v in task.variants],
                    "scored_names": len(task.scored_names),
                },
            },
            prompt_template=config.template,
        )
        run_intrinsic(opened, store, engine, task)
        if importlib.util.find_spec("scipy") is None:
            # The light scoring path (a GPU machine with torch and transformers only): the
            # records are complete; the tables' statistics need scipy.
            print(
                f"records written to {store.root}; the tables need scipy: run 'climb-vllm "
                f"report {store.root}' where climb-vllm is fully installed (pip install -e .)",
                file=sys.stderr,
            )
            return Path(store.root)
        self.results(store, quiet=context.quiet or opened.display == "none")
        return Path(store.root)

    def results(self, store: RunStore, quiet: bool) -> dict[str, Any]:
        """Recompute the intrinsic tables of a run directory, write them, print the Markdown."""
        from climb_vllm.benchmarks.intrinsic.names_table import names_sensitivity_table
        from climb_vllm.benchmarks.intrinsic.results import intrinsic_tables
        from climb_vllm.benchmarks.intrinsic.tables import method_frame, write_intrinsic_report
        from climb_vllm.benchmarks.intrinsic.task import TEMPLATES, IntrinsicTask
        from climb_vllm.core.results import metrics_json

        config = IntrinsicConfig.from_section(store.section(NAME))
        task = IntrinsicTask.from_config(config)
        templates = store.read_records(TEMPLATES) if store.finished_chunks(TEMPLATES) else None
        records = store.read_records(NAME)
        tables = intrinsic_tables(
            records,
            task,
            config.top_k,
            templates,
            config.template,
            sex_rule=config.sex_rule,
            pooling=config.pooling,
        )
        if task.variants:
            tables["names_sensitivity"] = names_sensitivity_table(records, task, config.sex_rule)
        tables["method"] = method_frame(config, task, "calibrated_table1" in tables)
        # Every code's contrast per group, too long for the Markdown, the page or metrics.json
        # (the report shows the top of each list): a gzipped CSV, which Polars and pandas read
        # as it is (full precision: 165 MB plain for a full release, 57 MB gzipped).
        full = tables.pop("drilldown_all")
        store.write_bytes(
            "results/intrinsic/drilldown_all.csv.gz",
            gzip.compress(full.write_csv().encode(), compresslevel=1),
        )
        path = write_intrinsic_report(store, tables, model_label(config.model))
        if not quiet:
            print(path.read_text())
            print(f"tables written to {path.parent}")
        return metrics_json(tables)

    def report_tables(self) -> tuple[ReportTable, ...]:
        """CLIMB Tables 1-3 and 8 among the papers' tables; sensitivity and all-codes extras."""
        from climb_vllm.benchmarks.intrinsic import drilldown
        from climb_vllm.benchmarks.intrinsic.tables import TABLE_TITLES as T

        notes = _TABLE_NOTES | {
            "drilldown": f"Top {drilldown.TOP} per group and direction; every code in "
            "results/intrinsic/drilldown_all.csv.gz. q: Benjamini-Hochberg over the group's "
            "codes; entries with q above 0.05 may be chance."
        }
        return tuple(ReportTable(k, T[k], rank, notes.get(k, "")) for k, rank in _TABLE_RANKS)

    def figures(self) -> tuple[ReportFigure, ...]:
        """AssocMAD by level, the chapter heatmap and sex-preference correctness."""
        from climb_vllm.benchmarks.intrinsic import figures

        return (
            ReportFigure(
                "assoc_mad",
                figures.assoc_mad_by_level,
                "Corrected AssocMAD by ICD level per model, of the paper's scores (solid) "
                "and of the calibrated ones (dashed). Bars: 95% interval by test inversion, "
                "as in Table 1.",
                10,
                "table1",
            ),
            ReportFigure(
                "chapters",
                figures.chapter_heatmap,
                "Group scores by ICD chapter relative to the chapter's mean over the 8 "
                "groups, log2 (red: the group's names are more likely; raw scores, all "
                "codes).",
                20,
                "chapter_assoc",
            ),
            ReportFigure(
                "sex_preference",
                figures.sex_preference,
                "Correctness of sex preference on sex-specific codes, corrected for "
                "name sampling. Bars: 95% interval; dotted: chance.",
                30,
                "table3",
            ),
        )

    def finding(self, metrics: Mapping[str, Any]) -> Finding:
        """AssocMAD against the names alone, calibrated, and its corrected interval."""
        from climb_vllm.benchmarks.intrinsic.finding import intrinsic_finding

        return intrinsic_finding(metrics)

    def scope(self, section: Section) -> str:
        """Codes scored of the release, names, sensitivity sample."""
        config = section.config
        release = section.datasets.get("icd10cm", {})
        total = release.get("codes_in_release")
        codes = section.fact("codes") or config.get("limit")
        whole = f" of {total:,}" if isinstance(total, int) else ""
        kind = "all codes" if config.get("limit") is None else "a stratified sample"
        sensitivity = config.get("sensitivity_codes", 0)
        extra = f"; {sensitivity:,} codes under 3 more templates" if sensitivity else ""
        return (
            f"{codes:,}{whole} ICD-10-CM {release.get('release', '')} codes ({kind}), "
            f"top-{config.get('top_k', IntrinsicConfig.model_fields['top_k'].default)} names{extra}"
            if isinstance(codes, int)
            else "codes unknown"
        )


INTRINSIC = IntrinsicBenchmark()


def _prepare(root: Path) -> Any:
    """:func:`.comparison.prepare`, imported when a report compares runs (numpy and Polars stay
    out of the command line's start)."""
    from climb_vllm.benchmarks.intrinsic.comparison import prepare

    return prepare(root)


def _compare(first: Any, second: Any) -> pl.DataFrame | None:
    """:func:`.comparison.compare` (imported when used, as :func:`_prepare`)."""
    from climb_vllm.benchmarks.intrinsic.comparison import compare

    return compare(first, second)
