"""The configuration of a CLIMB extrinsic run."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from climb_vllm.core.config import EngineConfig

#: The pairs of attributes a counterfactual may change together.
Intersection = Literal["sex+ethnicity", "sex+insurance", "ethnicity+insurance"]


class ExtrinsicConfig(EngineConfig):
    """Everything that determines the records and metrics of a CLIMB extrinsic run.

    Attributes:
        benchmark: always "extrinsic".
        cases: "synthetic" (the packaged set) or a JSONL case file.
        cases_sha256: hash of the case file, so a changed file is never resumed into.
        rewrite_sha256: hash of the sex rewrite's code and the referee's weights
            (:func:`~climb_vllm.rewrite.identity.rewrite_sha256`), so that a run is
            never resumed with counterfactual notes written by another version of them.
        rewrite_decisions: a filled-in review file of the sex rewrite's uncertain words
            (:mod:`~climb_vllm.rewrite.review`), applied to the counterfactual notes.
        rewrite_decisions_sha256: its hash, so that a changed file is a changed run.
        icd_release: the release the gold codes and the mapping use.
        limit: the first N cases of the file (None = all).
        seed: base seed; each prompt's sampling seed derives from it and the prompt id.
        samples: completions per prompt (the paper: 1).
        temperature / top_p: sampling settings; None uses the model's own generation settings
            (the paper's choice); temperature 0 is greedy.
        max_tokens: the most new tokens per completion: 650 by default (the length CliBench
            reserves for an answer); under the clibench protocol, CliBench's max(the model's
            ``generation_config`` max_length, 650) unless given.
        protocol: "default" (the project's layout and parsing) or "clibench" (CliBench's
            exactly; see :mod:`~climb_vllm.benchmarks.extrinsic.layout` and
            :mod:`~climb_vllm.icd_mapping.icdmap`).
        context_tokens: the model's context length; notes are cut to fit it by CliBench's rule
            (0 = never cut; by default read from a local model folder).
        placebo: also ask the placebo variants (the noise floor).
        intersections: pairs of attributes also changed together ("sex+ethnicity", ...): each
            combination of their counterfactual values is one more variant, and the report
            gives its bias beside the sum of the two single changes (the interaction).
        index_limit: map free text onto a stratified sample of this many codes plus every gold
            code, instead of every code of the release (for quick demos; None = all codes).
        chunk_size: prompts per stored chunk (the unit of resume).
    """

    benchmark: Literal["extrinsic"] = "extrinsic"
    cases: str = "synthetic"
    cases_sha256: str | None = None
    rewrite_sha256: str | None = None
    rewrite_decisions: str | None = None
    rewrite_decisions_sha256: str | None = None
    icd_release: str = "2021"
    limit: int | None = Field(default=None, ge=1)
    seed: int = 0
    samples: int = Field(default=1, ge=1, le=64)
    temperature: float | None = Field(default=None, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int = Field(default=650, ge=1)
    protocol: Literal["default", "clibench"] = "default"
    context_tokens: int = Field(default=0, ge=0)
    placebo: bool = True
    intersections: tuple[Intersection, ...] = ()
    index_limit: int | None = Field(default=None, ge=1)
    system_prompt: str | None = None
    chunk_size: int = Field(default=64, ge=1)
