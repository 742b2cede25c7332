"""The ``echo_text`` strategy's requests and its reading of answers, on hand-made answers in the
two shapes servers give (the BOS echoed as a token, or left out)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.strategies import TokenizationMismatch, parse, text_jobs

#: A toy vocabulary: id -> text (0 is the BOS).
PIECES = {0: "<bos>", 1: "Acute", 2: " cough", 3: ":", 4: " Em", 5: "ily", 6: " Ann"}


def _decode(ids: Sequence[int]) -> str:
    return "".join(PIECES[i] for i in ids)


def _answer(tokens: list[str], values: list[float | None]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "logprobs": {"tokens": tokens, "token_logprobs": values}}]}


REQUEST = ScoreRequest((0, 1, 2, 3), ((4, 5), (6,)))


def test_one_text_prompt_per_request_without_the_bos() -> None:
    jobs = text_jobs([REQUEST], [0], _decode, frozenset({0}))
    assert [j.payload["prompt"] for j in jobs] == ["Acute cough: Emily", "Acute cough: Ann"]
    assert all(j.payload["echo"] and j.payload["max_tokens"] == 1 for j in jobs)
    assert [j.keys for j in jobs] == [((0, 0),), ((0, 1),)]


@pytest.mark.parametrize("echoes_bos", [False, True])
def test_the_continuation_is_read_after_the_prefix(echoes_bos: bool) -> None:
    job = text_jobs([REQUEST], [0], _decode, frozenset({0}))[0]
    tokens = ["Acute", " cough", ":", " Em", "ily", "."]  # the prompt, then one new token
    values: list[float | None] = [None, -1.0, -2.0, -3.0, -4.0, -5.0]
    if echoes_bos:
        tokens, values = ["<bos>", *tokens], [None, *values]
    [(key, found)] = parse(job, _answer(tokens, values), "echo_text")
    assert key == (0, 0) and found == (-3.0, -4.0)


def test_another_tokenization_is_refused() -> None:
    job = text_jobs([REQUEST], [0], _decode, frozenset({0}))[0]
    # The same text in other pieces: " Emily" as one token (one fewer), or the boundary moved.
    for tokens in (
        ["Acute", " cough", ":", " Emily", "."],
        ["Acute", " cough", ": Em", "ily", "", "."],
    ):
        values: list[float | None] = [None] + [-1.0] * (len(tokens) - 1)
        with pytest.raises(TokenizationMismatch):
            parse(job, _answer(tokens, values), "echo_text")
