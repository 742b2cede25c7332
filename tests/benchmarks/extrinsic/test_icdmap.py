"""Splitting model outputs into diagnosis points, reading codes, and mapping text on real
all-MiniLM-L6-v2 embeddings of a code subset."""

from __future__ import annotations

import math

import pytest

from climb_vllm.benchmarks.extrinsic.icdmap import MAX_POINTS, clean_point, normalise, split_points

# -- points ---------------------------------------------------------------------------------


def test_one_point_per_line() -> None:
    assert split_points("Hypertension\nType 2 diabetes\n\n") == ["Hypertension", "Type 2 diabetes"]


def test_preamble_and_closing_remark_around_a_list_are_dropped() -> None:
    text = (
        "Based on the notes, the likely diagnoses are:\n\n1. NSTEMI\n2. Hyperlipidemia\n\n"
        "Please consult a physician."
    )
    assert split_points(text) == ["1. NSTEMI", "2. Hyperlipidemia"]


def test_list_block_is_kept_when_the_text_starts_with_a_heading() -> None:
    # CliBench kept the second block here (the closing remark) and lost the list.
    text = "Diagnoses:\n- Sepsis\n- Pneumonia\n\nNote: further workup advised."
    assert split_points(text) == ["- Sepsis", "- Pneumonia"]


def test_many_blank_lines_make_one_point_per_block() -> None:
    blocks = [f"{i}. Diagnosis {i}" for i in range(1, 8)]
    assert split_points("\n\n".join(blocks)) == blocks


def test_unmarked_blocks_follow_clibench_preamble_rule() -> None:
    assert split_points("Here is my list\n\nAnemia\nGout") == ["Anemia", "Gout"]
    assert split_points("Anemia\nGout") == ["Anemia", "Gout"]


def test_inline_numbered_list_and_br_separators() -> None:
    assert split_points("1. Sepsis 2. Acute kidney injury 3. Hypotension") == [
        "Sepsis",
        "Acute kidney injury",
        "Hypotension",
    ]
    assert split_points("Sepsis<br>Gout") == ["Sepsis", "Gout"]


def test_single_line_answer_is_one_point_and_empty_output_has_none() -> None:
    assert split_points("Community-acquired pneumonia") == ["Community-acquired pneumonia"]
    assert split_points("") == []
    assert split_points("   \n\n  ") == []


def test_heading_lines_are_not_points_but_marked_lines_ending_in_colon_are() -> None:
    assert split_points("Primary diagnoses:\nSepsis\n**Secondary:**\nGout") == ["Sepsis", "Gout"]
    assert split_points("1. Sepsis:\n2. Gout") == ["1. Sepsis:", "2. Gout"]


def test_enormous_output_is_capped() -> None:
    points = split_points("\n".join(f"Diagnosis {i}" for i in range(100_000)))
    assert len(points) == MAX_POINTS


# -- codes in text ----------------------------------------------------------------------------


def test_codes_with_and_without_dot_are_read_and_validated(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    text, valid, invalid = clean_point(
        "1. **Type 2 diabetes mellitus** (ICD-10-CM: E119), hypertension I10, Z99.99X",
        ontology_2021,
    )
    assert valid == ("E11.9", "I10")
    assert invalid == ("Z99.99X",)
    assert text == "Type 2 diabetes mellitus , hypertension"


def test_code_like_words_that_are_not_codes_stay_text(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    text, valid, invalid = clean_point("- Vitamin B12 deficiency", ontology_2021)
    assert valid == ()
    assert invalid == ("B12",)
    assert text == "Vitamin B12 deficiency"


def test_code_in_brackets_and_label_removed(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    text, valid, _ = clean_point("Pneumonia, unspecified organism [J18.9]", ontology_2021)
    assert (text, valid) == ("Pneumonia, unspecified organism", ("J18.9",))
    text, valid, _ = clean_point("NSTEMI - ICD-10 code: I21.4", ontology_2021)
    assert (text, valid) == ("NSTEMI", ("I21.4",))


def test_normalise_drops_case_punctuation_and_spacing() -> None:
    assert normalise("Essential (primary) Hypertension") == normalise(
        "essential primary hypertension"
    )


# -- mapping on real embeddings ---------------------------------------------------------------


def test_exact_fuzzy_and_embedding_matches(mapper) -> None:  # type: ignore[no-untyped-def]
    exact, typo, paraphrase, empty = mapper.map_texts(
        [
            "essential (primary) hypertension",
            "Type 2 diabetes melitus without complicatons",
            "high blood pressure, primary",
            "—",
        ]
    )
    assert (exact.method, exact.code, exact.similarity) == ("exact", "I10", 1.0)
    assert (typo.method, typo.code) == ("fuzzy", "E11.9")
    assert 0.5 < typo.similarity < 1.0
    assert paraphrase.method == "embedding"
    assert paraphrase.code == "I10"
    assert empty.method == "none" and empty.code is None and math.isnan(empty.similarity)


def test_paraphrases_map_to_the_intended_code(mapper) -> None:  # type: ignore[no-untyped-def]
    texts = {
        "COPD exacerbation": "J44.1",
        "acute kidney failure": "N17.9",
        "prostate cancer": "C61",
        "pneumonia": "J18.9",
    }
    matches = mapper.map_texts(list(texts))
    assert [m.code for m in matches] == list(texts.values())


def test_repeated_texts_are_embedded_once(mapper, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: list[int] = []
    original = mapper.encoder.encode

    def counting(texts, batch_size=128):  # type: ignore[no-untyped-def]
        seen.append(len(texts))
        return original(texts, batch_size)

    monkeypatch.setattr(mapper.encoder, "encode", counting)
    matches = mapper.map_texts(["gout flare"] * 50 + ["renal colic"] * 20)
    assert seen == [2]
    assert len({m.code for m in matches[:50]}) == 1


def test_outputs_map_codes_first_then_text(mapper) -> None:  # type: ignore[no-untyped-def]
    output = "Diagnoses:\n1. NSTEMI (I21.4)\n2. Hyperlipidemia, unspecified\n3. Z99.99X bad code"
    first = mapper.map_outputs([output, "", "x" * 50_000])
    methods = [(p.method, p.codes) for p in first[0]]
    assert methods[0] == ("code", ("I21.4",))
    assert methods[1] == ("exact", ("E78.5",))
    assert methods[2][0] == "embedding" and first[0][2].invalid_codes == ("Z99.99X",)
    assert first[1] == []
    assert len(first[2]) == 1  # an enormous one-line output is one (capped) point


@pytest.mark.parametrize("bad", [None, "\x00\x01", "🙂🙂🙂"])
def test_odd_outputs_never_crash(mapper, bad) -> None:  # type: ignore[no-untyped-def]
    result = mapper.map_outputs([bad])
    assert len(result) == 1
    assert all(p.method in ("none", "embedding", "fuzzy") for p in result[0])
