"""The learned pronoun referee: its fit, its features, its weights' provenance, and where the
rewrite asks it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from climb_vllm.rewrite import referee as referee_module
from climb_vllm.rewrite import sex_rewrite
from climb_vllm.rewrite.referee import (
    TUNED_LAYERS,
    UNCERTAIN_WITHIN,
    default_referee,
    describe,
    names_someone,
    window,
)
from climb_vllm.rewrite.sex_rewrite import swap_sex
from climb_vllm.rewrite.write_referee import (
    PRONOUN,
    chain_examples,
    examples,
    mirrored,
)

GOLDEN_DIR = Path(__file__).parents[1] / "golden" / "counterfactual"


def test_half_precision_weights_read_as_the_full_ones(tmp_path: Path) -> None:
    from climb_vllm.resources.encoder import Encoder, encoder_fingerprint
    from climb_vllm.rewrite.write_referee import fine_tune

    encoder = Encoder(device="cpu")
    hugging_face: Any = encoder.model[0].auto_model
    before = {n: p.clone() for n, p in hugging_face.named_parameters()}
    items, labels, _ = examples(GOLDEN_DIR / "third_parties_development.jsonl")
    arrays = fine_tune(encoder, items[:48], labels[:48], epochs=2)
    deltas = [k for k in arrays if k.startswith("delta/")]
    assert len(deltas) == TUNED_LAYERS * 16  # sixteen tensors a layer
    assert max(float(np.abs(arrays[k]).max()) for k in deltas) > 0  # the layers moved
    paths = {}
    for precision in (np.float32, np.float16):
        stored = {k: v.astype(precision) if k in deltas else v for k, v in arrays.items()}
        paths[precision] = tmp_path / f"{precision.__name__}.npz"
        np.savez(paths[precision], encoder=encoder_fingerprint(), **stored)
    full = referee_module.Referee(encoder, paths[np.float32]).probabilities(items[48:80])
    half = referee_module.Referee(encoder, paths[np.float16]).probabilities(items[48:80])
    assert max(abs(a - b) for a, b in zip(full, half)) < 1e-3
    # The encoder the mapper shares is never changed: the referee tunes a copy.
    after = dict(hugging_face.named_parameters())
    assert all(torch_equal(before[n], after[n]) for n in before)


def torch_equal(a: object, b: object) -> bool:
    import torch

    assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
    return bool(torch.equal(a, b))


def test_weights_of_an_old_format_are_one_clear_error(tmp_path: Path) -> None:
    from climb_vllm.core.errors import UserError
    from climb_vllm.resources.encoder import encoder_fingerprint

    old = tmp_path / "old.npz"
    np.savez(old, coef=np.zeros(768), intercept=0.0, encoder=encoder_fingerprint())
    with pytest.raises(UserError, match="refit"):
        referee_module.Referee(path=old)


def test_the_window_reaches_back_to_who_is_spoken_of() -> None:
    text = "Pt seen today. Dr. Lee examined him. He says he is better. Plan as above."
    lo, hi = window(text, text.index("he is"))
    assert text[lo:hi].strip() == "Dr. Lee examined him. He says he is better."
    lo, hi = window(text, 0)
    assert text[lo:hi] == "Pt seen today."
    # Back to someone named two sentences before, the sentence between read too.
    text = "Dr. Lee saw him. The CT was negative. He will call him."
    lo, hi = window(text, text.index("He will"))
    assert text[lo:hi] == text
    # No one named: back to the nearest sentence that speaks of the patient ...
    text = "He has a cough. Temp 38.2. He says it is worse."
    lo, hi = window(text, text.index("He says"))
    assert text[lo:hi] == text
    # ... and a sentence that speaks of no one is left out (a note's filler costs nothing).
    text = "Vital signs are stable. The nurse says he slept."
    lo, hi = window(text, text.index("he slept"))
    assert text[lo:hi].strip() == "The nurse says he slept."
    assert names_someone("His foreman drove him.", 0, 22)
    assert not names_someone("Vital signs are stable.", 0, 23)
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
    assert sets[0] == "third_parties_development.jsonl" and len(sets) == 30
    # The sets held out from the fit: the thirtieth and thirty-first chose between it and the
    # referee before it, the thirty-second and thirty-third measure it.
    assert {f"third_parties_held_out_{k}.jsonl" for k in (30, 31, 32, 33)}.isdisjoint(sets)
    # The counts recorded are the counts these files give now: the weights are not stale.
    assert facts["pronouns_per_set"] == [len(examples(GOLDEN_DIR / s)[0]) for s in sets]
    # Every excerpt was read mirrored too (but one stretch that is in both the twenty-eighth
    # and twenty-ninth sets, whose two copies ``mirrored`` reads as one excerpt of eight
    # pronouns and leaves out), and the readings along chains were added.
    items: list[tuple[str, int, int]] = []
    labels: list[bool] = []
    for name in sets:
        found, kept, _ = examples(GOLDEN_DIR / name)
        items += found
        labels += kept
    assert facts["mirrored_pronouns"] == len(mirrored(items, labels)[0])
    assert sum(facts["pronouns_per_set"]) - facts["mirrored_pronouns"] == 8
    assert facts["chain_readings"] > 0 and facts["tuned_layers"] == TUNED_LAYERS


def test_the_rewrite_asks_the_referee_only_where_no_firm_rule_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    real = default_referee()

    class Recording:
        def decide(
            self, text: str, start: int, end: int, since: int | None = None
        ) -> tuple[bool, bool]:
            asked.append(text[start:end])
            return real.decide(text, start, end, since)

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
    # A clinician named in the sentence before, or up to three back: the referee decides; four
    # back, not.
    asked.clear()
    swap_sex("Dr. Burke is on call. He thinks it is a stroke.", "female")
    assert asked == ["He"]
    asked.clear()
    swap_sex("Dr. Burke is on call. It was busy. Beds were short. He thinks so.", "female")
    assert asked == ["He"]
    asked.clear()
    swap_sex("Dr. Burke is on call. It was busy. Beds were short. It rained. He thinks so.")
    assert asked == []
    # An act of care after someone named, in the sentence before or two back: a firm rule.
    for text in (
        "Dr. Burke is on call. He ordered a CT.",
        "Dr. Burke came. It was busy. He ordered a CT.",
    ):
        assert swap_sex(text, "female")[0] == text
    assert asked == []
    # A state after a third party's report: the patient's by the rules, weighed by the referee.
    swap_sex("The owner says she has had the cat for a week.", "male")
    assert asked == ["she"]


def test_a_pronoun_along_a_chain_is_read_from_who_was_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "He started lamotrigine" is three sentences after the neurologist; the sentences between
    # open with pronouns kept as the neurologist's, so the referee reads from the neurologist.
    text = (
        "The neurologist saw him for a first seizure. He ordered an EEG. He found epileptic"
        " spikes. He started lamotrigine. He cannot drive."
    )
    calls: list[tuple[str, int | None]] = []

    class Keeping:
        """Keeps every "He" it is asked about, so the chain is unbroken."""

        def decide(
            self, text: str, start: int, end: int, since: int | None = None
        ) -> tuple[bool, bool]:
            calls.append((text[start : start + 10], since))
            return text[start:end] == "He", False

    monkeypatch.setattr(sex_rewrite, "default_referee", lambda: Keeping())
    swap_sex(text, "female")
    # "He ordered" is kept by the rule for acts of care; the pronouns that open the sentences
    # after it read from where its window starts, the text's start (for "He found" its own
    # window starts there too).
    assert calls[0] == ("him for a ", None)
    assert calls[1:] == [("He found e", 0), ("He started", 0), ("He cannot ", 0)]
    # A sentence of no one between does not end the chain; one that speaks of the patient does.
    calls.clear()
    swap_sex(
        "The rheumatologist saw him. He ordered a rheumatoid factor. It came back high. He"
        " started methotrexate.",
        "female",
    )
    assert calls == [("him. He or", None), ("He started", 0)]
    calls.clear()
    swap_sex(
        "The rheumatologist saw him. He ordered a rheumatoid factor. His knees hurt. Aspirin"
        " was stopped. He started methotrexate.",
        "female",
    )
    assert ("He started", 0) not in calls
    # Off a chain, the referee reads its own window.
    calls.clear()
    swap_sex("Dr. Burke is on call. He thinks it is a stroke.", "female")
    assert calls == [("He thinks ", None)]
    # Reading from ``since`` is reading that stretch whole.
    real = default_referee()
    at = text.index("He started")
    p = real.third_party_probability(text, at, at + 2, since=0)
    whole = text[: window(text, at)[1]]
    assert p == pytest.approx(real.probabilities([(whole, at, at + 2)], whole=True)[0])
    assert p != pytest.approx(real.third_party_probability(text, at, at + 2))


def test_training_reads_a_chain_as_the_rewrite_does() -> None:
    # The labels stand in for the referee: "He ordered" is kept (an act of care), "He found"
    # is kept by its label, so "He started" is read from the chain's start, as the rewrite
    # will ask it; "He cannot" too, and it is the patient's.
    text = (
        "The neurologist saw him for a first seizure. It was his second. He ordered an EEG. He"
        " found spikes. He started lamotrigine. He cannot drive."
    )
    items = [(text, m.start(), m.end()) for m in PRONOUN.finditer(text)]
    labels = [False, False, True, True, True, False]
    read, kept = chain_examples(items, labels, ["female"] * len(items))
    starts = [item[0] for item in read]
    # Each reading is a stretch of the text that ends with the word's sentence and starts
    # before the word's own window.
    for (stretch, start, end), label in zip(read, kept):
        at = text.index(stretch)
        assert stretch[start:end] == "He" and at < window(text, at + start)[0]
        assert label == labels[[i for i, (_, s, _) in enumerate(items) if s == at + start][0]]
    assert any(s.endswith("He cannot drive.") for s in starts)
    assert any(s.endswith("He started lamotrigine.") for s in starts)
    # Off a chain nothing is added.
    plain = "He fell. He is sore."
    items = [(plain, m.start(), m.end()) for m in PRONOUN.finditer(plain)]
    assert chain_examples(items, [False, False], ["female", "female"]) == ([], [])


def test_a_subject_and_object_of_one_clause_are_not_both_the_patients() -> None:
    # Both would be edited as the patient's (no one is named in their sentence); one is the
    # surgeon's, and the referee says which.
    text = (
        "He was evaluated by the ENT surgeon for his neck mass. Fine-needle aspiration was"
        " done in clinic. He will call him with the results."
    )
    made, log = swap_sex(text, "female")
    assert made.endswith("He will call her with the results.")
    assert swap_sex(text, "female", referee=False)[0].endswith(
        "She will call her with the results."
    )


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
    from climb_vllm.rewrite.write_referee import main

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
    deltas = [k for k in stored.files if k.startswith("delta/")]
    assert deltas and all(stored[k].dtype == np.float16 for k in deltas)
    assert referee_module.Referee(path=out).decide(rows[0]["text"], 17, 19)[0] in (True, False)


def test_a_bad_labelled_line_is_one_clear_error(tmp_path: Path) -> None:
    from climb_vllm.core.errors import UserError
    from climb_vllm.rewrite.write_referee import main

    labelled = tmp_path / "bad.jsonl"
    labelled.write_text('{"text": "He fell."}\n')
    out = tmp_path / "referee.npz"
    with pytest.raises(UserError, match="line 1"):
        main([str(labelled), "--out", str(out)])
    assert not out.exists()  # nothing written
    # A direction other than the two is named, not read as one of them.
    labelled.write_text('{"text": "He fell.", "expected": "She fell.", "to": "Female"}\n')
    with pytest.raises(UserError, match="line 1.*'Female'") as caught:
        main([str(labelled), "--out", str(out)])
    assert '"female" or "male"' in str(caught.value)
    assert not out.exists()
    with pytest.raises(UserError, match="No such labelled file"):
        main([str(tmp_path / "missing.jsonl")])
