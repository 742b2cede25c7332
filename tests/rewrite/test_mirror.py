"""Mirrored training excerpts: every sex word swapped, the pronouns' labels unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from climb_vllm.rewrite.mirror import FEMALE_TO_MALE, MALE_TO_FEMALE, mirror
from climb_vllm.rewrite.write_referee import PRONOUN, examples, mirrored

GOLDEN_DIR = Path(__file__).parents[1] / "golden" / "counterfactual"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "His brother drove him to the ED because he was worried about his confusion.",
            "Her sister drove her to the ED because she was worried about her confusion.",
        ),
        (
            "Her daughter brought her in because she noticed she was slurring her words.",
            "His son brought him in because he noticed he was slurring his words.",
        ),
        (
            "Mr. Evans follows with Dr. Sousa for his COPD. He saw him last month.",
            "Ms. Evans follows with Dr. Sousa for her COPD. She saw her last month.",
        ),
        (
            "The nurse said, 'Sir, you need to stay in bed,' but he got up anyway.",
            "The nurse said, 'Ma'am, you need to stay in bed,' but she got up anyway.",
        ),
        ("Her landlady found her confused.", "His landlord found him confused."),
    ],
)
def test_every_sex_word_is_swapped(text: str, expected: str) -> None:
    assert mirror(text) == expected
    # Mirroring twice gives the text back where no "his"/"him" had to be guessed from "her".
    if "her" not in text.lower().split():
        assert mirror(mirror(text)) == text


def test_the_two_tables_are_each_others_inverse() -> None:
    for male, female in MALE_TO_FEMALE.items():
        if male not in ("his", "him"):
            assert FEMALE_TO_MALE[female] == male


def test_every_labelled_excerpt_mirrors_with_its_labels() -> None:
    items, labels, _ = examples(GOLDEN_DIR / "third_parties_held_out_5.jsonl")
    more, more_labels = mirrored(items, labels)
    assert len(more) == len(items) and more_labels == labels
    for (text, start, end), (other, o_start, o_end) in zip(items, more):
        assert PRONOUN.fullmatch(other[o_start:o_end])
        # The sex flips: a male pronoun becomes a female one and the other way round.
        male = text[start:end].lower() in ("he", "him", "his", "himself")
        assert (other[o_start:o_end].lower() in ("he", "him", "his", "himself")) != male
