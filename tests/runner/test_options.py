"""The engine options: declared once, parsed into one typed record, their defaults shown from
the one place each is declared."""

from __future__ import annotations

from dataclasses import fields

from climb_vllm.cli.commands import engine_options
from climb_vllm.cli.parser import build_parser
from climb_vllm.core.config import EngineConfig
from climb_vllm.runner.options import ENGINE_FLAGS, EngineOptions


def test_every_engine_option_is_declared_exactly_once() -> None:
    declared = [flag.field for flag in ENGINE_FLAGS]
    assert sorted(declared) == sorted(f.name for f in fields(EngineOptions))
    spellings = [s for flag in ENGINE_FLAGS for s in flag.flags]
    assert len(spellings) == len(set(spellings))


def test_the_command_line_reads_the_declared_options_into_the_record() -> None:
    argv = ["eval", "intrinsic", "--model", "m", "--max-connections", "5", "--timeout", "2.5"]
    argv += ["--endpoint", "http://a", "--endpoint", "http://b", "--seeds", "off"]
    options = engine_options(build_parser().parse_args(argv))
    assert options == EngineOptions(
        model="m",
        concurrency=5,
        timeout=2.5,
        endpoints=("http://a", "http://b"),
        seeds="off",
    )
    # Nothing given: the record's defaults, so the configuration's own defaults apply.
    bare = engine_options(build_parser().parse_args(["eval", "intrinsic"]))
    assert bare == EngineOptions()


def test_help_shows_each_default_from_where_it_is_declared() -> None:
    text = build_parser().parse_args(["eval", "intrinsic"])  # the parser builds
    assert text.device == "auto"
    by_field = {flag.field: flag for flag in ENGINE_FLAGS}
    concurrency = EngineConfig.model_fields["concurrency"].default
    assert by_field["concurrency"].help_text().endswith(f"(default: {concurrency})")
    assert by_field["device"].help_text().endswith("(default: auto)")
    assert "(default" not in by_field["served_model"].help_text()
