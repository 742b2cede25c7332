"""``climb-vllm bench --rewrite``: what it measures (no timing is asserted)."""

from __future__ import annotations

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.rewrite.perf import rewrite_bench


def test_rewrite_bench_reports_the_cases_and_the_growth() -> None:
    results = rewrite_bench(2000)
    assert results["rewrite_cases"] == 40
    assert results["rewrite_note_chars"] == 2000
    assert results["rewrite_growth_4x"] > 0 and results["rewrite_chars_per_s"] > 0


def test_rewrite_bench_refuses_a_tiny_note() -> None:
    with pytest.raises(UserError, match="N >= 1000"):
        rewrite_bench(10)
