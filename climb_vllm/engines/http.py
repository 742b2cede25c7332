"""The HTTP engine: vLLM or any OpenAI-compatible server, one or more endpoints.

Token-boundary contract: as for every engine (:mod:`climb_vllm.engines.base`). Prompts are sent
as token ids, tokenized here with the model's tokenizer (loaded locally, or through the
server's ``/tokenize`` when only the served name is known), so the server adds no BOS of its own.

Each endpoint is probed once (``/version``, ``/v1/models``, a tiny scoring request) and gets the
best strategy it supports (:mod:`climb_vllm.engines.strategies`): ``trie`` on vLLM with
``logprob_token_ids``, ``prompt_logprobs`` on older vLLM, ``echo`` on other servers once a probe
shows that their echo really returns prompt log-probs. Every prompt of one request (one
diagnosis) goes to the same endpoint, so its prefix is cached where it is reused. Requests are
ordered by their prompt token ids and cut into one contiguous slice per endpoint, so prompts
that share a description head ("Displaced fracture of shaft of right femur, ...") go to the
same server, in order, and its prefix cache can serve the shared head. vLLM caches whole
blocks (16 tokens by default): only the full blocks of a shared head are reused, so a head
shorter than one block, and the tail of a head past its last full block, are computed again.
A dead endpoint's work moves to the others.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from typing import Any

from climb_vllm.core.errors import NotApplicable, UserError
from climb_vllm.engines.base import (
    EngineStats,
    GenerateRequest,
    Generation,
    ScoreRequest,
    ScoreResult,
)
from climb_vllm.engines.capabilities import Capability, answers, seeds_repeat, tokenize_path
from climb_vllm.engines.server_tokenizer import ServerTokenizer
from climb_vllm.engines.strategies import (
    STRATEGIES,
    Job,
    ResponseError,
    assemble_result,
    endpoint_slices,
    parse,
    sequence_jobs,
    text_jobs,
    trie_jobs,
)
from climb_vllm.engines.transport import RetriesExhausted, Transport, Unreachable
from climb_vllm.engines.trie import Trie


def sample_seed(seed: int, k: int) -> int:
    """The seed of the k-th sample of a request with ``seed`` sent one sample at a time: k = 0
    keeps the request's seed; the others are hashed (``crc32('<seed>:<k>')``, as item seeds
    are), so that the samples of requests with neighbouring seeds do not share seeds."""
    import zlib

    return seed if k == 0 else zlib.crc32(f"{seed}:{k}".encode())


class HttpEngine:
    """Score and generate through OpenAI-compatible endpoints.

    Args:
        endpoints: base URLs, e.g. ``http://127.0.0.1:8000``.
        served_model: the model name the servers serve; with one endpoint serving one model it
            may be omitted and is read from ``/v1/models``.
        tokenizer: local tokenizer folder or hub id; None asks the server's ``/tokenize``.
        strategy: "auto" (probe) or one of ``trie``, ``prompt_logprobs``, ``echo``.
        concurrency: HTTP requests in flight at once.
        rate: the most requests per second (None = unlimited).
        prompts_per_request: prompts batched into one completions request (vLLM allows 1024).
        retries: retries of a failed request before the run stops.
        timeout: seconds for one request (None: sized from the request, see
            :func:`~climb_vllm.engines.transport.request_timeout`).
        backoff: base delay (seconds) of the retry backoff.
        hook: optional factory of an ``httpx.AsyncBaseTransport`` for scoring and generation.
        seeds: per-request sampling seeds: "on", "off" (sample unseeded), or "auto": on unless
            ``make serve`` started the endpoint as a CPU server (vLLM's CPU build crashes on
            seeds with chunked prefill).
    """

    name = "http"

    def __init__(
        self,
        endpoints: Sequence[str],
        *,
        served_model: str | None = None,
        tokenizer: str | None = None,
        strategy: str = "auto",
        concurrency: int = 64,
        rate: int | None = None,
        prompts_per_request: int = 256,
        retries: int = 6,
        timeout: float | None = None,
        backoff: float = 0.5,
        hook: Any = None,
        seeds: str = "auto",
    ) -> None:
        if not endpoints:
            raise UserError("No endpoint given.", "pass --endpoint http://HOST:PORT.")
        if strategy != "auto" and strategy not in STRATEGIES:
            raise UserError(
                f"Unknown strategy {strategy!r}.", f"use auto or one of {', '.join(STRATEGIES)}."
            )
        self.transport = Transport(
            endpoints,
            concurrency=concurrency,
            rate=rate,
            retries=retries,
            timeout=timeout,
            backoff=backoff,
            hook=hook,
        )
        self.prompts_per_request = min(prompts_per_request, 1024)
        self.stats = EngineStats()
        self.served_model = served_model or self._only_model()
        self._check_model()
        self.tokenize_path = tokenize_path(self.transport, self.served_model)
        self.tokenizer: Any = self._tokenizer(tokenizer)
        if seeds not in ("auto", "on", "off"):
            raise UserError(f"Unknown seeds setting {seeds!r}.", "use auto, on or off.")
        from climb_vllm.serving.state import takes_seeds

        safe = [takes_seeds(url) for url in self.transport.urls]
        self.capabilities = [
            self._probe(i, strategy, probe_seeds=safe[i]) for i in range(len(self.transport.urls))
        ]
        if seeds == "auto":
            self.sends_seeds = all(safe)
        else:
            self.sends_seeds = seeds == "on"

    # -- probing ---------------------------------------------------------------------------

    def _models(self, endpoint: int) -> list[str]:
        return [m["id"] for m in self._model_entries(endpoint)]

    def _tokenizer(self, name: str | None) -> Any:
        """The tokenizer ``name`` (a folder or hub id), else the server's own (``/tokenize``)."""
        if not name:
            return ServerTokenizer(
                self.transport, self.served_model, self.tokenize_path or "/tokenize"
            )
        import transformers

        try:
            return transformers.AutoTokenizer.from_pretrained(name)
        except Exception as exc:
            raise UserError(
                f"Cannot load tokenizer {name!r} ({type(exc).__name__}).",
                "pass --tokenizer with the served model's tokenizer folder or hub id.",
            ) from exc

    def _model_entries(self, endpoint: int) -> list[dict[str, Any]]:
        """``/v1/models``'s entries; vLLM gives a served LoRA adapter its base as ``parent``."""
        status, text = self.transport.get(endpoint, "/v1/models")
        if status != 200:
            raise UserError(
                f"{self.transport.urls[endpoint]}/v1/models answered HTTP {status}.",
                "check that --endpoint points at an OpenAI-compatible server (and the API key "
                "in CLIMB_API_KEY).",
            )
        entries: list[dict[str, Any]] = json.loads(text).get("data", [])
        return entries

    def _only_model(self) -> str:
        # Adapters served beside a base (entries with a parent) do not make the base ambiguous.
        models = [str(m["id"]) for m in self._model_entries(0) if not m.get("parent")]
        if len(models) != 1:
            raise UserError(
                f"{self.transport.urls[0]} serves {len(models)} models {models}.",
                "pass --served-model NAME.",
            )
        return models[0]

    def _check_model(self) -> None:
        for endpoint in range(len(self.transport.urls)):
            models = self._models(endpoint)
            if self.served_model not in models:
                raise UserError(
                    f"{self.transport.urls[endpoint]} does not serve {self.served_model!r} "
                    f"(it serves {models}).",
                    "pass --served-model with one of those names.",
                )

    def _probe(self, endpoint: int, strategy: str, probe_seeds: bool = True) -> Capability:
        """What the server at ``endpoint`` does: its prompt log-probs (the first strategy whose
        tiny scoring request succeeds), text completions, chat, token-id and batched prompts,
        ``n`` and seeds.

        Args:
            endpoint: index of the endpoint.
            strategy: "auto" or the one strategy to try.
            probe_seeds: whether seeds may be sent (not to vLLM's CPU build, which crashes).
        """
        status, text = self.transport.get(endpoint, "/version")
        version = json.loads(text).get("version") if status == 200 else None
        from climb_vllm.serving.state import own_server

        mine = own_server(self.transport.urls[endpoint]) or {}
        llama = self.tokenize_path == "/extras/tokenize" or mine.get("server") == "llamacpp"
        server = "vllm" if version else "llama.cpp" if llama else "openai-compatible"
        # llama-cpp-python answers what it cannot do with HTTP 500 (the same each time).
        self.transport.refuses_with_500 = server == "llama.cpp"
        version = version or (str(mine["server_version"]) if mine.get("server_version") else None)
        url = self.transport.urls[endpoint]
        decided: dict[str, str] = {}

        def ask(name: str, path: str, body: dict[str, Any]) -> Any:
            value, decided[name] = answers(self.transport, endpoint, self.served_model, path, body)
            return value

        completions = ask("completions", "/v1/completions", {"prompt": "The", "n": 1})
        token_ids = ask("token_ids", "/v1/completions", {"prompt": [1, 2], "n": 1})
        batch = ask("batch", "/v1/completions", {"prompt": ["The", "A"], "n": 1})
        chat = ask(
            "chat", "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}]}
        )
        samples = ask("samples_n", "/v1/completions", {"prompt": "The", "n": 2})
        seeds = (
            seeds_repeat(self.transport, endpoint, self.served_model)
            if probe_seeds and completions
            else None
        )
        found = self._probe_strategy(endpoint, strategy, server, decided)
        if found is None and strategy != "auto":
            raise UserError(
                f"{url} does not score with the {strategy} strategy "
                f"({decided.get('strategy', '')}).",
                "leave --strategy at auto (the probe picks what the server supports).",
            )
        return Capability(
            url,
            server,
            version,
            found,
            completions=completions,
            chat=chat,
            token_ids=token_ids,
            batch=batch,
            samples_n=samples == 2,
            seeds=seeds,
            tokenize=self.tokenize_path if endpoint == 0 else None,
            decided_by=decided,
        )

    def _probe_strategy(
        self, endpoint: int, strategy: str, server: str, decided: dict[str, str]
    ) -> str | None:
        """The first scoring strategy whose tiny request the server answers with prompt
        log-probs, or None; ``decided["strategy"]`` says what each refusal was.

        A refusal is a definite answer only: a 4xx, or a body without the log-probs asked
        for. A reset, a timeout or a 5xx is retried as in a run, and one that persists stops
        the run (:class:`~climb_vllm.engines.transport.RetriesExhausted`) rather than turning
        a faster strategy off.
        """
        candidates = (
            [strategy]
            if strategy != "auto"
            else (
                ["trie", "prompt_logprobs", "echo"] if server == "vllm" else ["echo", "echo_text"]
            )
        )
        refusals = []
        for candidate in candidates:
            if candidate == "echo_text":
                probe = self._text_probe()
            else:
                probe = ScoreRequest((1, 2, 3), ((4,), (5, 6)))
            try:
                self._score_on([probe], [0], candidate, probe_endpoint=endpoint)
            except (RetriesExhausted, Unreachable):
                raise
            except (UserError, ResponseError, RuntimeError, ValueError) as exc:
                refusals.append(f"{candidate}: {str(exc)[:160]}")
                continue
            decided["strategy"] = "; ".join([*refusals, f"{candidate}: HTTP 200, log-probs"])
            return candidate
        decided["strategy"] = "; ".join(refusals)
        return None

    def _text_probe(self) -> ScoreRequest:
        """A scoring request made of real text (a text prompt must tokenize back to its ids)."""
        prefix = list(self.tokenizer("The capital of France is")["input_ids"])
        full = list(self.tokenizer("The capital of France is Paris")["input_ids"])
        if full[: len(prefix)] != prefix or len(full) == len(prefix):
            return ScoreRequest(tuple(full[:-1]), ((full[-1],),))
        return ScoreRequest(tuple(prefix), (tuple(full[len(prefix) :]),))

    def _refuse_without_scores(self) -> None:
        """Raise NotApplicable (naming the endpoint and the fix) when an endpoint cannot score."""
        reason = self.cannot_score()
        if reason is not None:
            raise NotApplicable(
                f"Scoring needs prompt log-probs, which {reason}.",
                "serve the model with vLLM or llama.cpp's server (make serve MODEL=... "
                "[SERVER=llamacpp]), or run in process (--engine local).",
            )

    def cannot_score(self) -> str | None:
        """Why the endpoints cannot score (the first that returns no prompt log-probs), or None
        when every one can."""
        for capability in self.capabilities:
            if capability.strategy is None:
                tried = "echo" if capability.server != "vllm" else "any strategy"
                return (
                    f"the {capability.server} server at {capability.url} does not return "
                    f"(tried {tried} with logprobs)"
                )
        return None

    # -- scoring ---------------------------------------------------------------------------

    def score(self, requests: Sequence[ScoreRequest]) -> list[ScoreResult]:
        """Log-probabilities of every continuation (request order)."""
        for request in requests:
            if not request.prefix:
                raise ValueError("a score request needs a non-empty prefix")
        self._refuse_without_scores()
        by_strategy: dict[str, list[int]] = {}
        endpoints = endpoint_slices(requests, len(self.capabilities))
        for i, endpoint in enumerate(endpoints):
            by_strategy.setdefault(str(self.capabilities[endpoint].strategy), []).append(i)
        results: list[ScoreResult | None] = [None] * len(requests)
        for strategy, indices in by_strategy.items():
            for i, result in zip(
                indices, self._score_on(requests, endpoints, strategy, indices=indices)
            ):
                results[i] = result
        return [r for r in results if r is not None]

    def score_each_endpoint(self, requests: Sequence[ScoreRequest]) -> list[list[ScoreResult]]:
        """The same requests scored on every endpoint in turn (one list per endpoint): a
        replica that serves another model gives other values (the resume canary)."""
        self._refuse_without_scores()
        return [
            self._score_on(requests, [endpoint] * len(requests), str(capability.strategy))
            for endpoint, capability in enumerate(self.capabilities)
        ]

    def _score_on(
        self,
        requests: Sequence[ScoreRequest],
        endpoints: Sequence[int],
        strategy: str,
        *,
        indices: Sequence[int] | None = None,
        probe_endpoint: int | None = None,
    ) -> list[ScoreResult]:
        """Score ``requests[indices]`` with one strategy; each request on its endpoint."""
        indices = list(range(len(requests))) if indices is None else list(indices)
        tries = [Trie.build(r.continuations) for r in requests]
        per_endpoint: dict[int, list[int]] = {}
        for i in indices:
            target = probe_endpoint if probe_endpoint is not None else endpoints[i]
            per_endpoint.setdefault(target, []).append(i)
        jobs: list[Job] = []
        routes: list[tuple[int, str, dict[str, Any]]] = []
        for endpoint, members in per_endpoint.items():
            if strategy == "trie":
                built = trie_jobs(requests, tries, members, self.prompts_per_request)
            elif strategy == "echo_text":
                built = text_jobs(requests, members, self._decode, self._specials())
            else:
                built = sequence_jobs(requests, members, self.prompts_per_request, strategy)
            for job in built:
                jobs.append(job)
                routes.append(
                    (endpoint, "/v1/completions", {"model": self.served_model, **job.payload})
                )
        answers: dict[tuple[int, int], tuple[float, ...]] = {}

        def check(index: int, body: Any) -> Any:
            return parse(jobs[index], body, strategy)

        def keep(index: int, parsed: Any) -> None:
            for key, values in parsed:
                answers[key] = values

        # Two waves: prompts read at the root (the bare prefixes) first, then the partial names.
        # The second wave finds each prefix's KV blocks in the server's prefix cache; sent
        # together, they would be scheduled in one step and none could reuse the other.
        first = [n for n, job in enumerate(jobs) if any(row == 0 for _, row in job.keys)]
        second = [n for n in range(len(jobs)) if n not in set(first)]
        waves = [first, second] if strategy == "trie" else [list(range(len(jobs)))]
        # A probe's unusable body is the server's answer (it ignores the field asked for), not
        # a passing fault: it is not asked again. Resets, timeouts and 5xx are retried as ever.
        self.transport.retry_unusable = probe_endpoint is None
        try:
            for wave in waves:
                if wave:
                    asyncio.run(self._wave(routes, wave, check, keep))
        finally:
            self.transport.retry_unusable = True
        self._count(jobs)
        return [assemble_result(requests[i], tries[i], i, answers, strategy) for i in indices]

    def _count(self, jobs: Sequence[Job]) -> None:
        """Add the jobs' forward tokens, prompts and requests to the engine's counts."""
        self.stats.forward_tokens += sum(
            job.sizes[0] if job.sizes else sum(len(p) for p in job.payload["prompt"])
            for job in jobs
        )
        prompts = sum(len(job.keys) for job in jobs)
        self.stats.extra["prompts"] = self.stats.extra.get("prompts", 0) + prompts
        self.stats.batches += len(jobs)

    async def _wave(
        self,
        routes: list[tuple[int, str, dict[str, Any]]],
        wave: list[int],
        check: Callable[[int, Any], Any],
        keep: Callable[[int, Any], None],
    ) -> None:
        """Send the jobs ``wave`` (indices into ``routes``)."""

        def check_one(k: int, body: Any) -> Any:
            return check(wave[k], body)

        def keep_one(k: int, parsed: Any) -> None:
            keep(wave[k], parsed)

        await self.transport.run([routes[n] for n in wave], check_one, keep_one)

    # -- generation ------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        """Sample through ``/v1/chat/completions`` (messages) or ``/v1/completions`` (prompt).

        A server that ignores ``n`` (llama.cpp's) gets one request per sample, the k-th with
        its own seed derived from the request's (:func:`sample_seed`); the samples are joined
        back into one generation per request.
        """
        for n, capability in enumerate(self.capabilities):
            routed = requests[n :: len(self.capabilities)]  # the requests sent there
            if any(r.messages for r in routed) and not capability.chat:
                raise NotApplicable(
                    f"The server at {capability.url} does not answer chat requests "
                    "(/v1/chat/completions).",
                    "serve the model with a chat template (chat_template in its file under "
                    "server/models/), or use a server with a chat endpoint.",
                )
            if any(not r.messages for r in routed) and not capability.completions:
                raise NotApplicable(
                    f"The server at {capability.url} does not answer text completions "
                    "(/v1/completions).",
                    "use a server with a completions endpoint (vLLM, llama.cpp).",
                )
        routes = []
        owners: list[int] = []  # the request each route samples for
        for i, request in enumerate(requests):
            endpoint = i % len(self.transport.urls)
            split = request.n > 1 and not self.capabilities[endpoint].samples_n
            for k in range(request.n if split else 1):
                body: dict[str, Any] = {
                    "model": self.served_model,
                    "n": 1 if split else request.n,
                    "max_tokens": request.max_tokens,
                }
                if self.sends_seeds:
                    body["seed"] = sample_seed(request.seed, k) if split else request.seed
                # Left out, the server applies the model's own settings (vLLM reads the model's
                # generation_config.json by default).
                if request.temperature is not None:
                    body["temperature"] = request.temperature
                if request.top_p is not None:
                    body["top_p"] = request.top_p
                if request.messages:
                    body["messages"] = list(request.messages)
                    path = "/v1/chat/completions"
                else:
                    body["prompt"] = request.prompt
                    path = "/v1/completions"
                routes.append((endpoint, path, body))
                owners.append(i)
        parts: list[Generation | None] = [None] * len(routes)

        def check(index: int, body: Any) -> Generation:
            try:
                choices = sorted(body["choices"], key=lambda c: c["index"])
                raw = [c["message"]["content"] if "message" in c else c["text"] for c in choices]
                # A choice without text (a tool call, a refusal object) is kept as an empty
                # answer marked "non-text", to be counted, not retried forever.
                texts = tuple(t if isinstance(t, str) else "" for t in raw)
                reasons = tuple(
                    str(c.get("finish_reason") or "stop") if isinstance(t, str) else "non-text"
                    for c, t in zip(choices, raw)
                )
                usage = body.get("usage") or {}
            except (TypeError, KeyError) as exc:
                raise ResponseError(f"malformed completion ({exc!r})") from exc
            wanted = routes[index][2]["n"]
            if len(texts) != wanted:
                raise ResponseError(f"{len(texts)} completions for n={wanted}")
            # Token counts come after the event loop: a server tokenizer asks the server.
            return Generation(
                texts, reasons, (), int(usage.get("prompt_tokens", 0)), self.sends_seeds
            )

        def keep(index: int, generation: Any) -> None:
            parts[index] = generation

        asyncio.run(self.transport.run(routes, check, keep))
        parts = [None if g is None else self._counted(g) for g in parts]
        out = []
        for i in range(len(requests)):
            mine = [g for g, owner in zip(parts, owners) if owner == i and g is not None]
            out.append(
                Generation(
                    tuple(t for g in mine for t in g.texts),
                    tuple(r for g in mine for r in g.finish_reasons),
                    tuple(c for g in mine for c in g.completion_tokens),
                    mine[0].prompt_tokens if mine else 0,
                    self.sends_seeds,
                )
            )
        return out

    def _counted(self, generation: Generation) -> Generation:
        """``generation`` with the token count of each text (by the run's tokenizer)."""
        counts = tuple(len(self._encode(t)) for t in generation.texts)
        return replace(generation, completion_tokens=counts)

    def _decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

    def _specials(self) -> frozenset[int]:
        return frozenset(getattr(self.tokenizer, "all_special_ids", None) or ())

    def _encode(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return ids

    # -- provenance ------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Engine facts for the manifest (the API key is never included)."""
        return {
            "engine": self.name,
            "served_model": self.served_model,
            "adapter": self._adapter_facts(),
            "endpoints": [asdict(c) for c in self.capabilities],
            "tokenizer": getattr(self.tokenizer, "name_or_path", "server /tokenize"),
            "served_models": self._served_identity(),
            "per_request_seeds": self.sends_seeds,
            "prompts_per_request": self.prompts_per_request,
            "concurrency": self.transport.concurrency,
            "rate": self.transport.rate,
        }

    def _served_identity(self) -> list[dict[str, Any]] | None:
        """What each endpoint's /v1/models says of the served model: its id, the path or hub
        id it was loaded from (``root``) and its context length; None where a server does not
        answer /v1/models (the identity cannot be checked there)."""
        found = []
        for endpoint in range(len(self.transport.urls)):
            try:
                entries = self._model_entries(endpoint)
            except (RetriesExhausted, Unreachable):
                raise  # a flaky server must not turn the identity check off
            except UserError:
                return None
            entry = next((e for e in entries if e.get("id") == self.served_model), {})
            found.append({k: entry.get(k) for k in ("id", "root", "max_model_len")})
        # One entry when every replica serves the same thing: replicas may come and go.
        unique = [dict(t) for t in {tuple(sorted(e.items())) for e in found}]
        return sorted(unique, key=lambda e: str(e))

    def _adapter_facts(self) -> dict[str, Any] | None:
        """The served model's base and source when it is a LoRA adapter (vLLM), else None."""
        try:
            entries = self._model_entries(0)
        except (RetriesExhausted, Unreachable):
            raise
        except UserError:
            return None
        for entry in entries:
            if entry.get("id") == self.served_model and entry.get("parent"):
                base, path = entry["parent"], entry.get("root")
                return {"name": self.served_model, "base": base, "path": path}
        return None

    def close(self) -> None:
        """Nothing to release: clients live only inside each call."""
