"""Shared-head layout: many score requests packed as token trees, one tree per attention row.

Diagnosis prompts share long heads ("Displaced fracture of shaft of right femur, initial
encounter ..." and its 7th-character siblings). Requests are ordered by their prefix token ids,
so prompts that share a head are neighbours, and packed greedily into rows of at most
``row_tokens`` nodes. Inside a row:

- every distinct prompt prefix of the row's requests is one node (a shared head is fed once);
- after each request's last prompt node hang the internal nodes of its continuations' trie
  (the partial names, :class:`~climb_vllm.engines.trie.Trie`);
- each node sits at the position it has in the plain sequence (its depth) and may attend only
  to itself and its ancestors, so every log-prob equals the one of plain full-sequence scoring.

A head shared by requests that land in different rows is fed once per row; ordering by token
ids keeps that to the rows' boundaries. The engine batches rows under its token budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from climb_vllm.engines.trie import Trie


@dataclass(frozen=True)
class TreeRow:
    """One attention row: a forest of prompt heads and name tries.

    Attributes:
        tokens: token id fed at each column.
        positions: plain-sequence position of each column (0 = a prompt's first token).
        parents: column of each column's parent, -1 for a prompt's first token. A parent
            always comes before its children.
        requests: indices (into the packed requests) of the requests in this row, in order.
        read_columns: per read, the column whose output predicts the read token; reads are
            grouped per request (in ``requests`` order), then continuation, then token.
        read_tokens: per read, the token id whose log-prob is wanted.
    """

    tokens: np.ndarray
    positions: np.ndarray
    parents: np.ndarray
    requests: tuple[int, ...]
    read_columns: np.ndarray
    read_tokens: np.ndarray

    @property
    def width(self) -> int:
        """Columns (forward tokens) of the row."""
        return int(self.tokens.shape[0])

    def ancestry(self, width: int) -> np.ndarray:
        """The ``(width, width)`` boolean mask: column r may attend to column c.

        True where c is r or an ancestor of r. Columns past the row's own (padding) attend to
        themselves only, so their softmax stays finite.
        """
        allowed = np.zeros((width, width), dtype=bool)
        # Parents precede children, so a column's row is its parent's row plus itself.
        for column, parent in enumerate(self.parents.tolist()):
            if parent >= 0:
                allowed[column] = allowed[parent]
            allowed[column, column] = True
        for column in range(self.width, width):
            allowed[column, column] = True
        return allowed


def _common(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Length of the longest common prefix of two token tuples."""
    n = min(len(a), len(b))
    for k in range(n):
        if a[k] != b[k]:
            return k
    return n


def plan_rows(
    prefixes: Sequence[tuple[int, ...]], tries: Sequence[Trie], row_tokens: int
) -> list[list[int]]:
    """Which requests go in which row: prefix-ordered, greedily filled to ``row_tokens`` nodes.

    Args:
        prefixes: each request's prompt token ids (non-empty).
        tries: each request's continuation trie.
        row_tokens: the most nodes in one row; a request larger than that alone gets a row of
            its own size.

    Returns:
        Rows as lists of request indices, in prefix order.
    """
    order = sorted(range(len(prefixes)), key=lambda i: prefixes[i])
    rows: list[list[int]] = []
    size = 0
    previous: tuple[int, ...] = ()
    for i in order:
        own = len(tries[i].tokens)
        # In prefix order, the nodes a prompt adds to a row's tree are those past its longest
        # common prefix with the previous prompt of the row.
        added = len(prefixes[i]) - (_common(prefixes[i], previous) if rows else 0) + own
        if not rows or size + added > row_tokens:
            rows.append([i])
            size = len(prefixes[i]) + own
        else:
            rows[-1].append(i)
            size += added
        previous = prefixes[i]
    return rows


def build_row(
    members: Sequence[int], prefixes: Sequence[tuple[int, ...]], tries: Sequence[Trie]
) -> TreeRow:
    """Lay out one row's requests (in prefix order) as a token tree.

    Args:
        members: the request indices of the row, sorted by prefix (as :func:`plan_rows` gives).
        prefixes: every request's prompt token ids.
        tries: every request's continuation trie.
    """
    tokens: list[int] = []
    positions: list[int] = []
    parents: list[int] = []
    read_columns: list[int] = []
    read_tokens: list[int] = []
    path: list[int] = []  # columns of the previous prompt's nodes, by position
    previous: tuple[int, ...] = ()
    for i in members:
        prefix = prefixes[i]
        shared = _common(prefix, previous)
        del path[shared:]
        for position in range(shared, len(prefix)):
            tokens.append(prefix[position])
            positions.append(position)
            parents.append(path[-1] if path else -1)
            path.append(len(tokens) - 1)
        previous = prefix
        last = path[-1]
        trie = tries[i]
        first = len(tokens)
        for m, token in enumerate(trie.tokens):
            chain = trie.ancestors[m]
            tokens.append(token)
            positions.append(len(prefix) - 1 + trie.depths[m])
            parents.append(first + chain[-2] if len(chain) > 1 else last)
        for reads in trie.reads:
            for row, token in reads:
                read_columns.append(last if row == 0 else first + row - 1)
                read_tokens.append(token)
    return TreeRow(
        np.asarray(tokens, dtype=np.int64),
        np.asarray(positions, dtype=np.int64),
        np.asarray(parents, dtype=np.int64),
        tuple(members),
        np.asarray(read_columns, dtype=np.int64),
        np.asarray(read_tokens, dtype=np.int64),
    )


def layout(
    prefixes: Sequence[tuple[int, ...]], tries: Sequence[Trie], row_tokens: int
) -> list[TreeRow]:
    """Every request in token-tree rows (see :func:`plan_rows` and :func:`build_row`)."""
    planned = plan_rows(prefixes, tries, row_tokens)
    return [build_row(members, prefixes, tries) for members in planned]


def forward_tokens(
    prefixes: Sequence[tuple[int, ...]], tries: Sequence[Trie], row_tokens: int
) -> int:
    """Nodes the shared-head layout feeds for these requests (no model needed)."""
    total = 0
    for members in plan_rows(prefixes, tries, row_tokens):
        previous: tuple[int, ...] = ()
        for i in members:
            total += len(prefixes[i]) - _common(prefixes[i], previous) + len(tries[i].tokens)
            previous = prefixes[i]
    return total
