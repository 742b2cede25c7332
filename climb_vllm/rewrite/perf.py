"""``climb-vllm bench --rewrite [N]``: the speed of the counterfactual sex rewrite.

Measures, on the packaged synthetic cases' notes (every section of each case, rewritten to the
other sex):

- rewriting every case once, as a run's counterfactuals do (total and per case);
- rewriting one long note of N characters and one of 4N (the cases' notes repeated): the ratio
  of the two times says how the cost grows with a note's length (4 when linear, 16 when
  quadratic), the measurement that matters for long discharge summaries;
- both again with the learned referee off (the rules alone), in the same run: what the
  referee costs (:mod:`~climb_vllm.rewrite.referee`; it is loaded before the
  timing, and its cache of decisions is emptied before each timed pass).

Each time is the best of three.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged
from climb_vllm.rewrite.referee import default_referee
from climb_vllm.rewrite.sex_rewrite import swap_sex


def _best_of_three(work: Callable[[], object]) -> float:
    times = []
    for _ in range(3):
        default_referee().clear()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def rewrite_bench(chars: int) -> dict[str, Any]:
    """Time the sex rewrite on the synthetic cases and on notes of ``chars`` and 4 x ``chars``
    characters; returns the timings and the growth ratio."""
    if chars < 1000:
        raise UserError(
            f"--rewrite needs N >= 1000 characters, not {chars}.", "give N of 1000 or more"
        )
    cases = [
        json.loads(line)
        for line in packaged("cases", "synthetic_cases.jsonl").read_text().splitlines()
        if line.strip()
    ]
    notes = [("\n\n".join(case["notes"].values()), str(case["sex"])) for case in cases]

    def every_case(referee: bool = True) -> None:
        for text, sex in notes:
            swap_sex(text, "female" if sex == "male" else "male", referee=referee)

    male = "\n\n".join(text for text, sex in notes if sex == "male")
    short = (male * (chars // len(male) + 1))[:chars]
    long = (male * (4 * chars // len(male) + 1))[: 4 * chars]
    default_referee()  # loading the encoder is a one-off, not part of any rewrite's time
    cases_s = _best_of_three(every_case)
    asked = default_referee().asked  # words of one pass over the cases the referee decided
    short_s = _best_of_three(lambda: swap_sex(short, "female"))
    long_s = _best_of_three(lambda: swap_sex(long, "female"))
    rules_cases_s = _best_of_three(lambda: every_case(False))
    rules_long_s = _best_of_three(lambda: swap_sex(long, "female", referee=False))
    return {
        "rewrite_cases": len(notes),
        "rewrite_cases_s": round(cases_s, 4),
        "rewrite_per_case_ms": round(1000 * cases_s / len(notes), 2),
        "rewrite_note_chars": chars,
        "rewrite_note_s": round(short_s, 4),
        "rewrite_4x_note_s": round(long_s, 4),
        "rewrite_growth_4x": round(long_s / short_s, 2),
        "rewrite_chars_per_s": round(4 * chars / long_s),
        "rules_only_cases_s": round(rules_cases_s, 4),
        "rules_only_4x_note_s": round(rules_long_s, 4),
        "referee_cost_cases": round(cases_s / rules_cases_s, 2),
        "referee_cost_4x_note": round(long_s / rules_long_s, 2),
        "referee_words_per_pass": asked,
    }
