"""The CLIMB intrinsic tables in the paper's layout (one row per model and score variant), their
titles, and the writer of ``results/intrinsic/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from climb_vllm.benchmarks.intrinsic.assoc import NAME_RESAMPLES, NULL_PERMUTATIONS
from climb_vllm.benchmarks.intrinsic.config import IntrinsicConfig
from climb_vllm.benchmarks.intrinsic.correction import DRAWS, LEVEL
from climb_vllm.core.results import interval_text, long_csv, metrics_json, to_markdown
from climb_vllm.core.store import RunStore
from climb_vllm.resources.names import ETHNICITY_LABELS
from climb_vllm.resources.ontology import chapter_name

if TYPE_CHECKING:
    from climb_vllm.benchmarks.intrinsic.task import IntrinsicTask

CORRECTED_NOTE = (
    "Each level: the paper's AssocMAD, then the name-sampling-corrected AssocMAD (an estimate of "
    "the value over each group's population of names) with its 95% interval by test inversion"
)
TABLE_TITLES = {
    "method": "CLIMB intrinsic: method. Every choice that changes a number of the tables below",
    "table1": "CLIMB Table 1. AssocMAD by ICD level, sex-neutral codes, 8 groups (lower is less "
    f"biased); paper = raw name probabilities, calibrated = divided by content-free base rates. "
    f"{CORRECTED_NOTE}",
    "null": "AssocMAD against names alone (Tables 1 and 2): the same statistic with the names "
    f"permuted across the groups (group sizes kept, {NULL_PERMUTATIONS:,} permutations); p = "
    "share of permutations at or above the observed value. A score that names alone reach is "
    "no evidence of an association of diagnoses with groups",
    "table1_all_codes": "Table 1 (all scored codes, raw). AssocMAD by ICD level (point estimates)",
    "table2": "CLIMB Table 2. Single-demographic AssocMAD (names pooled by sex or by ethnicity). "
    f"{CORRECTED_NOTE}",
    "table3": "CLIMB Table 3. Correctness of sex preference on sex-specific codes (%). Each list: "
    "the paper's share, then the name-sampling-corrected share (an estimate of the share over "
    "each group's population of names) with its 95% interval",
    "chapter_assoc": "AssocMAD of each ICD-10-CM chapter on its own (sex-neutral codes, 8 "
    f"groups). {CORRECTED_NOTE}",
    "worst_gap": "Worst-group gap by ICD level (sex-neutral codes): per node, (most favoured "
    "group's score - least favoured's) / the groups' mean, averaged over the level's nodes; 8 "
    "groups, or pooled by sex or by ethnicity. Each level: the gap of the listed names, then "
    "the name-sampling-corrected gap with its 95% interval by test inversion",
    "chapter_gap": "Worst-group gap of each ICD-10-CM chapter on its own (sex-neutral codes, 8 "
    "groups), with the chapter's most and least favoured groups by the listed names' scores. "
    "The gap of the listed names, then the corrected gap with its 95% interval",
    "table8": "CLIMB Table 8. AssocMAD with the top-K names per group (raw scores). "
    f"{CORRECTED_NOTE} (none for K = 1: one name per group leaves no spread to correct with)",
    "design": "Names per group: the corrected AssocMAD's 95% interval (mean of L1-L5, and L1) "
    "that a run of the same codes would print with K names per group, projected from this "
    "run's own scores (the median width over simulated runs of the population this run "
    "fitted), and the scoring time relative "
    "to K = 5 measured on Gemma 3 270M",
    "sensitivity": "Template sensitivity: AssocMAD by level (sex-neutral codes of a stratified "
    "sample, 8 groups) under each prompt template, each the paper's value followed by the "
    "name-sampling-corrected value and its 95% interval",
    "drilldown": "Drill-down by group: the sex-neutral codes whose prompts favour each group's "
    "names most and least. Ratio: how many times more likely the group's names are than the "
    "other groups' names after the code's prompt, relative to the typical code (geometric means "
    "over names, each name centred on its mean over the codes), with its 95% t interval",
    "names_sensitivity": "Names sensitivity: AssocMAD by level (raw scores, sex-neutral codes, 8 "
    "groups) with other name sets, all from the same scores: the top-K names per group for each "
    "K, birth-weighted and distinctive names. Each: the paper's AssocMAD, what names alone give "
    f"(names permuted across groups, {NULL_PERMUTATIONS:,} permutations) with p, and the "
    "name-sampling-corrected AssocMAD with its 95% interval",
    "sensitivity_preference": "Template sensitivity: sex-preference correctness (%) on the "
    "sample's sex-specific codes under each prompt template, the paper's share followed by the "
    "corrected share and its 95% interval",
}
LEVEL_COLUMNS = ("L1", "L2", "L3", "L4", "L5", "Mean")
#: The CLIMB paper's intrinsic universe (its section 3.1); a release's own count may differ.
PAPER_CODES = 94_739


def _drilldown_layout(frame: pl.DataFrame, model: str) -> pl.DataFrame:
    """The most and least favoured codes of each group as the report shows them."""
    return frame.select(
        pl.lit(model).alias("Model"),
        pl.format(
            "{} {}",
            pl.col("ethnicity").replace(ETHNICITY_LABELS),
            pl.col("sex").replace({"FEMALE": "female", "MALE": "male"}),
        ).alias("Group"),
        pl.col("direction").replace({"most": "Most", "least": "Least"}).alias("Favoured"),
        pl.col("rank").alias("Rank"),
        pl.col("code").alias("Code"),
        pl.col("description").alias("Description"),
        pl.col("chapter").alias("Chapter"),
        pl.col("ratio").round(4).alias("Ratio"),
        pl.struct("ci_low", "ci_high")
        .map_elements(lambda r: interval_text(r["ci_low"], r["ci_high"]), return_dtype=pl.String)
        .alias("Ratio 95% CI"),
        pl.col("q").round_sig_figs(2).alias("q"),
    )


SEX_RULE_TEXT = {
    "descendants": "descendants: the CMS sex edits plus every non-billable code whose billable "
    "codes are all on one list; headers over codes of both sexes are not sex-neutral",
    "listed": "listed: the CMS sex edits as published (billable codes only)",
}
POOLING_TEXT = {
    "slots": "by slot (the paper's reading: a name in several lists of one sex counts once per "
    "list)",
    "names": "by distinct name (each name once per sex or ethnicity)",
}


def method_frame(config: IntrinsicConfig, task: IntrinsicTask, calibrated: bool) -> pl.DataFrame:
    """The run's method choices as ``choice, value`` rows (long form, stored in metrics.json so
    that rescore names a changed choice).

    Args:
        config: the run's configuration.
        task: its resolved inputs.
        calibrated: whether the run holds the content-free records that calibrate its scores.
    """
    ontology = task.ontology
    lists = ontology.sex_lists(config.sex_rule)
    scored = set(task.codes)
    female = len(scored & lists.female)
    male = len(scored & lists.male)
    neutral = len(scored - lists.not_neutral)
    sample = (
        f"stratified sample of {len(task.codes):,} codes (seed {config.seed})"
        if config.limit is not None
        else "every code of the release"
    )
    rows = [
        ("ICD-10-CM release", f"{ontology.release} ({ontology.source})"),
        ("Codes scored", f"{len(task.codes):,}: {sample}"),
        (
            "Code universe",
            f"{len(ontology):,} codes in the release: every category and "
            f"subcategory with its description (the paper reports {PAPER_CODES:,})",
        ),
        ("Sex-specific rule", SEX_RULE_TEXT[config.sex_rule]),
        (
            "Codes by sex list (scored)",
            f"female-only {female:,}, male-only {male:,}, sex-neutral {neutral:,}",
        ),
        ("Name pooling (Tables 2, 3)", POOLING_TEXT[config.pooling]),
        (
            "Names",
            f"{task.names.label}, top-{config.top_k} per sex x ethnicity "
            f"({len(task.distinct_names)} distinct); equal weights within a group",
        ),
        (
            "Names sensitivity",
            ", ".join(v.label for v in task.variants) + " (raw scores; "
            f"{len(task.scored_names)} names scored)"
            if task.variants
            else "none",
        ),
        ("Template", config.template),
        (
            "Calibration",
            "divided by the base rate after the content-free descriptions "
            + ", ".join(repr(t) for t in config.content_free)
            if calibrated
            else "none (the run holds no content-free records)",
        ),
        (
            "Sensitivity",
            f"{len(config.sensitivity_templates)} further templates on "
            f"{config.sensitivity_codes:,} codes"
            if calibrated and config.sensitivity_codes
            else "none",
        ),
        (
            "Estimand",
            "the paper's AssocMAD of the listed names; as an estimate of AssocMAD "
            "over each group's population of names it is biased upward by the sampling of "
            f"{config.top_k} names per group (an absolute deviation of noisy group means), most "
            "with few names: the names-alone null shows how much names alone give. The corrected "
            "AssocMAD estimates the population value",
        ),
        (
            "AssocMAD intervals",
            f"corrected AssocMAD: test inversion over shrunk group effects "
            f"on the log scale, {DRAWS} name lists drawn from the pooled residuals per hypothesis, "
            f"central {LEVEL:.0%} range (95% coverage by simulation); groups pooled by their "
            "means; assumes the groups' names spread alike. Wide with few names per group",
        ),
        (
            "Table 3 intervals",
            f"corrected share: the codes' log ratios of the sexes' scores "
            f"deconvolved of name noise, the names' shared shift from a bootstrap over names "
            f"within groups ({NAME_RESAMPLES} resamples), 95% coverage by simulation; assumes the "
            "sexes' names spread alike. Wide with few names per group",
        ),
        (
            "Drill-down",
            "per sex-neutral code and group: the geometric-mean probability of the "
            "group's names over that of the other groups, each name centred on its mean over the "
            "codes (the same for raw and calibrated scores), t interval over names with the "
            "groups' spreads pooled (assumes they spread alike), "
            "Benjamini-Hochberg q over the group's codes",
        ),
        (
            "Names-alone null",
            f"names permuted across the groups, group sizes kept "
            f"({NULL_PERMUTATIONS:,} permutations, the same for raw and calibrated scores)",
        ),
    ]
    return pl.DataFrame(rows, schema=["choice", "value"], orient="row")


VARIANTS = (("", "paper"), ("calibrated_", "calibrated"))


def _levels_row(frame: pl.DataFrame, column: str = "assoc_mad") -> dict[str, Any]:
    """One row: each level's value (``column``) and, where the frame has them, its interval."""
    row: dict[str, Any] = {}
    for record in frame.iter_rows(named=True):
        label = "Mean" if record["level"] == "mean" else record["level"]
        row[label] = round(record[column], 4)
        if "corrected" in record:  # None where K = 1 leaves nothing to correct with
            row |= _corrected_cells(label, record["corrected"], record["ci_low"], record["ci_high"])
    return row


