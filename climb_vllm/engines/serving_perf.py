"""``climb-vllm bench --endpoint URL``: the serving path, measured as ratios in one run.

P4      per diagnosis: prompts sent and response bytes with the ``trie`` strategy against full
        sequences with ``prompt_logprobs`` (one per distinct name), and vLLM's own prefix-cache
        hit rate (``vllm:prefix_cache_hits`` / ``vllm:prefix_cache_queries`` from ``/metrics``)
        over the trie run.
Client  prompts per second the client prepares, sends and parses when the server answers at
        once: a trivial loopback responder in another process answers every completions
        request with a well-formed vLLM-shaped body.
Wall    intrinsic scoring time of the two strategies on the real server, same requests.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from climb_vllm.engines.base import ScoreRequest
from climb_vllm.engines.http import HttpEngine


def _metric(url: str, name: str) -> float:
    import httpx

    text = httpx.get(url + "/metrics", timeout=10).text
    match = re.search(rf"^{name}(?:_total)?{{[^}}]*}} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else float("nan")


async def _respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """HTTP/1.1 keep-alive: answer /version, /v1/models, and completions with n choices."""
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        if not head:
            return
        lines = head.decode().split("\r\n")
        path = lines[0].split()[1]
        length = 0
        for line in lines[1:]:
            if line.lower().startswith("content-length:"):
                length = int(line.split(":")[1])
        body = json.loads(await reader.readexactly(length)) if length else {}
        if path == "/version":
            payload: Any = {"version": "responder"}
        elif path == "/v1/models":
            payload = {"data": [{"id": "model"}]}
        else:
            ids = body.get("logprob_token_ids") or [0]
            top = {f"token_id:{t}": -1.0 for t in ids}
            choice = {"logprobs": {"top_logprobs": [top]}, "finish_reason": "length"}
            payload = {"choices": [dict(choice, index=i) for i in range(len(body["prompt"]))]}
        data = json.dumps(payload).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(data)).encode()
            + b"\r\n\r\n"
            + data
        )
        await writer.drain()


def _responder(port: int) -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: _guard(_respond(r, w)), "127.0.0.1", port)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


async def _guard(task: Any) -> None:
    try:
        await task
    except (asyncio.IncompleteReadError, ConnectionError):
        pass


def client_overhead(requests: list[ScoreRequest], seconds_cap: float = 120.0) -> dict[str, float]:
    """Prompts/s of the trie strategy against the trivial responder (in another process)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = multiprocessing.get_context("spawn").Process(target=_responder, args=(port,))
    process.start()
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                engine = HttpEngine([url], served_model="model", tokenizer=None, strategy="trie")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        start = time.perf_counter()
        engine.score(requests)
        elapsed = time.perf_counter() - start
        prompts = int(engine.stats.extra.get("prompts", 0))
    finally:
        process.terminate()
        process.join()
    return {
        "client_prompts": prompts,
        "client_seconds": elapsed,
        "client_prompts_per_second": prompts / elapsed,
    }


def serving_bench(
    url: str, tokenizer: str, requests: list[ScoreRequest], codes: int
) -> dict[str, Any]:
    """P4, client overhead and strategy wall times against one vLLM server.

    Args:
        url: the server's base URL.
        tokenizer: the served model's tokenizer folder.
        requests: the scoring requests of ``codes`` codes.
        codes: how many codes the requests cover (the unit of the per-code figures).
    """
    out: dict[str, Any] = {"endpoint": url, "codes": codes}
    for strategy in ("trie", "prompt_logprobs"):
        engine = HttpEngine([url], tokenizer=tokenizer, strategy=strategy)
        engine.score(requests[:2])  # warm-up
        hits0 = _metric(url, "vllm:prefix_cache_hits")
        queries0 = _metric(url, "vllm:prefix_cache_queries")
        stats = engine.transport.stats
        bytes0, prompts0 = stats.response_bytes, engine.stats.extra.get("prompts", 0)
        start = time.perf_counter()
        engine.score(requests)
        out[f"{strategy}_seconds"] = time.perf_counter() - start
        sent = engine.stats.extra.get("prompts", 0) - prompts0
        out[f"{strategy}_prompts_per_code"] = sent / codes
        out[f"{strategy}_response_bytes_per_code"] = (stats.response_bytes - bytes0) / codes
        hits = _metric(url, "vllm:prefix_cache_hits") - hits0
        queries = _metric(url, "vllm:prefix_cache_queries") - queries0
        out[f"{strategy}_prefix_cache_hit_rate"] = hits / queries if queries else float("nan")
    out["wall_ratio_b_over_a"] = out["prompt_logprobs_seconds"] / out["trie_seconds"]
    out.update(client_overhead(requests))
    return out


def agreement_bench(
    model: Path, urls: list[str], build: Callable[[Any], list[ScoreRequest]], codes: int
) -> dict[str, Any]:
    """Served scores against the in-process engine on the same requests: for each endpoint,
    its server, strategy, max and mean |served - in process| log-prob (nat, per name) and
    wall time; the in-process engine's (fp32, CPU) wall time beside them.

    Args:
        model: the model folder the in-process engine loads (the served model's weights).
        urls: the endpoints, each serving that model (any server, any strategy).
        build: the scoring requests, from the model's tokenizer.
        codes: how many codes the requests cover (reported beside the results).
    """
    from climb_vllm.engines.local import LocalEngine

    local = LocalEngine(str(model), device="cpu", dtype="float32")
    requests = build(local.tokenizer)
    pairs = sum(len(r.continuations) for r in requests)
    local.score(requests[:2])  # warm-up
    start = time.perf_counter()
    reference = local.score(requests)
    out: dict[str, Any] = {
        "codes": codes,
        "pairs": pairs,
        "in_process_seconds": time.perf_counter() - start,
    }
    for n, url in enumerate(urls):
        engine = HttpEngine([url], tokenizer=str(model))
        found = engine.capabilities[0]
        engine.score(requests[:1])  # warm-up
        start = time.perf_counter()
        served = engine.score(requests)
        seconds = time.perf_counter() - start
        gaps = [
            abs(a - b)
            for got, want in zip(served, reference)
            for a, b in zip(got.logprobs, want.logprobs)
        ]
        out[f"endpoint_{n}"] = {
            "url": url,
            "server": found.server,
            "version": found.version,
            "strategy": found.strategy,
            "served_model": engine.served_model,
            "max_abs_diff_nat": max(gaps),
            "mean_abs_diff_nat": sum(gaps) / len(gaps),
            "seconds": seconds,
            "pairs_per_second": pairs / seconds,
            "seconds_over_in_process": seconds / out["in_process_seconds"],
        }
    return out
