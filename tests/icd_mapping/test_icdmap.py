"""Splitting model outputs into diagnosis points, reading codes, and mapping text on real
all-MiniLM-L6-v2 embeddings of a code subset."""

from __future__ import annotations

import math

import pytest

from climb_vllm.icd_mapping.icdmap import Mapper, clean_point, clibench_key, normalise

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


def test_exact_and_embedding_matches(mapper) -> None:  # type: ignore[no-untyped-def]
    exact, typo, paraphrase, empty = mapper.map_texts(
        [
            "essential (primary) hypertension",
            "Type 2 diabetes melitus without complicatons",
            "high blood pressure, primary",
            "—",
        ]
    )
    assert (exact.method, exact.code, exact.similarity) == ("exact", "I10", 1.0)
    # Both misspelt words are corrected, and the corrected text is the title.
    assert (typo.method, typo.code, typo.similarity) == ("exact", "E11.9", 1.0)
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

    def counting(texts, batch_size=128, bfloat16=False):  # type: ignore[no-untyped-def]
        seen.append(len(texts))
        return original(texts, batch_size)

    monkeypatch.setattr(mapper.encoder, "encode", counting)
    rechecked = mapper.index.rescorer.embedded
    matches = mapper.map_texts(["gout flare"] * 50 + ["renal colic"] * 20)
    # The two distinct texts in one call; any later call embeds index rows for the float32
    # re-check of a bfloat16 index, and nothing else.
    assert seen[0] == 2
    assert sum(seen[1:]) == mapper.index.rescorer.embedded - rechecked
    assert len({m.code for m in matches[:50]}) == 1


def test_outputs_map_codes_first_then_text(mapper) -> None:  # type: ignore[no-untyped-def]
    output = "Diagnoses:\n1. NSTEMI (I21.4)\n2. Hyperlipidemia, unspecified\n3. Z99.99X bad code"
    first = mapper.map_outputs([output, "", "x" * 50_000])
    methods = [(p.method, p.codes) for p in first[0].points]
    assert methods[0] == ("code", ("I21.4",))
    assert methods[1] == ("exact", ("E78.5",))
    assert methods[2][0] == "embedding" and first[0].points[2].invalid_codes == ("Z99.99X",)
    assert first[0].codes[:2] == ["I21.4", "E78.5"]
    assert (first[1].points, first[1].kind) == ([], "empty")
    assert len(first[2].points) == 1  # an enormous one-line output is one (capped) point


@pytest.mark.parametrize("bad", [None, "\x00\x01", "🙂🙂🙂"])
def test_odd_outputs_never_crash(mapper, bad) -> None:  # type: ignore[no-untyped-def]
    result = mapper.map_outputs([bad])
    assert len(result) == 1
    assert all(p.method in ("none", "embedding") for p in result[0].points)


# -- stages, refusals, CliBench's drop rule --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Chronic kidney disease stage 4", "N18.4"),
        ("Chronic kidney disease stage 2", "N18.2"),
        ("chronic kidney disease, stage 5", "N18.5"),
        ("CKD stage 4 (severe)", "N18.4"),
    ],
)
def test_disease_stages_are_not_swapped(mapper, text, code) -> None:  # type: ignore[no-untyped-def]
    # A near-exact title by edit distance sent stages 2 and 4 to stage 1.
    (match,) = mapper.map_texts([text])
    assert match.code == code


@pytest.mark.parametrize(
    "refusal",
    [
        "I am not able to provide a medical diagnosis. Please consult a healthcare professional.",
        "As an AI language model, I cannot diagnose patients.",
        "I'm sorry, but I can't provide diagnoses based on these notes.",
        "More information is needed to make a diagnosis.\n\nPlease provide additional details.",
    ],
)
def test_refusals_map_to_nothing(mapper, refusal) -> None:  # type: ignore[no-untyped-def]
    (output,) = mapper.map_outputs([refusal])
    assert output.kind in ("refusal", "non_answer")
    assert output.points == [] and output.codes == []


def test_a_list_after_a_refusal_is_read(mapper) -> None:  # type: ignore[no-untyped-def]
    text = (
        "I cannot provide a definitive diagnosis, but possible diagnoses include:\n"
        "1. Pneumonia\n2. Acute kidney failure, unspecified\n\n"
        "Please consult a physician for an accurate diagnosis."
    )
    (output,) = mapper.map_outputs([text])
    assert output.kind == "answer"
    assert "N17.9" in output.codes and not any("consult" in p.text for p in output.points)


