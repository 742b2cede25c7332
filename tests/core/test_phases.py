"""Phase times: sums per phase across threads, and the printed line."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from climb_vllm.core.phases import PhaseTimes


def test_phases_sum_across_threads_and_overlap() -> None:
    phases = PhaseTimes()

    def work() -> None:
        with phases.timing("encode"):
            time.sleep(0.05)

    start = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        for future in [pool.submit(work) for _ in range(4)]:
            future.result()
    wall = time.perf_counter() - start
    # Four overlapping 50 ms blocks: their sum exceeds the wall time they took together.
    assert phases.seconds["encode"] >= 0.2 > wall
    with phases.timing("score"):
        pass
    assert list(phases.rounded()) == ["encode", "score"]
    assert phases.line().startswith("encode 0.2 s, score 0.0 s")


def test_a_failing_block_still_counts() -> None:
    phases = PhaseTimes()
    try:
        with phases.timing("write"):
            raise ValueError
    except ValueError:
        pass
    assert "write" in phases.seconds
