"""``climb-vllm eval extrinsic`` end to end on the tiny model, resume after SIGKILL, rescore,
and the bad inputs a user can give (case files, outputs that are empty or not text)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

from climb_vllm.cli import main
from climb_vllm.icd_mapping.icdmap import METHODS
from tests.helpers import kill_after_chunks


@pytest.fixture(autouse=True)
def _cache(mapping_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One embedding cache for the session's runs (subprocesses inherit it).
    monkeypatch.setenv("CLIMB_VLLM_CACHE", str(mapping_cache))


def command(model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "extrinsic",
        "--model",
        str(model),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--display",
        "none",
        "--index-limit",
        "300",
        "--max-tokens",
        "24",
        *extra,
    ]


def test_end_to_end_with_samples(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["--limit", "3", "--samples", "2", "--temperature", "0.9", "--top-p", "0.95"]
    assert main(command(tiny_model, out, *args)) == 0
    records = pl.read_parquet(out / "records" / "extrinsic" / "chunk-*.parquet")
    assert records.height == (8 + 8 + 6) * 2 * 2
    assert sorted(records["sample"].unique()) == [0, 1]
    variants = pl.read_parquet(out / "records" / "extrinsic" / "variants.parquet")
    assert variants.height == (8 + 8 + 6) * 2 and "edits" in variants.columns
    results = out / "results" / "extrinsic"
    for name in (
        "table4.csv",
        "table5.csv",
        "table7.csv",
        "variants.csv",
        "edits.csv",
        "tables.md",
    ):
        assert (results / name).exists(), name
    points = pl.read_parquet(results / "points.parquet")
    # Random answers may hold any of the mapper's routes (a negation, for one).
    assert set(points["method"]) <= set(METHODS)
    table4 = pl.read_csv(results / "table4.csv")
    assert table4["Value"].to_list() == [
        "female",
        "male",
        "Black",
        "Hispanic",
        "Asian",
        "Medicaid",
        "Medicare",
    ]
    assert table4["Pairs"].to_list() == [2, 1, 2, 3, 3, 2, 3]
    manifest = json.loads((out / "manifest.json").read_text())["benchmarks"]["extrinsic"]
    assert manifest["config"]["samples"] == 2
    assert manifest["datasets"]["cases"]["cases"] == 3
    metrics = json.loads((results / "metrics.json").read_text())
    facts = metrics["facts"][0]
    assert facts["outputs"] == records.height
    assert facts["truncated_outputs"] + facts["empty_outputs"] <= records.height


def test_killed_run_resumes_to_identical_records(tiny_model: Path, tmp_path: Path) -> None:
    args = ["--limit", "3", "--chunk-size", "4", "--greedy"]
    reference = tmp_path / "reference"
    assert main(command(tiny_model, reference, *args)) == 0
    resumed = tmp_path / "resumed"
    full = [sys.executable, "-m", "climb_vllm", *command(tiny_model, resumed, *args)]
    chunks = resumed / "records" / "extrinsic"
    kill_after_chunks(full, chunks, 2)
    assert len(list(chunks.glob("chunk-*.parquet"))) < 12
    assert main(command(tiny_model, resumed, *args)) == 0

    def records(run: Path) -> pl.DataFrame:
        return pl.read_parquet(run / "records" / "extrinsic" / "chunk-*.parquet").sort("id")

    assert records(resumed).equals(records(reference))
    for name in ("table4.csv", "table7.csv", "variants.csv"):
        expected = (reference / "results" / "extrinsic" / name).read_text()
        assert (resumed / "results" / "extrinsic" / name).read_text() == expected
    # rescore recomputes from the records and finds nothing changed
    assert main(["rescore", str(resumed)]) == 0


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_bad_case_files(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = _error(capsys, command(tiny_model, tmp_path / "a", "--cases", str(tmp_path / "no")))
    assert "does not exist" in missing and "Fix:" in missing
    bad = tmp_path / "cases.jsonl"
    row = {
        "id": "x",
        "sex": "male",
        "ethnicity": "White",
        "insurance": "Other",
        "notes": {"clinical_note": "He has gout."},
        "gold_codes": ["M10.9", "QQQ.1"],
    }
    bad.write_text(json.dumps(row) + "\n")
    unknown = _error(capsys, command(tiny_model, tmp_path / "b", "--cases", str(bad)))
    assert "line 1" in unknown and "QQQ.1" in unknown
    row |= {"gold_codes": []}
    bad.write_text(json.dumps(row) + "\n")
    assert "gold_codes" in _error(capsys, command(tiny_model, tmp_path / "c", "--cases", str(bad)))
    row |= {"gold_codes": ["M10.9"], "notes": {"clinical_note": "  "}}
    bad.write_text(json.dumps(row) + "\n")
    empty = _error(capsys, command(tiny_model, tmp_path / "d", "--cases", str(bad)))
    assert "clinical_note is empty" in empty


#: One case of a case file, for the tests that change what a run was made from.
ONE_CASE = {
    "id": "x",
    "sex": "female",
    "ethnicity": "Black",
    "insurance": "Medicaid",
    "notes": {"clinical_note": "She has gout."},
    "gold_codes": ["M10.9"],
}
#: A note with a clinician of the patient's sex before a pronoun: the referee reads it.
NOTE = "Dr. Lee saw her; she has gout."


def test_changed_case_file_is_refused_on_report(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    row = ONE_CASE
    cases.write_text(json.dumps(row) + "\n")
    out = tmp_path / "run"
    assert main(command(tiny_model, out, "--cases", str(cases), "--no-placebo")) == 0
    table4 = pl.read_csv(out / "results" / "extrinsic" / "table4.csv")
    # counterfactuals change from the case's own demographics to the paper's other values
    assert table4["Value"].to_list() == ["male", "Hispanic", "Asian", "Medicare"]
    cases.write_text(json.dumps(row | {"gold_codes": ["M10.0"]}) + "\n")
    err = _error(capsys, ["report", str(out)])
    assert "changed since the run" in err


def test_a_run_made_by_another_sex_rewrite_is_refused(
    tiny_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from climb_vllm.benchmarks.extrinsic import run as extrinsic_run

    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(ONE_CASE | {"notes": {"clinical_note": NOTE}}) + "\n")
    out = tmp_path / "run"
    args = command(tiny_model, out, "--cases", str(cases), "--no-placebo")
    assert main(args) == 0
    # Another version of the rewrite (its code or the referee's weights) writes other notes.
    monkeypatch.setattr(extrinsic_run, "rewrite_sha256", lambda: "0" * 64)
    # (A changed module changes the package's files, so the report scores the run again; here
    # the stored results' stamp is removed to the same end.)
    (out / "results" / "extrinsic" / "inputs.sha256").unlink()
    assert "sex rewrite changed" in _error(capsys, ["report", str(out)])
    # Resuming into the folder is refused too, naming the field that differs.
    assert "rewrite_sha256" in _error(capsys, args)


def test_empty_and_non_text_outputs_are_counted(ontology_2021, mapper) -> None:  # type: ignore[no-untyped-def]
    from climb_vllm.benchmarks.extrinsic.cases import load_cases
    from climb_vllm.benchmarks.extrinsic.prompts import items_frame
    from climb_vllm.benchmarks.extrinsic.run import extrinsic_tables, map_records

    cases = load_cases("synthetic", ontology_2021)[:1]
    items = items_frame(cases, placebo=False)
    responses = ["", "Essential (primary) hypertension", "x" * 100_000] + ["I10"] * (
        items.height - 3
    )
    records = pl.DataFrame(
        {
            "id": items["id"],
            "sample": [0] * items.height,
            "response": responses,
            "finish_reason": ["non-text", "stop", "length"] + ["stop"] * (items.height - 3),
            "completion_tokens": [0] * items.height,
        }
    )
    outputs, points = map_records(records, items, mapper)
    assert outputs.filter(pl.col("empty")).height == 1
    assert outputs["codes"].list.len().to_list()[:3] == [0, 1, 1]
    tables = extrinsic_tables(outputs, points, cases, ontology_2021)
    summary = tables["variants"].filter(
        (pl.col("variant") == "default") & (pl.col("placement") == "before")
    )
    assert summary["no_parse_share"].item() == pytest.approx(1.0)


def test_clibench_protocol_end_to_end(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # The tiny model's 512-token context cannot hold CliBench's 650-token answer reserve.
    assert main(command(tiny_model, out, "--limit", "2", "--greedy", "--protocol", "clibench")) == 2
    assert (
        main(
            command(
                tiny_model,
                out,
                "--limit",
                "2",
                "--greedy",
                "--protocol",
                "clibench",
                "--context-tokens",
                "0",
            )
        )
        == 0
    )
    manifest = json.loads((out / "manifest.json").read_text())
    config = manifest["benchmarks"]["extrinsic"]["config"]
    assert config["protocol"] == "clibench" and config["context_tokens"] == 0
    variants = pl.read_parquet(out / "records" / "extrinsic" / "variants.parquet")
    assert variants["prompt"].str.contains("CLINICAL NOTE: \n").all()
    assert variants["prompt"].str.starts_with("Patient information: age is ").any()
    outputs = pl.read_parquet(out / "results" / "extrinsic" / "outputs.parquet")
    # CliBench's rule drops exactly the outputs that predict nothing.
    assert (outputs["dropped"] == (outputs["codes"].list.len() == 0)).all()


def test_default_protocol_cuts_notes_to_the_model_context(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    # 512 tokens of context, 200 kept for the answer: the notes must be cut.
    assert main(command(tiny_model, out, "--limit", "2", "--greedy", "--max-tokens", "200")) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["benchmarks"]["extrinsic"]["config"]["context_tokens"] == 512
    variants = pl.read_parquet(out / "records" / "extrinsic" / "variants.parquet")
    assert variants["truncated"].any()
    assert (variants.filter(pl.col("truncated"))["kept_share"] < 1).all()


def test_two_attributes_at_once_end_to_end(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(command(tiny_model, out, "--limit", "2", "--intersection", "sex+insurance")) == 0
    config = json.loads((out / "manifest.json").read_text())["benchmarks"]["extrinsic"]["config"]
    assert config["intersections"] == ["sex+insurance"]
    results = out / "results" / "extrinsic"
    table4 = pl.read_csv(results / "table4.csv")
    assert "sex+insurance" in table4["Attribute"].to_list()
    joint = pl.read_csv(results / "intersections.csv")
    assert joint.height >= 1 and set(joint["Attributes"]) == {"sex+insurance"}
    # A pair the benchmark does not offer is refused when parsed (exit status 2), with the
    # choices named, and nothing is written.
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main(command(tiny_model, tmp_path / "bad", "--intersection", "sex+age"))
    assert refused.value.code == 2
    assert "invalid choice: 'sex+age'" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_uncertain_words_go_to_a_review_file_and_decisions_come_back(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases.jsonl"
    unsure = ONE_CASE | {
        "id": "unsure",
        "notes": {"clinical_note": "The nurse saw her. She has gout."},
    }
    sure = ONE_CASE | {"id": "sure"}
    cases.write_text("".join(json.dumps(c) + "\n" for c in (unsure, sure)))
    out = tmp_path / "run"
    assert main(command(tiny_model, out, "--cases", str(cases), "--no-placebo")) == 0
    results = out / "results" / "extrinsic"
    review = pl.read_csv(results / "uncertain_edits.csv", infer_schema=False)
    assert review["case"].unique().to_list() == ["unsure"]
    # "her" is the nurse's object, so the patient's; "She" may be the nurse.
    assert review["word"].to_list() == ["She"] and review["decision"].is_null().all()
    certain = pl.read_csv(results / "table4_certain.csv")
    assert certain["Cases"].to_list() == ["every case", "certain rewrites"]
    assert certain["Pairs"].to_list() == [2, 1]
    # A person decides: "She" is the patient's (a man in the counterfactual).
    filled = tmp_path / "decisions.csv"
    review.with_columns(pl.lit("male").alias("decision")).write_csv(filled)
    second = tmp_path / "decided"
    args = command(tiny_model, second, "--cases", str(cases), "--no-placebo")
    assert main([*args, "--rewrite-decisions", str(filled)]) == 0
    manifest = json.loads((second / "manifest.json").read_text())
    config = manifest["benchmarks"]["extrinsic"]["config"]
    assert config["rewrite_decisions"] == str(filled) and config["rewrite_decisions_sha256"]
    assert pl.read_csv(second / "results" / "extrinsic" / "uncertain_edits.csv").height == 0
    assert pl.read_csv(second / "results" / "extrinsic" / "table4_certain.csv")[
        "Pairs"
    ].to_list() == [2, 2]
    # A changed file is a changed run: resuming into that folder is refused.
    review.with_columns(pl.lit("female").alias("decision")).write_csv(filled)
    assert "rewrite_decisions_sha256" in _error(capsys, [*args, "--rewrite-decisions", str(filled)])
    # A decision that is neither sex: one line naming the file's line.
    review.with_columns(pl.lit("unsure").alias("decision")).write_csv(filled)
    err = _error(capsys, [*args, "--rewrite-decisions", str(filled), "--out", str(tmp_path / "x")])
    assert "line 2" in err and "neither sex" in err