def test_drop_flag_follows_clibench_segmentation(mapper) -> None:  # type: ignore[no-untyped-def]
    # A one-line answer without numbering: CliBench finds no point and drops the output; the
    # project reads it as one point.
    one_line, listed = mapper.map_outputs(["Community-acquired pneumonia", "Pneumonia\nGout"])
    assert one_line.dropped and one_line.codes
    assert not listed.dropped


def test_clibench_protocol_keeps_its_exact_key_and_dotted_codes(  # type: ignore[no-untyped-def]
    ontology_2021, subset_index, encoder
) -> None:
    clibench = Mapper(ontology_2021, subset_index, encoder, protocol="clibench")
    # A code without its dot is not a code to CliBench; the bullet stays in the text.
    (output,) = clibench.map_outputs(["- Essential (primary) hypertension I10\n- E119"])
    assert [p.method for p in output.points] == ["embedding", "embedding"]
    (exact,) = clibench.map_outputs(["Essential (primary) hypertension\nGout (M10.9)"])
    assert exact.points[0].method == "exact" and exact.points[0].codes == ("I10",)
    assert clibench_key("Essential (primary) hypertension") == "essential(primary)hypertension"
    # Refusals are not screened by CliBench: mapped like any text.
    (refusal,) = clibench.map_outputs(["I am not able to provide a diagnosis.\nSorry."])
    assert refusal.kind == "answer" and refusal.codes and not refusal.dropped


# -- --protocol clibench against an independent reading of CliBench's rules -------------------

ANSWERS = [
    "1. NSTEMI (I21.4)\n2. Hypertension\n3. Hyperlipidemia\n\nRecommendations:\n- statin",
    "Diagnoses:\n- Sepsis\n- Pneumonia\n\nNote: further workup advised.",
    "Based on the notes:\n\n1. Acute kidney failure, unspecified\n2. Gout\n\nConsult nephrology.",
    "Community-acquired pneumonia",
    "1. Sepsis 2. AKI 3. Hypotension",
    "Sepsis<br>Gout<br>E11.9",
    "Essential (primary) hypertension\nType 2 diabetes mellitus without complications",
    "I10\nE119\nJ18.9 Pneumonia, unspecified organism",
    "- Pneumonia [J18.9]\n- Z99.99X bad code\n- Prostate cancer (C61)",
    "1) Sepsis\n2) Pneumonia",
    "o Obesity\no COPD exacerbation",
    "\n\n1. Gout\n2. CKD",
    "Hypertension (ICD-10-CM code: I10)\nDiabetes (ICD-10-CM: E11.9)",
    "\n\n".join(f"{i}. Diagnosis number {i}" for i in range(1, 9)),
    "I am not able to provide a medical diagnosis. Please consult a doctor.",
    "",
    "   ",
    "Pneumonia\n\n",
    "The most likely diagnoses are\n\nacute MI\nheart failure\n\nthanks\n\nbye",
    "**Primary:** NSTEMI\n**Secondary:** HTN, HLD",
    "1. CKD stage 4\n2. Chronic kidney disease, stage 2 (mild)",
    "Gout\r\nPneumonia",
    "1. Sepsis\n\n\n2. Pneumonia",
    "* BPH with LUTS\n* Urinary retention",
]


def test_clibench_protocol_matches_an_independent_port(  # type: ignore[no-untyped-def]
    ontology_2021, subset_index, encoder
) -> None:
    from tests.icd_mapping.clibench_reference import reference_codes

    clibench = Mapper(ontology_2021, subset_index, encoder, protocol="clibench")
    mapped = clibench.map_outputs(ANSWERS)
    # The port embeds every title in float32 itself, as CliBench does (the index may hold
    # bfloat16 vectors, whose answers are re-checked in float32).
    exact = encoder.encode(subset_index.titles)
    for answer, output in zip(ANSWERS, mapped):
        expected = reference_codes(
            answer,
            subset_index.titles,
            subset_index.codes,
            exact,
            lambda texts: encoder.encode(texts),
            lambda code: code in ontology_2021,
        )
        assert sorted(set(output.codes)) == expected, answer
        assert output.dropped == (expected == []), answer
