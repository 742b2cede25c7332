"""Exact nearest-name answers from an index whose vectors may be approximate.

On a CPU with native bfloat16 arithmetic (AMX or AVX512-BF16), embedding the 2021 release's
120,111 titles and other names under bfloat16 autocast takes about half the float32 time, but
each unit vector moves by up to about 0.01 (largest ``||e_bf16 - e_fp32||`` over the release:
0.0125), and that alone changed the answer for 6 of the 479 labelled strings (in one mapper or
the other). The package's 8-bit vectors
(:mod:`~climb_vllm.icd_mapping.packaged_vectors`, up to 0.0127) are approximate in the
same way. So such vectors only *find* candidates here; every answer is decided on float32
vectors, which are computed on demand for exactly the rows whose order the approximation could
have changed.

Why this is exact: for a unit query ``q`` and a row whose approximate vector ``a`` is within
its bound ``b`` of its exact vector ``e``, ``|q.a - q.e| <= ||a - e|| <= b`` (Cauchy-Schwarz),
so its exact similarity lies in ``[q.a - b, q.a + b]``. A row whose upper end is below another
row's lower end cannot overtake it, so only rows whose intervals reach the best lower ends are
re-scored. Each row has its own bound: 0 for float32 rows, the stored distance (plus a margin)
for packaged ones, a bound for all for bfloat16-computed ones. With every bound 0 (a float32
index) the same code re-scores the fetched candidates from the stored vectors, as before.

Each query is answered by a generator that yields the rows whose exact vectors it needs and
returns its answer (:func:`resolve`), so the rows needed by all the queries of one call are
embedded in one batch per round.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T")
#: A query's answer: (exact similarity, row), or (-inf, -1) when there are no rows.
Answer = tuple[float, int]
Job = Generator[set[int], None, T]
#: Exact vectors embedded before they are written to disk as one shard (and at exit).
SAVE_EVERY = 256
#: Shards read at start above which they are merged into one.
MAX_SHARDS = 32
#: Similarities closer than this are equal (the lower row wins): float32 vectors of one text
#: differ by about 1e-7 from one batch to another, which must not decide between equal names.
TIE = 1e-5
#: Float32 rounding of recomputed similarities: a margin so that rounding never drops a row.
_ROUNDING = 1e-6


class Rescorer:
    """Exact (float32) vectors of index rows, from the stored ones or embedded on demand.

    Args:
        stored: the index's vectors, one row per name.
        approximate: which rows of ``stored`` are approximate (None: none are).
        texts: the name of each row (embedded when an approximate row is needed).
        embed: embeds texts in float32 as unit vectors (called once per round, with every
            missing text of the round).
        folder: where exact vectors are kept between runs (None: in memory only).
    """

    def __init__(
        self,
        stored: npt.NDArray[np.float32],
        approximate: npt.NDArray[np.bool_] | None,
        texts: Sequence[str],
        embed: Callable[[list[str]], npt.NDArray[np.float32]] | None,
        folder: Path | None = None,
    ) -> None:
        self.stored = stored
        self.approximate = approximate
        self.texts = texts
        self.embed = embed
        self.exact: dict[int, npt.NDArray[np.float32]] = {}
        self.embedded = 0  # rows embedded in float32 so far (for the run's facts)
        # Exact vectors are kept on disk too, so that later runs re-embed nothing they have
        # seen: append-only shards (one writer each), read back whole at start.
        self.folder = folder if approximate is not None else None
        self.unsaved: list[int] = []
        self.shards = 0
        if self.folder is not None:
            self._load()
            atexit.register(self.save)

    def _load(self) -> None:
        assert self.folder is not None
        shards = sorted(self.folder.glob("*.npy"))
        for shard in shards:
            try:
                block = np.load(shard)
            except (OSError, ValueError):
                continue  # a shard being replaced or damaged: its rows are embedded again
            if block.ndim == 2 and block.shape[1] == self.stored.shape[1] + 1:
                for row, vector in zip(block[:, 0].astype(np.int64), block[:, 1:]):
                    if 0 <= row < len(self.stored):
                        self.exact[int(row)] = np.ascontiguousarray(vector, np.float32)
        if len(shards) > MAX_SHARDS:
            # Many runs left many small shards: write them as one, then drop those read.
            self.unsaved = list(self.exact)
            self.save()
            if not self.unsaved:
                for shard in shards:
                    shard.unlink(missing_ok=True)

    def save(self) -> None:
        """Write the exact vectors embedded since the last save as a new shard (best effort:
        a cache that cannot be written only costs speed)."""
        if self.folder is None or not self.unsaved:
            return
        rows = sorted(set(self.unsaved))
        block = np.column_stack(
            [np.array(rows, np.float32), np.stack([self.exact[r] for r in rows])]
        )
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            name = f"{os.getpid()}-{time.time_ns()}"
            partial = self.folder / f"{name}.partial"
            with partial.open("wb") as handle:
                np.save(handle, block)
            partial.replace(self.folder / f"{name}.npy")
        except OSError:
            return
        self.unsaved = []

    def fill(self, rows: set[int]) -> None:
        """Make the exact vectors of ``rows`` available (one embedding call for those missing)."""
        if self.approximate is None:
            return
        missing = sorted(r for r in rows if self.approximate[r] and r not in self.exact)
        if not missing:
            return
        if self.embed is None:
            raise RuntimeError("approximate index rows need an encoder to be re-scored")
        vectors = self.embed([self.texts[r] for r in missing])
        self.exact.update(zip(missing, vectors))
        self.embedded += len(missing)
        self.unsaved += missing
        if len(self.unsaved) >= SAVE_EVERY:
            self.save()

    def sims(
        self, query: npt.NDArray[np.float32], rows: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float32]:
        """Exact similarities of ``query`` to ``rows`` (each filled beforehand)."""
        if self.approximate is None:
            vectors = self.stored[rows]
        else:
            vectors = np.stack(
                [self.exact[int(r)] if self.approximate[r] else self.stored[r] for r in rows]
            )
        return (vectors @ query).astype(np.float32)


def resolve(jobs: list[Job[T]], rescorer: Rescorer) -> list[T]:
    """Run every job to its answer, embedding the rows they ask for in one batch per round."""
    answers: list[T | None] = [None] * len(jobs)
    waiting: dict[int, set[int]] = {}

    def advance(i: int) -> None:
        try:
            waiting[i] = next(jobs[i])
        except StopIteration as done:
            answers[i] = done.value
            waiting.pop(i, None)

    for i in range(len(jobs)):
        advance(i)
    while waiting:
        rescorer.fill(set().union(*waiting.values()))
        for i in list(waiting):
            advance(i)
    return answers  # type: ignore[return-value]


def window(sims: npt.NDArray[np.float32], errors: npt.NDArray[np.float32], depth: int) -> float:
    """The threshold for a row of the exact top ``depth``, given the approximate similarities
    ``sims`` of (at least) the approximate top ``depth`` rows and each one's bound
    ``errors``: a row can be there only if its approximate similarity plus its bound reaches
    the threshold. Each row's exact similarity is at least its approximate one minus its
    bound, so the ``depth``-th largest of those lower bounds is at most the exact
    ``depth``-th best similarity."""
    if sims.size == 0:
        return -np.inf
    lower = sims - errors
    kth = np.partition(lower, -min(depth, lower.size))[-min(depth, lower.size)]
    return float(kth) - _slack(errors)


def _best(rows: npt.NDArray[np.int64], exact: npt.NDArray[np.float32]) -> tuple[int, float]:
    """(row, similarity) of the best exact similarity; similarities within TIE of the best
    are equal, and equal ones go to the lower row."""
    order = _ranked(rows, exact)
    return int(rows[order[0]]), float(exact[order[0]])


def _ranked(rows: npt.NDArray[np.int64], exact: npt.NDArray[np.float32]) -> list[int]:
    """Positions of ``rows`` best first: at each step, of the rows within TIE of the best one
    left, the lowest (so equal names tie whatever batch their vectors came from)."""
    left = list(np.lexsort((rows, -exact)))
    order: list[int] = []
    while left:
        top = exact[left[0]]
        tied = [p for p in left if exact[p] >= top - TIE]
        pick = min(tied, key=lambda p: rows[p])
        order.append(pick)
        left.remove(pick)
    return order


def top_k(
    query: npt.NDArray[np.float32],
    sims: npt.NDArray[np.float32],
    rows: npt.NDArray[np.int64],
    errors: npt.NDArray[np.float32],
    k: int,
    rescorer: Rescorer,
) -> Job[tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]]:
    """The exact ``k`` best rows (best first, equal similarities by row) among candidates
    ``rows`` with approximate similarities ``sims`` and bounds ``errors`` (row-aligned), which
    must hold every row that reaches :func:`window`."""
    keep = rows >= 0
    sims, rows, errors = sims[keep], rows[keep], errors[keep]
    needed = rows[sims + errors >= window(sims, errors, k)]
    yield set(needed.tolist())
    exact = rescorer.sims(query, needed)
    order = _ranked(needed, exact)[:k]
    return exact[order], needed[order]


def nearest_accepted(
    query: npt.NDArray[np.float32],
    sims: npt.NDArray[np.float32],
    rows: npt.NDArray[np.int64],
    errors: npt.NDArray[np.float32],
    depth: int,
    accept: Callable[[int], bool],
    rescorer: Rescorer,
) -> Job[Answer]:
    """Among the exact top ``depth`` rows, the best one that ``accept`` takes, else the best
    row of all: what a float32 index gives by walking its ``depth`` nearest rows in order.

    ``sims``/``rows``/``errors`` are the approximate similarities and bounds of candidates
    holding every row that reaches :func:`window` (for ``depth``)."""
    keep = rows >= 0
    sims, rows, errors = sims[keep], rows[keep], errors[keep]
    if rows.size == 0:
        return -np.inf, -1
    slack = _slack(errors)
    in_pool = sims + errors >= window(sims, errors, depth)
    pool_sims, pool_rows, pool_errors = sims[in_pool], rows[in_pool], errors[in_pool]
    low, high = pool_sims - pool_errors, pool_sims + pool_errors
    taken = np.array([accept(int(r)) for r in pool_rows], dtype=bool)
    if taken.any():
        # The best taken row's exact similarity is at least the best lower bound among them.
        near = pool_rows[taken & (high >= float(low[taken].max()) - slack)]
        yield set(near.tolist())
        row, sim = _best(near, rescorer.sims(query, near))
        # The row must also be among the exact top ``depth``: count the pool rows above it.
        # Rows outside the pool rank below every exact top-``depth`` row (see window()).
        others = pool_rows != row
        surely = others & (low - slack > sim + TIE)
        maybe = others & ~surely & (high + slack >= sim - TIE)
        above = int(surely.sum())
        if above + int(maybe.sum()) >= depth and above < depth:
            unsure = pool_rows[maybe]
            yield set(unsure.tolist())
            exact = rescorer.sims(query, unsure)
            higher = exact > sim + TIE
            tied = (np.abs(exact - sim) <= TIE) & (unsure < row)
            above += int((higher | tied).sum())
        if above < depth:
            return sim, row
    near = pool_rows[high >= float(low.max()) - slack]
    yield set(near.tolist())
    row, sim = _best(near, rescorer.sims(query, near))
    return sim, row


def nearest_of(
    query: npt.NDArray[np.float32],
    sims: npt.NDArray[np.float32],
    rows: npt.NDArray[np.int64],
    errors: npt.NDArray[np.float32],
    rescorer: Rescorer,
) -> Job[Answer]:
    """The exact nearest of ``rows`` (all of a small set, with approximate ``sims`` and bounds
    ``errors``); equal similarities go to the lower row."""
    if rows.size == 0:
        return -np.inf, -1
    near = rows[sims + errors >= float((sims - errors).max()) - _slack(errors)]
    yield set(near.tolist())
    row, sim = _best(near, rescorer.sims(query, near))
    return sim, row


def _slack(errors: npt.NDArray[np.float32]) -> float:
    """Room below a bound for rows that may still tie (TIE) or that float32 rounding moved
    (only where some row is approximate: exact rows are re-scored from the same vectors)."""
    return TIE + (_ROUNDING if errors.size and float(errors.max()) > 0 else 0.0)
