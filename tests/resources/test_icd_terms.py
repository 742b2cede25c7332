"""Other names of ICD-10-CM codes from the tabular list, packaged per release."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from climb_vllm.resources.icd_terms import (
    TERM_FILES,
    export_terms,
    load_terms,
    load_written_terms,
    name_variants,
    nos_codes,
)
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
    assert terms.height == 12524 + load_written_terms().height
    assert set(terms["source"].unique()) == {"inclusion", "includes", "lay", "clinical"}
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
    tabular = load_terms(ontology_2021).filter(pl.col("source").is_in(["inclusion", "includes"]))
    assert pl.read_parquet(out).equals(tabular)


def test_nos_codes_come_from_the_inclusion_terms() -> None:
    nos = nos_codes(load_ontology("2021"))
    assert {"C91.10", "N40.0", "J45.20", "I50.9"} <= nos
    assert "C91.11" not in nos and "I10" not in nos


def test_written_names_are_new_names_of_codes_of_the_2021_release(ontology_2021) -> None:  # type: ignore[no-untyped-def]
    written = load_written_terms()
    assert load_written_terms("lay").height > 300
    assert load_written_terms("clinical").height > 250
    # One code per name, across both files.
    assert written["term"].str.to_lowercase().n_unique() == written.height
    nos = nos_codes(ontology_2021)
    for code in written["code"]:
        # A header is listed where a side may follow ("ear infection, left"); it must have
        # a default leaf for a text that names none.
        assert code in ontology_2021
        assert ontology_2021.default_leaf(code, None, nos) is not None, code
    # Only names the tabular list lacks: a tabular name already leads to its own code.
    tabular = load_terms(ontology_2021).filter(pl.col("source").is_in(["inclusion", "includes"]))
    known = {v.lower() for t in tabular["term"] for v in name_variants(t)}
    known |= {v.lower() for t in ontology_2021.table["description"] for v in name_variants(t)}
    assert not known & set(written["term"].str.to_lowercase())
    names = dict(zip(written["term"], written["code"]))
    assert names["heart attack"] == "I21.9"
    assert names["Baker's cyst"] == "M71.2"  # the header: a side may follow
    assert names["Graves disease"] == "E05.00"
    assert names["cubital tunnel syndrome"] == "G56.2"  # the header: a side may follow
    # No clinical name is an abbreviation: those have senses chosen in context
    # (climb_vllm/data/abbreviations), which a fixed name would bypass.
    assert (
        not load_written_terms("clinical")
        .filter(pl.col("term").str.contains(r"^[A-Z0-9\-]+$"))
        .height
    )
