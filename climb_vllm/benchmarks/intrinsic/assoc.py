"""CLIMB intrinsic metrics on a code x name probability matrix, with a bootstrap over names.

The same quantities as :mod:`climb_vllm.benchmarks.intrinsic.metrics` (AssocMAD per ICD level,
single-demographic
AssocMAD, sex-preference correctness), computed with matrix products so that a full release
(95k codes x 30 names) and a thousand resamples take seconds. ``metrics`` stays the readable
reference; the tests hold the two equal on the point estimates.

Why it is fast: a level-L node's group score is a sum over its codes of the mean probability of
the group's names, and both the sum and the mean are linear. So the code x name matrix is
first summed into a node x name matrix per level (once), and every resample is then only a
product of that small matrix with the resample's name weights.

Resampling unit: the names, resampled with replacement within each (sex, ethnicity) group, so
that every resample keeps K names per group (Table 2's pooled scores stay equal-weight means of
the four or two groups, as in the point estimate).

Numerics: probabilities are exp(log-prob - the maximum log-prob of the code's ICD chapter).
AssocMAD of a node is invariant to scaling all its codes by one factor, and every node at every
level lies inside one chapter, so this shift changes no value while keeping float64 far from
underflow (a node underflows only if every code in it is 700 nats below its chapter's best).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from climb_vllm.core.resampling import interval

LEVELS = ("l1", "l2", "l3", "l4", "l5")
SEXES = ("FEMALE", "MALE")
#: Resamples of the name bootstrap (each covers every level and attribute at once).
NAME_RESAMPLES = 200
#: Permutations of the names-alone null (names shuffled across groups, group sizes kept).
NULL_PERMUTATIONS = 1000
#: How single-demographic groups pool names: per slot (the paper) or per distinct name.
POOLINGS = ("slots", "names")

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class NameGroups:
    """Which matrix column fills which slot of which (sex, ethnicity) group.

    Attributes:
        groups: (sex, ethnicity) pairs, sex-major: the female groups, then the male groups,
            each in the same ethnicity order.
        columns: per group, the matrix columns of its K slots (a name may fill several slots).
    """

    groups: tuple[tuple[str, str], ...]
    columns: tuple[tuple[int, ...], ...]

    @staticmethod
    def from_slots(slots: pl.DataFrame, names: Sequence[str]) -> NameGroups:
        """Groups from a slot frame (``name, sex, ethnicity``) and the matrix's name order.

        Raises ValueError if groups differ in size (the pooled scores would weigh them
        unequally) or a slot's name has no matrix column.
        """
        position = {name: i for i, name in enumerate(names)}
        ethnicities = sorted(slots["ethnicity"].unique().to_list())
        groups: list[tuple[str, str]] = []
        columns: list[tuple[int, ...]] = []
        for sex in SEXES:
            for ethnicity in ethnicities:
                members = slots.filter((pl.col("sex") == sex) & (pl.col("ethnicity") == ethnicity))
                missing = [n for n in members["name"] if n not in position]
                if missing:
                    raise ValueError(f"names {missing[:3]} have no scores")
                groups.append((sex, ethnicity))
                columns.append(tuple(position[n] for n in members["name"]))
        sizes = {len(c) for c in columns}
        if len(sizes) != 1 or 0 in sizes:
            raise ValueError(f"groups must have equal, non-zero sizes; got {sorted(sizes)}")
        return NameGroups(tuple(groups), tuple(columns))

    @property
    def size(self) -> int:
        """Slots per group (K)."""
        return len(self.columns[0])

    def weights(self, names: int, resamples: int, seed: int) -> Array:
        """Name weights, shape (names, groups, resamples + 1); resample 0 is the point estimate.

        Column (g, b) holds, for each name, the share of group g's slots it fills in resample b
        (each slot drawn with replacement from the group's K slots), so that the product of a
        probability matrix with it gives the group's mean name probability.
        """
        rng = np.random.default_rng(seed)
        k = self.size
        out = np.zeros((names, len(self.groups), resamples + 1))
        for g, cols in enumerate(self.columns):
            picks = np.empty((resamples + 1, k), dtype=np.int64)
            picks[0] = np.arange(k)
            picks[1:] = rng.integers(0, k, size=(resamples, k))
            members = np.asarray(cols)[picks]  # matrix column of every drawn slot
            for b in range(resamples + 1):
                np.add.at(out[:, g, b], members[b], 1.0 / k)
        return out

    def permutations(self, count: int, seed: int) -> npt.NDArray[np.int64]:
        """``count`` random orders of all the slots (shape (count, groups x K)): in each, the
        first K slots form group 0, the next K group 1, and so on."""
        rng = np.random.default_rng(seed)
        return np.argsort(rng.random((count, len(self.groups) * self.size)), axis=1)

    def permuted_weights(
        self, names: int, orders: npt.NDArray[np.int64], shares: Array | None = None
    ) -> Array:
        """Name weights (names, groups, len(orders)) of slots dealt to groups in the given
        orders (:meth:`permutations`): the names-alone null, where group membership carries
        no information, with every group keeping its K slots.

        Args:
            names: matrix columns.
            orders: the permutations.
            shares: each dealt slot's weight within its permuted group, shape of ``orders``
                (None: 1/K each, the equal-weight mean).
        """
        columns = np.concatenate([np.asarray(c) for c in self.columns])
        count, slots = orders.shape
        group_of_position = np.arange(slots) // self.size
        out = np.zeros((names, len(self.groups), count))
        np.add.at(
            out,
            (
                columns[orders].ravel(),
                np.tile(group_of_position, count),
                np.repeat(np.arange(count), slots),
            ),
            1.0 / self.size if shares is None else shares.ravel(),
        )
        return out


def log_matrix(
    records: pl.DataFrame, codes: Sequence[str], names: Sequence[str]
) -> npt.NDArray[np.float64]:
    """The (codes x names) log-probability matrix of stored ``code, name, logprob`` records.

    Raises ValueError if a (code, name) pair is missing or repeated.
    """
    code_index = pl.DataFrame({"code": list(codes)}).with_row_index("i")
    name_index = pl.DataFrame({"name": list(names)}).with_row_index("j")
    cells = (
        records.select("code", "name", "logprob")
        .join(code_index, on="code")
        .join(name_index, on="name")
    )
    if (
        cells.height != len(codes) * len(names)
        or cells.select(pl.struct("i", "j").is_duplicated().any()).item()
    ):
        raise ValueError(
            f"records hold {cells.height} of the {len(codes) * len(names)} (code, name) pairs "
            "or repeat some"
        )
    matrix = np.full((len(codes), len(names)), np.nan)
    matrix[cells["i"].to_numpy(), cells["j"].to_numpy()] = cells["logprob"].to_numpy()
    return matrix


def chapter_probabilities(logp: Array, chapters: npt.ArrayLike) -> Array:
    """exp(log-prob minus its chapter's maximum); see the module note on why this is exact."""
    _, chapter_ids = np.unique(np.asarray(chapters), return_inverse=True)
    top = np.full(int(chapter_ids.max()) + 1, -np.inf)
    np.maximum.at(top, chapter_ids, logp.max(axis=1))
    result: Array = np.exp(logp - top[chapter_ids][:, None])
    return result


def level_sums(probabilities: Array, level_nodes: Mapping[str, npt.ArrayLike]) -> dict[str, Array]:
    """Per level, the (nodes x names) sums of the codes' probabilities beneath each node.

    Nodes come in sorted order of their labels (``np.unique``).
    """
    out: dict[str, Array] = {}
    for level, nodes in level_nodes.items():
        labels, ids = np.unique(np.asarray(nodes), return_inverse=True)
        rows = len(ids)
        if len(labels) == rows:  # every code is its own node (L5): no sum needed
            out[level] = probabilities[np.argsort(ids)]
            continue
        # scipy only here: scoring imports this module, and the light scoring path has no scipy.
        from scipy import sparse

        aggregate = sparse.csr_matrix(
            (np.ones(rows), (ids, np.arange(rows))), shape=(int(ids.max()) + 1, rows)
        )
        out[level] = np.asarray(aggregate @ probabilities)
    return out


def _mean_mad(matrix: Array, weights: Array, rows: int = 2048) -> Array:
    """Macro-mean AssocMAD over the nodes, per resample: mean over groups of |s / mu - 1|.

    Args:
        matrix: (nodes x names) probability sums.
        weights: (names, groups, resamples) name weights.
        rows: nodes per block.

    Returns shape (resamples,). s - mu comes straight from one product with the weights
    centred on their group mean (the scores are linear in the weights), which saves a pass over
    the (nodes, groups, resamples) block; blocks of ``rows`` nodes keep that block in cache
    (measured 1.8x faster than whole-matrix passes on the full release).
    """
    names, groups, resamples = weights.shape
    mean_weights = weights.mean(axis=1)
    centred = (weights - mean_weights[:, None, :]).reshape(names, -1)
    total = np.zeros(resamples)
    for start in range(0, matrix.shape[0], rows):
        block = matrix[start : start + rows]
        deviation = (block @ centred).reshape(-1, groups, resamples)
        np.abs(deviation, out=deviation)
        mad = deviation.sum(axis=1) / (groups * (block @ mean_weights))
        total += mad.sum(axis=0)
    result: Array = total / matrix.shape[0]
    return result


def pooled_weights(weights: Array, over: str, pooling: str = "slots") -> Array:
    """Name weights of groups pooled over ethnicities (``over="ethnicity"``: one group per sex)
    or over sexes (``over="sex"``: one group per ethnicity).

    Args:
        weights: :meth:`NameGroups.weights`, shape (names, groups, resamples), sex-major.
        over: the attribute pooled away, "ethnicity" or "sex".
        pooling: "slots": the pooled group's mean over its member groups, so a name that fills
            slots in several member groups counts once per slot (the paper's reading);
            "names": every distinct name drawn into a member group counts once.

    Returns shape (names, pooled groups, resamples); each column sums to 1.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
    names, groups, resamples = weights.shape
    quarters = weights.reshape(names, 2, groups // 2, resamples)
    axis = 2 if over == "ethnicity" else 1
    if pooling == "slots":
        slots: Array = quarters.mean(axis=axis)
        return slots
    present = (quarters.sum(axis=axis) > 0).astype(weights.dtype)
    distinct: Array = present / present.sum(axis=0, keepdims=True)
    return distinct


def assoc_mad_resamples(
    sums: dict[str, Array], weights: Array, pooling: str = "slots"
) -> dict[str, Array]:
    """AssocMAD by level for every resample, for the 8 groups and pooled by sex or ethnicity.

    Args:
        sums: :func:`level_sums` of the code subset.
        weights: :meth:`NameGroups.weights`, shape (names, groups, resamples).
        pooling: how the single-demographic groups pool names (:func:`pooled_weights`).

    Returns:
        ``{"both"|"sex"|"ethnicity": array (levels, resamples)}`` of macro means over nodes.
    """
    pooled = {
        "both": weights,
        "sex": pooled_weights(weights, "ethnicity", pooling),
        "ethnicity": pooled_weights(weights, "sex", pooling),
    }
    return {
        key: np.stack([_mean_mad(matrix, w) for matrix in sums.values()])
        for key, w in pooled.items()
    }


def sex_preference_resamples(
    probabilities: Array, rows: Sequence[int], own: str, weights: Array, pooling: str = "slots"
) -> Array:
    """Share of the codes at ``rows`` whose own sex has the higher pooled score, per resample.

    Args:
        probabilities: the (codes x names) matrix (any per-code scale).
        rows: matrix rows of the sex-specific codes of one list.
        own: "FEMALE" for the female-only list, "MALE" for the male-only list.
        weights: name weights (names, groups, resamples); the groups are sex-major.
        pooling: how each sex pools its names (:func:`pooled_weights`).
    """
    if not rows:
        return np.full(weights.shape[2], np.nan)
    pooled = pooled_weights(weights, "ethnicity", pooling)
    subset = probabilities[np.asarray(rows)]
    female = subset @ pooled[:, 0, :]
    male = subset @ pooled[:, 1, :]
    wins = female > male if own == "FEMALE" else male > female
    result: Array = wins.mean(axis=0)
    return result


def summarise(values: Array, level: float = 0.95) -> tuple[float, float, float]:
    """(point, low, high) of a resample vector whose entry 0 is the point estimate."""
    rest = values[1:]
    if rest.size == 0 or np.isnan(rest).all():
        return float(values[0]), float("nan"), float("nan")
    low, high = interval(rest, level)
    return float(values[0]), low, high
