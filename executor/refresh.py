"""``desched simulate --samples N``: the range of evictions with PodDisruptionBudgets refreshed during the cycle
(docs/executor-semantics.md#53-budgets-refreshed-during-the-cycle).

Contract: :func:`refresh_range` combines the forecast whose budgets are never refreshed (the listing-order range, the
``forecast`` member) with the forecast over the same orders (same samples and seed) whose budgets the disruption
controller refreshes after every eviction (:class:`BudgetCheck(cluster, refresh=True)
<desched.executor.budgets.BudgetCheck>`). The :class:`RefreshRange` holds, per plugin and in total, the least and
the most evictions of any of those ``2 * samples`` cycles: the ``budgetRefresh`` member of ``simulate --format json``.
A plugin one of the two never runs an eviction for counts 0 there.
"""

from __future__ import annotations

from typing import NamedTuple

from desched.executor.cluster import Json
from desched.executor.forecast import Forecast

__all__ = ["RefreshRange", "refresh_range"]


class RefreshRange(NamedTuple):
    """The evictions of ``samples`` listing orders, each with budgets never and always refreshed (module contract)."""

    samples: int
    seed: int
    evicted: tuple[int, int]  # (min, max)
    by_plugin: dict[str, tuple[int, int]]  # plugin -> (min, max), names sorted

    def document(self) -> Json:
        """The ``budgetRefresh`` member of ``simulate --format json``."""
        return {
            "samples": self.samples,
            "seed": self.seed,
            "refreshes": "never to after every eviction",
            "evicted": _bounds(self.evicted),
            "byPlugin": {plugin: _bounds(bounds) for plugin, bounds in self.by_plugin.items()},
        }


def _bounds(bounds: tuple[int, int]) -> Json:
    return {"min": bounds[0], "max": bounds[1]}


def refresh_range(never: Forecast, refreshed: Forecast) -> RefreshRange:
    """The range over both forecasts, made over the same orders (module contract)."""
    if (never.samples, never.seed) != (refreshed.samples, refreshed.seed):
        raise ValueError("the two forecasts must be made over the same listing orders")
    counts = {
        plugin: [
            *never.by_plugin.get(plugin, [0] * never.samples),
            *refreshed.by_plugin.get(plugin, [0] * never.samples),
        ]
        for plugin in sorted({*never.by_plugin, *refreshed.by_plugin})
    }
    totals = [*never.totals, *refreshed.totals]
    return RefreshRange(
        never.samples,
        never.seed,
        (min(totals), max(totals)),
        {plugin: (min(values), max(values)) for plugin, values in counts.items()},
    )
