"""Decisions in worker processes: a fixed number of workers, a bounded queue, and work that stops with its budget.

Contract: :class:`DecisionPool` decides AdmissionReview bodies (:func:`desched.webhook.review.decide`, no cluster
view; first the :class:`~desched.webhook.limits.PolicyLimits`, whose checks cost tens of ms per MB of policy text and
so stay off the server's event loop; of a workload, what the deployment rules find in it alone,
:class:`OwnFindings`, which the server completes with the cluster's) in ``workers`` daemon processes, ``spawn``ed by
:meth:`DecisionPool.start` or the first call, one body at a time each. What crosses to a worker is the pickled
:class:`~desched.webhook.decision.Options` and limits, plain values only (``Settings`` is an immutable record; the
enabled-rule cache stays in the engine). At most ``workers + queue`` calls are running or waiting;
:meth:`DecisionPool.full` says when one more would be refused (the caller answers at once). A call cancelled while its
body is being decided (the time budget ran out) kills that worker, so the work stops and its memory is returned, and
starts a replacement; a worker is also replaced after ``max_tasks`` decisions, which bounds what its heap can grow to.
An exception inside a worker is raised in the caller as :class:`WorkerError` with the exception's type name.
Workers run :data:`NICE` steps below the server's CPU priority, so that on a busy host the event loop, which answers
at the deadlines, gets the CPU before the decisions do.

Replacements are started in a thread beside the event loop. A worker that cannot be started is logged, counted
(``start_failures``) and started again after a backoff (from :data:`BACKOFF` doubling up to :data:`MAX_BACKOFF`
seconds) until it runs. :meth:`DecisionPool.ready` is false while no worker runs and starting one fails (the pool
cannot decide: ``/readyz`` says not ready, so the pod is routed around or replaced), and :meth:`DecisionPool.decide`
then raises :class:`WorkerError` at once instead of waiting for the budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

from desched.linter.finding import Finding
from desched.runtime.prometheus import Counter
from desched.tree import mapping_or_empty
from desched.webhook.decision import Decision, Json, Options
from desched.webhook.limits import PolicyLimits

__all__ = ["BACKOFF", "MAX_BACKOFF", "NICE", "DecisionPool", "OverLimits", "OwnFindings", "WorkerError"]

LOG = logging.getLogger("desched.webhook")
BACKOFF = 0.5
MAX_BACKOFF = 30.0
NICE = 10  # how much lower than the server's the priority of decision work is


def _yield_cpu() -> None:
    """Lower the calling thread's CPU priority by :data:`NICE` (Linux: a thread's own; elsewhere the process's): the
    decisions give way to the event loop that reads and answers requests. Only for a process of its own: a thread of
    the server's process preempted while it holds the GIL would hold up the event loop with it. Nothing happens where
    lowering is refused."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0) + NICE)


class OverLimits(NamedTuple):
    """A worker's answer for a policy object over the :class:`~desched.webhook.limits.PolicyLimits`: the limit it
    broke (nothing was parsed beyond the AdmissionReview)."""

    reason: str


class OwnFindings(NamedTuple):
    """A worker's answer for a workload: what the deployment rules find in it alone
    (:func:`~desched.webhook.workloads.own_findings`)."""

    findings: list[Finding]


Answer = Decision | OverLimits | OwnFindings


class WorkerError(Exception):
    """A decision failed inside a worker, the worker died, or no worker runs; the message says which."""


class _Worker:
    """One worker process and the pipe to it."""

    def __init__(self, options: Options, limits: PolicyLimits) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads and an event loop
        self.connection, child = context.Pipe()
        arguments = (child, options, limits)
        self.process = context.Process(target=_serve, args=arguments, name="desched-decide", daemon=True)
        try:
            self.process.start()
        finally:
            child.close()
        self.tasks = 0

    def call(self, body: bytes) -> Answer:
        """The decision on ``body``, or the limit it breaks (blocks until the worker answers)."""
        self.tasks += 1
        try:
            self.connection.send_bytes(body)
            answer = self.connection.recv()
        except (EOFError, OSError):
            raise WorkerError("worker exited") from None
        if isinstance(answer, Decision | OverLimits | OwnFindings):
            return answer
        raise WorkerError(str(answer))

    def stop(self) -> None:
        """Kill the process; the pipe closes when the last reference goes (a thread may still be reading it)."""
        self.process.kill()
        self.process.join()


def _serve(connection: Connection, options: Options, limits: PolicyLimits) -> None:
    """The worker's loop: an AdmissionReview body in, the limit its object breaks (:class:`OverLimits`), else its
    :class:`Decision`, or an error's type name out. It runs at a lower CPU priority (:data:`NICE`) than the server,
    whose event loop must answer on time."""
    from desched.webhook.review import parse_review

    _yield_cpu()

    while True:
        body = connection.recv_bytes()
        answer: Any
        try:
            answer = _answer(parse_review(body), options, limits)
        except Exception as error:  # reported to the caller, which answers per the failure policy
            answer = type(error).__name__
        connection.send(answer)


def _answer(request: Json, options: Options, limits: PolicyLimits) -> Answer:
    """A worker's answer to ``request``: of a workload its :class:`OwnFindings`, of a policy object the limit it
    breaks or the decision."""
    from desched.webhook.review import POLICY_KINDS, decide
    from desched.webhook.workloads import own_findings

    kind, obj = str(mapping_or_empty(request["kind"]).get("kind", "")), request.get("object")
    if kind not in POLICY_KINDS:
        return OwnFindings(own_findings(kind, obj, options) if isinstance(obj, dict) else [])
    reason = limits.refuses(request)
    return OverLimits(reason) if reason is not None else decide(request, options)


