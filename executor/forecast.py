"""``desched simulate --samples N``: one cycle over N listing orders, as a range
(docs/executor-semantics.md#12-listing-orders).

Upstream takes the order of nodes, of each node's pods and of a few maps from its informer cache, which Go iterates in
a new random order each time; where pods are otherwise equal (ties in sorts, limits consumed in order, the first pod
of a kind kept), that order decides. Contract: :func:`forecast` runs sample 0 in the snapshot's listing order (the
single run ``simulate`` prints without ``--samples``) and samples 1 to N-1 each in a :class:`ListingOrder
<desched.executor.framework.ListingOrder>` seeded with ``"<seed>:<sample>"``, so a seed always gives the same
forecast. Every sample runs on the same decoded :class:`~desched.executor.cluster.Cluster` inside
:meth:`Cluster.trial <desched.executor.cluster.Cluster.trial>` (its indexes are built once), with the PodEvictor's
counters and the budget check new for each. A sample depends on its seed only, not on the samples run before it in
the same process (tests/executor/test_forecast.py checks it), so with ``jobs`` above 1 samples 1 to N-1 are dealt to
that many forked workers, which share the decoded cluster copy-on-write; the forecast is the same for any ``jobs``.
The :class:`Forecast` holds, per plugin and in total, the evictions of every sample, and per pod the number of samples
that evicted it.

How sure: a pod chosen in a share p of shuffled orders is missed by all k = N-1 of them with probability (1-p)^k, so
:func:`found_share` gives the smallest p found with probability :data:`CONFIDENCE`; :data:`DEFAULT_SAMPLES`
(``--samples`` without N) has k = 90, which finds a pod chosen in 5 % of orders with probability 1 - 0.95^90 > 99 %.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

from desched.executor.cluster import Json
from desched.executor.evictions import Eviction, PodEvictor
from desched.executor.framework import AS_LISTED, CycleResult, ListingOrder

#: One cycle in a listing order: what it did and the PodEvictor that recorded it
Cycle = Callable[[ListingOrder], tuple[CycleResult, PodEvictor]]
MAX_SAMPLES = 10_000
#: The probability :func:`found_share` is stated for
CONFIDENCE = 0.99
#: ``--samples`` without N: the listing order and 90 shuffled ones, enough that a pod chosen in 5 % of orders is found
#: with probability :data:`CONFIDENCE`
DEFAULT_SAMPLES = 91


def found_share(samples: int) -> float | None:
    """The smallest share of shuffled orders (in %, rounded up to 0.1) that choose a pod which ``samples`` orders
    find with probability :data:`CONFIDENCE` at least: ``1 - (1 - CONFIDENCE)^(1 / (samples - 1))`` (the first order,
    as listed, is not drawn). ``None`` for one order (nothing drawn)."""
    shuffled = samples - 1
    if shuffled < 1:
        return None
    missed_by_one: float = (1 - CONFIDENCE) ** (1 / shuffled)
    return math.ceil(1000 * (1 - missed_by_one) - 1e-9) / 10


def assurance(samples: int) -> str:
    """The forecast's statement of how sure it is, as text and JSON give it."""
    share = found_share(samples)
    if share is None:
        return "1 order (as listed): none shuffled, so what other orders pick is not looked for"
    return (
        f"{samples} orders (as listed and {samples - 1} shuffled): a pod chosen in {share:g} % of orders or more is "
        f"found with probability {CONFIDENCE * 100:g} % or more"
    )


class Forecast(NamedTuple):
    """The evictions of ``samples`` listing orders (see the module contract)."""

    samples: int
    seed: int
    totals: list[int]  # per sample
    by_plugin: dict[str, list[int]]  # plugin -> per sample (0 where it evicted nothing), names sorted
    pods: dict[tuple[str, str], tuple[str, int]]  # (namespace, pod) -> (node, samples that evicted it), sorted

    def document(self) -> Json:
        """The ``forecast`` member of ``simulate --format json`` (docs/executor-semantics.md#12-listing-orders)."""
        return {
            "samples": self.samples,
            "seed": self.seed,
            "assurance": {
                "shuffled": self.samples - 1,
                "foundSharePercent": found_share(self.samples),
                "probability": CONFIDENCE,
                "statement": assurance(self.samples),
            },
            "evicted": spread(self.totals),
            "byPlugin": {plugin: spread(counts) for plugin, counts in self.by_plugin.items()},
            "pods": [
                {"namespace": namespace, "pod": pod, "node": node, "evictedIn": count}
                for (namespace, pod), (node, count) in self.pods.items()
            ],
        }


def spread(values: list[int]) -> dict[str, Any]:
    """``{"min", "median", "max"}`` of ``values`` (the median of an even count may end in .5)."""
    median = statistics.median(values)
    return {"min": min(values), "median": int(median) if median == int(median) else median, "max": max(values)}


def usable_cpus() -> int:
    """The CPUs this process may run on (the default of ``--jobs``)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pool_size(jobs: int | None, samples: int) -> int:
    """The worker processes that run the ``samples - 1`` shuffled orders for ``--jobs jobs`` (``None``: not given):
    at most the usable CPUs (more only add forks and memory, not speed) and the shuffled orders, at least 1;
    1 means no pool (no ``fork`` start method, or nothing to share)."""
    wanted = usable_cpus() if jobs is None else jobs
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(wanted, usable_cpus(), samples - 1))


def forecast(cycle: Cycle, samples: int, seed: int, jobs: int | None = 1) -> tuple[CycleResult, PodEvictor, Forecast]:
    """Sample 0's result and PodEvictor (the listing order's single run) and the forecast over ``samples`` orders,
    the shuffled ones run by :func:`pool_size` ``(jobs, samples)`` processes (see the module contract)."""
    result, evictor = cycle(AS_LISTED)
    shuffled = [f"{seed}:{sample}" for sample in range(1, samples)]
    workers = pool_size(jobs, samples)
    if workers > 1:
        _WORKER_CYCLE.append(cycle)  # what a forked worker inherits
        sys.stdout.flush()  # a worker flushes the streams it inherited when it ends
        sys.stderr.flush()
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                later = pool.map(_sample, shuffled, chunksize=1)
        finally:
            _WORKER_CYCLE.clear()
    else:
        later = [_evictions(cycle, order_seed) for order_seed in shuffled]
    return result, evictor, _tally([list(evictor.evictions), *later], seed)


_WORKER_CYCLE: list[Cycle] = []


def _sample(order_seed: str) -> list[Eviction]:
    """In a forked worker: the evictions of one shuffled sample."""
    return _evictions(_WORKER_CYCLE[0], order_seed)


def _evictions(cycle: Cycle, order_seed: str) -> list[Eviction]:
    return list(cycle(ListingOrder(order_seed))[1].evictions)


def _tally(runs: list[list[Eviction]], seed: int) -> Forecast:
    plugins = sorted({eviction.plugin for evictions in runs for eviction in evictions})
    by_plugin = {plugin: [sum(e.plugin == plugin for e in evictions) for evictions in runs] for plugin in plugins}
    pods: dict[tuple[str, str], tuple[str, int]] = {}
    for evictions in runs:
        for namespace, pod, node in sorted({(e.namespace, e.pod, e.node) for e in evictions}):
            pods[(namespace, pod)] = (node, pods.get((namespace, pod), (node, 0))[1] + 1)
    return Forecast(len(runs), seed, [len(evictions) for evictions in runs], by_plugin, dict(sorted(pods.items())))
