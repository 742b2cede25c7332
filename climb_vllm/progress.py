"""Progress display for long runs: a rich bar for terminals, timed plain lines for logs."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any


class Progress:
    """Counts finished units of work and shows rate and ETA.

    Args:
        label: what is being counted (shown before the numbers), e.g. "intrinsic codes".
        total: units in the whole run, resumed ones included.
        mode: "rich" (a live bar), "plain" (a line every ``interval`` seconds) or "none".
        interval: seconds between plain lines.
    """

    def __init__(self, label: str, total: int, mode: str = "rich", interval: float = 10.0) -> None:
        self.label = label
        self.total = total
        self.mode = mode if (mode != "rich" or sys.stderr.isatty()) else "plain"
        self.interval = interval
        self.done = 0
        self._skipped = 0
        self._start = time.monotonic()
        self._last = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self.mode == "rich":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                transient=False,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, rate="")
        return self

    def rate(self) -> float:
        """Units per second over the work done in this process (resumed units excluded)."""
        elapsed = time.monotonic() - self._start
        return (self.done - self._skipped) / elapsed if elapsed > 0 else 0.0

    def skip(self, n: int) -> None:
        """Count ``n`` units finished by an earlier run."""
        if n == 0:
            return
        self._skipped += n
        self.advance(n)

    def advance(self, n: int) -> None:
        """Count ``n`` finished units."""
        self.done += n
        rate = self.rate()
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{rate:,.1f}/s")
        elif self.mode == "plain":
            now = time.monotonic()
            if now - self._last >= self.interval or self.done >= self.total:
                self._last = now
                left = f"{(self.total - self.done) / rate:,.0f} s" if rate > 0 else "unknown"
                print(
                    f"{self.label}: {self.done}/{self.total} ({rate:,.1f}/s, ETA {left})",
                    file=sys.stderr,
                    flush=True,
                )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
