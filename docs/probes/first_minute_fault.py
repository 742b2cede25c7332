"""Probe: does one server fault in a run's first minute change its method or its speed?

Not part of the package. Serves the tiny test model with vLLM's CPU build, puts a real HTTP
proxy on loopback in front of it (``tests/fault_proxy.py``), and runs the same small CLIMB
intrinsic evaluation through the proxy four times, alternating: no fault, then an HTTP 500 on
the fifth request (one of the probe's), twice each, each into a fresh run folder. Prints each
run's scoring strategy, capabilities and wall time, and the ratio of the faulted runs' mean
time to the clean runs'.

Run: ``VLLM_PYTHON=.venv-vllm/bin/python PYTHONPATH=. .venv/bin/python
docs/probes/first_minute_fault.py``
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from climb_vllm.cli import main
from climb_vllm.models.demo_model import build_demo_model
from climb_vllm.serving.launch import serve
from climb_vllm.serving.state import stop
from tests.fault_proxy import fault_proxy
from tests.helpers import free_port, vllm_python


def one_run(url: str, model: Path, out: Path, fault: bool) -> tuple[float, dict[str, object]]:
    """Wall seconds of one run through a proxy (faulting its fifth request or not), and the
    endpoint's recorded capabilities."""

    def plan(n: int, path: str) -> str | None:
        return "500" if fault and n == 5 else None

    with fault_proxy(url, plan) as proxy:
        start = time.perf_counter()
        code = main(
            [
                "eval",
                "intrinsic",
                "--endpoint",
                proxy.url,
                "--tokenizer",
                str(model),
                "--out",
                str(out),
                "--limit",
                "400",
                "--sensitivity-codes",
                "0",
                "--display",
                "none",
            ]
        )
        seconds = time.perf_counter() - start
    assert code == 0
    engine = json.loads((out / "manifest.json").read_text())["benchmarks"]["intrinsic"]["engine"]
    found = dict(engine["endpoints"][0])
    found.pop("url")
    found.pop("decided_by")
    return seconds, found


def main_probe() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        model = build_demo_model(root / "tiny")
        state = root / "endpoints.json"
        url = serve([str(model)], port=free_port(), python=vllm_python(), cpu=True, state=state)
        try:
            times: dict[bool, list[float]] = {False: [], True: []}
            chosen = set()
            for k, fault in enumerate((False, True, False, True)):
                seconds, found = one_run(url[0], model, root / f"run-{k}", fault)
                times[fault].append(seconds)
                chosen.add(json.dumps(found, sort_keys=True))
                print(f"fault={fault}: {seconds:.1f} s, strategy {found['strategy']}")
        finally:
            stop(state)
    print(f"same capabilities and strategy in every run: {len(chosen) == 1}")
    ratio = statistics.mean(times[True]) / statistics.mean(times[False])
    print(f"faulted / clean wall time: {ratio:.3f}")


if __name__ == "__main__":
    main_probe()
