"""The HTTP face of the webhook: ``POST /validate`` (TLS port) and ``/healthz``, ``/readyz``, ``/metrics`` (plain port).

Contract: ``/validate`` answers every AdmissionReview v1 with an AdmissionReview carrying the same ``uid``, written in
ASCII JSON (a lone surrogate in it comes back as the escape it came in; :mod:`desched.webhook.review` decides). A body
over ``max_body_bytes`` gets 413 (and the connection closes), a body that is not an AdmissionReview or nests too deep
400 (``{"message": ...}``), never 500: an unexpected failure while deciding is logged and answered as a decision (deny
for policy objects in ``enforce`` mode, allow with a warning that says it was not checked otherwise), as are an object
holding a lone surrogate (:func:`~desched.webhook.review.lone_surrogate`: not text, nothing could parse it), a policy
object over the :class:`~desched.webhook.limits.PolicyLimits` (checked before any YAML is parsed), a full worker pool
("webhook busy"), no worker able to start, and running out of the time budget (counted from the request's arrival,
reading the body and queueing included).

The event loop reads, parses and answers; it does no work that grows with a policy's text beyond hashing it. Small
policy objects (a body of at most ``INLINE_BYTES`` without YAML aliases) are decided on it: their cost is bounded by
their size and is below that of a hand-off. Of the other policy objects the loop checks only the sizes of the policy
texts and the decision cache; the :class:`~desched.webhook.pool.DecisionPool` (worker processes, a bounded queue) checks
the other limits and decides, and a worker still deciding when the budget runs out is killed, so the work stops. A
workload or PDB that the cluster cache's index answers judging a few workloads at most
(:func:`~desched.webhook.workloads.bounded`) is decided on the loop; the other requests that read the cluster cache run
in the thread pool, at most ``max_concurrency`` at once, the others waiting within their time budget. Decisions on
policy objects are remembered by content (:class:`~desched.webhook.cache.DecisionCache`). Every request logs one JSON
line with its uid, kind, namespace/name, operation, verdict, rule IDs, whether the decision came from the cache, and
duration from its arrival - never the object's data. ``/readyz`` is 200 only while the worker pool can decide and, as
the caller's ``ready()`` says, the cluster cache, when there is one, has synced.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeAlias, TypeVar

from fastapi import FastAPI
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from desched.linter.finding import Finding
from desched.runtime.prometheus import Counter, Histogram
from desched.tree import Json, mapping_or_empty
from desched.webhook.cache import DecisionCache, reads_cluster
from desched.webhook.decision import ClusterView, Decision, Options, response
from desched.webhook.limits import PolicyLimits
from desched.webhook.pool import Answer, DecisionPool, OverLimits, OwnFindings, WorkerError
from desched.webhook.review import POLICY_KINDS, BadReview, decide, lone_surrogate, parse_review
from desched.webhook.server import ARRIVAL, CLOSE, log_refusal
from desched.webhook.workloads import ADMITTED_KINDS, bounded

LOG = logging.getLogger("desched.webhook")
P = ParamSpec("P")
T = TypeVar("T")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
INLINE_BYTES = 16 * 1024
#: The stages of answering ``/validate`` whose CPU time :class:`Stages` counts: reading the body from the ASGI server,
#: decoding the JSON, deciding, logging and counting, encoding the answer. TLS, HTTP framing and the event loop are
#: the rest of the process's CPU time.
STAGES = ("read", "decode", "decide", "log", "encode")


class Stages:
    """The CPU time spent in each of :data:`STAGES`, summed in ``desched_webhook_stage_cpu_seconds_total`` when on
    (``desched webhook --stage-times``, for the benchmarks: 0.3 us a stage); off, no clock is read and the family is
    not exposed. A stage is timed on the event loop's thread, without what the loop did for other requests while the
    request awaited a thread or a worker process (:meth:`elsewhere`), plus the CPU time of the thread that decided
    (:meth:`counted`); a worker process's is not counted (it is not the server process's either)."""

    def __init__(self, on: bool = False) -> None:
        self.on = on
        self.seconds = Counter(
            "desched_webhook_stage_cpu_seconds_total",
            "CPU time answering /validate, by stage (--stage-times)",
            ("stage",),
        )
        self._away: ContextVar[list[float]] = ContextVar("away")  # the request's time awaiting elsewhere, this stage

    def lap(self, stage: str | None, since: float) -> float:
        """The thread's CPU clock now, having added to ``stage`` the time since ``since`` (the clock at its start)
        but what :meth:`elsewhere` left out; ``stage`` None starts a stage; 0.0 when off."""
        if not self.on:
            return 0.0
        now = time.thread_time()
        if stage is None:
            self._away.set([0.0])
        else:
            away = self._away.get([0.0])
            self.seconds.inc(stage, amount=now - since - away[0])
            away[0] = 0.0
        return now

    async def elsewhere(self, awaitable: Awaitable[T]) -> T:
        """``await awaitable`` (work in a thread or a worker process), leaving the event loop's CPU time meanwhile
        out of the current stage."""
        if not self.on:
            return await awaitable
        started = time.thread_time()
        try:
            return await awaitable
        finally:
            self._away.get([0.0])[0] += time.thread_time() - started

    def counted(self, stage: str, work: Callable[P, T]) -> Callable[P, T]:
        """``work``, adding to ``stage`` the CPU time of the thread that runs it when on."""
        if not self.on:
            return work

        def timed(*args: P.args, **kwargs: P.kwargs) -> T:
            started = time.thread_time()
            try:
                return work(*args, **kwargs)
            finally:
                self.seconds.inc(stage, amount=time.thread_time() - started)

        return timed


class WebhookMetrics:
    def __init__(self, stage_times: bool = False) -> None:
        self.requests = Counter(
            "desched_webhook_requests_total",
            "Admission requests by operation, result and mode",
            ("operation", "result", "mode"),
        )
        self.latency = Histogram(
            "desched_webhook_request_duration_seconds", "Time to answer an admission request", LATENCY_BUCKETS
        )
        self.rules = Counter("desched_webhook_rule_hits_total", "Findings reported at admission, by rule", ("rule",))
        self.rejected = Counter("desched_webhook_bad_requests_total", "Requests answered 400 or 413", ("code",))
        self.cached = Counter(
            "desched_webhook_decision_cache_hits_total",
            "Decisions answered from the decision cache (the same object seen before)",
            (),
        )
        self.reload_failures = Counter(
            "desched_webhook_certificate_reload_failures_total",
            "Changes of the certificate files that did not load as a pair (the previous certificate kept serving)",
            (),
        )
        self.worker_start_failures = Counter(
            "desched_webhook_worker_start_failures_total",
            "Decision worker processes that could not be started (each is retried with backoff)",
            (),
        )
        self.unchecked = Counter(
            "desched_webhook_unchecked_total",
            "Policy objects answered without a check (over the limits, busy, out of time, no worker), by result",
            ("result",),
        )
        self.stages = Stages(stage_times)

    def exposition(self) -> str:
        families = (
            self.requests,
            self.latency,
            self.rules,
            self.rejected,
            self.cached,
            self.reload_failures,
            self.worker_start_failures,
            self.unchecked,
            *((self.stages.seconds,) if self.stages.on else ()),
        )
        return "\n".join(line for family in families for line in family.render()) + "\n"


class Busy(Exception):
    """Every worker and queue slot is taken: the request is answered at once, not checked (the message says so)."""


class Reviewer:
    """Decides admission requests within the limits (see the module contract)."""

    def __init__(
        self,
        options: Options,
        cluster: ClusterView | None = None,
        budget: float = 2.5,
        max_concurrency: int = 64,
        max_body_bytes: int = 3 * 2**20,
        limits: PolicyLimits | None = None,
        workers: int = 2,
        queue: int = 4,
        stage_times: bool = False,
    ) -> None:
        self.options = options
        self.cluster = cluster
        self.budget = budget
        self.max_body_bytes = max_body_bytes
        self.limits = limits or PolicyLimits()
        self.metrics = WebhookMetrics(stage_times)
        self.decisions = DecisionCache()
        self.pool = DecisionPool(
            options, workers, queue, start_failures=self.metrics.worker_start_failures, limits=self.limits
        )
        self._slots = asyncio.Semaphore(max_concurrency)

    async def answer(self, request: Json, body: bytes, received: float) -> Decision:
        """The decision on ``request``, read from ``body`` (see the module contract for where it is made), within the
        budget counted from ``received`` (the ``time.perf_counter()`` when the request arrived)."""
        stages = self.metrics.stages
        started = stages.lap(None, 0.0)
        try:
            decision = await self._route(request, body, received + self.budget)
        except TimeoutError:
            decision = self._fallback(request, f"validation did not finish within {self.budget:g}s")
        except Busy as error:
            decision = self._fallback(request, str(error))
        except WorkerError as error:
            decision = self._fallback(request, f"validation failed: {error}")
        except Exception as error:  # never a 500: the failure becomes a decision, and is logged
            LOG.exception("decision failed", extra={"event": {"uid": request.get("uid")}})
            decision = self._fallback(request, f"validation failed: {type(error).__name__}")
        decided = stages.lap("decide", started)
        self._account(request, decision, time.perf_counter() - received)
        stages.lap("log", decided)
        return decision

    def refused(self, code: int, message: str) -> None:
        """Count and log a request answered ``code`` (400, 408, 413) instead of being decided."""
        self.metrics.rejected.inc(str(code))
        log_refusal(code, message)

    def inline(self, request: Json, body: bytes | bytearray) -> bool:
        """Whether the decision is cheap enough for the event loop: a policy object in a body of at most
        ``INLINE_BYTES`` with no YAML alias (nothing expands beyond its size), and not the active policy ConfigMap
        (whose update is also checked against every cached workload)."""
        if request["kind"].get("kind") not in POLICY_KINDS or len(body) > INLINE_BYTES or b"*" in body:
            return False
        return not reads_cluster(request, self.cluster)

    async def _route(self, request: Json, body: bytes, deadline: float) -> Decision:
        kind = str(mapping_or_empty(request["kind"]).get("kind", ""))
        obj = request.get("object")
        if time.perf_counter() >= deadline:
            raise TimeoutError  # the budget went on reading and waiting: nothing is started that could not finish
        where = lone_surrogate(body, request)
        if where is not None:
            return self._fallback(request, f"{where} holds a lone surrogate (half a UTF-16 pair), which is not text")
        own = await self._own(request, body, deadline)
        if bounded(request, self.cluster):
            return decide(request, self.options, self.cluster, own)  # from the index, a few workloads: no thread hop
        if kind not in POLICY_KINDS or reads_cluster(request, self.cluster):
            threaded = asyncio.wait_for(self._decide(request, own), timeout=deadline - time.perf_counter())
            return await self.metrics.stages.elsewhere(threaded)
        if request["operation"] not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
            return decide(request, self.options)  # allowed at once: nothing to check
        inline = self.inline(request, body)
        # Of a large object the event loop checks only the sizes of its policy texts; the worker checks the other
        # limits (tens of ms per MB, which would delay every answer due meanwhile).
        reason = self.limits.refuses(request, sizes_only=not inline)
        if reason is not None:
            return self._fallback(request, f"policy over the limits: {reason}")
        if inline:
            return self.decisions.decide(request, self.options, self.cluster)
        key = self.decisions.key(request, self.cluster)
        known = self.decisions.get(key, request)
        if known is not None:
            return known
        answer = await self._pooled(body, deadline)
        if isinstance(answer, OverLimits):
            return self._fallback(request, f"policy over the limits: {answer.reason}")
        if not isinstance(answer, Decision):
            raise WorkerError(f"unexpected answer {type(answer).__name__}")
        self.decisions.put(key, answer)
        return answer

    async def _own(self, request: Json, body: bytes, deadline: float) -> list[Finding] | None:
        """What the deployment rules find in a workload of a body over ``INLINE_BYTES``, found in a worker (their
        cost grows with its containers: 1.5 s for 10,000); None for every other request (found where it is
        decided)."""
        kind = mapping_or_empty(request["kind"]).get("kind")
        if kind not in ADMITTED_KINDS or len(body) <= INLINE_BYTES or request["operation"] not in ("CREATE", "UPDATE"):
            return None
        answer = await self._pooled(body, deadline)
        if not isinstance(answer, OwnFindings):
            raise WorkerError(f"unexpected answer {type(answer).__name__}")
        return answer.findings

    async def _pooled(self, body: bytes, deadline: float) -> Answer:
        """The worker pool's answer on ``body`` within ``deadline``; :class:`Busy` when the pool is full."""
        if self.pool.full():
            raise Busy(f"webhook busy: {self.pool.workers + self.pool.queue} decisions running or queued, retry later")
        with self.pool.slot():  # counted now: the requests of this loop turn see it before its task starts
            pooled = asyncio.wait_for(self.pool.decide(body), timeout=deadline - time.perf_counter())
            return await self.metrics.stages.elsewhere(pooled)

    async def _decide(self, request: Json, own: list[Finding] | None) -> Decision:
        """The decision in a thread (a workload's ``own`` findings given: never cached, so not looked up)."""
        work = self.decisions.decide if own is None else functools.partial(decide, own=own)
        work = self.metrics.stages.counted("decide", work)
        async with self._slots:
            return await run_in_threadpool(work, request, self.options, self.cluster)

    def _fallback(self, request: Json, reason: str) -> Decision:
        """The answer when the object was not checked: denied for a policy object in enforce mode (the policy
        webhooks fail closed), otherwise allowed with a warning that says it was not checked."""
        kind = str(request["kind"].get("kind", ""))
        policy = kind in POLICY_KINDS and request["operation"] in ("CREATE", "UPDATE")
        deny = self.options.mode == "enforce" and policy
        if policy:
            self.metrics.unchecked.inc("denied" if deny else "allowed")
        message = f"desched: not checked: {reason}"
        return Decision(str(request["uid"]), not deny, message, [] if deny else [message], [], kind)

    def _account(self, request: Json, decision: Decision, seconds: float) -> None:
        result = "allowed" if decision.allowed else "denied"
        self.metrics.requests.inc(str(request.get("operation")), result, self.options.mode)
        self.metrics.latency.observe(seconds)
        for rule in decision.rules:
            self.metrics.rules.inc(rule)
        if decision.cached:
            self.metrics.cached.inc()
        obj = request.get("object") or request.get("oldObject")
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        metadata = mapping_or_empty(metadata)
        LOG.info(
            "admission",
            extra={
                "event": {
                    "uid": decision.uid,
                    "kind": decision.kind,
                    "namespace": request.get("namespace") or metadata.get("namespace"),
                    "name": request.get("name") or metadata.get("name"),
                    "operation": request.get("operation"),
                    "dryRun": bool(request.get("dryRun")),
                    "allowed": decision.allowed,
                    "rules": decision.rules,
                    "warnings": len(decision.warnings),
                    "cached": decision.cached,
                    "ms": round(seconds * 1000, 2),
                }
            },
        )


