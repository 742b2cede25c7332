"""Abbreviation senses chosen by context: the context's pieces and the score."""

from __future__ import annotations

import numpy as np

from climb_vllm.icd_mapping import senses


def test_chunks_split_sentences_clauses_and_lists() -> None:
    note = (
        "Fever and cough. CXR: RLL infiltrate; started on ceftriaxone.\n"
        "Other diagnoses: sepsis; AKI"
    )
    assert senses.chunks(note) == (
        "Fever and cough.",
        "CXR: RLL infiltrate",
        "started on ceftriaxone.",
        "Other diagnoses: sepsis",
        "AKI",
    )
    # The answer's other diagnoses come first, so a long note cannot crowd them out.
    assert senses.chunks("x" * 10, ("hypoxemia",))[0] == "hypoxemia"
    assert senses.chunks(None) == ()
    assert senses.chunks(". ; ok") == ()  # pieces under MIN_CHUNK characters say nothing
    long = " ".join(f"Sentence {k}. Then more." for k in range(500))
    assert len(senses.chunks(long)) == senses.MAX_CHUNKS


def test_context_similarity_is_the_best_piece() -> None:
    readings = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    pieces = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
    assert senses.context_similarity(readings, pieces).tolist() == [1.0, 0.800000011920929]
    empty = np.zeros((0, 2), dtype=np.float32)
    assert senses.context_similarity(readings, empty).tolist() == [0.0, 0.0]


def test_choose_adds_the_weighted_context() -> None:
    names = np.array([1.0, 0.8])  # the first reading is an exact name
    assert senses.choose(names, np.array([0.1, 0.1])) == 0  # context says nothing
    assert senses.choose(names, np.array([0.1, 0.5])) == 1  # context favours the second
    assert senses.choose(names, np.array([0.1, 0.5]), weight=0.25) == 0
    assert senses.choose(np.array([0.5, 0.5]), np.array([0.2, 0.2])) == 0  # ties: the first


def test_numbers_inside_sentences_do_not_split_them() -> None:
    assert senses.chunks("BP 120. HR 80 and regular.\n1. CAP\n- sepsis") == (
        "BP 120.",
        "HR 80 and regular.",
        "CAP",
        "sepsis",
    )
