"""The name sets of the names-sensitivity analysis and their weights (the table itself:
:mod:`.names_table`).

A run asked for it (``--names-sensitivity 5,10,20,50``) scores the distinct names of every
variant once per code; each variant's table row is then computed from those log-probs alone.
Variants:

- **top-K**, for each K asked: the K most frequent names of each (sex, ethnicity) group, equal
  weights (the paper's group score is the mean of K name probabilities);
- **top-K birth-weighted**, at the run's K: each group's names weighted by their births, so a
  group's score is the probability of a name drawn as NYC births draw them;
- **top-K distinctive**, at the run's K: only names with at least the distinctive share of
  their births in the group (:meth:`climb_vllm.resources.names.NameSet.distinctive_of`).

Every row sits beside its names-alone null (slots permuted across groups; a slot keeps its
births, and birth weights are renormalised within each permuted group) and, for equal weights,
the name-sampling-corrected AssocMAD with its interval (:mod:`.correction`). The correction
assumes each group's names are equally weighted draws, so birth-weighted rows carry none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from climb_vllm.benchmarks.intrinsic import assoc
from climb_vllm.core.errors import UserError
from climb_vllm.resources.names import DEFAULT_DISTINCTIVE, NameSet, NameSlot

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class NameVariant:
    """One name set of the names-sensitivity table.

    Attributes:
        label: the row's label, e.g. "top-10" or "top-5 distinctive (share >= 0.8)".
        k: names per group.
        weighting: "equal" (the paper's mean) or "births" (weighted by births).
        slots: the variant's slots (every group holds ``k``).
    """

    label: str
    k: int
    weighting: Literal["equal", "births"]
    slots: tuple[NameSlot, ...]

    @property
    def distinct_names(self) -> list[str]:
        """The variant's distinct names, in slot order."""
        return list(dict.fromkeys(slot.name for slot in self.slots))

    def frame(self) -> pl.DataFrame:
        """The slots as a ``name, sex, ethnicity, rank, count`` frame."""
        return pl.DataFrame(
            [
                {
                    "name": s.name,
                    "sex": s.sex,
                    "ethnicity": s.ethnicity,
                    "rank": s.rank,
                    "count": s.count,
                }
                for s in self.slots
            ],
            schema={
                "name": pl.String,
                "sex": pl.String,
                "ethnicity": pl.String,
                "rank": pl.Int64,
                "count": pl.Int64,
            },
        )


def name_variants(
    names: NameSet, top_k: int, ks: Sequence[int], distinctive: float | None
) -> tuple[NameVariant, ...]:
    """The variants of a run's names-sensitivity table (none when ``ks`` is empty).

    Args:
        names: the run's name set without the distinctive rule (the top-K rows draw on it).
        top_k: the run's names per group (the birth-weighted and distinctive rows use it).
        ks: names per group of the top-K rows.
        distinctive: the share of the distinctive row (None: :data:`DEFAULT_DISTINCTIVE`).

    Raises UserError (before any model is loaded) when a set lacks the names or births asked.
    """
    if not ks:
        return ()
    out = [NameVariant(f"top-{k}", k, "equal", tuple(names.top_k(k))) for k in sorted(set(ks))]
    if names.has_counts:
        out.append(
            NameVariant(f"top-{top_k} birth-weighted", top_k, "births", tuple(names.top_k(top_k)))
        )
        share = DEFAULT_DISTINCTIVE if distinctive is None else distinctive
        chosen = names.distinctive_of(share)
        out.append(
            NameVariant(
                f"top-{top_k} distinctive (share >= {share:g})",
                top_k,
                "equal",
                tuple(chosen.top_k(top_k)),
            )
        )
    return tuple(out)


def _slot_births(variant: NameVariant, groups: assoc.NameGroups) -> list[Array]:
    """Per group, the births of its slots in :class:`assoc.NameGroups` column order."""
    out = []
    for sex, ethnicity in groups.groups:
        members = [s for s in variant.slots if (s.sex, s.ethnicity) == (sex, ethnicity)]
        births = np.array([float(s.count or 0) for s in members])
        if births.sum() <= 0:
            raise UserError(
                f"Group ({sex}, {ethnicity}) of {variant.label} has no births to weight by.",
                "give the name file positive counts.",
            )
        out.append(births)
    return out


def birth_weights(variant: NameVariant, groups: assoc.NameGroups, names: int) -> Array:
    """Name weights (names, groups, 1): each slot weighted by its share of the group's births."""
    out = np.zeros((names, len(groups.groups), 1))
    for g, (cols, births) in enumerate(zip(groups.columns, _slot_births(variant, groups))):
        np.add.at(out[:, g, 0], np.asarray(cols), births / births.sum())
    return out


def permuted_birth_weights(
    variant: NameVariant, groups: assoc.NameGroups, names: int, orders: npt.NDArray[np.int64]
) -> Array:
    """Birth weights (names, groups, len(orders)) of slots dealt to groups in the given orders
    (:meth:`assoc.NameGroups.permutations`): every slot keeps its births, and each permuted
    group's weights are its slots' births over their sum."""
    births = np.concatenate(_slot_births(variant, groups))
    count, slots = orders.shape
    group_of_position = np.arange(slots) // groups.size
    dealt = births[orders]  # (count, slots)
    totals = np.zeros((count, len(groups.groups)))
    np.add.at(
        totals,
        (np.repeat(np.arange(count), slots), np.tile(group_of_position, count)),
        dealt.ravel(),
    )
    return groups.permuted_weights(names, orders, dealt / totals[:, group_of_position])
