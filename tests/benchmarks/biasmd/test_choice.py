"""BiasMD's choice mode: its prompts, the name swap and the answer of statements and controls."""

from __future__ import annotations

import polars as pl

from climb_vllm.benchmarks.biasmd.choice import UNDETERMINED, exchange_names, prompts, tables
from climb_vllm.benchmarks.biasmd.task import items_frame


def test_exchange_names_swaps_whole_words_only() -> None:
    text = "Jordan, who is deaf, and Taylor are roommates. Jordanna says Taylor's dog likes Jordan."
    assert exchange_names(text, "Jordan", "Taylor") == (
        "Taylor, who is deaf, and Jordan are roommates. Jordanna says Jordan's dog likes Taylor."
    )


def test_statements_are_asked_as_written_and_swapped_controls_as_written() -> None:
    items = items_frame("eval", 10, 0)
    made = prompts(items)
    statements = items.filter(pl.col("kind") == "item").height
    controls = items.filter(pl.col("kind") == "control").height
    assert len(made) == 2 * statements + controls
    by_key = {(p.id, p.variant): p for p in made}
    for row in items.iter_rows(named=True):
        original = by_key[(row["id"], "original")]
        assert original.options == (row["person1"], row["person2"], UNDETERMINED)
        assert row["statement"] in original.text
        swap = by_key.get((row["id"], "name_swap"))
        assert (swap is None) == (row["kind"] == "control")
        if swap is not None:
            assert swap.options == (row["person2"], row["person1"], UNDETERMINED)


def test_tables_score_statements_against_undetermined_and_controls_against_the_person() -> None:
    items = items_frame("eval", 10, 0)
    rows = []
    for prompt in prompts(items):
        # A model that always chooses option 1 (the second person named).
        rows.append(
            {
                "id": prompt.id,
                "variant": prompt.variant,
                "options": 3,
                "choice_sum": 1,
                "choice_per_byte": 1,
                "choice_calibrated": 1,
                "choice": 1,
                "margin": -1.0,
            }
        )
    out = tables(pl.DataFrame(rows), items)
    accuracy = out["choice_accuracy"].filter(
        (pl.col("subset") == "overall") & (pl.col("score") == "per_byte")
    )
    by_kind = {r["kind"]: r["accuracy"] for r in accuracy.iter_rows(named=True)}
    assert by_kind["item"] == 0.0
    controls = items.filter(pl.col("kind") == "control")
    second = controls.filter(pl.col("expected") == "second").height / controls.height
    assert abs(by_kind["control"] - second) < 1e-12
    position = {r["kind"]: r for r in out["choice_position"].iter_rows(named=True)}
    assert position["item"]["position_bias"] == -1.0
    swaps = out["choice_swaps"].filter(pl.col("subset") == "overall").row(0, named=True)
    assert swaps["change"] == 0.0 and swaps["flips"] == 0.0
