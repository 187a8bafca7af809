"""LowNodeUtilization: move pods from overutilized nodes while underutilized nodes have room
(docs/executor-semantics.md#81-lownodeutilization).

Contract: usage from pod requests; with ``metricsUtilization`` set, ``balance`` raises (the cycle records the
error). A node is underutilized when it is schedulable and every threshold resource is at or under ``thresholds``
(tried first), and overutilized when some resource is strictly over ``targetThresholds``; with
``useDeviationThresholds`` both are offsets from the average usage. Nothing happens without underutilized nodes, with
no more of them than ``numberOfNodes``, when every node is underutilized, or without an overutilized node. Sources go
from the highest usage score down; each is drained while it is over its target budget and the underutilized nodes'
pool has room for every tracked resource, at most ``evictionLimits.node`` pods per source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desched.executor import nodeutil
from desched.executor.cluster import Json
from desched.executor.plugins import _nodeutilization as nu
from desched.plugins.nodeutilization import LowNodeUtilizationArgs

if TYPE_CHECKING:
    from desched.executor.framework import Handle

NAME = "LowNodeUtilization"


class Implementation:
    def __init__(self, args: LowNodeUtilizationArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.thresholds = dict(args.thresholds)
        self.targets = dict(args.target_thresholds)
        self.resources = nu.tracked_resources(self.thresholds)
        self.node_limit = args.eviction_limit_per_node

    def split(self, nodes: list[Json]) -> nu.Split:
        """The nodes' usage against the thresholds (offsets from the average with ``useDeviationThresholds``):
        the overutilized nodes are the sources, the underutilized ones the destinations."""
        usages = nu.snapshot(nodes, self.handle, self.resources)
        percents = {node.name: nu.percentages(node.usage, node.capacity) for node in usages}
        if self.args.use_deviation_thresholds:
            low, high = nu.deviation_thresholds(percents.values(), self.thresholds, self.targets)
        else:
            low, high = self.thresholds, self.targets
        under, over = [], []
        for node in usages:
            if not nodeutil.is_unschedulable(node.node) and nu.below(percents[node.name], low):
                under.append(node)
            elif nu.above(percents[node.name], high):
                over.append(node)
        return nu.Split(usages, percents, low, high, over, under)

    def moves(self, split: nu.Split) -> bool:
        """Whether the plugin evicts at all on ``split``: some node over, more nodes under than ``numberOfNodes``."""
        under, over = split.destinations, split.sources
        return bool(under) and len(under) > self.args.number_of_nodes and bool(over)  # all under: none over

    def balance(self, nodes: list[Json]) -> None:
        nu.reject_metrics_utilization(NAME, self.args.metrics_utilization)
        split = self.split(nodes)
        if not self.moves(split):
            return
        assert split.high is not None
        under, over = split.destinations, split.sources
        for node in [*under, *over]:
            node.budget = nu.cap_to_threshold(node.capacity, split.high, self.resources)
        over.sort(key=nu.usage_score, reverse=True)
        nu.evict_from_sources(
            self.handle,
            NAME,
            over,
            under,
            self.resources,
            self.handle.filter,
            frozenset(self.args.evictable_namespaces.exclude),
            source_budget=True,
            node_limit=self.node_limit,
        )
