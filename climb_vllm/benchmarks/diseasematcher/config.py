"""The configuration of a DiseaseMatcher run."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from climb_vllm.benchmarks.hive.config import GenerationConfig
from climb_vllm.core.flags import Flag


class DiseaseMatcherConfig(GenerationConfig):
    """A DiseaseMatcher run: answers of up to 180 new tokens (a pick and a short reason); its
    options' help and bounds are :class:`GenerationConfig`'s."""

    benchmark: Literal["diseasematcher"] = "diseasematcher"
    limit: Annotated[
        int | None,
        Flag(
            "--limit",
            suite=("--limit-diseasematcher", "--limit"),
            suite_help="a sample of N questions",
        ),
    ] = Field(default=None, ge=1)
    max_tokens: int = Field(default=180, ge=1)
