"""The plain progress display used in logs."""

from __future__ import annotations

import pytest

from climb_vllm.core.progress import Progress


def test_plain_lines_show_counts_rate_and_eta(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress("intrinsic codes", 10, mode="plain", interval=0.0) as progress:
        progress.skip(4)
        progress.advance(6)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("intrinsic codes: 4/10")
    assert (
        lines[-1].startswith("intrinsic codes: 10/10")
        and "/s, retried 0, failed 0, ETA" in lines[-1]
    )


def test_board_shows_one_line_for_the_whole_suite(capsys: pytest.CaptureFixture[str]) -> None:
    from climb_vllm.core.progress import Board

    with Board(["intrinsic", "biasmd"], mode="plain", interval=0.0):
        with Progress("intrinsic prompts", 4, mode="plain") as progress:
            progress.advance(4, retried=3, failed=1)
        with Progress("embedding ICD titles", 2, mode="plain") as progress:
            progress.advance(2)
    lines = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("suite: ") for line in lines)
    assert "intrinsic 0/4" in lines[0] and "biasmd waiting" in lines[0]
    # retried requests (nothing lost) and failed units are told apart
    assert "intrinsic 4/4" in lines[-1] and "retried 3, failed 1" in lines[-1]
    # a step that is not a benchmark gets a row of its own; unstarted benchmarks stay waiting
    assert "embedding ICD titles 2/2" in lines[-1] and "biasmd waiting" in lines[-1]