Scope: TypeAlias = dict[str, Any]
Message: TypeAlias = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
JSON_TYPE = (b"content-type", b"application/json")


class AdmissionApp:
    """The admission app served over TLS: ``POST /validate`` (see the module contract), 404 for any other path and 405
    for another method, as a bare ASGI application. A framework's routing, request object and response classes cost
    a fifth of a small policy's answer and decide nothing."""

    def __init__(self, reviewer: Reviewer) -> None:
        self.reviewer = reviewer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await _lifespan(receive, send)
        elif scope["path"] != "/validate":
            await _answer(send, 404, {"detail": "Not Found"})
        elif scope["method"] != "POST":
            await _answer(send, 405, {"detail": "Method Not Allowed"}, (b"allow", b"POST"))
        else:
            await self._validate(scope, receive, send)

    async def _validate(self, scope: Scope, receive: Receive, send: Send) -> None:
        reviewer, stages = self.reviewer, self.reviewer.metrics.stages
        clock = stages.lap(None, 0.0)
        arrival = scope.get("extensions", {}).get(ARRIVAL, {}).get("perf_counter")
        received = arrival if isinstance(arrival, float) else time.perf_counter()
        too_large = f"the body exceeds {reviewer.max_body_bytes} bytes"
        declared = next((value for name, value in scope["headers"] if name == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > reviewer.max_body_bytes:
            return await _refuse(reviewer, send, 413, too_large, close=True)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":  # gone, or refused by the server (late, or one too many
                return await _answer(send, 499, None)  # reading): nobody to answer
            body += message.get("body", b"")
            if len(body) > reviewer.max_body_bytes:
                return await _refuse(reviewer, send, 413, too_large, close=True)
            if not message.get("more_body", False):
                break
        data = bytes(body)
        clock = stages.lap("read", clock)
        try:
            review = parse_review(data)
        except BadReview as error:
            return await _refuse(reviewer, send, 400, str(error))
        stages.lap("decode", clock)
        decision = await reviewer.answer(review, data, received)
        clock = stages.lap(None, 0.0)
        messages = _messages(200, response(decision))
        stages.lap("encode", clock)
        for message in messages:
            await send(message)


def create_app(reviewer: Reviewer) -> AdmissionApp:
    """The admission app served over TLS."""
    return AdmissionApp(reviewer)


async def _lifespan(receive: Receive, send: Send) -> None:
    """Nothing to start or stop: each lifespan event is acknowledged."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def _messages(code: int, content: object, *headers: tuple[bytes, bytes]) -> tuple[Message, Message]:
    """The ASGI messages answering ``code`` with ``content`` written as ASCII JSON (every other character escaped:
    any string a JSON parser accepted is written back, a lone surrogate (``"\\ud800"``) as the same escape, which the
    API server reads as it read the request's); no body when ``content`` is None."""
    body = b"" if content is None else json.dumps(content, separators=(",", ":")).encode("ascii")
    length = (b"content-length", str(len(body)).encode("ascii"))
    head = [length, JSON_TYPE, *headers] if content is not None else [length, *headers]
    return {"type": "http.response.start", "status": code, "headers": head}, {
        "type": "http.response.body",
        "body": body,
    }


async def _answer(send: Send, code: int, content: object, *headers: tuple[bytes, bytes]) -> None:
    """Answer ``code`` with ``content`` (:func:`_messages`)."""
    for message in _messages(code, content, *headers):
        await send(message)


async def _refuse(reviewer: Reviewer, send: Send, code: int, message: str, close: bool = False) -> None:
    """A ``{"message": ...}`` answer with status ``code``; ``close`` when the body is left unread (the connection
    cannot be reused)."""
    reviewer.refused(code, message)
    await _answer(send, code, {"message": message}, *((CLOSE,) if close else ()))


def create_ops_app(reviewer: Reviewer, ready: Callable[[], bool], detail: Callable[[], str] = str) -> FastAPI:
    """Health, readiness and metrics, served on plain HTTP. ``/readyz`` is 200 while ``ready()`` and the worker pool
    can decide (:meth:`~desched.webhook.pool.DecisionPool.ready`); ``detail()`` (lines) follows its verdict."""
    app = FastAPI(title="desched webhook operations", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/healthz")
    async def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok\n")

    @app.get("/readyz")
    async def readyz() -> PlainTextResponse:
        deciding = reviewer.pool.ready()
        verdict, code = ("ok\n", 200) if ready() and deciding else ("not ready\n", 503)
        workers = "" if deciding else "no decision worker runs: starting one failed, retrying (see the log)\n"
        return PlainTextResponse(verdict + workers + detail(), status_code=code)

    @app.get("/metrics")
    async def metrics() -> PlainTextResponse:
        return PlainTextResponse(reviewer.metrics.exposition(), media_type="text/plain; version=0.0.4")

    return app


class JsonFormatter(logging.Formatter):
    """One JSON object per line, whoever logs (desched, uvicorn, asyncio): time, level, logger, message and the
    record's ``event`` fields; an exception is the fields ``error`` (its last line) and ``traceback`` (all of it, one
    string), never lines of its own."""

    def format(self, record: logging.LogRecord) -> str:
        entry: Json = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        event = getattr(record, "event", None)
        if isinstance(event, dict):
            entry.update(event)
        if record.exc_info:
            text = self.formatException(record.exc_info)
            entry["error"] = text.splitlines()[-1] if text else ""
            entry["traceback"] = text
        elif record.stack_info:
            entry["traceback"] = record.stack_info
        return json.dumps(entry, default=str)
