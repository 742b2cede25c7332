"""The rewrite's identity: one hash of everything that can change an edit.

An extrinsic run records this hash and refuses to resume or rescore under another, so that a
run never holds notes written by two rewrites. The hash is built, not listed: it covers every
module of this package (the bench and the referee's training too, since nothing is left to
judgement), every package module outside ``core`` that any of them imports, at any depth (the
sentence encoder the referee runs on, the data locator), and every data file of the referee's
folder but its notes. ``core`` is left out on purpose: errors, configuration and progress decide
no word, and a reworded error message should not refuse every extrinsic resume.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

#: The package this module belongs to, and the root of ``climb_vllm``.
FOLDER = Path(__file__).parent
PACKAGE_ROOT = FOLDER.parent
#: Folders of ``climb_vllm`` whose modules never change an edit (see the module docstring).
PLUMBING = ("core",)


def _module_path(name: str, root: Path) -> Path | None:
    """The file of the package module ``name`` (``climb_vllm.resources.encoder``), or None
    when ``name`` is not a module of the package under ``root``."""
    parts = name.split(".")
    if parts[0] != "climb_vllm":
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path, root: Path) -> set[Path]:
    """The package modules ``path`` imports anywhere in its text (top level, in functions,
    under TYPE_CHECKING): ``from a.b import c`` names ``a.b.c`` when that is a module."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            module = _module_path(name, root)
            if module is not None:
                found.add(module)
    return found


def rewrite_modules(folder: Path = FOLDER, root: Path = PACKAGE_ROOT) -> list[Path]:
    """Every module the hash covers, sorted by path: the ``.py`` files under ``folder`` and,
    at any depth, the package modules outside :data:`PLUMBING` that they import.

    Args:
        folder: the rewrite package's folder (another one in tests).
        root: the folder of ``climb_vllm`` that imports resolve against.
    """
    todo = sorted(folder.rglob("*.py"))
    seen: set[Path] = set(todo)
    while todo:
        for module in _imported(todo.pop(), root):
            inside = module.relative_to(root).parts
            if module not in seen and inside[0] not in PLUMBING:
                seen.add(module)
                todo.append(module)
    return sorted(seen)


def rewrite_data(data: Path = PACKAGE_ROOT / "data" / "referee") -> list[Path]:
    """The referee's data files (its weights), notes (``*.md``) left out, sorted."""
    return sorted(p for p in data.rglob("*") if p.is_file() and p.suffix != ".md")


def rewrite_sha256(
    folder: Path = FOLDER,
    root: Path = PACKAGE_ROOT,
    data: Path = PACKAGE_ROOT / "data" / "referee",
) -> str:
    """The sha256 of :func:`rewrite_modules` and :func:`rewrite_data`, each file's path
    (relative to ``root``) and bytes in sorted order; the arguments as there."""
    digest = hashlib.sha256()
    for path in [*rewrite_modules(folder, root), *rewrite_data(data)]:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()
