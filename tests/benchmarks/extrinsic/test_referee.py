"""The learned pronoun referee: its fit, its features, its weights' provenance, and where the
rewrite asks it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from climb_vllm.benchmarks.extrinsic import referee as referee_module
from climb_vllm.benchmarks.extrinsic import sex_rewrite
from climb_vllm.benchmarks.extrinsic.referee import (
    UNCERTAIN_WITHIN,
    default_referee,
    describe,
    fit_logistic,
    window,
)
from climb_vllm.benchmarks.extrinsic.sex_rewrite import swap_sex
from climb_vllm.benchmarks.extrinsic.write_referee import examples

GOLDEN_DIR = Path(__file__).parents[2] / "golden" / "counterfactual"


def test_fit_logistic_matches_scikit_learn() -> None:
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 5)).astype(np.float32)
    y = (x @ np.array([1.5, -2.0, 0.0, 0.5, 1.0]) + rng.normal(size=300)) > 0.3
    coef, intercept = fit_logistic(x, y, c=0.1)
    reference = LogisticRegression(C=0.1, tol=1e-10, max_iter=10_000).fit(x, y)
    assert np.allclose(coef, reference.coef_[0], atol=1e-4)
    assert abs(intercept - reference.intercept_[0]) < 1e-4


def test_the_window_is_the_sentence_and_the_one_before() -> None:
    text = "Pt seen today. Dr. Lee examined him. He says he is better. Plan as above."
    lo, hi = window(text, text.index("he is"))
    assert text[lo:hi].strip() == "Dr. Lee examined him. He says he is better."
    lo, hi = window(text, 0)
    assert text[lo:hi] == "Pt seen today."
    # A sentence of thousands of characters is read around the word, which stays in view.
    long = "Dr. Lee reviewed " + "the labs, " * 400 + "and he called him."
    at = long.index("he called")
    lo, hi = window(long, at)
    assert hi - lo <= 1000 and lo < at < hi
    referee = default_referee()
    assert 0.0 <= referee.third_party_probability(long, at, at + 2) <= 1.0


def test_weights_name_the_sets_they_were_fitted_on() -> None:
    facts = describe()
    sets = facts["sets"]
    assert sets[0] == "third_parties_development.jsonl" and len(sets) == 10
    assert "third_parties_held_out_10.jsonl" not in sets  # the set held out from the fit
    # The counts recorded are the counts these files give now: the weights are not stale.
    assert facts["pronouns_per_set"] == [len(examples(GOLDEN_DIR / s)[0]) for s in sets]


def test_the_rewrite_asks_the_referee_only_where_no_firm_rule_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    real = default_referee()

    class Recording:
        def decide(self, text: str, start: int, end: int) -> tuple[bool, bool]:
            asked.append(text[start:end])
            return real.decide(text, start, end)

    monkeypatch.setattr(sex_rewrite, "default_referee", lambda: Recording())
    # Nobody else named: the rules alone.
    swap_sex("He reports chest pain and his wife agrees.", "female")
    # An act of care after a clinician: a firm rule.
    swap_sex("Dr. Patel saw the patient; he ordered an MRI.", "female")
    assert asked == []
    # The sentence's topic is the only clue: the referee decides, and the rewrite follows it.
    text = "He declined the IV, so the nurse left and he will come back later."
    made, log = swap_sex(text, "female")
    assert asked == ["he"]
    start = text.rindex("he will")
    keep, uncertain = real.decide(text, start, start + 2)
    p = real.third_party_probability(text, start, start + 2)
    assert keep == (p > 0.5) and uncertain == (abs(p - 0.5) < UNCERTAIN_WITHIN)
    edited = [e for e in log if e.offset == start]
    assert (not edited) == keep
    assert not edited or edited[0].uncertain == uncertain
    assert made.startswith("She declined the IV")


def test_the_referee_reads_context_not_the_word_alone() -> None:
    referee = default_referee()
    carer = "The night nurse found him on the floor and he called the rapid response team."
    patient = "The night nurse found him on the floor and he was confused and incontinent."
    p_carer = referee.third_party_probability(carer, carer.rindex("he "), carer.rindex("he ") + 2)
    p_patient = referee.third_party_probability(
        patient, patient.rindex("he "), patient.rindex("he ") + 2
    )
    assert p_carer > p_patient


def test_write_referee_fits_and_records(tmp_path: Path) -> None:
    from climb_vllm.benchmarks.extrinsic.write_referee import main

    rows = [
        {
            "text": "Dr. Ruiz saw him; he ordered a CT.",
            "expected": "Dr. Ruiz saw her; he ordered a CT.",
        },
        {"text": "His son came; he is tired.", "expected": "Her son came; she is tired."},
        {"text": "He says he fell.", "expected": "She says she fell."},
    ]
    labelled = tmp_path / "few.jsonl"
    labelled.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "referee.npz"
    facts = main([str(labelled), "--out", str(out)])
    assert facts["pronouns_per_set"] == [6] and facts["third_party_pronouns"] == 1
    stored = np.load(out)
    assert stored["coef"].shape == (768,) and str(stored["encoder"]) == facts["encoder"]
    assert referee_module.Referee(path=out).decide(rows[0]["text"], 17, 19)[0] in (True, False)


def test_a_bad_labelled_line_is_one_clear_error(tmp_path: Path) -> None:
    from climb_vllm.benchmarks.extrinsic.write_referee import main
    from climb_vllm.core.errors import UserError

    labelled = tmp_path / "bad.jsonl"
    labelled.write_text('{"text": "He fell."}\n')
    out = tmp_path / "referee.npz"
    with pytest.raises(UserError, match="line 1"):
        main([str(labelled), "--out", str(out)])
    assert not out.exists()  # nothing written
    with pytest.raises(UserError, match="No such labelled file"):
        main([str(tmp_path / "missing.jsonl")])
