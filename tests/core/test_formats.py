"""One format per quantity: the rules, and the Markdown and the page showing the same text."""

from __future__ import annotations

import re

import polars as pl

from climb_vllm.core import formats
from climb_vllm.core.results import to_markdown
from climb_vllm.report.render import html_table


def test_each_quantity_has_its_format() -> None:
    assert formats.number(12.78, percent=True) == "12.8"
    assert formats.number(-12.1, percent=True) == "-12.1"
    assert formats.number(0.70123, percent=False) == "0.701"
    assert formats.number(0.0153, percent=False, column="p") == "0.015"
    assert formats.number(0.43, percent=False, column="q") == "0.43"
    assert formats.number(1.0, percent=False, column="p") == "1"
    assert formats.number(0.0004, percent=False, column="p") == "<0.001"
    assert formats.number(float("nan"), percent=False) == "n/a"
    assert formats.cell(32000, "Items") == "32,000"
    assert formats.cell(120, "Items") == "120"
    assert formats.cell(True, "Paper's") == "yes"
    columns = ["AssocMAD", "AssocMAD 95% CI", "Bias (pp)", "Bias (pp) 95% CI"]
    assert formats.owners(columns) == {
        "AssocMAD 95% CI": "AssocMAD",
        "Bias (pp) 95% CI": "Bias (pp)",
    }
    assert formats.cell("[0.29061, 0.69918]", columns[1], "AssocMAD") == "[0.291, 0.699]"
    assert formats.cell("[-3.2456, 1.04]", columns[3], "Bias (pp)") == "[-3.2, 1.0]"


def test_markdown_and_page_show_the_same_numbers() -> None:
    frame = pl.DataFrame(
        {
            "Model": ["m"],
            "AssocMAD": [0.51551],
            "AssocMAD 95% CI": ["[0.2906, 0.6992]"],
            "Recall change (%)": [-12.1],
            "p": [0.01532],
            "Items": [32000],
        }
    )
    markdown = to_markdown(frame).splitlines()[2]
    page = html_table(frame)
    shown = ["0.516", "[0.291, 0.699]", "-12.1", "0.015", "32,000"]
    assert markdown == "| m | " + " | ".join(shown) + " |"
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page)
    assert cells[1] == "0.516<small class='ci'>[0.291, 0.699]</small>"
    assert cells[2:] == shown[2:]


def test_percent_columns_are_named_so_or_declared_by_their_table() -> None:
    assert formats.is_percent("Female-only correct (%)")
    assert formats.is_percent("share_pct")
    assert formats.is_percent("Bias (pp)")
    # A corrected AssocMAD is not a share of correct answers.
    assert not formats.is_percent("L1 corrected")
    assert formats.cell(0.8096, "L1 corrected") == "0.810"
    # A paper's own column name keeps its wording; its table declares it a percentage.
    assert not formats.is_percent("Accuracy")
    assert formats.is_percent("Accuracy", ("Accuracy",))
    assert formats.cell(45.678, "Accuracy", percent=("Accuracy",)) == "45.7"
    assert formats.cell("[40.12, 50.98]", "95% CI", "Accuracy", ("Accuracy",)) == "[40.1, 51.0]"
    frame = pl.DataFrame({"Accuracy": [45.678]})
    assert to_markdown(frame, ("Accuracy",)).splitlines()[2] == "| 45.7 |"
    assert re.findall(r"<td[^>]*>(.*?)</td>", html_table(frame, percent=("Accuracy",))) == ["45.7"]
