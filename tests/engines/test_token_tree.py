"""The shared-head layout: every read sees exactly its own prompt and partial name."""

from __future__ import annotations

import numpy as np
import pytest

from climb_vllm.engines import token_tree
from climb_vllm.engines.token_tree import TreeRow
from climb_vllm.engines.trie import Trie

NAMES = ((7,), (7, 8), (7, 8, 9), (10, 11))
PREFIXES = [
    (1, 2, 3, 4, 5),  # shares (1, 2, 3) with the next two
    (1, 2, 3, 6),
    (1, 2, 3, 4, 6, 6),
    (20, 21),  # shares nothing
    (1, 2, 3, 6),  # the same prompt twice
    (1, 2),  # a prompt that is a head of others
]


def _path(row: TreeRow, column: int) -> list[int]:
    """Tokens from the row's root to ``column``, following parents."""
    tokens: list[int] = []
    while column >= 0:
        tokens.append(int(row.tokens[column]))
        column = int(row.parents[column])
    return tokens[::-1]


def _check(rows: list[TreeRow], prefixes: list[tuple[int, ...]], tries: list[Trie]) -> None:
    """Every read's column carries prompt + partial name on its ancestor path, at the
    plain-sequence position, and the mask allows exactly that path."""
    seen: list[int] = []
    for row in rows:
        assert all(int(p) < c for c, p in enumerate(row.parents))  # parents come first
        for column in range(row.width):
            assert row.positions[column] == len(_path(row, column)) - 1
        mask = row.ancestry(row.width + 2)
        for column in range(row.width):
            ancestors = set()
            walk = column
            while walk >= 0:
                ancestors.add(walk)
                walk = int(row.parents[walk])
            assert set(np.flatnonzero(mask[column]).tolist()) == ancestors
        assert mask[row.width].sum() == 1 and mask[row.width, row.width]  # padding: itself
        cursor = 0
        for i in row.requests:
            seen.append(i)
            for cont in tries[i].reads:
                tokens = [t for _, t in cont]
                for k, token in enumerate(tokens):
                    column = int(row.read_columns[cursor])
                    assert _path(row, column) == list(prefixes[i]) + tokens[:k]
                    assert row.read_tokens[cursor] == token
                    cursor += 1
        assert cursor == len(row.read_columns)
    assert sorted(seen) == list(range(len(prefixes)))


@pytest.mark.parametrize("row_tokens", [4, 12, 16, 1000])
def test_every_read_sees_its_own_prompt_and_partial_name(row_tokens: int) -> None:
    tries = [Trie.build(NAMES)] * len(PREFIXES)
    rows = token_tree.layout(PREFIXES, tries, row_tokens)
    _check(rows, PREFIXES, tries)
    assert sum(row.width for row in rows) == token_tree.forward_tokens(PREFIXES, tries, row_tokens)


def test_requests_with_their_own_tries() -> None:
    tries = [Trie.build(NAMES), Trie.build(((30,), (31, 32))), Trie.build(((33, 34, 35),))] * 2
    rows = token_tree.layout(PREFIXES, tries, 1000)
    _check(rows, PREFIXES, tries)


def test_shared_heads_are_fed_once_per_row() -> None:
    tries = [Trie.build(NAMES)] * len(PREFIXES)
    names = len(Trie.build(NAMES).tokens)  # internal nodes of the names: (7,), (7, 8), (10,)
    (row,) = token_tree.layout(PREFIXES, tries, 1000)
    # prompt nodes in prefix order: 1 2 | 3 4 5 | 6 6 (after 1 2 3 4) | 6 (after 1 2 3) |
    # nothing for the duplicate | 20 21
    distinct = 2 + 3 + 2 + 1 + 0 + 2
    assert row.width == distinct + names * len(PREFIXES)
    per_request = sum(len(p) for p in PREFIXES) + names * len(PREFIXES)
    assert row.width < per_request


def test_rows_respect_the_budget_and_keep_prefix_order() -> None:
    tries = [Trie.build(NAMES)] * len(PREFIXES)
    rows = token_tree.plan_rows(PREFIXES, tries, 12)
    flat = [i for row in rows for i in row]
    assert [PREFIXES[i] for i in flat] == sorted(PREFIXES)
    for row in token_tree.layout(PREFIXES, tries, 12):
        assert row.width <= 12 or len(row.requests) == 1
