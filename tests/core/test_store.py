"""Run directories: manifest claims, atomic chunks, corrupt files."""

from __future__ import annotations

import errno
from pathlib import Path

import polars as pl
import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.core.store import RunStore, default_run_dir, model_label, model_slug


def test_claim_then_resume_then_refuse_changed_config(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    assert store.claim("intrinsic", {"model": "m", "top_k": 5}, "h1") is False
    assert store.claim("intrinsic", {"model": "m", "top_k": 5}, "h1") is True
    with pytest.raises(UserError, match="changed: top_k"):
        store.claim("intrinsic", {"model": "m", "top_k": 3}, "h2")


def test_chunks_are_written_whole_and_listed(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    frame = pl.DataFrame({"code": ["A00"], "name": ["Ann"], "logprob": [-1.0]})
    store.write_chunk("intrinsic", 3, frame)
    assert store.finished_chunks("intrinsic") == {3}
    assert store.read_records("intrinsic").equals(frame)
    assert not [p for p in store.chunk_dir("intrinsic").iterdir() if p.name.startswith(".")]


def test_half_written_chunk_is_discarded_on_resume(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_chunk("intrinsic", 0, pl.DataFrame({"x": [1]}))
    leftover = store.chunk_dir("intrinsic") / ".chunk-00001.parquet.4242.tmp"
    leftover.write_bytes(b"PAR1 half")
    assert store.finished_chunks("intrinsic") == {0}
    assert not leftover.exists()


def test_corrupt_chunk_names_the_file_and_the_fix(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_chunk("intrinsic", 0, pl.DataFrame({"x": [1]}))
    bad = store.chunk_path("intrinsic", 1)
    bad.write_bytes(b"PAR1 truncated")
    with pytest.raises(UserError, match="chunk-00001.parquet.*delete that file"):
        store.finished_chunks("intrinsic")


def test_unwritable_directory(tmp_path: Path) -> None:
    # A path below a regular file cannot be created, even by root.
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UserError, match="--out"):
        RunStore(blocker / "run")


def test_unreadable_manifest_is_a_user_error(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.manifest_path.write_text("{not json")
    with pytest.raises(UserError, match="manifest"):
        store.record()


@pytest.mark.parametrize(
    ("model", "slug"),
    [
        ("meta-llama/Llama-3.1-8B", "meta-llama--Llama-3.1-8B"),
        ("no/such/folder/", "no--such--folder"),
        ("m", "m"),
    ],
)
def test_model_slug(model: str, slug: str) -> None:
    assert model_slug(model) == slug


def test_a_local_folder_and_its_served_name_share_one_run_folder(tmp_path: Path) -> None:
    folder = tmp_path / "models" / "tiny"
    folder.mkdir(parents=True)
    assert model_label(str(folder)) == model_label("tiny") == "tiny"
    assert default_run_dir(str(folder), "main") == default_run_dir("tiny", "main")
    assert default_run_dir("tiny", "main") == Path("outputs") / "runs" / "tiny" / "main"


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "The disk is full"),
        (errno.EACCES, "Permission denied"),
        (errno.EROFS, "read-only file system"),
    ],
)
def test_os_errors_while_writing_a_chunk_are_user_errors_and_leave_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    import os

    store = RunStore(tmp_path / "run")
    store.write_chunk("intrinsic", 0, pl.DataFrame({"x": [1]}))

    def failing(_: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(UserError, match=words) as caught:
        store.write_chunk("intrinsic", 1, pl.DataFrame({"x": [2]}))
    assert "chunk-00001.parquet" in caught.value.message
    monkeypatch.undo()
    left = sorted(p.name for p in store.chunk_dir("intrinsic").iterdir())
    assert left == ["chunk-00000.parquet"]  # no temporary file, the finished chunk kept
    assert store.finished_chunks("intrinsic") == {0}
