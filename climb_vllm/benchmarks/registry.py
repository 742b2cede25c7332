"""Every benchmark, in suite order: the one list the command line, the suite, ``rescore`` and
the report read. Adding a benchmark is one folder under ``benchmarks/`` and one line here."""

from __future__ import annotations

from climb_vllm.benchmarks.base import Benchmark
from climb_vllm.benchmarks.biasmd.benchmark import BIASMD
from climb_vllm.benchmarks.diseasematcher.benchmark import DISEASEMATCHER
from climb_vllm.benchmarks.extrinsic.benchmark import EXTRINSIC
from climb_vllm.benchmarks.intrinsic.benchmark import INTRINSIC
from climb_vllm.core.errors import UserError

#: name -> benchmark, in the order of ``eval all`` and of the report.
REGISTRY: dict[str, Benchmark] = {b.name: b for b in (INTRINSIC, EXTRINSIC, BIASMD, DISEASEMATCHER)}


def get(name: str) -> Benchmark:
    """The registered benchmark ``name``.

    Raises:
        UserError: no benchmark has that name (the error lists the names there are).
    """
    if name not in REGISTRY:
        raise UserError(f"Unknown benchmark {name!r}.", f"choose one of {', '.join(REGISTRY)}.")
    return REGISTRY[name]


def selected(text: str) -> list[Benchmark]:
    """The benchmarks named in a comma-separated list, in suite order.

    Raises:
        UserError: an unknown name, or none at all.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in REGISTRY]
    if unknown or not names:
        raise UserError(
            f"Unknown benchmark(s) {', '.join(unknown) or '(none)'} in --benchmarks.",
            f"choose from {','.join(REGISTRY)}.",
        )
    return [b for name, b in REGISTRY.items() if name in names]
