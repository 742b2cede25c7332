"""Other names of ICD-10-CM codes, from the tabular list: inclusion terms and "Includes" notes.

The tabular list gives many codes more names than their title: inclusion terms ("Congestive
heart failure NOS" under I50.9, "SLE NOS" under M32.9) and "Includes" notes ("high blood
pressure" under I10). They are the coders' own synonyms, published with the release by the US
CDC National Center for Health Statistics (a US government work). :func:`export_terms` reads
them from the installed PyPI package ``simple-icd-10-cm`` (1.2.0 holds the 2021 release, 1.5.0
April 2026) into a Parquet table packaged beside the release table, so the evaluator needs no
extra package at run time.

:func:`name_variants` gives the forms a clinician would write: ICD-10-CM's "nonessential
modifiers" in parentheses ("Essential (primary) hypertension") may be present or absent, and
"NOS" ("not otherwise specified") is never written. The ICD-10-CM Alphabetic Index (eponyms,
lay terms) is not included: no registry package ships it (see the data folder's SOURCE.md).
In its place, :data:`LAY_FILE` lists lay names ("heart attack", "pink eye") that the tabular
list does not hold, each with the code a coder assigns; they join the other names with source
"lay".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged
from climb_vllm.resources.ontology import file_sha256

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.resources.ontology import Ontology

#: Packaged term tables: release name -> file under ``climb_vllm/data/icd10cm``.
TERM_FILES = {"2021": "icd10cm_terms_2021.parquet", "2026": "icd10cm_terms_2026.parquet"}
SOURCES = ("inclusion", "includes", "lay")
#: Lay names written for the project (term, code; ICD-10-CM 2021 billable codes).
LAY_FILE = "lay_terms.tsv"

_NOS = re.compile(r"\s*,?\s*\bNOS\b\s*", re.IGNORECASE)
_PARENS = re.compile(r"\s*\([^()]*\)")
_BRACKETS = re.compile(r"\s*\[[^\[\]]*\]")
_SPACES = re.compile(r"\s+")


def _tidy(text: str) -> str:
    return _SPACES.sub(" ", text).strip(" ,;:-")


def name_variants(name: str) -> list[str]:
    """The written forms of one title or term, the name itself (less "NOS") first.

    "Hypertension (arterial) (benign) (essential) NOS" -> ["Hypertension (arterial) (benign)
    (essential)", "Hypertension"]. Square brackets enclose a synonym or another wording of the
    whole name (ICD-10-CM's convention): "Acute nasopharyngitis [common cold]" -> [..., "Acute
    nasopharyngitis", "common cold"].
    """
    first = _tidy(_NOS.sub(" ", name))
    forms = [first, _tidy(_BRACKETS.sub("", _PARENS.sub("", first)))]
    forms += [_tidy(inner) for inner in re.findall(r"\[([^\[\]]*)\]", first)]
    unique: dict[str, str] = {}
    for form in forms:
        if re.search(r"[A-Za-z]{2}", form):
            unique.setdefault(form.lower(), form)
    return list(unique.values())


def export_terms(out: Path) -> int:
    """Write the inclusion terms and Includes notes of the installed ``simple-icd-10-cm``.

    Rows ``code, term, source`` (source "inclusion" or "includes"), one per term as published,
    in release order. Returns the number of rows.

    Args:
        out: destination Parquet file; written atomically.
    """
    try:
        import simple_icd_10_cm as cm
    except ImportError as exc:
        raise UserError(
            "Exporting ICD-10-CM terms needs the simple-icd-10-cm package.",
            "pip install simple-icd-10-cm==VERSION (1.2.0: 2021, 1.5.0: April 2026) and rerun.",
        ) from exc
    import polars as pl

    rows: dict[str, list[str]] = {"code": [], "term": [], "source": []}
    seen: set[str] = set()
    for code in cm.get_all_codes(True):
        if not cm.is_category_or_subcategory(code) or code in seen:
            continue
        seen.add(code)
        for source, terms in (
            ("inclusion", cm.get_inclusion_term(code)),
            ("includes", cm.get_includes(code)),
        ):
            for term in terms:
                rows["code"].append(code)
                rows["term"].append(str(term).strip())
                rows["source"].append(source)
    partial = out.with_name(f".{out.name}.partial")
    pl.DataFrame(rows).write_parquet(partial)
    partial.replace(out)
    return len(rows["code"])


def terms_digest(ontology: Ontology) -> str:
    """Identifies the other names of ``ontology``'s codes: the SHA-256 of its packaged terms
    file ("" when it has none) and of the lay names."""
    name = TERM_FILES.get(ontology.release)
    tabular = file_sha256(packaged("icd10cm", name)) if name else ""
    return f"{tabular}+{file_sha256(packaged('icd10cm', LAY_FILE))[:16]}"


def load_lay_terms() -> pl.DataFrame:
    """The packaged lay names (columns ``code, term, source``; source "lay"), in file order."""
    import polars as pl

    lay = pl.read_csv(
        packaged("icd10cm", LAY_FILE), separator="\t", schema={"term": pl.String, "code": pl.String}
    )
    return lay.select("code", "term", source=pl.lit("lay"))


def load_terms(ontology: Ontology) -> pl.DataFrame:
    """The packaged terms of ``ontology``'s release (columns ``code, term, source``): the
    tabular list's, then the lay names of :func:`load_lay_terms`, each kept where its code is
    in the release.

    A user-exported release has no packaged tabular terms: the mapper then knows each code by
    its title and lay names only.
    """
    import polars as pl

    name = TERM_FILES.get(ontology.release)
    tabular = (
        pl.read_parquet(packaged("icd10cm", name))
        if name is not None
        else pl.DataFrame(schema={"code": pl.String, "term": pl.String, "source": pl.String})
    )
    terms = pl.concat([tabular, load_lay_terms()])
    return terms.filter(pl.col("code").is_in(list(ontology.codes)))


def nos_codes(ontology: Ontology) -> frozenset[str]:
    """Codes with an inclusion term "... NOS" (the code a coder takes for that term when
    nothing more is said: "Chronic lymphocytic leukemia of B-cell type NOS" under C91.10);
    empty for a release without packaged terms."""
    terms = load_terms(ontology)
    nos = terms.filter((terms["source"] == "inclusion") & terms["term"].str.contains(r"\bNOS\b"))
    return frozenset(nos["code"].to_list())
