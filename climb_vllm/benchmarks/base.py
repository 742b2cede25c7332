"""The one interface every benchmark implements, and the declarations it is made of.

A benchmark is one folder under ``climb_vllm/benchmarks/`` holding its whole slice (items,
requests, grading or metrics, tables, figures, its README and speed measurements) and one
object that implements :class:`Benchmark`; :mod:`climb_vllm.benchmarks.registry` lists those
objects in suite order.
The command line, the suite, ``rescore`` and the report read everything they need from here:
options and their help, how options become a configuration, how to run, how to recompute the
results from stored records, which tables and figures the report shows, what it calls itself,
which speed measurements it offers and how it writes full-size synthetic records; outside its
folder a benchmark is named only in the registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.manifest import Section
    from climb_vllm.core.plotting import Runs
    from climb_vllm.core.store import RunStore
    from climb_vllm.runner.run import RunContext


@dataclass(frozen=True)
class Deferred:
    """A function imported when it is first called: a benchmark's registered object declares
    its figures and measurements this way, so that the registry (and so the command line)
    imports nothing heavy at start.

    Attributes:
        path: ``"package.module:function"``.
    """

    path: str

    def resolve(self) -> Callable[..., Any]:
        """The function itself (imports its module)."""
        module, _, name = self.path.partition(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), name)
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)


def deferred(path: str) -> Deferred:
    """The function at ``path`` (``"package.module:function"``), imported when first called."""
    return Deferred(path)


@dataclass(frozen=True)
class Option:
    """One command-line option of ``eval <benchmark>``, as the parser reads it.

    A benchmark declares its options on its configuration's fields
    (:class:`~climb_vllm.core.flags.Flag`) and :func:`options_of` reads them into these
    records; only a switch that sets no one field (``--greedy``) is declared as an
    :class:`Option` itself. Its value reaches :meth:`Benchmark.configure` under ``dest``; an
    option the user did not give is absent there, so the configuration field's own default
    applies (and ``--help`` shows that default, read from the field).

    Attributes:
        flag: the option, e.g. ``--limit``.
        dest: the key of its value in the values passed to :meth:`Benchmark.configure`.
        help: what it means.
        field: the configuration field whose default ``--help`` shows (None: no default shown).
        switch: a flag without a value (its value is True when given).
        repeat: may be given several times (its value is a list).
        choices: the allowed values.
        metavar: the value's name in ``--help``.
        suite_flags: the option's flags in ``eval all``, the most specific first (empty: not
            offered there); the first one given is used. Benchmarks that declare the same flag
            share one option (``--seed``; ``--limit`` beside ``--limit-<benchmark>``).
        suite_help: the help of its first suite flag (None: ``help``).
        negate: a switch that stores False (``--no-controls`` sets ``controls``).
    """

    flag: str
    dest: str
    help: str
    field: str | None = None
    switch: bool = False
    repeat: bool = False
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    suite_flags: tuple[str, ...] = ()
    suite_help: str | None = None
    negate: bool = False


#: The switch for greedy decoding of the benchmarks that sample: ``configure`` turns it into
#: temperature 0 (it sets no one field, so it is declared here rather than on a field).
GREEDY = Option(
    "--greedy", "greedy", "greedy decoding (temperature 0)", switch=True, suite_flags=("--greedy",)
)


def options_of(
    config_type: type[EngineConfig], engine: tuple[str, ...] = (), extra: tuple[Option, ...] = ()
) -> tuple[Option, ...]:
    """The options of a benchmark, read from its configuration's flagged fields.

    Args:
        config_type: the benchmark's configuration class; each of its own flagged fields (those
            not of :class:`~climb_vllm.core.config.EngineConfig`) is an option, in declaration
            order.
        engine: the flagged engine fields the benchmark also offers (the scoring options),
            after its own.
        extra: options that set no one field (a switch that ``configure`` turns into several
            fields), last.
    """
    from climb_vllm.core.config import EngineConfig
    from climb_vllm.core.flags import flagged_fields

    own = tuple(name for name in config_type.model_fields if name not in EngineConfig.model_fields)
    options = [
        Option(
            spec.flag.name,
            spec.name,
            spec.help,
            field=spec.name if spec.default is not None else None,
            switch=spec.switch,
            repeat=spec.flag.repeat,
            choices=spec.choices,
            metavar=spec.flag.metavar,
            suite_flags=spec.flag.suite,
            suite_help=spec.flag.suite_help,
            negate=spec.flag.negate,
        )
        for spec in flagged_fields(config_type, own + engine)
    ]
    return (*options, *extra)


@dataclass(frozen=True)
class ReportTable:
    """A table of the report.

    Attributes:
        key: the table's file name under ``results/<benchmark>/`` (without ``.csv``).
        title: its title in the report.
        rank: its place among every benchmark's tables (the papers' tables first, then extras).
        note: a sentence the page shows under the table (how to read it), or "".
        percent: its columns that hold percentages (one decimal) beyond those named so (``%``,
            ``(pp)``, ``_pct``), e.g. a paper's "Accuracy".
    """

    key: str
    title: str
    rank: int
    note: str = ""
    percent: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportFigure:
    """A figure of the report.

    Attributes:
        key: the PNG's file name (without ``.png``).
        draw: PNG bytes from the runs' metrics, or None when no run has the data.
        caption: its caption.
        rank: its place among every benchmark's figures.
        after: the key of its benchmark's table it follows on the page ("": after all tables).
    """

    key: str
    draw: Callable[[Runs], bytes | None]
    caption: str
    rank: int
    after: str = ""


@dataclass(frozen=True)
class PerfSettings:
    """The settings of ``climb-vllm bench`` that every speed measurement may read; their
    defaults are the command line's (``bench --help`` reads them here).

    Attributes:
        model: the model folder or source (None: the measurement builds a tiny model).
        codes: codes (or items) in the measured sample.
        device: torch device of in-process engines.
        dtype: torch dtype of in-process engines.
        batch_tokens: positions per forward pass (None: sized from the free memory).
        row_tokens: nodes per row of the tree scorer.
        repeats: timings per scorer; the best is kept.
        full_run: also measure over the whole release.
        top_k: names per group where a measurement scores names.
        peak_tflops: the device's dense bf16 peak (None: from the table of known GPUs).
        profile: also profile one call of the tree scorer (where its time goes).
        compile_layers: also time the tree scorer with compiled decoder layers.
    """

    model: Path | None = None
    codes: int = 256
    device: str = "auto"
    dtype: str = "auto"
    batch_tokens: int | None = None
    row_tokens: int = 256
    repeats: int = 1
    full_run: bool = False
    top_k: int = 1
    peak_tflops: float | None = None
    profile: bool = False
    compile_layers: bool = False


#: What the option of a speed measurement takes: ``count`` a number N >= 1 (``default`` when
#: given bare), ``path`` a file or folder, ``url`` one URL, ``urls`` one URL per use
#: (repeatable), ``switch`` nothing.
HookValue = Literal["count", "path", "url", "urls", "switch"]


@dataclass(frozen=True)
class BenchHook:
    """A speed (or accuracy) measurement that ``climb-vllm bench`` offers as ``--<flag>``.

    Attributes:
        flag: the attribute name, e.g. ``grading`` (the option has dashes for underscores).
        help: what it measures.
        run: runs it on the option's value and the shared settings; returns named results.
        default: with ``value="count"``, N when the option is given without a number (None: N
            is required).
        value: what the option takes (:data:`HookValue`).
        runs_by_default: run when ``bench`` is given no measurement's option (one hook in the
            registry at most).
    """

    flag: str
    help: str
    run: Callable[[Any, PerfSettings], dict[str, Any]]
    default: int | None = None
    value: HookValue = "count"
    runs_by_default: bool = False


@dataclass(frozen=True)
class Synthetic:
    """Full-size synthetic records of a benchmark, for the report's speed measurement
    (``climb-vllm bench --report N``).

    Attributes:
        write: writes one run's records of the benchmark into the store (claiming its section)
            for the model label, drawing from the generator; returns how many records.
        baseline: extra timings on the first synthetic run (e.g. a reference implementation
            of the benchmark's tables), or None.
    """

    write: Callable[[RunStore, str, np.random.Generator], int]
    baseline: Callable[[Path], dict[str, Any]] | None = None


#: The columns of every benchmark's paired comparison, in order (:class:`Paired`).
COMPARISON_COLUMNS = (
    "measure",
    "headline",
    "better",
    "unit",
    "shared",
    "first",
    "second",
    "difference",
    "ci_low",
    "ci_high",
)


@dataclass(frozen=True)
class Paired:
    """How a benchmark compares two runs on the items both answered (the report's "Models side
    by side").

    Attributes:
        title: the benchmark and what is compared, as the report's heading.
        note: how the differences and their intervals are made (shown under the table).
        prepare: what a comparison needs of one run directory, or None when the benchmark is
            not finished there; called once per run (the heavy part, shared by every pair).
        compare: the paired differences (second run - first run) of two prepared runs, or None
            when they answered different items (different codes, names or cases): a frame with
            :data:`COMPARISON_COLUMNS`, one row per measure. ``headline`` is True on the one
            row that ranks the models; ``better`` is "lower", "higher" or "nearer 0"; ``unit``
            names what ``shared`` counts (the pairing unit); a measure whose name ends in
            "(%)" or "(pp)" is in percent or percentage points; ``ci_low``/``ci_high`` are
            the difference's 95% interval.
    """

    title: str
    note: str
    prepare: Callable[[Path], Any | None]
    compare: Callable[[Any, Any], pl.DataFrame | None]


class ExternalGrader(Protocol):
    """Grading answers produced by another tool (``climb-vllm grade`` and ``prompts``).

    Attributes:
        label_values: the labels ``grade --labels`` compares with, as the authors wrote them.
        controls: whether it derives control items (``prompts --no-controls`` leaves them out).
    """

    label_values: tuple[str, ...]
    controls: bool

    def write_prompts(
        self, out: Path, split: str, limit: int | None, seed: int, controls: bool
    ) -> None:
        """Write the benchmark's prompts as CSV (id, kind, prompt) to ``out``.

        Args:
            out: the CSV file.
            split: "eval" (the authors' test split) or "all".
            limit: a sample of this many items (None: all of the split).
            seed: the seed of the sample and of derived items.
            controls: include derived control items, where the benchmark has them.
        """

    def grade_external(self, responses: Path, out: Path | None, model: str, seed: int) -> None:
        """Grade a CSV of responses (id, response; optional sample) and print the tables.

        Args:
            responses: the CSV file.
            out: also write graded.csv and the tables here.
            model: the model's label in the tables.
            seed: the seed the derived items were made with.
        """

    def agreement(
        self, responses: Path, labels: str, by: str | None, out: Path, sample: int, seed: int
    ) -> None:
        """Grade a CSV of labelled responses and report agreement with the labels.

        Args:
            responses: the CSV file (id, response, the label column, optional group column).
            labels: the column holding each answer's label.
            by: the column grouping answers (e.g. model); None: one group.
            out: the folder for the agreement tables and the disagreements.
            sample: disagreements per group written for reading.
            seed: the seed of that sample.
        """


@dataclass(frozen=True)
class Finding:
    """What one run of a benchmark found, in plain words: the report's first screen.

    Attributes:
        headline: the headline figure with its interval ("Corrected AssocMAD 0.80
            [0.00, 1.32]").
        reference: its null or chance level, in words ("names alone give 0.62").
        verdict: one sentence a reader can act on, including how sure the run is.
        readable: False when the number cannot be read at all (every answer unparseable,
            recall 0 everywhere, too few items for an interval); ``verdict`` then says what to
            change.
    """

    headline: str
    reference: str
    verdict: str
    readable: bool = True


class Benchmark(Protocol):
    """A benchmark: what the command line offers, how it runs, how its results are recomputed.

    Attributes:
        name: its registry name: the verb ``eval <name>``, the manifest section, the folders
            ``records/<name>/`` and ``results/<name>/``.
        title: its name for readers, as the report writes it ("CLIMB intrinsic").
        help: one line for ``--help``.
        description: the paragraph of ``eval <name> --help``.
        options: its command-line options (beside the engine options every benchmark has).
        bench_hooks: the speed measurements it offers to ``climb-vllm bench``.
        synthetic: how it writes full-size synthetic records for the report's speed
            measurement, or None.
        external: grading of outside answers, or None.
        paired: how two runs are compared side by side, or None.
    """

    name: str
    title: str
    help: str
    description: str
    options: tuple[Option, ...]
    bench_hooks: tuple[BenchHook, ...]
    synthetic: Synthetic | None
    external: ExternalGrader | None
    paired: Paired | None

    @property
    def config_type(self) -> type[EngineConfig]:
        """The configuration class (its fields' defaults are the options' defaults)."""

    def configure(self, engine: EngineConfig, values: Mapping[str, Any]) -> EngineConfig:
        """The validated configuration of a run.

        Args:
            engine: the resolved engine configuration
                (:func:`climb_vllm.runner.run.resolve_engine`).
            values: the given options' values by ``Option.dest``.

        Raises:
            UserError: an invalid value, naming the option and the fix.
        """

    def run(self, config: EngineConfig, context: RunContext) -> Path:
        """Run (or resume) the benchmark into a run directory and write its results; returns
        the run directory."""

    def results(self, store: RunStore, quiet: bool) -> dict[str, Any]:
        """Recompute ``results/<name>/`` from the stored records (no model needed), print the
        tables unless ``quiet``, and return the metrics (what ``rescore`` compares)."""

    def report_tables(self) -> tuple[ReportTable, ...]:
        """The tables the report shows, with their titles and places."""

    def figures(self) -> tuple[ReportFigure, ...]:
        """The figures the report draws, with their captions and places."""

    def scope(self, section: Section) -> str:
        """What a run of it covered, in words, from its manifest section (full release or a
        sample of how many, caps on answers): the report's scope banner shows it."""

    def finding(self, metrics: Mapping[str, Any]) -> Finding:
        """What the run found, from its recomputed ``metrics.json``: the report opens with
        it."""