def _corrected_cells(
    name: str, fixed: float | None, low: float | None, high: float | None, percent: bool = False
) -> dict[str, Any]:
    """The printed cells of one corrected value: ``"{name} corrected"`` (with " (%)" for a
    share shown in percent) and its ``"{name} corrected 95% CI"``."""
    scale, digits = (100.0, 2) if percent else (1.0, 4)
    return {
        f"{name} corrected{' (%)' if percent else ''}": None
        if fixed is None
        else round(scale * fixed, digits),
        f"{name} corrected 95% CI": interval_text(low, high, scale, 1 if percent else 4),
    }


def _chapter_row(
    record: dict[str, Any], column: str = "assoc_mad", name: str = "AssocMAD"
) -> dict[str, Any]:
    """One chapter's statistic (``column``, printed as ``name``): the listed names' value, then
    the corrected one and its interval (where the run computed them)."""
    row: dict[str, Any] = {
        "Chapter": chapter_name(record["chapter"]),
        "Sex-neutral codes": record["codes"],
        name: round(record[column], 4),
    }
    if "corrected" in record:
        row |= _corrected_cells(name, record["corrected"], record["ci_low"], record["ci_high"])
    return row


def _sensitivity_row(model: str, record: dict[str, Any]) -> dict[str, Any]:
    """One template and score variant of the sensitivity table as printed: each level's
    AssocMAD and each list's share, each followed by its corrected value and interval (where
    the run computed them)."""
    row: dict[str, Any] = {
        "Model": model,
        "Template": record["template"],
        "Paper's": "yes" if record["paper"] else "",
        "Scores": "paper" if record["variant"] == "raw" else record["variant"],
        "Codes": record["codes"],
    }

    def add(label: str, value: Any, stem: str, scale: float, digits: int) -> None:
        """``label``: the paper's ``value``; then ``stem``'s corrected value and interval."""
        row[label] = None if value is None else round(scale * value, digits)
        if f"{stem} corrected" in record:
            name = label.removesuffix(" correct (%)").removesuffix("-only")
            row.update(
                _corrected_cells(
                    name,
                    record[f"{stem} corrected"],
                    record[f"{stem} ci_low"],
                    record[f"{stem} ci_high"],
                    percent=scale != 1,
                )
            )

    for level in LEVEL_COLUMNS:
        stem = level if level != "Mean" else "mean"
        add(level, record[stem], stem, 1.0, 4)
    for side in ("female-only", "male-only"):
        if f"{side} correct" in record:
            add(f"{side.capitalize()} correct (%)", record[f"{side} correct"], side, 100.0, 2)
    return row


