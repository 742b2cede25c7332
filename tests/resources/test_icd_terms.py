"""Other names of ICD-10-CM codes from the tabular list, packaged per release."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from climb_vllm.resources.icd_terms import TERM_FILES, export_terms, load_terms, name_variants
from climb_vllm.resources.ontology import load_ontology


def test_name_variants_drop_nos_and_nonessential_modifiers() -> None:
    assert name_variants("Hypertension (arterial) (benign) (essential) NOS") == [
        "Hypertension (arterial) (benign) (essential)",
        "Hypertension",
    ]
    assert name_variants("SLE NOS") == ["SLE"]
    # Square brackets enclose a synonym of the whole name.
    assert name_variants("Acute nasopharyngitis [common cold]") == [
        "Acute nasopharyngitis [common cold]",
        "Acute nasopharyngitis",
        "common cold",
    ]
    assert name_variants("Cholera") == ["Cholera"]


def test_packaged_terms_of_2021(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    terms = load_terms(ontology_2021)
    assert terms.height == 12524
    assert set(terms["source"].unique()) == {"inclusion", "includes"}
    assert set(terms["code"]) <= set(ontology_2021.codes)
    by_code = terms.group_by("code").agg(pl.col("term"))
    names = dict(zip(by_code["code"], by_code["term"]))
    assert "high blood pressure" in names["I10"]
    assert "Congestive heart failure NOS" in names["I50.9"]


def test_every_packaged_release_has_terms() -> None:
    for release in TERM_FILES:
        assert load_terms(load_ontology(release)).height > 10000


def test_export_reproduces_the_packaged_table(tmp_path: Path, ontology_2021) -> None:  # type: ignore[no-untyped-def]
    # The dev environment pins simple-icd-10-cm 1.2.0, the library the 2021 terms came from.
    out = tmp_path / "terms.parquet"
    assert export_terms(out) == 12524
    assert pl.read_parquet(out).equals(load_terms(ontology_2021))


def test_nos_codes_come_from_the_inclusion_terms() -> None:
    from climb_vllm.resources.icd_terms import nos_codes
    from climb_vllm.resources.ontology import load_ontology

    nos = nos_codes(load_ontology("2021"))
    assert {"C91.10", "N40.0", "J45.20", "I50.9"} <= nos
    assert "C91.11" not in nos and "I10" not in nos
