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


def retry_causes(engine: Any) -> dict[str, int]:
    """Why an engine's requests were sent again so far (cause -> count; a move to another
    endpoint counts as ``failover``); empty for engines without a network transport."""
    stats = getattr(getattr(engine, "transport", None), "stats", None)
    if stats is None:
        return {}
    causes = dict(getattr(stats, "causes", {}))
    if stats.failovers:
        causes["failover"] = stats.failovers
    return causes


class Retries:
    """One benchmark's retries: the engine's (shared by a suite's benchmarks) since the
    benchmark began, with their causes.

    Args:
        engine: the engine the benchmark sends its requests through.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.start = retry_causes(engine)

    def causes(self) -> dict[str, int]:
        """Cause -> retries since the start, most frequent first."""
        now = retry_causes(self.engine)
        found = {k: v - self.start.get(k, 0) for k, v in now.items()}
        return dict(sorted(((k, v) for k, v in found.items() if v > 0), key=lambda kv: -kv[1]))

    def count(self) -> int:
        """Retries since the start."""
        return sum(self.causes().values())


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
    """ "retried R (HTTP 500 x9, ReadTimeout x2), failed F": requests sent again (nothing
    lost) with their causes, and units that failed."""
    causes = info.get("causes") or {}
    why = " (" + ", ".join(f"{k} x{v}" for k, v in causes.items()) + ")" if causes else ""
    return f"retried {info['retried']}{why}, failed {info['failed']}"


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


#: Seconds of work after which a run's length is judged from its rate, and the length (in
#: seconds) past which a run is warned about.
WARN_AFTER = 60.0
LONG_RUN = 24 * 3600.0


class Progress:
    """Counts finished units of work and shows rate and ETA.

    Args:
        label: what is being counted (shown before the numbers), e.g. "intrinsic codes".
        total: units in the whole run, resumed ones included.
        mode: "rich" (a live bar), "plain" (a line every ``interval`` seconds) or "none".
        interval: seconds between plain lines.
    """

    def __init__(
        self,
        label: str,
        total: int,
        mode: str = "rich",
        interval: float = 10.0,
        shrink: str | None = None,
        warn_after: float = WARN_AFTER,
    ) -> None:
        self.label = label
        self.total = total
        self.shrink = shrink
        self.warn_after = warn_after
        self._warned = False
        self.mode = mode if (mode != "rich" or sys.stderr.isatty()) else "plain"
        self.interval = interval
        self.done = 0
        self.retried = 0
        self.causes: dict[str, int] = {}
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

    def advance(
        self, n: int, retried: Retries | int | None = None, failed: int | None = None
    ) -> None:
        """Count ``n`` finished units.

        Args:
            n: units finished now.
            retried: requests retried so far by this benchmark (sent again; nothing lost):
                its :class:`Retries`, whose causes are shown too, or a count; None: unknown.
            failed: units so far that finished without a usable result (kept and marked in
                the records, e.g. answers without text), if known.
        """
        self.done += n
        if isinstance(retried, Retries):
            self.causes = retried.causes()
            self.retried = sum(self.causes.values())
        elif retried is not None:
            self.retried = retried
        self.failed = self.failed if failed is None else failed
        rate = self.rate()
        self._warn_if_long(rate)
        counts = {"retried": self.retried, "failed": self.failed, "causes": self.causes}
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

    def _warn_if_long(self, rate: float) -> None:
        """Once, after ``warn_after`` seconds of work: when the rate so far puts the end more
        than :data:`LONG_RUN` seconds away, say so, with the options that shrink the run."""
        if self._warned or rate <= 0 or time.monotonic() - self._start < self.warn_after:
            return
        self._warned = True
        left = (self.total - self.done) / rate
        if left <= LONG_RUN:
            return
        hint = f" To shrink it: {self.shrink}." if self.shrink else ""
        print(
            f"warning: {self.label} will take about {left / 86400:,.1f} days at the rate so far "
            f"({rate:,.2f}/s, {self.total - self.done:,} left).{hint} Finished chunks are kept: "
            "stop it with Ctrl-C and rerun with the smaller size.",
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
