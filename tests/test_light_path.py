"""The scoring path on a machine with only the light packages: ``eval intrinsic`` and ``bench``
run in a Python whose site-packages lack sentence-transformers, faiss, scipy and matplotlib,
and import none of them."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

#: Packages a GPU scoring machine need not have (with their metadata and bundled libraries).
HEAVY = ("scipy", "matplotlib", "mpl_toolkits", "faiss", "sentence_transformers")
ROOT = Path(__file__).resolve().parents[1]
RUNNER = f"""
import runpy, sys
sys.path[:0] = [SITE, {str(ROOT)!r}]
sys.argv = ["climb_vllm", *sys.argv[1:]]
try:
    runpy.run_module("climb_vllm", run_name="__main__")
finally:
    found = sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))
    print("heavy modules imported:", found, file=sys.stderr)
"""


@pytest.fixture(scope="module")
def light_python(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A command that runs climb-vllm with a site folder holding every installed package but
    the heavy ones (``python -S``: no site processing, so nothing else is on the path)."""
    site = tmp_path_factory.mktemp("light") / "site-packages"
    site.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().replace("-", "_").startswith(HEAVY):
            (site / entry.name).symlink_to(entry)
    return [sys.executable, "-S", "-c", RUNNER.replace("SITE", repr(str(site)))]


def test_the_heavy_packages_are_really_absent(light_python: list[str]) -> None:
    completed = subprocess.run(
        [*light_python[:-1], light_python[-1].replace("runpy.run_module", "import scipy #")],
        capture_output=True,
        text=True,
    )
    assert "No module named 'scipy'" in completed.stderr


def test_eval_intrinsic_scores_without_the_heavy_packages(
    light_python: list[str], tiny_model: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    command = [*light_python, "eval", "intrinsic", "--model", str(tiny_model), "--out", str(out)]
    command += ["--limit", "30", "--sensitivity-codes", "0", "--display", "plain"]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "heavy modules imported: []" in completed.stderr
    assert "the tables need scipy" in completed.stderr  # and says where to compute them
    assert sorted((out / "records" / "intrinsic").glob("*.parquet"))


def test_bench_runs_without_the_heavy_packages(light_python: list[str], tiny_model: Path) -> None:
    command = [*light_python, "bench", "--model", str(tiny_model), "--codes", "8"]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "heavy modules imported: []" in completed.stderr
    assert "tree_achieved_tflops" in completed.stdout
