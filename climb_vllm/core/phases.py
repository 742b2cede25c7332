"""Seconds spent in each phase of a run (encoding, scoring, writing, ...), summed across the
threads that run them, for the run record and the line printed at the end."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class PhaseTimes:
    """Sums of wall seconds per phase; phases that overlap each keep their own sum, so the
    phases add up to more than the wall time when the overlap works."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    @contextmanager
    def timing(self, phase: str) -> Iterator[None]:
        """Add the block's wall seconds to ``phase`` (thread-safe)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            taken = time.perf_counter() - start
            with self._lock:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + taken

    def rounded(self) -> dict[str, float]:
        """The sums to the millisecond, in the order the phases first ran."""
        return {phase: round(value, 3) for phase, value in self.seconds.items()}

    def line(self) -> str:
        """One line: ``encode 3.1 s, score 180.2 s, ...``."""
        return ", ".join(f"{phase} {value:.1f} s" for phase, value in self.seconds.items())
