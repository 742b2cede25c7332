"""Reliable JSON-over-HTTP to one or more endpoints: bounded concurrency, rate limit, retries.

Work is a stream of jobs, each pinned to an endpoint (prefix-affine routing is the caller's).
A fixed pool of worker tasks pulls jobs from a bounded queue, so millions of prompts never
become millions of tasks. Connection errors, timeouts, HTTP 429 and 5xx, and bodies that are not
valid JSON or that the caller's parser rejects are retried with exponential backoff and jitter,
a finite number of times. An endpoint that keeps failing to connect is marked dead and its jobs
move to a live one; when none is left, the run stops with a clear error.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from climb_vllm.core.errors import UserError

#: Environment variables read for the API key, in order; the key is never logged or stored.
API_KEY_VARIABLES = ("CLIMB_API_KEY", "OPENAI_API_KEY")
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
#: Seconds without a finished request before the watchdog says which endpoint is silent, and
#: before it stops the run (a hung server would otherwise stall it for retries x timeout).
STALL_WARN = 60.0
STALL_FAIL = 300.0
#: Seconds one probe request may take (a probe's requests are tiny).
PROBE_TIMEOUT = 30.0
#: Refused connections (or, for a probe, requests timed out) after which an endpoint counts
#: as not running, or hung: said at once rather than after the whole backoff.
CONNECT_TRIES = 3
TIMEOUT_TRIES = 2
#: How many identical HTTP 500 answers to one probe request make it the server's answer about
#: that request, on a server known to refuse that way (``Transport.refuses_with_500``):
#: llama-cpp-python answers what it cannot do with HTTP 500 ("logprobs is not supported for
#: models created with logits_all=False"; a batch of prompts, with an empty message). Anywhere
#: else a 500 is a fault, retried and then reported. Busy and gateway signals (408, 429,
#: 502-504) never count.
SAME_500 = 3


def request_timeout(payload: dict[str, Any]) -> float:
    """Seconds one request may take, from its size: 120 s plus one second per 20 tokens of
    prompt (token-id prompts) or of answers (``max_tokens`` x ``n``), room for a CPU server
    busy with many requests at once. A flat limit large enough for the largest request lets a
    hung server hold every small one for as long; the watchdog catches a hang sooner."""
    prompt = payload.get("prompt", [])
    tokens = 0
    if isinstance(prompt, list):
        tokens = sum(len(p) if isinstance(p, list) else len(str(p)) // 4 for p in prompt)
    elif isinstance(prompt, str):
        tokens = len(prompt) // 4
    for message in payload.get("messages", []):
        tokens += len(str(message.get("content", ""))) // 4
    tokens += int(payload.get("max_tokens") or 0) * int(payload.get("n") or 1)
    return 120.0 + tokens / 20.0


class Unreachable(UserError):
    """No server answers at an endpoint (connections refused): it is not started, or died."""


def _death(url: str) -> Unreachable | None:
    """ "The server died", with its log, when ``make serve`` started the server at ``url`` and
    its process is gone; None otherwise."""
    from climb_vllm.serving.state import death_report

    died = death_report(url)
    return None if died is None else Unreachable(died.message, died.fix)


def _unreachable(url: str, last: str) -> Unreachable:
    """Why nothing answers at ``url``: its death (:func:`_death`), else "unreachable"."""
    return _death(url) or Unreachable(
        f"Endpoint {url} is unreachable ({last}).",
        "start the server (make serve MODEL=...) or correct --endpoint.",
    )


class RequestFailed(UserError):
    """A request that failed for a reason retrying cannot fix: a 4xx answer, or a body that
    stays unusable. One line with the fix, like every other error the user sees.

    Args:
        message: the endpoint, the route and what it answered.
    """

    def __init__(self, message: str) -> None:
        super().__init__(
            message,
            "check the server's log and the request's size (--max-tokens, the model's context "
            "length); the finished chunks are kept, and the same command resumes.",
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (RequestFailed, (self.message,))


class RetriesExhausted(UserError):
    """A request that still failed for a passing reason (a reset, a timeout, HTTP 408, 429 or
    5xx) after every retry: one line naming the endpoint, the route and the last failure, and
    the fix. The run stops; every finished chunk is kept, and the same command resumes.

    Args:
        url: the endpoint's base URL.
        path: the route (``/v1/completions``).
        attempts: how many times it was sent.
        last: the last failure (``HTTP 500``, ``ReadTimeout``).
    """

    def __init__(self, url: str, path: str, attempts: int, last: str) -> None:
        from climb_vllm.serving.state import own_server

        server = own_server(url)
        log = f" (its log: {server['log']})" if server and server.get("log") else ""
        super().__init__(
            f"{url}{path} failed {attempts} times in a row (last: {last}); the run stopped, "
            "keeping every finished chunk.",
            f"check that the server at {url} is healthy{log}, then rerun the same command to "
            "resume; --max-retries N allows more retries for a flaky server.",
        )
        self.url, self.path, self.attempts, self.last = url, path, attempts, last

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (RetriesExhausted, (self.url, self.path, self.attempts, self.last))


def api_key() -> str | None:
    """The API key from the environment, if any."""
    for name in API_KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return None


@dataclass
class TransportStats:
    """Counters for the benchmark and the manifest.

    Attributes:
        requests: answers received.
        retries: requests sent again.
        response_bytes: bytes of the answers.
        failovers: requests moved to another endpoint.
        causes: why requests were sent again: ``HTTP 500``, ``ReadTimeout``, ``unusable
            response`` ... -> how many times.
    """

    requests: int = 0
    retries: int = 0
    response_bytes: int = 0
    failovers: int = 0
    causes: dict[str, int] = field(default_factory=dict)


class Transport:
    """HTTP clients for a list of base URLs.

    Args:
        urls: endpoint base URLs (``http://host:port``).
        concurrency: requests in flight at once, over all endpoints.
        rate: the most requests per second (None = unlimited), via asyncio-throttle.
        retries: attempts after the first for a retryable failure.
        timeout: seconds for one request (None: :func:`request_timeout` of each request).
        backoff: base delay in seconds of the exponential backoff.
        stall_warn / stall_fail: seconds without a finished request before the watchdog warns
            (naming the silent endpoints and what their /health answers) and before it stops the
            run with an error.
        hook: a callable returning an ``httpx.AsyncBaseTransport`` to send through instead of
            the network one (a proxy transport, or fault injection in tests); it is called once
            per batch of work, since each batch runs in its own event loop.
    """

    def __init__(
        self,
        urls: Sequence[str],
        *,
        concurrency: int = 64,
        rate: int | None = None,
        retries: int = 6,
        timeout: float | None = None,
        backoff: float = 0.5,
        hook: Any = None,
        stall_warn: float = STALL_WARN,
        stall_fail: float = STALL_FAIL,
    ) -> None:
        self.hook = hook
        self.urls = [u.rstrip("/") for u in urls]
        self.concurrency = concurrency
        self.rate = rate
        self.retries = retries
        self.timeout = timeout
        self.backoff = backoff
        self.stall_warn = stall_warn
        self.stall_fail = stall_fail
        self.dead: set[int] = set()
        #: Whether a body the parser rejects is asked for again (a probe sets False: the same
        #: request gives the same answer, and that answer is definite).
        self.retry_unusable = True
        #: Whether the server answers a request it cannot serve with HTTP 500 (llama-cpp-
        #: python's server; the probe sets it once it knows the server).
        self.refuses_with_500 = False
        self.stats = TransportStats()
        key = api_key()
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    def _client(self) -> Any:
        import httpx

        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout or 600.0, connect=10.0),
            limits=limits,
            headers=self._headers,
            transport=self.hook() if self.hook is not None else None,
        )

    def get(self, endpoint: int, path: str) -> tuple[int, str]:
        """One GET of a probe, with the run's retries; returns (status, text) of the first
        definite answer (see :meth:`ask`)."""
        status, content = self.ask(endpoint, "GET", path, None)
        return status, content.decode("utf-8", errors="replace")

    def post(self, endpoint: int, path: str, payload: dict[str, Any]) -> tuple[int, Any]:
        """One POST of a probe, with the run's retries; returns (status, parsed JSON or None)
        of the first definite answer (see :meth:`ask`)."""
        status, content = self.ask(endpoint, "POST", path, payload)
        try:
            body = json.loads(content)
        except ValueError:
            body = None
        return status, body

    def ask(
        self, endpoint: int, method: str, path: str, payload: dict[str, Any] | None
    ) -> tuple[int, bytes]:
        """One request outside a batch of work (a probe), through the same clients, hook and
        retries as the run's own requests: a reset, a timeout, HTTP 408, 429 or 5xx is retried
        with backoff, so only a definite answer (2xx, or a 4xx that refuses the request) comes
        back and decides a capability.

        Args:
            endpoint: index of the endpoint.
            method: "GET" or "POST".
            path: the route (``/v1/models``).
            payload: the JSON body of a POST.

        Raises:
            UserError: the endpoint refuses connections (it is not running), or the request
                still failed after every retry (:class:`RetriesExhausted`).
        """
        return self.ask_each(endpoint, method, path, [payload])[0]

    def ask_each(
        self,
        endpoint: int,
        method: str,
        path: str,
        payloads: Sequence[dict[str, Any] | None],
    ) -> list[tuple[int, bytes]]:
        """:meth:`ask` for each payload in turn, over one connection (the server tokenizer's
        texts); the arguments and errors as there."""

        async def each() -> list[tuple[int, bytes]]:
            async with self._client() as client:
                return [await self._ask(client, endpoint, method, path, p) for p in payloads]

        return asyncio.run(each())

    async def _ask(
        self,
        client: Any,
        endpoint: int,
        method: str,
        path: str,
        payload: dict[str, Any] | None,
    ) -> tuple[int, bytes]:
        import httpx

        url = self.urls[endpoint]
        last, refused, timed_out = "", 0, 0
        said_before: tuple[int, bytes] = (0, b"")
        same = 0
        for attempt in range(self.retries + 1):
            if attempt:
                await self._pause(attempt, last)
            try:
                response = await client.request(
                    method, url + path, json=payload, timeout=PROBE_TIMEOUT
                )
            except httpx.TransportError as exc:  # refused, reset, timed out
                last = type(exc).__name__
                # Nothing listens (the server is not started or died): said at once after a
                # few refusals, not after the whole backoff.
                refused += isinstance(exc, httpx.ConnectError)
                if refused >= CONNECT_TRIES:
                    raise _unreachable(url, last) from exc
                timed_out += isinstance(exc, httpx.TimeoutException)
                if timed_out >= TIMEOUT_TRIES:
                    raise _death(url) or Unreachable(
                        f"{url}{path} did not answer within {PROBE_TIMEOUT:.0f} s, "
                        f"{timed_out} times (the server is hung or overloaded).",
                        "restart the server (make stop, then make serve) or correct --endpoint.",
                    ) from exc
                continue
            self.stats.requests += 1
            if response.status_code in RETRY_STATUS:
                last = f"HTTP {response.status_code}"
                said = response.content[:300]
                same = same + 1 if (response.status_code, said) == said_before else 1
                said_before = (response.status_code, said)
                if self._refusal(response.status_code, same):
                    return response.status_code, response.content  # the server's answer
                continue
            return response.status_code, response.content
        raise RetriesExhausted(url, path, self.retries + 1, last)

    def _refusal(self, status: int, same: int) -> bool:
        """Whether ``same`` identical answers of HTTP ``status`` are the server's refusal of
        the request (see :data:`SAME_500`) rather than a fault."""
        return self.refuses_with_500 and status == 500 and same >= SAME_500

    async def _pause(self, attempt: int, cause: str) -> None:
        """The backoff before retry ``attempt`` (1, 2, ...): exponential, with jitter; the
        retry is counted under ``cause`` (the last failure, its detail left out)."""
        self.stats.retries += 1
        cause = cause.split(" (")[0] or "unknown"
        self.stats.causes[cause] = self.stats.causes.get(cause, 0) + 1
        delay = self.backoff * 2 ** (attempt - 1)
        await asyncio.sleep(delay * (0.5 + random.random()))

    async def _post(
        self,
        client: Any,
        endpoint: int,
        path: str,
        payload: dict[str, Any],
        check: Callable[[Any], Any],
    ) -> Any:
        """POST with retries; ``check`` parses the body and raises to ask for a retry."""
        import httpx

        last, transient, said_before, same = "", True, (0, ""), 0
        for attempt in range(self.retries + 1):
            if attempt:
                await self._pause(attempt, last)
            try:
                limit = self.timeout or request_timeout(payload)
                response = await client.post(
                    self.urls[endpoint] + path, json=payload, timeout=limit
                )
            except httpx.TransportError as exc:  # connect errors, resets, timeouts
                last, transient = f"{type(exc).__name__}", True
                if isinstance(exc, httpx.ConnectError) and attempt >= 2:
                    raise EndpointDown(endpoint, last) from exc
                continue
            self.stats.requests += 1
            self.stats.response_bytes += len(response.content)
            if response.status_code in RETRY_STATUS:
                last, transient = f"HTTP {response.status_code}", True
                said = response.text[:300]
                same = same + 1 if (response.status_code, said) == said_before else 1
                said_before = (response.status_code, said)
                # A probe's same HTTP 500, again and again, is the server's answer (see
                # SAME_500), not a passing fault.
                if not self.retry_unusable and self._refusal(response.status_code, same):
                    raise RequestFailed(
                        f"{self.urls[endpoint]}{path} answered HTTP 500 {same} times the same: "
                        f"{said or '(empty)'}"
                    )
                continue
            if response.status_code >= 400:
                raise RequestFailed(
                    f"{self.urls[endpoint]}{path} answered HTTP {response.status_code}: "
                    f"{response.text[:300]}"
                )
            try:
                return check(json.loads(response.content))
            except ValueError as exc:  # invalid JSON or a parser's ResponseError
                last, transient = f"unusable response ({exc})", False
                if not self.retry_unusable:
                    raise RequestFailed(f"{self.urls[endpoint]}{path} gave an {last}") from exc
                continue
        if transient:
            raise RetriesExhausted(self.urls[endpoint], path, self.retries + 1, last)
        raise RequestFailed(
            f"{self.urls[endpoint]}{path} failed {self.retries + 1} times (last: {last})"
        )

    async def run(
        self,
        jobs: Sequence[tuple[int, str, dict[str, Any]]],
        check: Callable[[int, Any], Any],
        on_result: Callable[[int, Any], None],
    ) -> None:
        """Send every job ``(endpoint, path, payload)``; ``on_result(job index, parsed)``.

        ``check(job index, body)`` parses a body; a ValueError from it means retry.
        """
        throttler = None
        if self.rate:
            from asyncio_throttle.throttler import Throttler

            throttler = Throttler(rate_limit=self.rate, period=1.0)
        queue: asyncio.Queue[int | None] = asyncio.Queue(maxsize=2 * self.concurrency)
        errors: list[BaseException] = []
        progress = {"last": asyncio.get_running_loop().time(), "warned": 0.0}
        pending: dict[int, int] = {}  # job index -> endpoint, for the jobs in flight

        def finished(index: int, parsed: Any) -> None:
            progress["last"] = asyncio.get_running_loop().time()
            pending.pop(index, None)
            on_result(index, parsed)

        async with self._client() as client:

            async def worker() -> None:
                while True:
                    index = await queue.get()
                    if index is None:
                        return
                    if errors:  # the run is stopping: drain the queue without working
                        continue
                    pending[index] = jobs[index][0]
                    try:
                        finished(index, await self._send(client, throttler, index, jobs, check))
                    except asyncio.CancelledError:
                        raise  # the watchdog stops the run
                    except BaseException as exc:  # stop the run, keep the first error
                        errors.append(exc)

            async def produce() -> None:
                for index in range(len(jobs)):
                    if errors:
                        break
                    await queue.put(index)
                for _ in workers:
                    await queue.put(None)

            workers = [asyncio.create_task(worker()) for _ in range(self.concurrency)]
            producer = asyncio.create_task(produce())
            watchdog = asyncio.create_task(
                self._watch(progress, pending, errors, [producer, *workers])
            )
            await asyncio.gather(producer, *workers, return_exceptions=True)
            watchdog.cancel()
        if errors:
            raise errors[0]

    async def _watch(
        self,
        progress: dict[str, float],
        pending: dict[int, int],
        errors: list[BaseException],
        tasks: list[asyncio.Task[None]],
    ) -> None:
        """Warn when no request has finished for ``stall_warn`` seconds (naming the silent
        endpoints and their /health answers); stop the run after ``stall_fail`` when none of
        them answers /health (a busy server that answers keeps going)."""
        import sys

        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(5.0, self.stall_warn / 4))
            quiet = loop.time() - progress["last"]
            if quiet < self.stall_warn or not pending:
                continue
            silent = sorted({self.urls[e] for e in pending.values()})
            answers = [(url, await self._health(url)) for url in silent]
            health = "; ".join(f"{url}: {answer}" for url, answer in answers)
            # A server whose /health answers is busy, not hung: its requests keep their own
            # timeouts. One that does not answer is stopped, dead or unreachable.
            hung = all(not answer.endswith("HTTP 200") for _, answer in answers)
            if quiet >= self.stall_fail and hung:
                errors.append(
                    UserError(
                        f"No request has finished for {quiet:.0f} s ({health}). Every finished "
                        "chunk is kept.",
                        "restart the silent server (make stop, then make serve) and rerun the "
                        "same command to resume; raise --timeout if its requests are just slow.",
                    )
                )
                for task in tasks:
                    task.cancel()
                return
            if loop.time() - progress["warned"] >= self.stall_warn:
                progress["warned"] = loop.time()
                print(
                    f"warning: no request has finished for {quiet:.0f} s; {health}",
                    file=sys.stderr,
                )

    async def _health(self, url: str) -> str:
        """What ``url``/health answers within 5 s, in words."""
        import httpx

        try:
            async with httpx.AsyncClient(timeout=5.0, headers=self._headers) as client:
                response = await client.get(url + "/health")
            return f"/health answered HTTP {response.status_code}"
        except httpx.TimeoutException:
            return "/health did not answer in 5 s (hung?)"
        except httpx.HTTPError as exc:
            return f"/health failed ({type(exc).__name__})"

    async def _send(
        self,
        client: Any,
        throttler: Any,
        index: int,
        jobs: Sequence[tuple[int, str, dict[str, Any]]],
        check: Callable[[int, Any], Any],
    ) -> Any:
        """One job, moved to a live endpoint if its own is down."""
        endpoint, path, payload = jobs[index]
        while True:
            if endpoint in self.dead:
                endpoint = self._alive(index)
            try:
                if throttler is not None:
                    async with throttler:
                        return await self._post(
                            client, endpoint, path, payload, lambda b: check(index, b)
                        )
                return await self._post(client, endpoint, path, payload, lambda b: check(index, b))
            except EndpointDown as down:
                self.dead.add(down.endpoint)
                self.stats.failovers += 1

    def _alive(self, index: int) -> int:
        alive = [i for i in range(len(self.urls)) if i not in self.dead]
        if not alive:
            for url in self.urls:
                died = _death(url)
                if died is not None:
                    raise died
            raise Unreachable(
                f"No endpoint is reachable ({', '.join(self.urls)}).",
                "start the server(s) with make serve, or correct --endpoint; rerun to resume.",
            )
        return alive[index % len(alive)]


class EndpointDown(Exception):
    """An endpoint refused connections repeatedly."""

    def __init__(self, endpoint: int, reason: str) -> None:
        super().__init__(f"endpoint {endpoint} down ({reason})")
        self.endpoint = endpoint
