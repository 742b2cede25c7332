"""Grading answers that another tool produced (``climb-vllm grade``), and writing the prompts
for it (``climb-vllm prompts``)."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from climb_vllm.benchmarks.hive.run import shown_tables
from climb_vllm.core.errors import UserError

if TYPE_CHECKING:
    import polars as pl

    from climb_vllm.benchmarks.hive.kind import Kind


def _make_folder(folder: Path, option: str) -> None:
    """Create ``folder`` for output, or stop with the reason and the option to change."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"Cannot write to {folder} ({exc.strerror}).", f"pass {option} with a writable path."
        ) from exc


def _read_csv(path: Path) -> pl.DataFrame:
    """A UTF-8 CSV with a header, every column as text.

    Raises:
        UserError: the file is missing, not UTF-8 or not CSV.
    """
    import polars as pl

    if not path.is_file():
        raise UserError(f"{path} does not exist.", "pass the path of a CSV file of responses.")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UserError(
            f"{path} is not UTF-8 text (byte {exc.start}, line {line}).",
            "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8).",
        ) from exc
    try:
        return pl.read_csv(io.StringIO(text), infer_schema_length=0)
    except (pl.exceptions.PolarsError, ValueError) as exc:
        raise UserError(
            f"{path} could not be read as CSV: {str(exc).splitlines()[0]}",
            "write a comma-separated file with a header row and quoted multi-line responses.",
        ) from exc


def read_responses(path: Path, extra: tuple[str, ...] = ()) -> pl.DataFrame:
    """A responses CSV (columns ``id`` or ``item_id``, ``response``; optional ``sample``),
    validated.

    Args:
        path: the CSV file.
        extra: further columns that must be present and are kept (labels, groups).

    Raises:
        UserError: the file is missing, not UTF-8, not CSV, lacks a column, or repeats an
            (id, sample) pair within a group.
    """
    import polars as pl

    frame = _read_csv(path)
    if "id" not in frame.columns and "item_id" in frame.columns:
        frame = frame.rename({"item_id": "id"})
    missing = [c for c in ("id", "response", *extra) if c not in frame.columns]
    if missing:
        raise UserError(
            f"{path} lacks the column(s) {', '.join(missing)} "
            f"(it has: {', '.join(frame.columns)}).",
            "name the item column 'id' and the answer column 'response' (optional: 'sample')"
            + (f" and keep the column(s) {', '.join(extra)}." if extra else "."),
        )
    if "sample" not in frame.columns:
        frame = frame.with_columns(pl.lit("0").alias("sample"))
    try:
        frame = frame.with_columns(pl.col("sample").cast(pl.Int64))
    except pl.exceptions.PolarsError as exc:
        raise UserError(
            f"{path}: the 'sample' column must hold whole numbers.", "fix or drop that column."
        ) from exc
    frame = frame.with_columns(pl.col("response").fill_null(""))
    key = ["id", "sample", *(c for c in extra if c not in ("label",))]
    duplicated = frame.filter(pl.struct(*key).is_duplicated())
    if duplicated.height:
        first = duplicated.row(0, named=True)
        raise UserError(
            f"{path} has {duplicated.height} rows sharing an ({', '.join(key)}) key, "
            f"e.g. {first['id']}.",
            "give repeated answers to one item distinct 'sample' numbers (0, 1, ...).",
        )
    return frame.select("id", "sample", "response", *dict.fromkeys(extra))


