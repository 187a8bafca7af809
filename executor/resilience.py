"""How ``desched run`` survives a flaky API server: retried evictions, classified failures, a per-cycle deadline,
backoff between failed cycles and the exit status (the driver is :mod:`desched.executor.live`).

Contract:

* :func:`backoff` is the bounded exponential delay before retry ``attempt`` (1, 2, ...): ``min(cap, base * 2 **
  (attempt - 1))``, scaled by ``0.5 + jitter() / 2`` (a factor in [0.5, 1)) when ``jitter`` is given.
* :func:`classify` says what a failed eviction request means: 429 refused (a PodDisruptionBudget), 404 gone, a 5xx or a
  request that got no answer after it was sent (a timeout, a broken connection) unknown (the API may have evicted the
  pod), anything else (another 4xx, no connection made, and the Eviction API's own 500 for a pod under two PDBs: a
  ``Status`` without ``reason``, :attr:`KubeError.definite <desched.errors.KubeError.definite>`) error: certainly
  nothing evicted, counted toward no limit and not retried.
* :func:`evict_with_retries` sends an eviction up to :data:`EVICTION_ATTEMPTS` times: a 5xx, a timeout or a connection
  that could not be made is retried after ``backoff(n, *EVICTION_BACKOFF, jitter)`` seconds, unless ``pause`` (which
  waits) says the cycle must stop; 429, 404 and other 4xx answers are final. Once an attempt was ambiguous, the result
  can only be a success or unknown: a later 404 or 429 may be that attempt's own doing.
* :class:`CycleGuard` says when a cycle must stop evicting: leadership lost, SIGTERM/SIGINT (``stop``), or the cycle's
  deadline (``--cycle-timeout``) passed; :meth:`CycleGuard.check` raises
  :class:`~desched.executor.evictions.CycleHalted` then and records why in :attr:`CycleGuard.halted`.
* :func:`list_with_retries`: a one-shot run (no ``--interval``) lists the cluster again after a transient failure (a
  5xx, a timeout, no connection), waiting ``backoff(n, CYCLE_RETRY_BASE, LIST_RETRY_CAP)`` seconds, until the cycle
  must stop (its deadline, SIGTERM): one 500 no longer ends a Job's run.
* :func:`next_wait`: after ``n`` consecutive cycles that could not list the cluster, the next try comes after
  ``min(interval, CYCLE_RETRY_BASE * 2 ** (n - 1))`` (1 s, 2 s, 4 s, ... never longer than the interval; nothing was
  evicted, so an early retry breaks no per-cycle limit); otherwise the next cycle starts ``interval`` after the last
  one started (upstream's non-sliding period), at once when that is past.
* :func:`exit_status` of a cycle: 0 when every eviction was carried out, refused by a PDB or found its pod gone; 1 when
  an eviction failed otherwise (unknown outcomes included) or the cycle ran past its deadline.
* :func:`seconds` reads a duration flag (Go syntax, positive) as seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from desched.errors import EXIT_OK, KubeError, UsageError
from desched.executor.evictions import BackendError, CycleHalted, EvictionFailure, Failure
from desched.goduration import parse_duration

EVICTION_ATTEMPTS = 3
EVICTION_BACKOFF = (0.5, 4.0)  # base and cap, seconds
CYCLE_RETRY_BASE = 1.0  # seconds
LIST_RETRY_CAP = 30.0  # seconds between a one-shot run's listings
EXIT_FAILED = 1  # desched run: an eviction failed, the deadline passed, or leadership was lost
TERMINATED, LOST, DEADLINE = "terminated", "leadership lost", "deadline"


def seconds(flag: str, text: str) -> float:
    """The positive Go duration ``text`` (``90s``, ``5m``) of ``flag`` in seconds; :class:`UsageError` otherwise."""
    try:
        value = parse_duration(text) / 1e9
    except ValueError as error:
        raise UsageError(f"{flag}: {error}") from None
    if value <= 0:
        raise UsageError(f"{flag} must be positive")
    return value


def backoff(attempt: int, base: float, cap: float, jitter: Callable[[], float] | None = None) -> float:
    """Seconds to wait before retry ``attempt`` (see the module contract)."""
    delay = min(cap, base * 2.0 ** (attempt - 1))
    return delay * (0.5 + jitter() / 2) if jitter is not None else delay


def classify(error: KubeError) -> Failure:
    """What a failed eviction request means for the pod (see the module contract)."""
    if error.status == 429:
        return Failure.REFUSED
    if error.status == 404:
        return Failure.GONE
    if error.definite and (error.status or 0) >= 500:
        return Failure.ERROR  # the handler's own answer, nothing deleted (a pod under two PDBs)
    if (error.status or 0) >= 500 or (not error.status and error.sent):
        return Failure.UNKNOWN
    return Failure.ERROR


def transient(error: KubeError) -> bool:
    """A 5xx that is not the handler's own decision, a timeout or a connection that could not be made: worth another
    attempt."""
    return ((error.status or 0) >= 500 and not error.definite) or not error.status


def sleep(delay: float) -> bool:
    """A ``pause`` for :func:`evict_with_retries` that always goes on after waiting ``delay`` seconds."""
    time.sleep(delay)
    return True


def evict_with_retries(
    post: Callable[[], object],
    pause: Callable[[float], bool] = sleep,
    jitter: Callable[[], float] | None = None,
) -> BackendError | None:
    """``None`` once ``post`` succeeds, else why the eviction failed (see the module contract)."""
    ambiguous: KubeError | None = None
    for attempt in range(1, EVICTION_ATTEMPTS + 1):
        try:
            post()
            return None
        except KubeError as error:
            last = error
        if classify(last) is Failure.UNKNOWN:
            ambiguous = last
        if (
            not transient(last)
            or attempt == EVICTION_ATTEMPTS
            or not pause(backoff(attempt, *EVICTION_BACKOFF, jitter))
        ):
            break
    failure = classify(last) if ambiguous is None else Failure.UNKNOWN
    message = str(last)
    if failure is Failure.REFUSED:
        message += " (ignoring)"  # upstream's words for a 429
    elif failure is Failure.UNKNOWN:
        earlier = "" if ambiguous is last else f"; an earlier attempt: {ambiguous}"
        message += f"{earlier} (the pod may have been evicted: counted toward the limits)"
    return BackendError(failure, last.status, message)


class CycleGuard:
    """Whether the current cycle may go on evicting (see the module contract)."""

    def __init__(
        self,
        stop: threading.Event,
        timeout: float,
        leading: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stop = stop
        self.timeout = timeout
        self.leading = leading
        self.clock = clock
        self.deadline = clock() + timeout
        self.halted: str | None = None

    def reason(self) -> str | None:
        """Why the cycle must stop now (:data:`LOST`, :data:`TERMINATED`, :data:`DEADLINE`), or None."""
        if self.leading is not None and not self.leading():
            return LOST
        if self.stop.is_set():
            return TERMINATED
        if self.clock() >= self.deadline:
            return DEADLINE
        return None

    def check(self) -> None:
        """Raise :class:`CycleHalted` when the cycle must stop."""
        reason = self.reason()
        if reason is not None:
            self.halted = reason
            detail = f" ({self.timeout:g} s)" if reason == DEADLINE else ""
            raise CycleHalted(f"{reason}{detail}: the cycle stopped evicting")

    def pause(self, delay: float) -> bool:
        """Wait ``delay`` seconds, less when the cycle must stop first; whether the cycle may go on."""
        self.stop.wait(max(0.0, min(delay, self.deadline - self.clock())))
        return self.reason() is None


def list_with_retries(listing: Callable[[], list[Any]], guard: CycleGuard, warn: Callable[[str], None]) -> list[Any]:
    """``listing()``, tried again after each transient :class:`KubeError` until ``guard`` says the cycle must stop,
    which re-raises the last error (see the module contract)."""
    attempt = 0
    while True:
        try:
            return listing()
        except KubeError as error:
            attempt += 1
            delay = backoff(attempt, CYCLE_RETRY_BASE, LIST_RETRY_CAP)
            if not transient(error) or not guard.pause(delay):
                raise
            warn(f"cannot list the cluster ({error}); trying again")


def next_wait(interval: float, elapsed: float, list_failures: int) -> float:
    """Seconds until the next cycle (see the module contract)."""
    if list_failures:
        return backoff(list_failures, CYCLE_RETRY_BASE, interval)
    return max(0.0, interval - elapsed)


def exit_status(failures: Iterable[EvictionFailure], halted: str | None = None) -> int:
    """The exit status of one cycle (see the module contract)."""
    benign = {Failure.REFUSED.value, Failure.GONE.value}
    failed = halted == DEADLINE or any(failure.outcome not in benign for failure in failures)
    return EXIT_FAILED if failed else EXIT_OK
