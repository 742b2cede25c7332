"""CliBench's token budget and its note cut, with a word tokenizer whose counts are obvious."""

from __future__ import annotations

import pytest

from climb_vllm.benchmarks.extrinsic.layout import (
    LAB_FLOOR,
    clibench_line,
    clibench_max_tokens,
    fit_sections,
    folds_system_turn,
    model_facts,
)
from climb_vllm.core.errors import UserError


def _tokenize(text: str) -> list[int]:
    return [len(w) for w in text.split()]


def _words(text: str) -> list[str]:
    return text.split()


def _fit(
    sections: dict[str, str], context: int, reserve: int = 650
) -> tuple[dict[str, str], float]:
    # Tokens are words; detokenize keeps the first words of each section by their count.
    originals = {k: _words(v) for k, v in sections.items()}

    def detokenize(ids: list[int]) -> str:
        for words in originals.values():
            if [len(w) for w in words[: len(ids)]] == ids:
                return " ".join(words[: len(ids)])
        raise AssertionError("unknown ids")

    return fit_sections(
        sections,
        "line of four words",
        ["role", "task", "question"],
        context,
        _tokenize,
        detokenize,
        reserve,
    )


def test_nothing_is_cut_when_the_notes_fit() -> None:
    sections = {"clinical_note": "a b c d", "labs": "x y"}
    assert _fit(sections, 2000) == (sections, 1.0)


def test_notes_are_cut_by_one_share_and_labs_keep_their_floor() -> None:
    note = " ".join(["w"] * 1000)
    labs = " ".join(["l"] * 800)
    cut, kept = _fit({"clinical_note": note, "radiology": note, "labs": labs}, 2000)
    # The fixed texts are joined without spaces, as CliBench joins them: one word here, plus
    # the BOS token. budget = 2000 - 650 - 2 - 30 = 1318; rate = (1318 - 4) / 2800 < 1; labs
    # keep max(500, 800 * rate) = 500; the notes share 1318 - 500 = 818 tokens.
    assert len(_words(cut["labs"])) == LAB_FLOOR
    assert len(_words(cut["clinical_note"])) == len(_words(cut["radiology"])) == 409
    assert kept == pytest.approx((409 * 2 + 500) / 2800)


def test_a_context_too_small_is_an_error_that_names_the_fix() -> None:
    with pytest.raises(UserError, match="--context-tokens 0"):
        _fit({"clinical_note": "a"}, 512)
    # The project reserves the run's own limit, so a small model still fits.
    assert _fit({"clinical_note": "a"}, 512, reserve=16)[1] == 1.0


def test_clibench_facts_and_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "config.json").write_text('{"max_position_embeddings": 8192}')
    (tmp_path / "generation_config.json").write_text('{"max_length": 4096}')
    assert model_facts(str(tmp_path)) == {"context": 8192, "max_length": 4096}
    assert model_facts("org/not-a-folder") == {"context": None, "max_length": None}
    assert clibench_max_tokens(4096) == 4096 and clibench_max_tokens(None) == 650
    assert folds_system_turn("mistralai/Mixtral-8x7B-Instruct-v0.1")
    assert not folds_system_turn("meta-llama/Meta-Llama-3-8B-Instruct")
    line = clibench_line({"sex": "female", "ethnicity": "BLACK", "insurance": "Medicaid"}, {})
    assert line == (
        "Patient information: age is None, gender is F, race is BLACK, marital status is None, "
        "insurance category is Medicaid, admission_location is None. "
    )
