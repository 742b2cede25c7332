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
In its place, :data:`WRITTEN_FILES` lists names that the tabular list does not hold, each with
the code a coder assigns: lay names ("heart attack", "pink eye"; source "lay") and clinical
names, eponyms and older names ("Graves disease", "Boerhaave syndrome", "temporal arteritis";
source "clinical"). They join the other names under their source.
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
SOURCES = ("inclusion", "includes", "lay", "clinical")
#: Names written for the project, by source (term, code; ICD-10-CM 2021 codes: billable, or a
#: header whose side a text may name). See the data folder's SOURCE.md.
WRITTEN_FILES = {"lay": "lay_terms.tsv", "clinical": "clinical_terms.tsv"}

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
    file ("" when it has none) and of the written names."""
    name = TERM_FILES.get(ontology.release)
    tabular = file_sha256(packaged("icd10cm", name)) if name else ""
    written = [file_sha256(packaged("icd10cm", f))[:16] for f in WRITTEN_FILES.values()]
    return "+".join([tabular, *written])


def load_written_terms(source: str | None = None) -> pl.DataFrame:
    """The names written for the project (columns ``code, term, source``), in file order.

    Args:
        source: "lay" or "clinical" for one file of :data:`WRITTEN_FILES`; None for both.
    """
    import polars as pl

    chosen = WRITTEN_FILES if source is None else {source: WRITTEN_FILES[source]}
    schema = {"term": pl.String, "code": pl.String}
    return pl.concat(
        pl.read_csv(packaged("icd10cm", file), separator="\t", schema=schema).select(
            "code", "term", source=pl.lit(kind)
        )
        for kind, file in chosen.items()
    )


def load_terms(ontology: Ontology) -> pl.DataFrame:
    """The packaged terms of ``ontology``'s release (columns ``code, term, source``): the
    tabular list's, then the names of :func:`load_written_terms`, each kept where its code is
    in the release.

    A user-exported release has no packaged tabular terms: the mapper then knows each code by
    its title and written names only.
    """
    import polars as pl

    name = TERM_FILES.get(ontology.release)
    tabular = (
        pl.read_parquet(packaged("icd10cm", name))
        if name is not None
        else pl.DataFrame(schema={"code": pl.String, "term": pl.String, "source": pl.String})
    )
    terms = pl.concat([tabular, load_written_terms()])
    return terms.filter(pl.col("code").is_in(list(ontology.codes)))


def nos_codes(ontology: Ontology) -> frozenset[str]:
    """Codes with an inclusion term "... NOS" (the code a coder takes for that term when
    nothing more is said: "Chronic lymphocytic leukemia of B-cell type NOS" under C91.10);
    empty for a release without packaged terms."""
    terms = load_terms(ontology)
    nos = terms.filter((terms["source"] == "inclusion") & terms["term"].str.contains(r"\bNOS\b"))
    return frozenset(nos["code"].to_list())
