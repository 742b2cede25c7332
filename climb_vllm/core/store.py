"""Run directories: the manifest, append-only record chunks, and resume.

Layout of ``outputs/<model-slug>/<run-id>/``::

    manifest.json                   provenance; one section per benchmark with its config hash
    records/<benchmark>/chunk-NNNNN.parquet   records, one file per chunk, written atomically
    results/                        metrics and tables (recomputed at will from records)

A chunk is written to a temporary file in the same folder, flushed to disk and renamed, so a run
killed at any moment leaves only whole chunks; rerunning the same command skips them. A run
directory whose manifest records a different configuration is refused rather than mixed.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from climb_vllm import __version__
from climb_vllm.core.errors import UserError
from climb_vllm.core.manifest import Manifest, Section

if TYPE_CHECKING:
    import polars as pl

PACKAGES = ("torch", "transformers", "tokenizers", "polars", "numpy", "pydantic")


#: Where runs go without --out: outside every model folder (a model built or downloaded under
#: outputs/ never receives a run).
RUNS_ROOT = Path("outputs") / "runs"


def manifest_path(root: Path) -> Path:
    """The manifest of the run directory ``root`` (the run's settings and provenance)."""
    return root / "manifest.json"


def records_folder(root: Path, benchmark: str | None = None) -> Path:
    """Where a run keeps its records: ``records/`` (all benchmarks) or ``records/<benchmark>/``
    (its chunk files)."""
    return root / "records" / benchmark if benchmark else root / "records"


def results_folder(root: Path, benchmark: str) -> Path:
    """Where a run keeps ``benchmark``'s results: tables, metrics.json, the freshness stamp."""
    return root / "results" / benchmark


def model_label(model: str) -> str:
    """The model's name in run folders and reports, the same for a local run and a served one:
    a local folder's own name (``outputs/demo-model`` -> ``demo-model``, what ``serve`` serves
    it as), a hub id or served name as it is."""
    path = Path(model)
    if model and path.is_dir():
        return path.resolve().name
    return model.strip().strip("/\\") or "model"


def model_slug(model: str) -> str:
    """A folder-safe form of :func:`model_label` (``org/name`` -> ``org--name``)."""
    parts = [p for p in re.split(r"[\\/]+", model_label(model)) if p not in ("", ".", "..")]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", "--".join(parts) or "model")


def default_run_dir(model: str, run_id: str) -> Path:
    """``outputs/runs/<model slug>/<run id>``: one rule for local and served runs."""
    return RUNS_ROOT / model_slug(model) / run_id


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that shape results."""
    versions: dict[str, str | None] = {"climb-vllm": __version__}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """The commit of the climb-vllm source tree (with "-dirty" if modified), if it is a checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync and rename; an OS error
    (disk full, permission denied, read-only disk) removes the temporary file and becomes one
    :class:`UserError` that names the path and the fix."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise os_error(exc, path) from exc


def os_error(exc: OSError, path: Path) -> UserError:
    """The user's error for an OS error while writing under a run directory."""
    import errno
    import shutil

    where = path.parent
    if exc.errno == errno.ENOSPC:
        try:
            free = f"{shutil.disk_usage(where).free / 1e6:,.0f} MB free"
        except OSError:
            free = "free space unknown"
        return UserError(
            f"The disk is full: writing {path} failed ({free} under {where}). Every finished "
            "chunk is kept.",
            "free disk space there (or copy the run directory to a larger disk and pass it as "
            "--out), then rerun the same command to resume.",
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        return UserError(
            f"Permission denied writing {path}.",
            "make the run directory writable, or pass --out with a folder you can write to.",
        )
    if exc.errno == errno.EROFS:
        return UserError(
            f"Writing {path} failed: {where} is on a read-only file system.",
            "pass --out with a writable folder.",
        )
    return UserError(
        f"Writing {path} failed ({exc.strerror or exc}).",
        "check the disk and the folder's permissions, then rerun the same command to resume.",
    )


class RunStore:
    """One run directory.

    Args:
        root: the run directory; created if missing.
        fix: what to do when it cannot be written (the caller knows which option applies).
    """

    def __init__(self, root: Path, fix: str = "pass --out with a writable folder.") -> None:
        self.root = root
        try:
            root.mkdir(parents=True, exist_ok=True)
            probe = root / f".write-test-{os.getpid()}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise UserError(
                f"Cannot write to the run directory {root} ({exc.strerror}).", fix
            ) from exc

    @property
    def manifest_path(self) -> Path:
        return manifest_path(self.root)

    def _raw(self) -> dict[str, Any]:
        """The manifest as stored (checked to be a run record), or an empty one: what the
        writers below change and save."""
        return Manifest.read(self.manifest_path)

    def record(self) -> Manifest:
        """The run record (:class:`~climb_vllm.core.manifest.Manifest`), empty where there is
        none yet.

        Raises:
            UserError: the manifest is unreadable or not a run record.
        """
        return Manifest.load(self.manifest_path)

    def _save(self, manifest: dict[str, Any]) -> None:
        Manifest.parse(manifest, self.manifest_path)  # only a well-formed record is written
        _write_atomic(self.manifest_path, json.dumps(manifest, indent=2, sort_keys=True).encode())

    def check_claim(self, benchmark: str, config: dict[str, Any], config_hash: str) -> bool:
        """Whether the run directory already holds ``benchmark`` with this configuration (a
        resume); writes nothing.

        Raises:
            UserError: it holds ``benchmark`` with another configuration (names the changed
                fields and the fix).
        """
        section = self.record().benchmarks.get(benchmark)
        if section is None:
            return False
        if section.config_hash == config_hash:
            return True
        old = section.config
        new = json.loads(json.dumps(config))  # as stored: tuples become lists
        changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        raise UserError(
            f"{self.root} already holds a {benchmark} run with a different configuration "
            f"(changed: {', '.join(changed) or 'hash'}).",
            "rerun with the original options to resume, or choose a new --run-id / --out.",
        )

    def claim(self, benchmark: str, config: dict[str, Any], config_hash: str) -> bool:
        """Record ``benchmark``'s config in the manifest, or check it against the stored one.

        Returns True when the run directory already held this benchmark (a resume). Raises
        UserError naming the differing fields when the stored config hash differs.
        """
        if self.check_claim(benchmark, config, config_hash):
            return True
        manifest = self._raw()
        manifest.setdefault("created", dt.datetime.now(dt.timezone.utc).isoformat())
        manifest["climb_vllm"] = __version__
        manifest.setdefault("benchmarks", {})[benchmark] = {
            "config": config,
            "config_hash": config_hash,
            "started": dt.datetime.now(dt.timezone.utc).isoformat(),
        }
        self._save(manifest)
        return False

    def record_failures(
        self,
        attempted: set[str],
        failed: dict[str, str],
        not_applicable: dict[str, str] | None = None,
    ) -> None:
        """Note which benchmarks of a suite failed and why (``failed``) and which the engine
        could not run (``not_applicable``), and clear the notes of the others in ``attempted``
        (they have finished since)."""
        manifest = self._raw()
        for key, found in (("failed", failed), ("not_applicable", not_applicable or {})):
            notes = {k: v for k, v in manifest.get(key, {}).items() if k not in attempted}
            notes |= found
            if notes:
                manifest[key] = notes
            else:
                manifest.pop(key, None)
        self._save(manifest)

    def section(self, benchmark: str) -> Section:
        """A benchmark's part of the run record (its settings, engine and provenance).

        Raises:
            UserError: the run directory holds no run of ``benchmark``.
        """
        section = self.record().benchmarks.get(benchmark)
        if section is None:
            raise UserError(
                f"{self.root} has no {benchmark} run in its manifest.",
                f"pass a run directory written by 'climb-vllm eval {benchmark}'.",
            )
        return section

    def annotate(self, benchmark: str, **facts: Any) -> None:
        """Add provenance facts (engine, datasets, versions, ...) to a benchmark's section."""
        manifest = self._raw()
        section = manifest.setdefault("benchmarks", {}).setdefault(benchmark, {})
        section.update(facts)
        section["host"] = {"python": platform.python_version(), "platform": platform.platform()}
        section["packages"] = package_versions()
        section["git_commit"] = git_commit()
        self._save(manifest)

    # -- records ---------------------------------------------------------------------------

    def chunk_dir(self, benchmark: str) -> Path:
        path = records_folder(self.root, benchmark)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise os_error(exc, path / "chunk") from exc
        return path

    def chunk_path(self, benchmark: str, index: int) -> Path:
        return self.chunk_dir(benchmark) / f"chunk-{index:05d}.parquet"

    def finished_chunks(self, benchmark: str) -> set[int]:
        """Indices of chunks already on disk; each one's footer is checked to be readable."""
        import polars as pl

        done: set[int] = set()
        # A run killed mid-write leaves only a hidden temporary file; it is never a record.
        for stale in self.chunk_dir(benchmark).glob(".chunk-*.tmp"):
            stale.unlink(missing_ok=True)
        for path in sorted(self.chunk_dir(benchmark).glob("chunk-*.parquet")):
            try:
                pl.read_parquet_schema(path)
            except Exception as exc:  # any decoding failure means the file is damaged
                raise UserError(
                    f"Chunk file {path} is corrupt ({type(exc).__name__}).",
                    "delete that file and rerun the same command; only that chunk is recomputed.",
                ) from exc
            done.add(int(path.stem.split("-")[1]))
        return done

    def write_chunk(self, benchmark: str, index: int, frame: pl.DataFrame) -> Path:
        """Write one chunk atomically (temporary file, fsync, rename)."""
        import io

        buffer = io.BytesIO()
        frame.write_parquet(buffer, compression="zstd")
        path = self.chunk_path(benchmark, index)
        _write_atomic(path, buffer.getvalue())
        return path

    def read_records(self, benchmark: str) -> pl.DataFrame:
        """All chunks of a benchmark concatenated in chunk order."""
        import polars as pl

        paths = sorted(self.chunk_dir(benchmark).glob("chunk-*.parquet"))
        if not paths:
            raise UserError(
                f"{self.root} holds no {benchmark} records.",
                f"run 'climb-vllm eval {benchmark}' with this run directory first.",
            )
        frames = []
        for path in paths:
            try:
                frames.append(pl.read_parquet(path))
            except Exception as exc:
                raise UserError(
                    f"Chunk file {path} is corrupt ({type(exc).__name__}).",
                    "delete that file and rerun the evaluation; only that chunk is recomputed.",
                ) from exc
        return pl.concat(frames)

    def write_text(self, relative: str, text: str) -> Path:
        """Write a results file atomically."""
        return self.write_bytes(relative, text.encode())

    def write_bytes(self, relative: str, data: bytes) -> Path:
        """Write a results file atomically (``relative`` to the run directory)."""
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, data)
        return path
