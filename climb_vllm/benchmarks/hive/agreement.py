"""Agreement of the graders with labels that people (or another grader) gave the same answers.

``climb-vllm grade biasmd answers.csv --labels label --by model --out DIR`` grades every answer,
maps each grade onto the labels' categories (the benchmark's ``paper_label``: BiasMD
``Ambiguous`` / ``Biased``; DiseaseMatcher ``same`` / ``different`` and, where a group's labels
use it, ``ambiguous``) and reports per group (a model, say):

* agreement: the share of answers whose mapped grade equals the label, with a 95% Wilson
  interval;
* the confusion matrix: label x grade counts (the full grade, not only its category);
* every disagreement in ``disagreements.csv`` and, for reading, a seeded sample of up to N per
  group with the item's text in ``disagreements.md``.

Labels are compared case-insensitively. A label outside the categories stops with the list of
categories; answers to ids that are not items of the benchmark are counted and left out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm.core.errors import UserError

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.hive.kind import Kind


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (nan, nan) for no trials."""
    if total == 0:
        return float("nan"), float("nan")
    p = successes / total
    centre = p + z * z / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    denominator = 1 + z * z / total
    return max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator)


def compare(kind: Kind, graded: pl.DataFrame) -> pl.DataFrame:
    """Add ``category`` (the grade's category in the labels' scheme) and ``agrees``.

    Args:
        kind: the benchmark the answers are to.
        graded: graded answers with ``group``, ``label`` (lower case) and ``grade``.
    """
    import polars as pl

    allowed = kind.categories
    unknown = sorted(set(graded["label"].to_list()) - set(allowed))
    if unknown:
        raise UserError(
            f"The labels hold values that are not {kind.title} categories: {', '.join(unknown)}.",
            f"label each answer as one of {', '.join(allowed)} (case does not matter).",
        )
    three_way = {g for g, label in zip(graded["group"], graded["label"]) if label == "ambiguous"}
    categories = [
        kind.paper_label(grade, group in three_way).lower()
        for grade, group in zip(graded["grade"], graded["group"])
    ]
    return graded.with_columns(pl.Series("category", categories, dtype=pl.String)).with_columns(
        (pl.col("category") == pl.col("label")).alias("agrees")
    )


def summary(compared: pl.DataFrame) -> pl.DataFrame:
    """Per group: answers, agreements, agreement % with its Wilson interval, disagreements."""
    import polars as pl

    rows: list[dict[str, Any]] = []
    for (group,), part in compared.group_by("group", maintain_order=True):
        agree = int(part["agrees"].sum())
        low, high = wilson(agree, part.height)
        rows.append(
            {
                "group": group,
                "answers": part.height,
                "agree": agree,
                "agreement_pct": 100 * agree / part.height,
                "ci_low_pct": 100 * low,
                "ci_high_pct": 100 * high,
                "disagreements": part.height - agree,
            }
        )
    return pl.DataFrame(rows).sort("group")


def confusion(compared: pl.DataFrame, grades: tuple[str, ...]) -> pl.DataFrame:
    """Per group and label, the count of each grade (columns in the grades' order)."""
    import polars as pl

    counts = compared.group_by("group", "label", "grade").agg(pl.len().alias("n"))
    wide = counts.pivot(on="grade", index=["group", "label"], values="n").fill_null(0)
    for grade in grades:
        if grade not in wide.columns:
            wide = wide.with_columns(pl.lit(0, dtype=pl.UInt32).alias(grade))
    return wide.select("group", "label", *grades).sort("group", "label")


def _readable(rows: pl.DataFrame, context: str) -> str:
    lines = []
    for row in rows.iter_rows(named=True):
        lines.append(
            f"### {row['group']} · {row['id']} · label {row['label']} · grade {row['grade']} "
            f"({row['category']}; rule: {row['rule']})\n\n"
            f"**Item:** {row[context]}\n\n**Answer:**\n\n"
            + "\n".join("> " + line for line in str(row["response"]).splitlines())
            + "\n"
        )
    return "\n".join(lines)


def write_agreement(
    kind: Kind, compared: pl.DataFrame, out: Path, sample: int, seed: int
) -> tuple[Path, pl.DataFrame]:
    """Write agreement.md / .csv, confusion.csv, disagreements.csv and disagreements.md.

    Args:
        kind: the benchmark the answers are to.
        compared: the output of :func:`compare` with ``id``, ``rule``, ``response`` and the
            item's text (``statement`` or ``question``).
        out: the folder.
        sample: disagreements per group in the readable file.
        seed: seed of that sample.

    Returns:
        The path of agreement.md and the summary table.
    """
    import polars as pl

    from climb_vllm.core.results import to_markdown

    grades = kind.grades
    context = kind.context
    table = summary(compared)
    matrix = confusion(compared, grades)
    out.mkdir(parents=True, exist_ok=True)
    table.write_csv(out / "agreement.csv")
    matrix.write_csv(out / "confusion.csv")
    wrong = compared.filter(~pl.col("agrees"))
    columns = ["group", "id", "label", "grade", "category", "rule", context, "response"]
    wrong.select(columns).write_csv(out / "disagreements.csv")
    picked = (
        wrong.with_columns(pl.int_range(pl.len()).shuffle(seed).over("group").alias("_rank"))
        .filter(pl.col("_rank") < sample)
        .sort("group", "id")
    )
    (out / "disagreements.md").write_text(
        f"# {kind.name}: a sample of disagreements (up to {sample} per group, seed {seed})\n\n"
        + _readable(picked, context)
    )
    shown = table.with_columns(
        pl.format(
            "{} [{}, {}]",
            pl.col("agreement_pct").round(1),
            pl.col("ci_low_pct").round(1),
            pl.col("ci_high_pct").round(1),
        ).alias("agreement % [95% CI]")
    ).select("group", "answers", "agree", "agreement % [95% CI]", "disagreements")
    text = (
        f"# Agreement of the {kind.name} grader with the labels\n\n{to_markdown(shown)}\n\n"
        f"## Confusion (label x grade)\n\n{to_markdown(matrix)}\n"
    )
    path = out / "agreement.md"
    path.write_text(text)
    return path, table
