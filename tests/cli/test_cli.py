"""Bad input at the command line: one line naming the fix, exit status 2, nothing lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from climb_vllm.cli import main
from tests.helpers import intrinsic_command


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    err = capsys.readouterr().err.strip()
    return code, err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--icd-release", "1999"], "icd-export"),
        (["--top-k", "51"], "--top-k 51: input should be less than or equal to 50"),
        (["--top-k", "0"], "use --top-k 1 or more"),
        (["--limit", "3"], "--limit"),
        (["--limit", "-3"], "use --limit 24 or more"),
        (["--device", "tpu"], "cpu"),
        (["--template", "no slot here"], "description"),
    ],
)
def test_bad_options(
    tiny_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    needle: str,
) -> None:
    code, err = _run(intrinsic_command(str(tiny_model), tmp_path / "run", *extra), capsys)
    assert code == 2
    assert err.startswith("error:") and "Fix:" in err and needle in err and "\n" not in err


def test_unknown_model_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(
        intrinsic_command(str(tmp_path / "missing-model"), tmp_path / "run", "--limit", "30"),
        capsys,
    )
    assert code == 2 and "demo-model" in err and "\n" not in err


def test_model_without_tokenizer(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(tiny_model / name, bare / name)
    code, err = _run(intrinsic_command(str(bare), tmp_path / "run", "--limit", "30"), capsys)
    assert code == 2 and "--tokenizer" in err


def test_unwritable_output(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, err = _run(intrinsic_command(str(tiny_model), blocker / "run", "--limit", "30"), capsys)
    assert code == 2 and "--out" in err


def test_corrupt_chunk_stops_without_losing_others(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = intrinsic_command(str(tiny_model), out, "--limit", "40", "--chunk-size", "10")
    assert main(args) == 0
    chunk = out / "records" / "intrinsic" / "chunk-00002.parquet"
    chunk.write_bytes(chunk.read_bytes()[:50])
    before = {p.name: p.read_bytes() for p in chunk.parent.iterdir() if p != chunk}
    capsys.readouterr()
    code, err = _run(args, capsys)
    assert code == 2 and "chunk-00002.parquet" in err and "delete that file" in err
    assert {p.name: p.read_bytes() for p in chunk.parent.iterdir() if p != chunk} == before
    chunk.unlink()  # the fix the message names
    assert main(args) == 0


def test_rescore_and_report_need_a_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for verb in ("rescore", "report"):
        code, err = _run([verb, str(tmp_path)], capsys)
        assert code == 2 and "manifest.json" in err


def test_every_verb_and_option_has_help_and_common_spellings_work(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import argparse

    from climb_vllm.cli.parser import build_parser

    def walk(parser: argparse.ArgumentParser, path: str) -> list[str]:
        missing = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    missing += walk(sub, f"{path} {name}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
        return missing

    assert walk(build_parser(), "climb-vllm") == []
    args = build_parser().parse_args(
        ["eval", "all", "--max-connections", "8", "--tasks", "biasmd", "--output-path", "x"]
    )
    assert (args.concurrency, args.benchmarks, str(args.out)) == (8, "biasmd", "x")


def test_ctrl_c_keeps_finished_chunks_says_how_to_resume_and_the_rerun_completes(
    tiny_model: Path, tmp_path: Path
) -> None:
    import signal
    import subprocess
    import sys
    import time

    import polars as pl

    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "climb_vllm",
        *intrinsic_command(
            tiny_model, out, "--limit", "400", "--chunk-size", "10", "--sensitivity-codes", "0"
        ),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    chunks = out / "records" / "intrinsic"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if chunks.is_dir() and len(list(chunks.glob("chunk-*.parquet"))) >= 3:
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err[-2000:]
    assert "interrupted; rerun the same command to resume" in err
    assert 3 <= len(list(chunks.glob("chunk-*.parquet"))) < 40
    assert not list(chunks.glob(".*.tmp"))
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    records = pl.read_parquet(sorted(chunks.glob("chunk-*.parquet")))
    assert records.select("code", "name").is_duplicated().sum() == 0
    assert records["code"].n_unique() == 400


def test_a_model_that_is_not_there_names_the_built_in_one_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, err = _run(["eval", "intrinsic", "--model", "no-such-model", "--display", "none"], capsys)
    assert code == 2 and "\n" not in err
    assert "--model gemma-3-270m" in err and "climb-vllm model list" in err
    assert "huggingface-cli" not in err
    assert list(tmp_path.iterdir()) == []  # no empty outputs/runs/no-such-model/main


def test_a_names_file_that_is_not_one_names_its_missing_columns(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    code, err = _run(
        intrinsic_command(str(tiny_model), tmp_path / "run", "--names", str(passwd)), capsys
    )
    assert code == 2 and "has no column name, sex, ethnicity, rank" in err
    assert "KeyError" not in err and "nyc-2011-2021" in err