def _names_row(model: str, record: dict[str, Any]) -> dict[str, Any]:
    """One name set and level of the names-sensitivity table as printed."""
    row: dict[str, Any] = {
        "Model": model,
        "Names": record["names"],
        "Distinct names": record["distinct_names"],
        "Level": "Mean" if record["level"] == "mean" else record["level"],
        "AssocMAD": round(record["assoc_mad"], 4),
    }
    if "null_mean" in record:
        row |= {
            "Names alone (mean)": round(record["null_mean"], 4),
            "p": float(f"{record['p_value']:.2g}"),
        }
    return row | _corrected_cells(
        "AssocMAD", record["corrected"], record["ci_low"], record["ci_high"]
    )


def paper_layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """One row per model and score variant (and attribute or K), levels as columns, as the
    paper prints them, each value followed by its interval."""
    variants = [(prefix, label) for prefix, label in VARIANTS if f"{prefix}table1" in tables]
    # The sex rule and the sex-neutral codes behind Table 1 (runs older than the method table
    # show neither).
    neutral: dict[str, Any] = {}
    if "method" in tables:
        choices = dict(tables["method"].iter_rows())
        neutral = {
            "Sex rule": choices["Sex-specific rule"].split(":")[0],
            "Sex-neutral codes": tables["table1"]["nodes"][4],
        }
    out: dict[str, pl.DataFrame] = {
        "method": (
            tables["method"].select(
                pl.lit(model).alias("Model"),
                pl.col("choice").alias("Choice"),
                pl.col("value").alias("Value"),
            )
            if "method" in tables
            else pl.DataFrame()
        ),
        "table1": pl.DataFrame(
            [
                {"Model": model, "Scores": label} | neutral | _levels_row(tables[f"{prefix}table1"])
                for prefix, label in variants
            ]
        ),
        "table1_all_codes": pl.DataFrame(
            [{"Model": model} | _levels_row(tables["table1_all_codes"])]
        ),
        "table2": pl.DataFrame(
            [
                {"Model": model, "Scores": label, "Attribute": attribute.capitalize()}
                | _levels_row(tables[f"{prefix}table2"].filter(pl.col("attribute") == attribute))
                for prefix, label in variants
                for attribute in ("sex", "ethnicity")
            ]
        ),
    }
    nulls = [
        tables[f"{prefix}null"].select(
            pl.lit(model).alias("Model"),
            pl.lit(label).alias("Scores"),
            pl.col("attribute")
            .replace({"both": "8 groups", "sex": "Sex", "ethnicity": "Ethnicity"})
            .alias("Groups"),
            pl.col("level").replace({"mean": "Mean"}).alias("Level"),
            pl.col("assoc_mad").round(4).alias("AssocMAD"),
            pl.col("null_mean").round(4).alias("Names alone (mean)"),
            pl.col("null_q95").round(4).alias("Names alone (95th percentile)"),
            pl.col("p_value").round_sig_figs(2).alias("p"),
            pl.col("verdict").alias("Verdict"),
        )
        for prefix, label in variants
        if f"{prefix}null" in tables
    ]
    if nulls:
        out["null"] = pl.concat(nulls)
    rows = []
    for prefix, label in variants:
        row: dict[str, Any] = {"Model": model, "Scores": label}
        if neutral:
            row["Sex rule"] = neutral["Sex rule"]
        for record in tables[f"{prefix}table3"].iter_rows(named=True):
            side = record["list"].split("-")[0].capitalize()
            share = record["share"]
            row[f"{side}-only correct (%)"] = None if share is None else round(100 * share, 2)
            row |= _corrected_cells(
                side, record["corrected"], record["ci_low"], record["ci_high"], percent=True
            )
            row[f"{side}-only codes"] = record["codes"]
        rows.append(row)
    out["table3"] = pl.DataFrame(rows)
    chapters = [
        pl.DataFrame(
            [
                {"Model": model, "Scores": label} | _chapter_row(r)
                for r in tables[f"{prefix}chapter_assoc"].iter_rows(named=True)
            ]
        )
        for prefix, label in variants
        if f"{prefix}chapter_assoc" in tables
    ]
    out["chapter_assoc"] = pl.concat(chapters, how="diagonal") if chapters else pl.DataFrame()
    out |= _gap_layout(tables, variants, model)
    out["table8"] = pl.DataFrame(
        [
            {"Model": model, "K": k} | _levels_row(part)
            for (k,), part in tables["table8"].group_by("k", maintain_order=True)
        ]
    )
    if "design" in tables:
        out["design"] = tables["design"].select(
            pl.lit(model).alias("Model"),
            pl.col("k").alias("K"),
            pl.col("role").alias("Role"),
            pl.col("printed_width").round(3).alias("Width printed"),
            pl.col("projected_width").round(3).alias("Width projected"),
            pl.col("projected_width_l1").round(3).alias("L1 width projected"),
            pl.col("time_vs_k5").alias("Time vs K = 5"),
        )
    if "drilldown" in tables and tables["drilldown"].height:
        out["drilldown"] = _drilldown_layout(tables["drilldown"], model)
    if "names_sensitivity" in tables and tables["names_sensitivity"].height:
        out["names_sensitivity"] = pl.DataFrame(
            [_names_row(model, r) for r in tables["names_sensitivity"].iter_rows(named=True)]
        )
    if "sensitivity" in tables and tables["sensitivity"].height:
        rows = [_sensitivity_row(model, r) for r in tables["sensitivity"].iter_rows(named=True)]
        # Two tables: levels and sex preference side by side are wider than a page.
        frame = pl.DataFrame(rows)
        keys = ["Model", "Template", "Paper's", "Scores", "Codes"]
        sexes = [c for c in frame.columns if c.startswith(("Female", "Male"))]
        out["sensitivity"] = frame.drop(sexes)
        if sexes:
            out["sensitivity_preference"] = frame.select(*keys, *sexes)
    return out


