"""Decisions in worker processes: a fixed number of workers, a bounded queue, and work that stops with its budget.

Contract: :class:`DecisionPool` decides AdmissionReview bodies (:func:`desched.webhook.review.decide`, no cluster
view) in ``workers`` daemon processes, ``spawn``ed by :meth:`DecisionPool.start` or the first call, one body at a time
each. At most ``workers + queue`` calls are running or waiting; :meth:`DecisionPool.full` says when one more would be
refused (the caller answers at once). A call cancelled while its body is being decided (the time budget ran out)
kills that worker, so the work stops and its memory is returned, and starts a replacement; a worker is also replaced
after ``max_tasks`` decisions, which bounds what its heap can grow to. An exception inside a worker is raised in the
caller as :class:`WorkerError` with the exception's type name.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from desched.webhook.decision import Decision, Options

__all__ = ["DecisionPool", "WorkerError"]


class WorkerError(Exception):
    """A decision failed inside a worker, or the worker died; the message is the exception's type name."""


class _Worker:
    """One worker process and the pipe to it."""

    def __init__(self, options: Options) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads and an event loop
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, options), name="desched-decide", daemon=True)
        self.process.start()
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

    def __init__(self, options: Options, workers: int = 2, queue: int = 4, max_tasks: int = 200) -> None:
        self.options = options
        self.workers = workers
        self.queue = queue
        self.max_tasks = max_tasks
        self.replaced = 0  # workers killed because their call failed or ran out of time
        self._pending = 0
        self._idle: asyncio.Queue[_Worker] | None = None
        self._all: list[_Worker] = []

    def full(self) -> bool:
        """Whether a call now would exceed ``workers + queue`` running or waiting calls."""
        return self._pending >= self.workers + self.queue

    async def decide(self, body: bytes) -> Decision:
        """The decision on the AdmissionReview ``body`` in a worker (see the module contract)."""
        self._pending += 1
        try:
            idle = self.start()
            worker = await idle.get()
            try:
                return await asyncio.get_running_loop().run_in_executor(None, worker.call, body)
            except BaseException:  # cancelled (out of time), or the worker failed: it is killed, the work stops
                self.replaced += 1
                worker = self._replace(worker)
                raise
            finally:
                if worker.tasks >= self.max_tasks:
                    worker = self._replace(worker)
                idle.put_nowait(worker)
        finally:
            self._pending -= 1

    def pids(self) -> list[int]:
        """The process ids of the current workers (none before the first call)."""
        return [worker.process.pid for worker in self._all if worker.process.pid is not None]

    def close(self) -> None:
        """Stop every worker."""
        for worker in self._all:
            worker.stop()
        self._all, self._idle = [], None

    def start(self) -> asyncio.Queue[_Worker]:
        """Start the workers unless they run (the first call does it otherwise); the queue of idle workers."""
        if self._idle is None:
            self._idle = asyncio.Queue()
            for _ in range(self.workers):
                worker = _Worker(self.options)
                self._all.append(worker)
                self._idle.put_nowait(worker)
        return self._idle

    def _replace(self, worker: _Worker) -> _Worker:
        """Kill ``worker`` (its work stops) and return a new one in its place."""
        worker.stop()
        fresh = _Worker(self.options)
        self._all[self._all.index(worker)] = fresh
        return fresh
