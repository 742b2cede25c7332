"""The run record: a run directory's ``manifest.json``, typed.

One :class:`Section` per benchmark holds apart, as an evaluation record should: the benchmark's
settings (``config``, whose hash decides whether a rerun resumes; its sampling settings read
apart as :attr:`Section.generation`), the model and engine that answered (``engine``) and the
provenance of the run (data, prompt, seeds, packages, commit). Readers use attributes; facts a
benchmark adds beyond the common ones (``codes``, ``canary``, ...) are kept as extra fields and
reach :meth:`Section.fact`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from climb_vllm.core.errors import UserError

#: The settings of how answers are sampled, wherever a benchmark's configuration has them.
GENERATION_FIELDS = ("samples", "temperature", "top_p", "max_tokens", "system_prompt", "seed")


class GenerationSettings(BaseModel):
    """How a generation benchmark sampled its answers (its configuration's sampling fields,
    read apart from the rest as an evaluation record keeps a model's generate settings).

    Attributes:
        samples: completions per item.
        temperature: sampling temperature (None: the model's own).
        top_p: nucleus mass (None: the model's own).
        max_tokens: the most new tokens per answer.
        system_prompt: a system turn, if any.
        seed: the base of the per-item sampling seeds.
    """

    samples: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    system_prompt: str | None = None
    seed: int | None = None


class Section(BaseModel):
    """One benchmark's part of the run record.

    Attributes:
        config: the benchmark's settings as stored (the fields of its configuration class).
        config_hash: the hash of the settings that decide the records (resume checks it).
        started: when the benchmark first claimed the run directory (ISO 8601, UTC).
        engine: the model and engine that answered (name, revision, fingerprints, device,
            dtype, endpoints and their capabilities, ...).
        datasets: the data read, with versions and hashes.
        prompt_template: the prompt (a template, or its parts).
        seeds: how sampling seeds derive from the run's seed.
        items: how many prompts were asked (generation benchmarks).
        analysis: settings that change only the tables (re-tabulated without re-running).
        host: the Python version and platform.
        packages: versions of the packages the numbers depend on.
        git_commit: the evaluator's commit, where it runs from a checkout.
    """

    model_config = ConfigDict(extra="allow")

    config: dict[str, Any] = Field(default_factory=dict)
    config_hash: str | None = None
    started: str | None = None
    engine: dict[str, Any] = Field(default_factory=dict)
    datasets: dict[str, Any] = Field(default_factory=dict)
    prompt_template: str | dict[str, Any] | None = None
    seeds: dict[str, Any] | None = None
    items: int | None = None
    analysis: dict[str, Any] = Field(default_factory=dict)
    host: dict[str, Any] = Field(default_factory=dict)
    packages: dict[str, str | None] = Field(default_factory=dict)
    git_commit: str | None = None

    @property
    def generation(self) -> GenerationSettings | None:
        """The sampling settings of a generation benchmark (None: it samples nothing)."""
        if "max_tokens" not in self.config:
            return None
        return GenerationSettings(
            **{k: self.config[k] for k in GENERATION_FIELDS if k in self.config}
        )

    def fact(self, name: str, default: Any = None) -> Any:
        """A fact the benchmark added beyond the common fields (``codes``, ``icd``, ...)."""
        return (self.model_extra or {}).get(name, default)


class Manifest(BaseModel):
    """A run directory's record.

    Attributes:
        climb_vllm: the evaluator's version that last claimed a benchmark.
        created: when the run directory was first claimed (ISO 8601, UTC).
        benchmarks: each benchmark's section, by registry name.
        failed: benchmarks of a suite that failed, and why.
        not_applicable: benchmarks the engine could not run, and why.
    """

    model_config = ConfigDict(extra="allow")

    climb_vllm: str | None = None
    created: str | None = None
    benchmarks: dict[str, Section] = Field(default_factory=dict)
    failed: dict[str, str] = Field(default_factory=dict)
    not_applicable: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def parse(cls, data: dict[str, Any], path: Path) -> Manifest:
        """The record of the manifest ``data`` read from ``path``.

        Raises:
            UserError: it does not have the record's shape (names the field and the fix).
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            raise UserError(
                f"The manifest {path} is not a run record ({where}: {exc.errors()[0]['msg']}).",
                "restore it, or start a new run directory with --out or --run-id.",
            ) from exc

    @classmethod
    def read(cls, path: Path) -> dict[str, Any]:
        """The manifest stored at ``path`` as JSON, checked to be a run record (empty where
        there is none): what the run store changes and saves.

        Raises:
            UserError: the file is unreadable or not a run record.
        """
        if not path.exists():
            return {}
        try:
            data: dict[str, Any] = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(
                f"The manifest {path} is unreadable ({exc}).",
                "restore it, or start a new run directory with --out or --run-id.",
            ) from exc
        cls.parse(data, path)
        return data

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """The record stored at ``path`` (an empty one where there is none).

        Raises:
            UserError: the file is unreadable or not a run record.
        """
        return cls.parse(cls.read(path), path)
