"""The rewrite's hash covers, by construction, every module that can change an edit."""

from __future__ import annotations

import shutil
from pathlib import Path

from climb_vllm.rewrite import identity


def _copy_package(tmp_path: Path) -> Path:
    """A copy of ``climb_vllm`` (sources and the referee's data) to change files in."""
    root = tmp_path / "climb_vllm"
    shutil.copytree(
        identity.PACKAGE_ROOT,
        root,
        ignore=shutil.ignore_patterns("__pycache__", "embeddings", "hive", "icd10cm", "mapping"),
    )
    return root


def test_every_rewrite_module_and_what_it_imports_is_covered() -> None:
    covered = {p.relative_to(identity.PACKAGE_ROOT).as_posix() for p in identity.rewrite_modules()}
    in_folder = {
        p.relative_to(identity.PACKAGE_ROOT).as_posix() for p in identity.FOLDER.glob("*.py")
    }
    # Every module of the package, possessive.py (once left out of a hand list) among them.
    assert in_folder <= covered
    assert "rewrite/possessive.py" in covered
    # What the rewrite imports from outside its folder, at any depth: the encoder the referee
    # runs on, and the data locator; plumbing (core) is not.
    assert {"resources/encoder.py", "resources/data.py"} <= covered
    assert not any(name.startswith("core/") for name in covered)
    assert [p.name for p in identity.rewrite_data()] == ["referee.npz"]


def test_a_change_to_any_covered_file_changes_the_hash(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    folder, data = root / "rewrite", root / "data" / "referee"
    before = identity.rewrite_sha256(folder, root, data)
    # The copy hashes as the package does, so the test changes what the package would.
    assert before == identity.rewrite_sha256()
    covered = identity.rewrite_modules(folder, root) + identity.rewrite_data(data)
    assert len(covered) >= 12
    for path in covered:
        original = path.read_bytes()
        path.write_bytes(original + b"\n# changed\n")
        assert identity.rewrite_sha256(folder, root, data) != before, path
        path.write_bytes(original)
    assert identity.rewrite_sha256(folder, root, data) == before


def test_a_new_module_or_a_new_import_is_covered_without_a_list(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    folder, data = root / "rewrite", root / "data" / "referee"
    before = identity.rewrite_sha256(folder, root, data)
    (folder / "new_rule.py").write_text('"""A rule added later."""\n')
    assert identity.rewrite_sha256(folder, root, data) != before
    # A module outside the folder enters the hash as soon as a rewrite module imports it.
    outside = root / "resources" / "words.py"
    assert outside not in identity.rewrite_modules(folder, root)
    (folder / "new_rule.py").write_text("from climb_vllm.resources.words import plain_words\n")
    assert outside in identity.rewrite_modules(folder, root)
    # Notes do not count: a reworded SOURCE.md changes no edit.
    (folder / "new_rule.py").unlink()
    (data / "SOURCE.md").write_text("reworded")
    assert identity.rewrite_sha256(folder, root, data) == before
