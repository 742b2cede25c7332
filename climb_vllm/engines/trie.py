"""The token trie of a request's continuations: which partial names must be evaluated.

Every continuation's first token is read after the prefix (the root); each later token is read
after the partial continuation before it, an *internal node*. Names that share leading tokens
share nodes, so each distinct partial name is computed once per prefix, by any engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from climb_vllm.engines.base import ScoreResult


@dataclass(frozen=True)
class Trie:
    """The layout of a request's continuations after its prefix.

    Attributes:
        tokens: token fed at each internal node, in node order.
        depths: 1-based depth of each node (its offset after the prefix).
        ancestors: ``ancestors[m]`` lists node m and its ancestor nodes.
        reads: per continuation, per token: (read row, token id); row 0 is the last prefix
            position, row 1 + m is node m.
    """

    tokens: tuple[int, ...]
    depths: tuple[int, ...]
    ancestors: tuple[tuple[int, ...], ...]
    reads: tuple[tuple[tuple[int, int], ...], ...]

    @staticmethod
    def build(continuations: tuple[tuple[int, ...], ...]) -> Trie:
        index: dict[tuple[int, ...], int] = {}
        tokens: list[int] = []
        depths: list[int] = []
        ancestors: list[tuple[int, ...]] = []
        reads: list[tuple[tuple[int, int], ...]] = []
        for cont in continuations:
            if not cont:
                raise ValueError("empty continuation: every name must have at least one token")
            row_reads: list[tuple[int, int]] = [(0, cont[0])]
            for k in range(1, len(cont)):
                key = cont[:k]
                if key not in index:
                    parent = index.get(cont[: k - 1])
                    index[key] = len(tokens)
                    tokens.append(cont[k - 1])
                    depths.append(k)
                    ancestors.append(
                        (ancestors[parent] if parent is not None else ()) + (index[key],)
                    )
                row_reads.append((1 + index[key], cont[k]))
            reads.append(tuple(row_reads))
        return Trie(tuple(tokens), tuple(depths), tuple(ancestors), tuple(reads))

    def children(self) -> list[tuple[int, ...]]:
        """Per read row (0 = root, 1 + m = node m): the distinct tokens read there, sorted."""
        rows: list[set[int]] = [set() for _ in range(len(self.tokens) + 1)]
        for reads in self.reads:
            for row, token in reads:
                rows[row].add(token)
        return [tuple(sorted(r)) for r in rows]

    def path(self, row: int) -> tuple[int, ...]:
        """The tokens fed after the prefix to reach read row ``row`` (empty for the root)."""
        if row == 0:
            return ()
        return tuple(self.tokens[m] for m in self.ancestors[row - 1])

    def result(self, values: Sequence[float]) -> ScoreResult:
        """A request's result from its reads' log-probs, given in this trie's read order."""
        per_token, cursor = [], 0
        for reads in self.reads:
            per_token.append(tuple(values[cursor : cursor + len(reads)]))
            cursor += len(reads)
        return ScoreResult(tuple(float(sum(v)) for v in per_token), tuple(per_token))
