"""Where names, sentences and clauses lie in an answer."""

from __future__ import annotations

import pytest

from climb_vllm.benchmarks.hive.spans import (
    clause_spans,
    finished,
    name_pattern,
    sentence_end,
    sentence_start,
    whole_words,
)


@pytest.mark.parametrize(
    ("answer", "done"),
    [
        ("The answer is Sam.", True),
        ("The answer is 'Sam'", True),
        ("The answer is 'Sam'.", True),
        ("It is more likely that Parker'", False),  # a cut possessive, not a closing quote
        ("Caroline is more likely to have lupus because", False),
        ("", False),
    ],
)
def test_finished_tells_a_cut_off_answer(answer: str, done: bool) -> None:
    assert finished(answer) is done


def test_whole_words_skip_names_inside_other_words() -> None:
    text = "sam and samuel met d'sam; sam."
    assert whole_words(text, "sam") == [0, 26]


def test_name_pattern_finds_quoted_names_only_as_words() -> None:
    assert name_pattern("casey").search("the answer is 'casey'.")
    assert not name_pattern("casey").search("caseys")


def test_clauses_split_at_sentences_and_contrast_words() -> None:
    # The reader hands over lower-cased text.
    text = "it is unclear. however, sam is more likely\nbut not certain"
    pieces = [(text[a:b].strip(" ,"), why) for a, b, why in clause_spans(text)]
    assert pieces[0] == ("it is unclear", "sentence")
    assert ("sam is more likely", "sentence") in pieces
    assert pieces[-1] == ("not certain", "sentence")


def test_sentence_bounds_hold_the_offset() -> None:
    text = "First one. Second one here. Third."
    at = text.index("one here")
    assert text[sentence_start(text, at) : sentence_end(text, at)].strip() == "Second one here."
