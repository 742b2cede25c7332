"""The configuration of a BiasMD run."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from climb_vllm.benchmarks.hive.config import GenerationConfig
from climb_vllm.core.flags import Flag


class BiasMDConfig(GenerationConfig):
    """A BiasMD run: answers of up to 256 new tokens, with the resolvable controls (their
    options' help and bounds are :class:`GenerationConfig`'s)."""

    benchmark: Literal["biasmd"] = "biasmd"
    limit: Annotated[
        int | None,
        Flag(
            "--limit",
            suite=("--limit-biasmd", "--limit"),
            suite_help="a sample of N BiasMD statements",
        ),
    ] = Field(default=None, ge=1)
    controls: Annotated[bool, Flag("--no-controls", negate=True)] = True
