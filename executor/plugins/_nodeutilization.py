"""What LowNodeUtilization and HighNodeUtilization share: usage, percentages, budgets, the eviction loop
(docs/executor-semantics.md#81-lownodeutilization, docs/executor-semantics.md#82-highnodeutilization).

Contract:
* Usage comes from pod requests only (docs/executor-semantics.md#71-effective-requests): :func:`snapshot` sums the
  effective requests of every non-terminal pod of each node, evictable or not, for the tracked resources (the threshold
  keys plus cpu, memory and pods); ``pods`` is the pod count. Units are the comparison units of
  :mod:`desched.executor.podutil` (cpu in millicores). ``metricsUtilization`` (metrics-server or Prometheus) is refused
  by :func:`reject_metrics_utilization`.
* :func:`percentages`, :func:`deviation_thresholds`, :func:`below`, :func:`above`, :func:`cap_to_threshold` and
  :func:`usage_score` reproduce upstream's float arithmetic, inclusive/strict comparisons and int64 truncation.
  :func:`under` and :func:`over` classify a node as its release does (row ``utilization-quantities`` of
  :mod:`desched.executor.releases`: up to v0.32 usage quantities against truncated shares of the capacity, over every
  tracked resource, one without threshold at its whole capacity).
* :func:`evict_from_sources` is upstream's ``evictPodsFromSourceNodes``: a shared pool of room on the destinations,
  sources in the given order, Filter-passing pods sorted by priority, the taint check against the destinations
  (``PodToleratesTaints``, quirks included), ``evictableNamespaces.exclude`` plus PreEvictionFilter, the optional
  per-plugin per-source-node cap, and the docs/executor-semantics.md#52-how-plugins-react reactions to limit errors.
  An evicted pod's usage is taken off as its release computes it (row ``native-sidecars`` of
  :mod:`desched.executor.releases`: :func:`~desched.executor.podutil.usage_requests_before_sidecars` up to v0.34).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from desched.executor import nodeutil, podutil
from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.releases import NATIVE_SIDECARS, UTILIZATION_QUANTITIES

if TYPE_CHECKING:
    from desched.executor.framework import Handle

BASIC_RESOURCES = ("cpu", "memory", "pods")
PODS = "pods"
# Upstream adds this pseudo-resource (capacity 100) to every node's capacity for its Prometheus mode.
METRIC_RESOURCE = "MetricResource"

Percentages = dict[str, float]


def tracked_resources(threshold_names: Iterable[str]) -> list[str]:
    """The threshold resources plus cpu, memory and pods, without duplicates."""
    return list(dict.fromkeys([*threshold_names, *BASIC_RESOURCES]))


def reject_metrics_utilization(plugin: str, metrics: Mapping[str, Any] | None) -> None:
    """Raise when ``metricsUtilization`` is set: this executor computes usage from pod requests only, so the plugin
    fails (it evicts nothing) rather than balance on other numbers than the policy asks for."""
    if metrics is None:
        return
    source = str(metrics.get("source") or ("metricsServer" if metrics.get("metricsServer") else "empty source"))
    raise RuntimeError(
        f"{plugin}: metricsUtilization ({source}) is not supported: desched's executor computes usage from pod "
        "requests only, so the plugin fails and evicts nothing"
    )


def node_capacity(node: Json) -> dict[str, int]:
    """The node's allocatable resources, or its capacity when allocatable is empty, in comparison units."""
    capacity = nodeutil.node_allocatable(node)
    capacity[METRIC_RESOURCE] = 100
    return capacity


@dataclass
class NodeUsage:
    """One node of the snapshot; ``usage`` goes down as pods leave it, ``budget`` is its cap
    (docs/executor-semantics.md#81-lownodeutilization step 6)."""

    node: Json
    name: str
    pods: list[Json]
    usage: dict[str, int]
    capacity: dict[str, int]
    budget: dict[str, int] = field(default_factory=dict)


class Split(NamedTuple):
    """How a utilization plugin sees the cycle's nodes before it evicts: their usage and percentages, the thresholds
    it compares them with (``high`` is ``None`` for HighNodeUtilization, which has one set), the nodes it drains
    (``sources``) and those that take their pods (``destinations``), each in node order."""

    usages: list[NodeUsage]
    percents: dict[str, Percentages]
    low: Percentages
    high: Percentages | None
    sources: list[NodeUsage]
    destinations: list[NodeUsage]


def snapshot(nodes: list[Json], handle: Handle, resources: list[str]) -> list[NodeUsage]:
    """Usage of ``resources`` on each node, from the requests of its non-terminal pods (in node order)."""
    result = []
    for node in nodes:
        name = str((node.get("metadata") or {}).get("name") or "")
        pods = handle.active_pods_on_node(name)
        usage = {resource: 0 for resource in resources}
        usage[PODS] = len(pods)
        for pod in pods:
            requests = handle.cluster.pod_requests(pod)
            for resource in resources:
                if resource != PODS:
                    usage[resource] += requests.get(resource, 0)
        result.append(NodeUsage(node, name, pods, usage, node_capacity(node)))
    return result


def percentages(usage: dict[str, int], capacity: dict[str, int]) -> Percentages:
    """``usage / capacity * 100`` for every resource in both maps (0 for a zero capacity)."""
    result: Percentages = {}
    for resource, used in usage.items():
        if resource in capacity:
            total = capacity[resource]
            result[resource] = float(used) / float(total) * 100 if total > 0 else 0.0
    return result


def _clamp(value: float) -> float:
    return min(max(value, 0.0), 100.0)


