"""The plain progress display used in logs."""

from __future__ import annotations

import pytest

from climb_vllm.progress import Progress


def test_plain_lines_show_counts_rate_and_eta(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress("intrinsic codes", 10, mode="plain", interval=0.0) as progress:
        progress.skip(4)
        progress.advance(6)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("intrinsic codes: 4/10")
    assert lines[-1].startswith("intrinsic codes: 10/10") and "/s, errors 0, ETA" in lines[-1]