def _gap_layout(
    tables: dict[str, pl.DataFrame], variants: list[tuple[str, str]], model: str
) -> dict[str, pl.DataFrame]:
    """The worst-group gap tables as printed: per level (groups as rows, levels as columns)
    and per chapter (with the most and least favoured group)."""
    present = [(prefix, label) for prefix, label in variants if f"{prefix}worst_gap" in tables]
    if not present:
        return {}
    groups = {"both": "8 groups", "sex": "Sex", "ethnicity": "Ethnicity"}
    levels = pl.DataFrame(
        [
            {"Model": model, "Scores": label, "Groups": name}
            | _levels_row(
                tables[f"{prefix}worst_gap"].filter(pl.col("attribute") == attribute), "gap"
            )
            for prefix, label in present
            for attribute, name in groups.items()
        ]
    )
    chapters = []
    for prefix, label in present:
        for record in tables[f"{prefix}chapter_gap"].iter_rows(named=True):
            chapters.append(
                {"Model": model, "Scores": label}
                | _chapter_row(record, "gap", "Gap")
                | {
                    "Most favoured": record["most_favoured"],
                    "Least favoured": record["least_favoured"],
                }
            )
    return {"worst_gap": levels, "chapter_gap": pl.DataFrame(chapters)}


def write_intrinsic_report(store: RunStore, tables: dict[str, pl.DataFrame], model: str) -> Path:
    """Write ``results/intrinsic/``: tables.md, a CSV per table, metrics.json; returns tables.md."""
    layout = paper_layout(tables, model)
    parts = [f"# CLIMB intrinsic — {model}", ""]
    for key, frame in layout.items():
        if frame.width == 0:
            continue
        parts += [f"## {TABLE_TITLES[key]}", "", to_markdown(frame), ""]
        store.write_text(f"results/intrinsic/{key}.csv", frame.write_csv())
    for key, frame in tables.items():
        store.write_text(f"results/intrinsic/long/{key}.csv", long_csv(frame))
    store.write_text(
        "results/intrinsic/metrics.json", json.dumps(metrics_json(tables), indent=2, sort_keys=True)
    )
    return store.write_text("results/intrinsic/tables.md", "\n".join(parts))
