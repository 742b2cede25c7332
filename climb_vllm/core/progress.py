"""Progress display for long runs: a rich bar for terminals, timed plain lines for logs.

A single benchmark shows one bar. A suite (``eval all``) opens a :class:`Board` first: every
:class:`Progress` opened while it is active reports to the board's row for its benchmark (the
first word of its label), so the whole suite shows as one display with a row per benchmark.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

_BOARD: Board | None = None


def retried(engine: Any) -> int:
    """Requests an engine has retried or moved to another endpoint so far (0 for engines
    without a network transport). A request that still fails after its retries stops the run,
    so these are attempts, not lost work."""
    transport = getattr(engine, "transport", None)
    stats = getattr(transport, "stats", None)
    return int(stats.retries + stats.failovers) if stats is not None else 0


class Board:
    """One display for a suite of benchmarks: per row done/total, rate, retried and failed
    counts and ETA.

    Args:
        rows: the benchmarks, in display order.
        mode: "rich" (live table of bars), "plain" (a line every ``interval`` seconds) or "none".
        interval: seconds between plain lines.
    """

    def __init__(self, rows: list[str], mode: str = "rich", interval: float = 10.0) -> None:
        self.rows = {row: _row() for row in rows}
        self.mode = mode if (mode != "rich" or sys.stderr.isatty()) else "plain"
        self.interval = interval
        self._last = 0.0
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> Board:
        global _BOARD
        if self.mode == "rich":
            self._bar = _rich_bar()
            self._bar.__enter__()
            for row in self.rows:
                # Started when the benchmark starts, so its elapsed time and ETA are its own.
                self._tasks[row] = self._bar.add_task(
                    row, total=None, rate="waiting", errors="", start=False
                )
        _BOARD = self
        return self

    def row_for(self, label: str) -> str:
        """The row a progress label reports to: its benchmark's (the label's first word), or
        a new row of its own (a step such as embedding titles, shown under the benchmarks)."""
        first = label.split()[0] if label else ""
        if first in self.rows:
            return first
        if label not in self.rows:
            self.rows[label] = _row()
            if self._bar is not None:
                self._tasks[label] = self._bar.add_task(
                    label, total=None, rate="", errors="", start=False
                )
        return label

    def update(self, row: str, **fields: Any) -> None:
        """Set a row's fields (done, total, retried, failed, rate, state) and redraw."""
        self.rows[row].update(fields)
        state = self.rows[row]
        if self._bar is not None:
            if fields.get("state") == "running":
                self._bar.start_task(self._tasks[row])
            self._bar.update(
                self._tasks[row],
                total=state["total"] or None,
                completed=state["done"],
                rate=f"{state['rate']:,.1f}/s" if state["state"] == "running" else state["state"],
                errors=_counts(state),
            )
        elif self.mode == "plain":
            now = time.monotonic()
            if now - self._last >= self.interval or fields.get("state") == "done":
                self._last = now
                print(
                    "suite: "
                    + " | ".join(f"{name} {_plain(info)}" for name, info in self.rows.items()),
                    file=sys.stderr,
                    flush=True,
                )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        global _BOARD
        _BOARD = None
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)


def _row() -> dict[str, Any]:
    return {"done": 0, "total": 0, "retried": 0, "failed": 0, "rate": 0.0, "state": "waiting"}


def _counts(info: dict[str, Any]) -> str:
    """ "retried R, failed F": requests sent again (nothing lost) and units that failed."""
    return f"retried {info['retried']}, failed {info['failed']}"


def _plain(info: dict[str, Any]) -> str:
    if info["state"] == "waiting":
        return "waiting"
    rate = info["rate"]
    left = info["total"] - info["done"]
    eta = f"{left / rate:,.0f} s" if rate > 0 else ("0 s" if left == 0 else "unknown")
    return f"{info['done']}/{info['total']} ({rate:,.1f}/s, {_counts(info)}, ETA {eta})"


def _rich_bar() -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import Progress as RichProgress

    return RichProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[errors]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        transient=False,
    )


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
        self.retried = 0
        self.failed = 0
        self._row: str | None = None
        self._skipped = 0
        self._start = time.monotonic()
        self._last = 0.0
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        self._row = _BOARD.row_for(self.label) if _BOARD is not None else None
        if self._row is not None:
            assert _BOARD is not None
            _BOARD.update(self._row, total=self.total, done=0, state="running")
        elif self.mode == "rich":
            self._bar = _rich_bar()
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, rate="", errors="")
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

    def advance(self, n: int, retried: int | None = None, failed: int | None = None) -> None:
        """Count ``n`` finished units.

        Args:
            n: units finished now.
            retried: requests retried so far in the run (sent again; nothing lost), if known.
            failed: units so far that finished without a usable result (kept and marked in
                the records, e.g. answers without text), if known.
        """
        self.done += n
        self.retried = self.retried if retried is None else retried
        self.failed = self.failed if failed is None else failed
        rate = self.rate()
        counts = {"retried": self.retried, "failed": self.failed}
        if self._row is not None and _BOARD is not None:
            _BOARD.update(self._row, done=self.done, rate=rate, **counts)
        elif self._bar is not None:
            self._bar.update(
                self._task, completed=self.done, rate=f"{rate:,.1f}/s", errors=_counts(counts)
            )
        elif self.mode == "plain":
            now = time.monotonic()
            if now - self._last >= self.interval or self.done >= self.total:
                self._last = now
                left = f"{(self.total - self.done) / rate:,.0f} s" if rate > 0 else "unknown"
                print(
                    f"{self.label}: {self.done}/{self.total} ({rate:,.1f}/s, "
                    f"{_counts(counts)}, ETA {left})",
                    file=sys.stderr,
                    flush=True,
                )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._row is not None and _BOARD is not None:
            _BOARD.update(self._row, state="done" if exc_type is None else "stopped")
        elif self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