def grade_external(
    kind: Kind, responses_csv: Path, out: Path | None, model: str, seed: int
) -> None:
    """``climb-vllm grade``: grade a responses CSV and print the benchmark's tables.

    Args:
        kind: the benchmark the answers are to.
        responses_csv: the CSV (columns id, response; optional sample).
        out: also write graded.csv and the tables here.
        model: the model's label in the tables.
        seed: the seed the control items were made with.
    """
    import polars as pl

    from climb_vllm.core.results import write_tables

    responses = read_responses(responses_csv)
    items = kind.items("all", None, seed, True)
    known = responses.filter(pl.col("id").is_in(items["id"].implode()))
    unknown = responses.height - known.height
    strangers = responses.filter(~pl.col("id").is_in(items["id"].implode()))["id"].to_list()
    if known.height == 0:
        raise UserError(
            f"None of the {responses.height} ids in {responses_csv} is a {kind.name} item.",
            f"use the ids of 'climb-vllm prompts {kind.name}' (e.g. {kind.id_example}).",
        )
    graded = kind.grade(known, items)
    tables, layout, titles, heading = shown_tables(kind, graded, model)
    counts = {
        "responses": responses.height,
        "graded": graded.height,
        "unknown_ids": unknown,
        "empty": int((graded["grade"] == "empty").sum()),
    }
    if out:
        _make_folder(out, "--out")
        path = write_tables(out, heading, layout, titles, tables, counts, kind.percent)
        graded.select("id", "sample", "grade", "rule", "correct", "response").write_csv(
            out / "graded.csv"
        )
        print(path.read_text())
        print(f"tables and graded.csv written to {out}")
    else:
        from climb_vllm.core.results import to_markdown

        print(f"# {heading}\n")
        for key, frame in layout.items():
            print(f"## {titles[key]}\n\n{to_markdown(frame, kind.percent.get(key, ()))}\n")
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(summary)
    if unknown:
        print(
            f"warning: {unknown} rows have ids that are not {kind.name} items (first: "
            f"{', '.join(map(str, strangers[:5]))}); they were not graded (see 'climb-vllm "
            "prompts' for the ids).",
            file=sys.stderr,
        )


def write_prompts(
    kind: Kind, out: Path, split: str, limit: int | None, seed: int, controls: bool
) -> None:
    """``climb-vllm prompts``: the benchmark's prompts as CSV (id, kind, prompt).

    Args:
        kind: the benchmark the answers are to.
        out: the CSV file.
        split: "eval" (the authors' test split) or "all".
        limit: a sample of this many items (None: the whole split).
        seed: the seed of the sample and of the control items.
        controls: include the derived control items, where the benchmark has them.
    """
    import polars as pl

    items = kind.items(split, limit, seed, controls)
    if "kind" not in items.columns:
        items = items.with_columns(pl.lit("item").alias("kind"))
    _make_folder(out.parent, "the output file")
    try:
        items.select("id", "kind", "prompt").write_csv(out)
    except OSError as exc:
        raise UserError(
            f"Cannot write the prompts to {out} ({exc.strerror}).",
            "pass a path in a writable folder as the output file.",
        ) from exc
    print(f"{items.height} prompts written to {out}")


def agreement_external(
    kind: Kind,
    responses_csv: Path,
    labels: str,
    by: str | None,
    out: Path,
    sample: int,
    seed: int,
) -> None:
    """``climb-vllm grade ... --labels COLUMN``: the graders' agreement with given labels.

    Args:
        kind: the benchmark the answers are to.
        responses_csv: the CSV (id or item_id, response, the label column, the group column).
        labels: the column holding each answer's label (the benchmark's categories).
        by: the column grouping answers (a model); None: ``model`` if present, else one group.
        out: the folder for agreement.md/.csv, confusion.csv and the disagreement files.
        sample: disagreements per group in disagreements.md.
        seed: the seed of that sample (and of the control items, which are not compared).
    """
    import polars as pl

    from climb_vllm.benchmarks.hive.agreement import compare, write_agreement

    header = _read_csv(responses_csv).columns
    group = by or ("model" if "model" in header else None)
    frame = read_responses(responses_csv, (labels,) + ((group,) if group else ()))
    frame = frame.with_columns(
        pl.col(labels).str.strip_chars().str.to_lowercase().alias("label"),
        (pl.col(group) if group else pl.lit("all")).alias("group"),
    )
    items = kind.items("all", None, seed, False)
    known = frame.filter(pl.col("id").is_in(items["id"].implode()))
    if known.height == 0:
        raise UserError(
            f"None of the {frame.height} ids in {responses_csv} is a {kind.name} item.",
            f"use the ids of 'climb-vllm prompts {kind.name}' (e.g. {kind.id_example}).",
        )
    graded = kind.grade(known.drop(labels) if labels != "label" else known, items)
    _make_folder(out, "--out")
    path, table = write_agreement(kind, compare(kind, graded), out, sample, seed)
    print(path.read_text())
    left_out = frame.height - known.height
    print(f"answers {frame.height}, compared {graded.height}, not {kind.name} items {left_out}")
    print(
        f"agreement.md, agreement.csv, confusion.csv, disagreements.csv and disagreements.md "
        f"written to {out}"
    )
