"""HighNodeUtilization: empty underutilized nodes into the other schedulable nodes
(docs/executor-semantics.md#82-highnodeutilization).

Contract: usage from pod requests. A node is underutilized (a source, cordoned or not) when every threshold resource is
at or under ``thresholds``; every other schedulable node is a destination. Nothing happens without underutilized nodes,
with no more of them than ``numberOfNodes``, when every node is underutilized, or without a destination. Sources go from
the lowest usage score up and are drained while the destinations' pool (capacity minus usage) has room for every tracked
resource. Up to v0.32 usage is compared as quantities (row ``utilization-quantities`` of
:mod:`desched.executor.releases`). With ``evictionModes: [OnlyThresholdingResources]`` only pods with a container or
init container request for some threshold resource are removable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desched.executor import nodeutil
from desched.executor.cluster import Json
from desched.executor.plugins import _nodeutilization as nu
from desched.plugins.nodeutilization import HighNodeUtilizationArgs

if TYPE_CHECKING:
    from desched.executor.framework import Handle

NAME = "HighNodeUtilization"
ONLY_THRESHOLDING_RESOURCES = "OnlyThresholdingResources"


def requests_any(pod: Json, resources: list[str]) -> bool:
    """Whether some container or init container lists one of ``resources`` among its requests (any value)."""
    spec = pod.get("spec") or {}
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        requests = (container.get("resources") or {}).get("requests") or {}
        if any(resource in requests for resource in resources):
            return True
    return False


class Implementation:
    def __init__(self, args: HighNodeUtilizationArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.thresholds = dict(args.thresholds)
        self.resources = nu.tracked_resources(self.thresholds)
        self.only_thresholding = ONLY_THRESHOLDING_RESOURCES in args.eviction_modes

    def removable(self, pod: Json) -> bool:
        return self.handle.filter(pod) and (not self.only_thresholding or requests_any(pod, list(self.thresholds)))

    def split(self, nodes: list[Json]) -> nu.Split:
        """The nodes' usage against ``thresholds``: the underutilized nodes (cordoned or not) are the sources, every
        other schedulable node a destination."""
        usages = nu.snapshot(nodes, self.handle, self.resources)
        percents = {node.name: nu.percentages(node.usage, node.capacity) for node in usages}
        under, schedulable = [], []
        for node in usages:
            if nu.under(node, percents[node.name], self.thresholds, self.resources, self.handle):
                under.append(node)
            elif not nodeutil.is_unschedulable(node.node):
                schedulable.append(node)
        return nu.Split(usages, percents, self.thresholds, None, under, schedulable)

    def moves(self, split: nu.Split) -> bool:
        """Whether the plugin evicts at all on ``split``: more nodes under than ``numberOfNodes``, a destination."""
        under = split.sources
        return bool(under) and len(under) > self.args.number_of_nodes and bool(split.destinations)

    def balance(self, nodes: list[Json]) -> None:
        split = self.split(nodes)
        if not self.moves(split):  # all under implies no destination
            return
        under, schedulable = split.sources, split.destinations
        full = {resource: 100.0 for resource in self.thresholds}
        for node in [*under, *schedulable]:
            node.budget = nu.cap_to_threshold(node.capacity, full, self.resources)
        under.sort(key=nu.usage_score)
        nu.evict_from_sources(
            self.handle,
            NAME,
            under,
            schedulable,
            self.resources,
            self.removable,
            frozenset(self.args.evictable_namespaces.exclude),
            source_budget=False,
        )