def deviation_thresholds(
    usages: Iterable[Percentages], low_span: Percentages, high_span: Percentages
) -> tuple[Percentages, Percentages]:
    """(low, high) around the average usage of the ``low_span`` resources, over the nodes that have each one."""
    totals: Percentages = {}
    counts: dict[str, int] = {}
    for usage in usages:
        for resource in low_span:
            if resource in usage:
                totals[resource] = totals.get(resource, 0.0) + usage[resource]
                counts[resource] = counts.get(resource, 0) + 1
    average = {resource: total / counts[resource] for resource, total in totals.items()}
    low = {resource: _clamp(value - low_span.get(resource, 0.0)) for resource, value in average.items()}
    high = {resource: _clamp(value + high_span.get(resource, 0.0)) for resource, value in average.items()}
    return low, high


def below(usage: Percentages, threshold: Percentages) -> bool:
    """Every threshold resource at or under its threshold (a missing usage reads as 0)."""
    return all(usage.get(resource, 0.0) <= limit for resource, limit in threshold.items())


def above(usage: Percentages, threshold: Percentages) -> bool:
    """Some threshold resource strictly over its threshold (a missing usage reads as 0)."""
    return any(usage.get(resource, 0.0) > limit for resource, limit in threshold.items())


def cap_to_threshold(capacity: dict[str, int], threshold: Percentages, resources: list[str]) -> dict[str, int]:
    """Per resource: 0 when the node lacks it, the full capacity without a threshold, else the truncated share."""
    capped = {}
    for resource in resources:
        if resource not in capacity:
            capped[resource] = 0
        elif resource not in threshold:
            capped[resource] = capacity[resource]
        else:
            capped[resource] = int(threshold[resource] * 0.01 * float(capacity[resource]))
    return capped


def within(usage: dict[str, int], limits: dict[str, int]) -> bool:
    """Every usage at or under its limit (both in comparison units)."""
    return all(used <= limits[resource] for resource, used in usage.items())


def _shares(node: NodeUsage, threshold: Percentages, resources: list[str]) -> dict[str, int]:
    """Up to v0.32: ``threshold`` as quantities of ``node``'s capacity, a resource without threshold at 100 %."""
    return cap_to_threshold(node.capacity, {**dict.fromkeys(resources, 100.0), **threshold}, resources)


def under(node: NodeUsage, percent: Percentages, threshold: Percentages, resources: list[str], handle: Handle) -> bool:
    """Whether ``node`` (``percent`` its usage percentages) is at or under ``threshold`` for ``handle``'s release."""
    if handle.release.older(UTILIZATION_QUANTITIES):
        return within(node.usage, _shares(node, threshold, resources))
    return below(percent, threshold)


def over(node: NodeUsage, percent: Percentages, threshold: Percentages, resources: list[str], handle: Handle) -> bool:
    """Whether some resource of ``node`` is strictly over ``threshold`` for ``handle``'s release."""
    if handle.release.older(UTILIZATION_QUANTITIES):
        return not within(node.usage, _shares(node, threshold, resources))
    return above(percent, threshold)


def usage_score(node: NodeUsage) -> int:
    """The sort key of source nodes: every usage value added up (cpu in millicores, the rest in plain units)."""
    return sum(node.usage.values())


def _distinct_taints(destinations: list[NodeUsage]) -> dict[str, list[Json]]:
    """One destination per distinct taint list: ``PodToleratesTaints`` only asks whether some node's taints fit."""
    seen: dict[str, list[Json]] = {}
    for destination in destinations:
        taints = (destination.node.get("spec") or {}).get("taints") or []
        seen.setdefault(json.dumps(taints, sort_keys=True), taints)
    return {str(index): taints for index, taints in enumerate(seen.values())}


def evict_from_sources(
    handle: Handle,
    plugin: str,
    sources: list[NodeUsage],
    destinations: list[NodeUsage],
    resources: list[str],
    removable: Callable[[Json], bool],
    excluded: frozenset[str],
    source_budget: bool,
    node_limit: int | None = None,
) -> None:
    """Move pods off ``sources`` while the destinations have room (see the module contract).

    Each node's ``budget`` must be set. With ``source_budget`` a source is drained only while some usage exceeds its
    budget (LowNodeUtilization); without it only the pool matters (HighNodeUtilization).
    """
    available = {resource: 0 for resource in resources}
    for destination in destinations:
        for resource in resources:
            available[resource] += destination.budget[resource] - destination.usage[resource]
    taints = _distinct_taints(destinations)

    def keep_going(source: NodeUsage) -> bool:
        if source_budget and within(source.usage, source.budget):
            return False
        return all(room > 0 for room in available.values())

    for source in sources:
        candidates = [pod for pod in source.pods if removable(pod)]
        if not keep_going(source):
            continue
        evicted = 0
        for pod in podutil.sort_by_priority_low_to_high(candidates, handle.priority_key):
            if node_limit is not None and evicted >= node_limit:
                break
            if not nodeutil.pod_tolerates_taints(pod, taints):
                continue
            if (pod.get("metadata") or {}).get("namespace", "") in excluded or not handle.pre_eviction_filter(pod):
                continue
            outcome = handle.evict(pod, plugin)
            if outcome is Outcome.TOTAL_LIMIT:
                return
            if outcome is Outcome.NODE_LIMIT:
                break
            if outcome not in (Outcome.SUCCESS, Outcome.UNKNOWN):  # an unknown outcome may have evicted: count it
                continue
            evicted += 1
            requests = (
                podutil.usage_requests_before_sidecars(pod)
                if handle.release.older(NATIVE_SIDECARS)
                else handle.cluster.pod_requests(pod)
            )
            for resource in resources:
                taken = 1 if resource == PODS else requests.get(resource, 0)
                source.usage[resource] -= taken
                available[resource] -= taken
            if not keep_going(source):
                break
