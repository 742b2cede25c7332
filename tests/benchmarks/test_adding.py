"""README "Adding a benchmark": a throwaway benchmark, written only against the public pieces the
README names (``Benchmark``'s members, ``Flag``, ``options_of``, ``ReportTable``, ``ReportFigure``,
``open_run``, ``run_generation``, ``write_tables``) and registered with one registry entry, runs
through ``eval``, ``eval all``, ``report`` and ``rescore``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import polars as pl
import pytest
from pydantic import Field

from climb_vllm.benchmarks.base import (
    BenchHook,
    ExternalGrader,
    Finding,
    Option,
    Paired,
    ReportFigure,
    ReportTable,
    Synthetic,
    options_of,
)
from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.cli import main
from climb_vllm.core.config import EngineConfig
from climb_vllm.core.flags import Flag
from climb_vllm.core.manifest import Section
from climb_vllm.core.plotting import Runs, plt, png, runs_with
from climb_vllm.core.store import RunStore
from climb_vllm.runner.run import RunContext

WORDS = ("aspirin", "insulin", "heparin", "warfarin", "digoxin")


class EchoConfig(EngineConfig):
    """Everything that determines an echo run's records."""

    benchmark: Literal["echo"] = "echo"
    limit: Annotated[int | None, Flag("--limit", suite=("--limit-echo",))] = Field(
        default=None, ge=1, description="the first N words"
    )
    seed: int = 0
    samples: int = 1
    temperature: float | None = 0.0
    top_p: float | None = None
    max_tokens: Annotated[int, Flag("--max-tokens")] = Field(
        default=6, ge=1, description="new tokens per answer"
    )
    system_prompt: str | None = None
    chunk_size: int = 2


def _draw(runs: Runs) -> bytes | None:
    having = runs_with(runs, "echo")
    if not having:
        return None
    figure, axis = plt.subplots(figsize=(4, 3))
    axis.bar([label for label, _ in having], [m["accuracy"][0]["share"] for _, m in having])
    return png(figure)


class EchoBenchmark:
    """Asks the model to repeat a drug name; an answer is right when it contains the name."""

    name: str = "echo"
    title: str = "Echo"
    help: str = "echo: repeat a drug name"
    description: str = help
    config_type = EchoConfig
    options: tuple[Option, ...] = options_of(EchoConfig)
    bench_hooks: tuple[BenchHook, ...] = ()
    synthetic: Synthetic | None = None
    external: ExternalGrader | None = None
    paired: Paired | None = None

    def configure(self, engine: EngineConfig, values: Mapping[str, Any]) -> EchoConfig:
        return engine.extend(EchoConfig, values)

    def run(self, config: EngineConfig, context: RunContext) -> Path:
        from climb_vllm.runner.generation import run_generation
        from climb_vllm.runner.run import open_run

        assert isinstance(config, EchoConfig)
        words = WORDS[: config.limit]
        items = pl.DataFrame(
            {"id": [f"echo-{w}" for w in words], "prompt": [f"Repeat: {w}" for w in words]}
        )
        store, engine, opened = open_run(config, context, self.name, datasets={"words": words})
        run_generation(opened, store, engine, items)
        self.results(store, quiet=context.quiet)
        return store.root

    def results(self, store: RunStore, quiet: bool) -> dict[str, Any]:
        from climb_vllm.core.results import write_tables

        records = store.read_records(self.name)
        right = [w in r.lower() for w, r in zip(records["id"].str.slice(5), records["response"])]
        table = pl.DataFrame({"answers": [len(right)], "share": [sum(right) / len(right)]})
        directory = store.root / "results" / self.name
        path = write_tables(
            directory,
            "Echo",
            {"accuracy": table},
            {"accuracy": "Echo accuracy"},
            {"accuracy": table},
        )
        if not quiet:
            print(path.read_text())
        loaded: dict[str, Any] = json.loads((directory / "metrics.json").read_text())
        return loaded

    def report_tables(self) -> tuple[ReportTable, ...]:
        return (ReportTable("accuracy", "Echo accuracy (share of answers naming the word)", 1000),)

    def figures(self) -> tuple[ReportFigure, ...]:
        return (ReportFigure("echo", _draw, "Echo accuracy per model", 1000, "accuracy"),)

    def scope(self, section: Section) -> str:
        return f"{len(section.datasets['words'])} words"

    def finding(self, metrics: Mapping[str, Any]) -> Finding:
        share = metrics["accuracy"][0]["share"]
        return Finding(f"{share:.0%} of answers echo the word", "chance 0%", "It echoes.")


@pytest.fixture()
def echo(monkeypatch: pytest.MonkeyPatch) -> EchoBenchmark:
    """The throwaway benchmark, registered for one test (the one registry line)."""
    benchmark = EchoBenchmark()
    monkeypatch.setitem(REGISTRY, benchmark.name, benchmark)
    return benchmark


def test_a_registered_benchmark_runs_through_eval_report_and_rescore(
    echo: EchoBenchmark, tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    base = ["--model", str(tiny_model), "--device", "cpu", "--out", str(out), "--display", "none"]
    assert main(["eval", "echo", *base, "--limit", "3"]) == 0
    records = pl.read_parquet(out / "records" / "echo" / "chunk-*.parquet")
    assert sorted(records["id"]) == ["echo-aspirin", "echo-heparin", "echo-insulin"]
    assert main(["report", str(out)]) == 0
    page = (out / "report" / "report.html").read_text()
    assert "Echo accuracy (share of answers naming the word)" in page
    assert "Echo accuracy per model" in page
    assert (out / "report" / "tables" / "echo_accuracy.csv").is_file()
    capsys.readouterr()
    assert main(["rescore", str(out)]) == 0
    assert "echo: no metric changed" in capsys.readouterr().out
    # Its option's default shows in --help, read from the configuration field.
    with pytest.raises(SystemExit):
        main(["eval", "echo", "--help"])
    assert "new tokens per answer; at least 1 (default: 6)" in capsys.readouterr().out


def test_eval_all_offers_its_suite_flag(
    echo: EchoBenchmark, tiny_model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "suite"
    argv = [
        "eval",
        "all",
        "--benchmarks",
        "echo",
        "--limit-echo",
        "2",
        "--model",
        str(tiny_model),
        "--device",
        "cpu",
        "--out",
        str(out),
        "--display",
        "none",
    ]
    assert main(argv) == 0
    records = pl.read_parquet(out / "records" / "echo" / "chunk-*.parquet")
    assert records.height == 2
    assert (out / "report" / "report.html").is_file()


def test_an_unknown_benchmark_is_one_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "all", "--benchmarks", "nosuch", "--model", "m"]) == 2
    assert "Unknown benchmark(s) nosuch" in capsys.readouterr().err
