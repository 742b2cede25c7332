"""The words of texts and names."""

from __future__ import annotations

from climb_vllm.resources.words import content_words, plain_words, singular


def test_content_words_drop_function_words_and_plurals() -> None:
    assert content_words("Urethral valves, unspecified") == {"urethral", "valve"}
    assert content_words("Disease of the bones") == {"disease", "bone"}
    assert content_words("of the") == frozenset()


def test_plain_words_are_letters_only_in_lower_case() -> None:
    assert plain_words("Non-ST elevation (NSTEMI), type 2") == {
        "non",
        "st",
        "elevation",
        "nstemi",
        "type",
    }


def test_singular_by_ending() -> None:
    assert singular("arteries") == "artery"
    assert singular("valves") == "valve"
    assert [singular(w) for w in ("abscess", "arthritis", "fetus", "ribs")] == [
        "abscess",
        "arthritis",
        "fetus",
        "ribs",  # four letters: too short to tell a plural
    ]
