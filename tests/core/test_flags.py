"""Run options declared once, on their configuration fields: the parser, the configuration and
the error messages all read the one declaration, so they cannot disagree."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from climb_vllm.benchmarks.base import GREEDY, options_of
from climb_vllm.benchmarks.registry import REGISTRY
from climb_vllm.cli import main
from climb_vllm.cli.parser import build_parser
from climb_vllm.core.config import EngineConfig
from climb_vllm.core.errors import UserError
from climb_vllm.core.flags import Flag, bounds_text, field_spec, flag_of, literal_choices
from tests.helpers import intrinsic_command


class _Parent(EngineConfig):
    size: Annotated[int, Flag("--size", suite=("--size",))] = Field(
        default=3, ge=1, le=9, description="how many"
    )
    kind: Annotated[Literal["a", "b"], Flag("--kind")] = Field(default="a", description="which")
    keep: Annotated[bool, Flag("--no-keep", negate=True)] = Field(
        default=True, description="drop them"
    )
    hidden: int = 0


class _Child(_Parent):
    size: int = Field(default=5, ge=2, le=9)  # a new default: the flag and help are kept


def test_a_flagged_field_is_an_option_with_its_help_bounds_and_choices() -> None:
    spec = field_spec(_Parent, "size")
    assert spec is not None
    assert (spec.flag.name, spec.help, spec.default) == ("--size", "how many; from 1 to 9", 3)
    kind = field_spec(_Parent, "kind")
    assert kind is not None and kind.choices == ("a", "b")
    keep = field_spec(_Parent, "keep")
    assert keep is not None and keep.switch and keep.default is None
    assert field_spec(_Parent, "hidden") is None


def test_a_subclass_that_changes_a_default_keeps_the_flag_and_help() -> None:
    spec = field_spec(_Child, "size")
    assert spec is not None
    assert (spec.flag.name, spec.help, spec.default) == ("--size", "how many; from 2 to 9", 5)
    options = options_of(_Child, extra=(GREEDY,))
    assert [o.flag for o in options] == ["--size", "--kind", "--no-keep", "--greedy"]
    assert [o.dest for o in options] == ["size", "kind", "keep", "greedy"]


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        (Field(default=1, ge=1, le=50), "from 1 to 50"),
        (Field(default=None, ge=24), "at least 24"),
        (Field(default=0.5, gt=0, le=1), "above 0, at most 1"),
        (Field(default=0.5, lt=1), "below 1"),
        (Field(default=1), ""),
    ],
)
def test_bounds_are_said_in_words(field: Any, expected: str) -> None:
    assert bounds_text(field) == expected


def test_choices_are_read_through_optionals_and_tuples() -> None:
    assert literal_choices(Literal["x", "y"] | None) == ("x", "y")
    assert literal_choices(tuple[Literal["x", "y"], ...]) == ("x", "y")
    assert literal_choices(int | None) is None


def test_every_option_of_every_benchmark_sets_a_field_of_its_configuration() -> None:
    """No option can drift from its field: each one's destination is a field whose flag it is
    (``--greedy`` alone sets several fields, through ``configure``)."""
    for benchmark in REGISTRY.values():
        fields = benchmark.config_type.model_fields
        for option in benchmark.options:
            if option is GREEDY:
                continue
            assert option.dest in fields, (benchmark.name, option.flag)
            assert flag_of(benchmark.config_type, option.dest) == option.flag
            spec = field_spec(benchmark.config_type, option.dest)
            assert spec is not None and spec.choices == option.choices
        flags = [o.flag for o in benchmark.options]
        assert len(flags) == len(set(flags)), benchmark.name


def _values(argv: list[str]) -> dict[str, Any]:
    """The benchmark option values the command line passes to ``configure`` (given ones)."""
    args = build_parser().parse_args(argv)
    benchmark = REGISTRY[argv[1]]
    found = {o.dest: getattr(args, o.dest) for o in benchmark.options}
    return {k: v for k, v in found.items() if v is not None}


def test_negating_switches_set_their_field_false_and_only_when_given() -> None:
    engine = EngineConfig(model="m")
    biasmd = REGISTRY["biasmd"]
    assert _values(["eval", "biasmd", "--no-controls"]) == {"controls": False}
    given = biasmd.configure(engine, _values(["eval", "biasmd", "--no-controls"]))
    assert given.model_dump()["controls"] is False
    assert biasmd.configure(engine, _values(["eval", "biasmd"])).model_dump()["controls"] is True
    extrinsic = REGISTRY["extrinsic"]
    placebo = extrinsic.configure(engine, _values(["eval", "extrinsic", "--no-placebo"]))
    assert placebo.model_dump()["placebo"] is False
    # DiseaseMatcher has no controls: the switch is not offered.
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "diseasematcher", "--no-controls"])


def test_every_offered_choice_is_accepted_by_the_configuration() -> None:
    """The parser's choices are the configuration's: a choice ``--help`` offers (here the
    scoring strategy for text-only servers) is never refused after parsing."""
    intrinsic = REGISTRY["intrinsic"]
    for strategy in ("auto", "trie", "prompt_logprobs", "echo", "echo_text"):
        config = intrinsic.configure(EngineConfig(model="m"), {"strategy": strategy})
        assert config.strategy == strategy


def test_the_defaults_and_bounds_in_help_are_the_fields(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "diseasematcher", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "new tokens per answer; at least 1 (default: 180)" in text
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "intrinsic", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(the paper: 5); from 1 to 50 (default: 5)" in text


def test_an_error_names_the_option_as_it_is_spelled(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A field whose flag is not its name (``sensitivity_templates`` is
    ``--sensitivity-template``) is named by its flag in the error."""
    argv = intrinsic_command(str(tiny_model), tmp_path / "run", "--sensitivity-template", "x")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--sensitivity-template " in err and "--sensitivity-templates" not in err
    assert not (tmp_path / "run").exists()


def test_a_configuration_error_outside_the_command_line_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r"--distinctive 2: .* use --distinctive 1(\.0)? or less"):
        REGISTRY["intrinsic"].configure(EngineConfig(model="m"), {"distinctive": 2})


def test_the_argparse_namespace_holds_nothing_for_options_not_given() -> None:
    args = build_parser().parse_args(["eval", "extrinsic"])
    assert isinstance(args, argparse.Namespace)
    assert all(getattr(args, o.dest) is None for o in REGISTRY["extrinsic"].options)


@pytest.mark.parametrize("verb", ["extrinsic", "all"])
def test_a_repeatable_option_with_choices_refuses_others_when_parsed(
    verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", verb, "--intersection", "sex+age"])
    assert "invalid choice: 'sex+age'" in capsys.readouterr().err
    args = build_parser().parse_args(["eval", verb, "--intersection", "sex+insurance"])
    assert ["sex+insurance"] in vars(args).values()
