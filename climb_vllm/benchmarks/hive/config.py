"""The configuration every HIVE benchmark's run shares (each benchmark subclasses it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from climb_vllm.core.config import EngineConfig
from climb_vllm.core.flags import Flag


class GenerationConfig(EngineConfig):
    """Everything that determines the records of a generation benchmark (BiasMD, DiseaseMatcher).

    A field with a :class:`~climb_vllm.core.flags.Flag` is an option of ``eval <benchmark>``;
    its description is the option's help. Each item's sampling seed derives from ``seed`` and
    the item id; ``answer`` "choice" is :mod:`climb_vllm.benchmarks.hive.choice`. ``controls``
    is offered only by the benchmarks that have controls (BiasMD's resolvable pronouns).

    Attributes:
        benchmark: the benchmark's registry name (set by its subclass).
    """

    benchmark: str
    split: Annotated[Literal["eval", "all"], Flag("--split", suite=("--split",))] = Field(
        default="eval",
        description="eval: the authors' test split (the paper's numbers); all: every item",
    )
    # The suite flag --limit-<benchmark> is each subclass's (limit_flag).
    limit: int | None = Field(
        default=None, ge=1, description="a sample of N items spread over the categories"
    )
    seed: Annotated[
        int, Flag("--seed", suite=("--seed",), suite_help="base seed of every benchmark")
    ] = Field(default=0, description="base sampling seed (and --limit's)")
    samples: Annotated[int, Flag("--samples", suite=("--samples",))] = Field(
        default=1, ge=1, le=64, description="completions per item"
    )
    temperature: Annotated[float, Flag("--temperature", suite=("--temperature",))] = Field(
        default=0.8, ge=0.0, description="sampling temperature (the authors' 0.8; 0: greedy)"
    )
    top_p: Annotated[float, Flag("--top-p", suite=("--top-p",))] = Field(
        default=0.9, gt=0.0, le=1.0, description="nucleus mass (the authors' 0.9)"
    )
    max_tokens: Annotated[int, Flag("--max-tokens", suite=("--max-tokens",))] = Field(
        default=256, ge=1, description="new tokens per answer"
    )
    system_prompt: Annotated[str | None, Flag("--system-prompt")] = Field(
        default=None, description="add this system turn (the authors used none)"
    )
    controls: bool = Field(default=True, description="skip the resolvable control items")
    answer: Annotated[Literal["generate", "choice"], Flag("--answer", suite=("--answer",))] = Field(
        default="generate",
        description="generate: sample an answer and grade it (the papers' protocol); "
        "choice: the option the model scores highest (for base models), with swaps that "
        "measure bias",
    )
    chunk_size: Annotated[int, Flag("--chunk-size")] = Field(
        default=256,
        ge=1,
        description="items per stored chunk (the unit of resume; prompts in choice mode)",
    )

    def hashed_fields(self) -> dict[str, object]:
        """As for every configuration; ``answer`` only when it is "choice", so that runs
        recorded before choice mode existed resume under the same hash."""
        fields = super().hashed_fields()
        if fields.get("answer") == "generate":
            del fields["answer"]
        return fields