class DecisionPool:
    """See the module contract."""

    def __init__(
        self,
        options: Options,
        workers: int = 2,
        queue: int = 4,
        max_tasks: int = 200,
        start_failures: Counter | None = None,
        limits: PolicyLimits | None = None,
    ) -> None:
        self.options = options
        self.limits = limits or PolicyLimits()
        self.workers = workers
        self.queue = queue
        self.max_tasks = max_tasks
        self.replaced = 0  # workers killed because their call failed or ran out of time
        self.start_failures = start_failures or Counter(
            "desched_webhook_worker_start_failures_total", "Decision workers that could not be started", ()
        )
        self._pending = 0
        self._idle: asyncio.Queue[_Worker] | None = None
        self._all: list[_Worker] = []
        self._missing = 0  # workers to start (replacements, and starts that failed)
        self._failing = False  # the last attempt to start a worker failed
        self._dead: list[_Worker] = []  # killed, to be reaped
        self._restarts: set[asyncio.Task[None]] = set()

    def full(self) -> bool:
        """Whether a call now would exceed ``workers + queue`` running or waiting calls."""
        return self._pending >= self.workers + self.queue

    def ready(self) -> bool:
        """Whether the pool can decide: not started yet (the first call starts it), a worker runs, or one is being
        started and starting has not failed."""
        return self._idle is None or bool(self._all) or not self._failing

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Count one call as running or waiting (:meth:`full`) from now until the block ends, however it ends: held
        around :meth:`decide` from before its task is scheduled, so that requests of one loop turn all see it."""
        self._pending += 1
        try:
            yield
        finally:
            self._pending -= 1

    async def decide(self, body: bytes) -> Answer:
        """The decision on the AdmissionReview ``body`` in a worker, or the limit its object breaks (see the module
        contract); call it within :meth:`slot`."""
        idle = self.start()
        self._schedule_restart()
        if not self.ready():
            raise WorkerError("no decision worker runs (starting one failed; retrying)")
        worker = await idle.get()
        kept: _Worker | None = worker
        try:
            return await asyncio.get_running_loop().run_in_executor(None, worker.call, body)
        except BaseException:  # cancelled (out of time), or the worker failed: it is killed, the work stops
            self.replaced += 1
            self._replace(worker)
            kept = None
            raise
        finally:
            if kept is not None and kept.tasks >= self.max_tasks:
                self._replace(kept)
            elif kept is not None:
                idle.put_nowait(kept)

    def pids(self) -> list[int]:
        """The process ids of the current workers (none before the first call)."""
        return [worker.process.pid for worker in self._all if worker.process.pid is not None]

    def close(self) -> None:
        """Stop every worker and every pending restart."""
        for task in self._restarts:
            task.cancel()
        for worker in self._all + self._dead:
            worker.stop()
        self._all, self._dead, self._idle, self._missing, self._restarts = [], [], None, 0, set()

    def start(self) -> asyncio.Queue[_Worker]:
        """Start the workers unless they run (the first call does it otherwise); the queue of idle workers."""
        if self._idle is None:
            self._idle = asyncio.Queue()
            for _ in range(self.workers):
                try:
                    worker = _Worker(self.options, self.limits)
                except Exception as error:
                    self._missing += 1
                    self._failed(error)
                    continue
                self._all.append(worker)
                self._idle.put_nowait(worker)
            self._schedule_restart()
        return self._idle

    def _replace(self, worker: _Worker) -> None:
        """Kill ``worker`` at once (its work stops) and have a new one started beside the event loop: reaping the
        old process and starting the new one take the loop no time, however busy the host is."""
        worker.process.kill()
        self._all.remove(worker)
        self._dead.append(worker)
        self._missing += 1
        self._schedule_restart()

    def _failed(self, error: Exception) -> None:
        self._failing = True
        self.start_failures.inc()
        LOG.error(
            "decision worker not started, retrying",
            exc_info=error,
            extra={"event": {"running": len(self._all), "missing": self._missing}},
        )

    def _schedule_restart(self) -> None:
        """Start :meth:`_restart` unless it runs or nothing is missing; outside an event loop (the pool started
        before serving) the next call schedules it."""
        if not self._missing or self._restarts:
            return
        try:
            task = asyncio.get_running_loop().create_task(self._restart())
        except RuntimeError:
            return
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def _restart(self) -> None:
        """Start the missing workers in a thread, at once, then backing off while starting fails."""
        loop, delay = asyncio.get_running_loop(), 0.0
        while self._missing and self._idle is not None:
            if delay:
                await asyncio.sleep(delay)
            dead, self._dead = self._dead, []
            try:
                worker = await loop.run_in_executor(None, self._start_worker, dead)
            except Exception as error:
                self._failed(error)
                delay = min(max(delay * 2, BACKOFF), MAX_BACKOFF)
                continue
            if self._idle is None:  # closed meanwhile
                worker.stop()
                return
            if self._failing:
                LOG.info("decision worker started again", extra={"event": {"running": len(self._all) + 1}})
            self._failing, delay = False, 0.0
            self._missing -= 1
            self._all.append(worker)
            self._idle.put_nowait(worker)

    def _start_worker(self, dead: list[_Worker]) -> _Worker:
        """Reap ``dead`` (killed workers), then start a worker (in a thread: both may block)."""
        for worker in dead:
            worker.process.join()
        return _Worker(self.options, self.limits)
