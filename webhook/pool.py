"""Decisions in worker processes: a fixed number of workers, a bounded queue, and work that stops with its budget.

Contract: :class:`DecisionPool` decides AdmissionReview bodies (:func:`desched.webhook.review.decide`, no cluster
view) in ``workers`` daemon processes, ``spawn``ed by :meth:`DecisionPool.start` or the first call, one body at a time
each. What crosses to a worker is the pickled :class:`~desched.webhook.decision.Options`, plain values only
(``Settings`` pickles without its rule-module cache). At most ``workers + queue`` calls are running or waiting;
:meth:`DecisionPool.full` says when one more would be refused (the caller answers at once). A call cancelled while its
body is being decided (the time budget ran out) kills that worker, so the work stops and its memory is returned, and
starts a replacement; a worker is also replaced after ``max_tasks`` decisions, which bounds what its heap can grow to.
An exception inside a worker is raised in the caller as :class:`WorkerError` with the exception's type name.

A worker that cannot be started is logged, counted (``start_failures``) and started again after a backoff (from
:data:`BACKOFF` doubling up to :data:`MAX_BACKOFF` seconds) until it runs. :meth:`DecisionPool.ready` is false while
no worker runs (the pool cannot decide: ``/readyz`` says not ready, so the pod is routed around or replaced), and
:meth:`DecisionPool.decide` then raises :class:`WorkerError` at once instead of waiting for the budget.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from desched.prometheus import Counter
from desched.webhook.decision import Decision, Options

__all__ = ["BACKOFF", "MAX_BACKOFF", "DecisionPool", "WorkerError"]

LOG = logging.getLogger("desched.webhook")
BACKOFF = 0.5
MAX_BACKOFF = 30.0


class WorkerError(Exception):
    """A decision failed inside a worker, the worker died, or no worker runs; the message says which."""


class _Worker:
    """One worker process and the pipe to it."""

    def __init__(self, options: Options) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads and an event loop
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, options), name="desched-decide", daemon=True)
        try:
            self.process.start()
        finally:
            child.close()
        self.tasks = 0

    def call(self, body: bytes) -> Decision:
        """The decision on ``body`` (blocks until the worker answers)."""
        self.tasks += 1
        try:
            self.connection.send_bytes(body)
            answer = self.connection.recv()
        except (EOFError, OSError):
            raise WorkerError("worker exited") from None
        if isinstance(answer, Decision):
            return answer
        raise WorkerError(str(answer))

    def stop(self) -> None:
        """Kill the process; the pipe closes when the last reference goes (a thread may still be reading it)."""
        self.process.kill()
        self.process.join()


def _serve(connection: Connection, options: Options) -> None:
    """The worker's loop: an AdmissionReview body in, its :class:`Decision` (or an error's type name) out."""
    from desched.webhook.review import decide, parse_review

    while True:
        body = connection.recv_bytes()
        answer: Any
        try:
            answer = decide(parse_review(body), options)
        except Exception as error:  # reported to the caller, which answers per the failure policy
            answer = type(error).__name__
        connection.send(answer)


class DecisionPool:
    """See the module contract."""

    def __init__(
        self,
        options: Options,
        workers: int = 2,
        queue: int = 4,
        max_tasks: int = 200,
        start_failures: Counter | None = None,
    ) -> None:
        self.options = options
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
        self._missing = 0  # workers that failed to start and wait for their next attempt
        self._retries: set[asyncio.Task[None]] = set()

    def full(self) -> bool:
        """Whether a call now would exceed ``workers + queue`` running or waiting calls."""
        return self._pending >= self.workers + self.queue

    def ready(self) -> bool:
        """Whether the pool can decide: not started yet (the first call starts it), or at least one worker runs."""
        return self._idle is None or bool(self._all)

    async def decide(self, body: bytes) -> Decision:
        """The decision on the AdmissionReview ``body`` in a worker (see the module contract)."""
        self._pending += 1
        try:
            idle = self.start()
            self._schedule_restart()
            if not self._all:
                raise WorkerError("no decision worker runs (starting one failed; retrying)")
            worker = await idle.get()
            replacement: _Worker | None = worker
            try:
                return await asyncio.get_running_loop().run_in_executor(None, worker.call, body)
            except BaseException:  # cancelled (out of time), or the worker failed: it is killed, the work stops
                self.replaced += 1
                replacement = self._replace(worker)
                raise
            finally:
                if replacement is not None and replacement.tasks >= self.max_tasks:
                    replacement = self._replace(replacement)
                if replacement is not None:
                    idle.put_nowait(replacement)
        finally:
            self._pending -= 1

    def pids(self) -> list[int]:
        """The process ids of the current workers (none before the first call)."""
        return [worker.process.pid for worker in self._all if worker.process.pid is not None]

    def close(self) -> None:
        """Stop every worker and every pending restart."""
        for task in self._retries:
            task.cancel()
        for worker in self._all:
            worker.stop()
        self._all, self._idle, self._missing, self._retries = [], None, 0, set()

    def start(self) -> asyncio.Queue[_Worker]:
        """Start the workers unless they run (the first call does it otherwise); the queue of idle workers."""
        if self._idle is None:
            self._idle = asyncio.Queue()
            for _ in range(self.workers):
                worker = self._spawn()
                if worker is not None:
                    self._idle.put_nowait(worker)
        return self._idle

    def _replace(self, worker: _Worker) -> _Worker | None:
        """Kill ``worker`` (its work stops) and return a new one in its place; None when none could be started (a
        restart is then scheduled)."""
        worker.stop()
        self._all.remove(worker)
        return self._spawn()

    def _spawn(self) -> _Worker | None:
        """A new running worker, or None after logging and counting the failure and scheduling a retry."""
        try:
            worker = _Worker(self.options)
        except Exception as error:
            self._failed(error)
            return None
        self._all.append(worker)
        return worker

    def _failed(self, error: Exception) -> None:
        self.start_failures.inc()
        self._missing += 1
        LOG.error(
            "decision worker not started, retrying",
            exc_info=error,
            extra={"event": {"running": len(self._all), "missing": self._missing}},
        )
        self._schedule_restart()

    def _schedule_restart(self) -> None:
        """Start :meth:`_restart` unless it runs or nothing is missing; outside an event loop (the pool started
        before serving) the next call schedules it."""
        if not self._missing or self._retries:
            return
        try:
            task = asyncio.get_running_loop().create_task(self._restart())
        except RuntimeError:
            return
        self._retries.add(task)
        task.add_done_callback(self._retries.discard)

    async def _restart(self) -> None:
        """Start the missing workers again, backing off while starting fails."""
        delay = BACKOFF
        while self._missing and self._idle is not None:
            await asyncio.sleep(delay)
            try:
                worker = _Worker(self.options)
            except Exception as error:
                self.start_failures.inc()
                LOG.error("decision worker not started, retrying", exc_info=error, extra={"event": {"delay": delay}})
                delay = min(delay * 2, MAX_BACKOFF)
                continue
            self._missing -= 1
            self._all.append(worker)
            self._idle.put_nowait(worker)
            LOG.info("decision worker started again", extra={"event": {"running": len(self._all)}})
            delay = BACKOFF
