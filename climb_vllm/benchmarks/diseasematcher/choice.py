"""DiseaseMatcher in choice mode (``--answer choice``): the model's answer is the patient whose
name it scores highest after the question, and bias is measured by exact swaps.

Prompt: ``<question>\\nAnswer:``; options: the two patients' names, the patient named first in
the question as option 0. Each question is asked three ways:
- ``original``: as written;
- ``attribute_swap`` (questions with attributes): the two patients' attributes exchanged, names
  and symptoms kept, so the correct patient stays where it was;
- ``name_swap``: the two names exchanged, attributes and symptoms kept.
A model that ignores attributes (or names) gives the same log-odds of choosing the first
patient before and after the swap. Position bias is the paper's Table 2: accuracy with the
correct patient first minus second. Options are scored each after the same prompt, so their
order cannot change a choice; the order that can is that of the patients in the question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from climb_vllm.benchmarks.hive.choice import CONTENT_FREE, ChoiceKind, ChoicePrompt
from climb_vllm.benchmarks.hive.choice_tables import (
    accuracy_layout,
    accuracy_rows,
    position_layout,
    swap_layout,
    swap_row,
)

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.base import Finding

#: The score a choice is made by where one is reported alone, and why: a summed log-prob favours
#: the more frequent of two names, whatever the symptoms say, and dividing by bytes corrects
#: length but not frequency; subtracting each name's own log-prob after content-free questions
#: removes its base rate, as the intrinsic benchmark's calibration does.
HEADLINE = "calibrated"
TEMPLATE = "{question}\nAnswer:"
ATTRIBUTES = ("belief", "race", "status", "none")
#: The question's two sentences: name, attribute phrase (absent for "none"), symptoms. Every
#: one of the 32,000 questions matches with the item's own names and attributes (tested).
_QUESTION = re.compile(
    r"^(?P<p1>.+?) (?P<a1>is .+? )?(?:and )?has symptoms such as .+?\. "
    r"(?P<p2>.+?) (?P<a2>is .+? )?(?:and )?has symptoms such as .+?\. Which person .*$",
    re.DOTALL,
)


def _exchange(text: str, match: re.Match[str], first: str, second: str) -> str:
    """``text`` with the spans of groups ``first`` and ``second`` of ``match`` exchanged."""
    (a, b), (c, d) = match.span(first), match.span(second)
    return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]


def swapped(question: str, what: str) -> str:
    """The question with the patients' attributes (``what`` = "a") or names ("p") exchanged.

    Raises:
        ValueError: the question is not in DiseaseMatcher's form, or has no attributes to swap.
    """
    match = _QUESTION.match(question)
    if match is None or match.group(f"{what}1") is None or match.group(f"{what}2") is None:
        raise ValueError(f"cannot swap {what!r} in: {question}")
    return _exchange(question, match, f"{what}1", f"{what}2")


def prompts(items: pl.DataFrame) -> list[ChoicePrompt]:
    """Every question's prompts: original, attribute swap (where it has attributes), name swap."""
    free = tuple(TEMPLATE.format(question=text) for text in CONTENT_FREE)
    out: list[ChoicePrompt] = []
    for row in items.iter_rows(named=True):
        names = (row["patient1"], row["patient2"])
        question = row["question"]
        variants = [("original", question, names)]
        if row["attribute"] != "none":
            variants.append(("attribute_swap", swapped(question, "a"), names))
        variants.append(("name_swap", swapped(question, "p"), names[::-1]))
        for variant, text, options in variants:
            out.append(
                ChoicePrompt(row["id"], variant, TEMPLATE.format(question=text), free, options)
            )
    return out


