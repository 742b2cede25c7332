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


def test_retries_are_the_benchmarks_own_and_say_why(capsys: pytest.CaptureFixture[str]) -> None:
    """A suite shares one engine: each benchmark shows the retries since it began, with their
    causes, not the suite's running total."""
    from types import SimpleNamespace

    from climb_vllm.core.progress import Retries
    from climb_vllm.engines.transport import TransportStats

    stats = TransportStats(retries=11, causes={"HTTP 500": 11})
    engine = SimpleNamespace(transport=SimpleNamespace(stats=stats))
    retries = Retries(engine)  # the second benchmark starts after the first's 11 retries
    assert retries.count() == 0 and retries.causes() == {}
    stats.causes["HTTP 500"] += 2
    stats.causes["ReadTimeout"] = 3
    stats.failovers = 1
    assert retries.causes() == {"ReadTimeout": 3, "HTTP 500": 2, "failover": 1}
    with Progress("biasmd items", 10, "plain", interval=0) as progress:
        progress.advance(5, retries, 0)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "retried 6 (ReadTimeout x3, HTTP 500 x2, failover x1), failed 0" in line
    assert Retries(SimpleNamespace()).count() == 0  # an in-process engine


def test_a_run_longer_than_a_day_is_warned_about_once_with_the_fix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shrink = "--limit N scores a sample"
    with Progress("intrinsic prompts", 101_378, "none", shrink=shrink, warn_after=0.0) as slow:
        slow._start -= 100.0  # 100 s of work so far ...
        slow.advance(10)  # ... for 10 prompts: about 11.7 days left
        slow.advance(10)
    err = capsys.readouterr().err
    assert err.count("warning:") == 1
    assert "intrinsic prompts will take about 11.7 days" in err and shrink in err
    with Progress("intrinsic prompts", 100, "none", shrink=shrink, warn_after=0.0) as quick:
        quick._start -= 10.0
        quick.advance(50)
    assert "warning" not in capsys.readouterr().err
