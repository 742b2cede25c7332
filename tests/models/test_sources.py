"""Model sources: a corrupted chunk, a missing chunk, a full disk or a file that is no model each
give one clear error and leave nothing half-written; the real source converts once."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from climb_vllm.core.errors import UserError
from climb_vllm.models import sources

CHUNKS = (b"first chunk|", b"second chunk")


@pytest.fixture
def fake_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Two importable chunk packages and a main package, as the registry's are laid out."""
    root = tmp_path / "site"
    for k, payload in enumerate(CHUNKS):
        data = root / f"fakechunk{k}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"model.part{k}").write_bytes(payload)
    main = root / "fakemain" / "data"
    main.mkdir(parents=True)
    (main.parent / "__init__.py").write_text("")
    (main / "LICENCE.txt").write_text("terms")
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in ("fakechunk0", "fakechunk1", "fakemain"):
        sys.modules.pop(name, None)


def _source(sha256: str) -> sources.ModelSource:
    return dataclasses.replace(
        sources.SOURCES["gemma-3-270m"],
        name="fake",
        package="fakemain",
        chunks=(("fakechunk0", "model.part0"), ("fakechunk1", "model.part1")),
        filename="fake.gguf",
        sha256=sha256,
        licence_files=("LICENCE.txt",),
        disk_bytes=1000,
    )


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*")) if folder.exists() else []


def test_chunks_reassemble_to_the_recorded_hash(fake_packages: Path, tmp_path: Path) -> None:
    expected = hashlib.sha256(b"".join(CHUNKS)).hexdigest()
    target = tmp_path / "cache" / "fake.gguf"
    target.parent.mkdir()
    sources._assemble(_source(expected), target, echo=False)
    assert target.read_bytes() == b"".join(CHUNKS)
    assert _leftovers(target.parent) == ["fake.gguf"]


def test_a_corrupted_chunk_is_refused_and_nothing_is_left(
    fake_packages: Path, tmp_path: Path
) -> None:
    target = tmp_path / "cache" / "fake.gguf"
    target.parent.mkdir()
    with pytest.raises(UserError, match="force-reinstall") as caught:
        sources._assemble(_source("0" * 64), target, echo=False)
    assert "SHA-256" in caught.value.message
    assert _leftovers(target.parent) == []


def test_a_missing_chunk_names_the_package_to_reinstall(
    fake_packages: Path, tmp_path: Path
) -> None:
    (fake_packages / "fakechunk1" / "data" / "model.part1").unlink()
    target = tmp_path / "cache" / "fake.gguf"
    target.parent.mkdir()
    with pytest.raises(UserError, match="pip install --force-reinstall fakechunk1"):
        sources._assemble(_source("0" * 64), target, echo=False)
    assert _leftovers(target.parent) == []


def test_a_disk_too_small_is_refused_before_anything_is_written(
    fake_packages: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sources.SOURCES, "fake", _source("0" * 64))
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage._replace(free=10))
    with pytest.raises(UserError, match="CLIMB_VLLM_CACHE") as caught:
        sources.get("fake", tmp_path / "cache", echo=False)
    assert "0.0 GB are" in caught.value.message
    assert _leftovers(tmp_path / "cache") == ["models"]  # the empty cache folder only


def test_a_file_that_is_no_model_is_refused_and_no_folder_is_left(
    fake_packages: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    gguf = cache / "fake.gguf"
    gguf.write_bytes(b"GGUF but not a model at all")
    with pytest.raises(UserError, match="could not be read as a model"):
        sources._convert(_source("0" * 64), gguf, cache / "fake", echo=False)
    assert _leftovers(cache) == ["fake.gguf"]


def test_a_cached_file_converted_where_its_reader_is_missing_installs_it_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GGUF file left in the cache by another environment is converted here without any of
    the source's packages being installed: the GGUF reader must be installed before the read."""
    installed: list[tuple[str, ...]] = []
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "gguf" else real_find_spec(name, *args)

    def pip(requirements: tuple[str, ...], what: str, echo: bool) -> None:
        installed.append(requirements)
        raise UserError("stopped here", "nothing")

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(sources, "_pip", pip)
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(UserError, match="stopped here"):
        sources._convert(_source("0" * 64), gguf, tmp_path / "fake", echo=False)
    assert installed == [(sources.GGUF_PACKAGE,)]


def test_a_cached_file_converted_where_its_licence_package_is_missing_installs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The licence files come from the source's package: installed before the conversion when
    the file came from another environment's cache (the fake package is not importable)."""
    installed: list[tuple[str, ...]] = []
    monkeypatch.setattr(sources, "_pip", lambda req, what, echo: installed.append(req))
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(b"GGUF but not a model at all")
    source = _source("0" * 64)
    with pytest.raises(UserError, match="could not be read as a model"):
        sources._convert(source, gguf, tmp_path / "fake", echo=False)
    assert installed == [source.packages]


def test_unknown_source_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="gemma-3-270m"):
        sources.get("gpt-17", tmp_path)
    assert sources.resolve("some/hub-id", tmp_path) == "some/hub-id"


def test_the_real_source_is_converted_once_with_its_provenance(real_model: Path) -> None:
    record: dict[str, Any] = json.loads((real_model / sources.SOURCE_FILE).read_text())
    assert record["sha256"] == sources.SOURCES["gemma-3-270m"].sha256
    assert "Gemma" in record["licence"] and (real_model / "GEMMA_TERMS.html").is_file()
    # The recorded hash is the one the package itself lists for the upstream file.
    sums = (real_model / "SHA256SUMS").read_text().split()
    assert sums[0] == record["sha256"] and sums[1] == record["file"]
    config = json.loads((real_model / "config.json").read_text())
    assert config["vocab_size"] == 262_144
    # A second call finds the folder: no work, the same path.
    assert sources.get("gemma-3-270m", real_model.parent.parent, echo=False) == real_model
    assert sources.provenance(real_model) == record


def test_the_tokenizer_read_by_its_class_equals_autotokenizers(
    real_model: Path, tmp_path: Path
) -> None:
    """The conversion loads the GGUF tokenizer by the model type's class, skipping
    AutoTokenizer's second read of the metadata: the saved tokenizer is the same file."""
    from transformers import AutoConfig, AutoTokenizer

    # The folder may come from a cache another environment filled: the GGUF reader is then
    # missing here, and AutoTokenizer needs it too.
    sources.require_gguf(echo=False)
    gguf = sources.gguf_file("gemma-3-270m", real_model.parent.parent, echo=False)
    config = AutoConfig.from_pretrained(str(real_model))
    direct = sources._gguf_tokenizer(config, gguf)
    auto = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    assert type(direct) is type(auto)
    direct.save_pretrained(str(tmp_path / "direct"))
    auto.save_pretrained(str(tmp_path / "auto"))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (tmp_path / "direct" / name).read_bytes() == (tmp_path / "auto" / name).read_bytes()


def test_packaged_plain_template_equals_the_servers(tmp_path: Path) -> None:
    import importlib.resources

    packaged = importlib.resources.files("climb_vllm") / "data" / "templates" / "plain.jinja"
    server = Path(__file__).resolve().parents[2] / "server" / "templates" / "plain.jinja"
    assert packaged.read_text() == server.read_text()