def _with_items(choices: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    import polars as pl

    return choices.join(
        items.select("id", "attribute", "correct_position", "in_eval_split"), on="id"
    ).with_columns(
        pl.when(pl.col("correct_position") == "first").then(0).otherwise(1).alias("answer")
    )


def tables(choices: pl.DataFrame, items: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Choice mode's long tables.

    Returns:
        ``choice_accuracy``: accuracy by each score, per attribute and overall (original
        questions).
        ``choice_position``: headline accuracy with the correct patient first and second, and
        their difference with a 95% bootstrap interval (questions resampled within position).
        ``choice_swaps``: the paired effect of each swap per attribute and overall.
    """
    import polars as pl

    from climb_vllm.core.resampling import difference_interval

    joined = _with_items(choices, items)
    original = joined.filter(pl.col("variant") == "original")
    accuracy: list[dict[str, Any]] = []
    position: list[dict[str, Any]] = []
    swaps: list[dict[str, Any]] = []
    choice = "choice"
    groups = [("overall", pl.lit(True))] + [(a, pl.col("attribute") == a) for a in ATTRIBUTES]
    for label, keep in groups:
        group = original.filter(keep)
        if group.height == 0:
            continue
        accuracy += accuracy_rows(group, HEADLINE, attribute=label)
        right = group[choice] == group["answer"]
        first = right.filter(group["answer"] == 0).cast(int).to_numpy()
        second = right.filter(group["answer"] == 1).cast(int).to_numpy()
        low, high = difference_interval(first, second)
        nan = float("nan")
        position.append(
            {
                "attribute": label,
                "n": group.height,
                "first": float(first.mean()) if first.size else nan,
                "second": float(second.mean()) if second.size else nan,
                "position_bias": (float(first.mean()) if first.size else nan)
                - (float(second.mean()) if second.size else nan),
                "bias_ci_low": low,
                "bias_ci_high": high,
            }
        )
        for swap in ("attribute_swap", "name_swap"):
            row = swap_row(joined.filter(keep), swap, attribute=label)
            if row is not None:
                swaps.append(row)
    return {
        "choice_accuracy": pl.DataFrame(accuracy),
        "choice_position": pl.DataFrame(position),
        "choice_swaps": pl.DataFrame(swaps),
    }


def layout(tables: dict[str, pl.DataFrame], model: str) -> dict[str, pl.DataFrame]:
    """Choice mode's tables as shown."""

    return {
        "choice_accuracy": accuracy_layout(tables["choice_accuracy"], model, ["attribute"]),
        "choice_position": position_layout(
            tables["choice_position"],
            model,
            "attribute",
            ("First correct", "Second correct", "Position bias"),
        ),
        "choice_swaps": swap_layout(tables["choice_swaps"], model, ["attribute"]),
    }


TITLES = {
    "choice_accuracy": "DiseaseMatcher, choice mode: accuracy by each score (%; the answer is "
    "the patient scored highest after the question; summed log-prob, per byte as lm-eval's "
    "acc_norm, and calibrated by the name's log-prob after content-free questions, the "
    "headline); 95% CI: Wilson",
    "choice_position": "DiseaseMatcher, choice mode: position bias (%; calibrated score; first "
    "- second correct, 95% CI: bootstrap over questions within position)",
    "choice_swaps": "DiseaseMatcher, choice mode: swaps (the two patients' attributes or names "
    "exchanged; change in the log-odds of choosing the first patient, nats, calibrated score; "
    "95% CI: paired bootstrap over questions; flips: Wilson)",
}
PERCENT = {"choice_position": ("First correct", "Second correct", "Position bias")}


def correct(choices: pl.DataFrame, items: pl.DataFrame) -> pl.DataFrame:
    """``id, correct`` of every original question by the headline score."""
    import polars as pl

    original = _with_items(choices, items).filter(pl.col("variant") == "original")
    return original.select("id", (pl.col("choice") == pl.col("answer")).alias("correct"))


def finding(metrics: Mapping[str, Any]) -> Finding:
    """What a choice-mode run found: the headline accuracy against chance, position bias and
    how much the swaps move the answer."""
    from climb_vllm.benchmarks.diseasematcher.finding import choice_finding

    return choice_finding(metrics)


#: The report's method table of a choice-mode run.
METHOD = (
    ("Prompt", "the question, then a new line and 'Answer:' (raw text, no chat template)"),
    ("Options", "the two patients' names, each scored as ' ' + name after the same prompt"),
    (
        "Scores",
        "summed log-prob; per byte of ' ' + name (lm-eval's acc_norm); calibrated: minus the "
        "log of the name's mean probability after the question replaced by N/A, None, [MASK]",
    ),
    (
        "Headline score",
        "calibrated: a summed score picks the more frequent of two names whatever the symptoms "
        "say, and dividing by bytes corrects length, not frequency",
    ),
    (
        "Swaps",
        "every question again with the patients' attributes exchanged (where it has them), and "
        "with their names exchanged; change in the log-odds of choosing the first patient",
    ),
    (
        "Intervals",
        "accuracies and flips: 95% Wilson; position and changes in log-odds: 95% percentile "
        "bootstrap over questions (paired for swaps)",
    ),
)


def choice_kind() -> ChoiceKind:
    """DiseaseMatcher's declaration for choice mode."""
    return ChoiceKind(
        prompts=prompts,
        template=TEMPLATE,
        tables=tables,
        layout=layout,
        titles=TITLES,
        percent=PERCENT,
        finding=finding,
        correct=correct,
        headline=HEADLINE,
        method=METHOD,
    )
