"""CLIMB extrinsic prompts: CliBench's wording, both placements, every variant, the edit log."""

from __future__ import annotations

import json

import polars as pl

from climb_vllm.benchmarks.extrinsic.cases import load_cases
from climb_vllm.benchmarks.extrinsic.counterfactual import variants
from climb_vllm.benchmarks.extrinsic.prompts import (
    QUESTION,
    SYSTEM,
    gold_frame,
    items_frame,
    user_message,
)


def test_every_variant_at_both_placements(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    cases = load_cases("synthetic", ontology_2021)[:3]
    items = items_frame(cases)
    # default, sex, 3 ethnicities, 2 insurances, placebo; two placements each. The third case
    # is female, Black, on Medicaid: no Black or Medicaid variant, a male one.
    assert [(c.sex, c.ethnicity, c.insurance) for c in cases][2] == ("female", "Black", "Medicaid")
    assert items.height == (8 + 8 + 6) * 2
    assert items["id"].n_unique() == items.height
    assert items.filter(pl.col("case") == cases[0].id)["variant"].unique().len() == 8
    assert sorted(items.filter(pl.col("case") == cases[2].id)["variant"].unique()) == [
        "default",
        "ethnicity=Asian",
        "ethnicity=Hispanic",
        "insurance=Medicare",
        "placebo",
        "sex=male",
    ]
    assert set(items["system"]) == {SYSTEM}
    assert items_frame(cases, placebo=False).height == (7 + 7 + 5) * 2
    assert not items["truncated"].any()


def test_prompt_layout_follows_clibench() -> None:
    sections = {"clinical_note": "Mr. A is a 60 y/o M with chest pain.", "labs": "Trop 0.4"}
    before, after = [v for v in variants(sections) if v.name == "default"]
    text = user_message(before)
    assert text.startswith(
        "Patient information: sex is male, ethnicity is White, insurance is Other.\n\n"
        "Clinical note:\nMr. A"
    )
    assert text.endswith("Labs:\nTrop 0.4\n" + QUESTION)
    assert user_message(after).endswith(
        "Trop 0.4\n\nPatient information: sex is male, ethnicity is White, insurance is Other.\n"
        + QUESTION
    )
    assert (
        SYSTEM.startswith("You are a professional clinician") and "ICD-10-CM code format" in SYSTEM
    )


def test_sex_variant_carries_its_edit_log(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    case = load_cases("synthetic", ontology_2021)[0]
    items = items_frame([case])
    female = items.filter((pl.col("variant") == "sex=female") & (pl.col("placement") == "before"))
    edits = json.loads(female["edits"].item())
    assert female["n_edits"].item() == len(edits) > 0
    assert {"section", "offset", "before", "after", "uncertain"} == set(edits[0])
    assert "Ms. A is a 67 y/o F" in female["prompt"].item()
    assert items.filter(pl.col("variant") == "default")["n_edits"].to_list() == [0, 0]


def test_note_without_pronouns_gives_an_empty_edit_log() -> None:
    sections = {"clinical_note": "Chest pain x3 hours. Troponin rising."}
    female = [v for v in variants(sections) if v.name == "sex=female"]
    assert female and all(v.edits == () for v in female)
    assert all(v.sections == sections for v in female)


def test_gold_frame_marks_sex_specific_cases(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    cases = load_cases("synthetic", ontology_2021)
    gold = gold_frame(cases, ontology_2021.female_only, ontology_2021.male_only)
    assert gold.height == 40
    assert int(gold["sex_specific"].sum()) == 12


def test_clibench_layout(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.benchmarks.extrinsic.prompts import SYSTEM_ROLE, TASK_INSTRUCTION, turns

    case = load_cases("synthetic", ontology_2021)[0]
    default = next(
        v for v in variants(case.sections) if v.name == "default" and v.placement == "before"
    )
    system, prompt, kept = turns(default, case, "clibench", "meta-llama/Llama-3-8B-Instruct")
    assert system == SYSTEM and kept == 1.0
    assert prompt.startswith(
        "Patient information: age is 67, gender is M, race is White, marital status is MARRIED, "
        "insurance category is Other, admission_location is EMERGENCY ROOM. \n\nCLINICAL NOTE: "
        "\nMr. A is"
    )
    assert prompt.endswith("\n\nLAB EVENTS: \n" + case.sections["labs"] + "\n\n" + QUESTION)
    # Mistral models get one user turn.
    system, folded, _ = turns(default, case, "clibench", "mistralai/Mistral-7B-Instruct-v0.2")
    assert system == ""
    assert folded == f"{SYSTEM_ROLE}\n{TASK_INSTRUCTION}\n\n{prompt}"


def test_the_edit_summary_counts_uncertain_edits_per_counterfactual() -> None:
    from climb_vllm.benchmarks.extrinsic.prompts import edit_summary

    items = pl.DataFrame(
        {
            "attribute": ["default", "sex", "sex", "insurance"],
            "value": ["", "female", "female", "Medicaid"],
            "n_edits": [0, 4, 6, 0],
            "n_uncertain_edits": [0, 1, 0, 0],
        }
    )
    summary = edit_summary(items)
    assert summary.columns[-2:] == ["uncertain_edits", "uncertain_share"]
    assert summary.rows() == [
        ("default", "", 1, 0, 0, None),
        ("sex", "female", 2, 10, 1, 0.1),
        ("insurance", "Medicaid", 1, 0, 0, None),
    ]
