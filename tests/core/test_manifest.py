"""The run record: what a run directory's manifest holds, read by attribute, and refused when
it is not a record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.core.manifest import Manifest, Section
from climb_vllm.core.store import RunStore


def test_a_claimed_and_annotated_run_reads_back_by_attribute(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.claim("echo", {"model": "m", "seed": 3}, "abc")
    store.annotate("echo", engine={"engine": "local"}, items=7, codes=12)
    store.record_failures({"echo"}, {"other": "died"})
    record = store.record()
    section = record.benchmarks["echo"]
    assert section.config == {"model": "m", "seed": 3} and section.config_hash == "abc"
    assert section.engine == {"engine": "local"} and section.items == 7
    assert section.fact("codes") == 12 and section.fact("absent", "none") == "none"
    assert section.packages and section.started and record.created
    assert record.failed == {"other": "died"} and record.not_applicable == {}
    assert store.section("echo") == section
    # The file keeps its shape: one JSON object with the same keys.
    stored = json.loads(store.manifest_path.read_text())
    assert stored["benchmarks"]["echo"]["codes"] == 12 and "not_applicable" not in stored


def test_no_run_reads_as_an_empty_record(tmp_path: Path) -> None:
    assert Manifest.load(tmp_path / "manifest.json") == Manifest()
    with pytest.raises(UserError, match="has no echo run"):
        RunStore(tmp_path).section("echo")


def test_a_manifest_that_is_not_a_record_is_one_clear_error(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.manifest_path.write_text(json.dumps({"benchmarks": {"echo": {"items": "many"}}}))
    with pytest.raises(UserError, match=r"not a run record \(benchmarks\.echo\.items"):
        store.record()
    with pytest.raises(UserError, match="not a run record"):
        store.claim("other", {}, "h")


def test_a_malformed_fact_is_never_written(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.claim("echo", {"model": "m"}, "abc")
    before = store.manifest_path.read_bytes()
    with pytest.raises(UserError, match="not a run record"):
        store.annotate("echo", items="many")
    assert store.manifest_path.read_bytes() == before


def test_sections_keep_settings_engine_and_provenance_apart() -> None:
    section = Section(config={"seed": 1}, engine={"device": "cpu"}, git_commit="x")
    assert section.model_dump(exclude_unset=True) == {
        "config": {"seed": 1},
        "engine": {"device": "cpu"},
        "git_commit": "x",
    }


def test_the_sampling_settings_read_apart_from_the_rest() -> None:
    section = Section(config={"max_tokens": 64, "temperature": 0.8, "split": "eval", "seed": 2})
    assert section.generation is not None
    assert section.generation.max_tokens == 64 and section.generation.temperature == 0.8
    assert section.generation.seed == 2 and section.generation.top_p is None
    assert Section(config={"top_k": 5}).generation is None  # scoring samples nothing
