"""LowNodeUtilization: move pods from overutilized nodes while underutilized nodes have room
(docs/executor-semantics.md#81-lownodeutilization).

Contract: usage from pod requests; with ``metricsUtilization`` set, ``balance`` raises (the cycle records the error). A
node is underutilized when it is schedulable and every threshold resource is at or under ``thresholds`` (tried first),
and overutilized when some resource is strictly over ``targetThresholds``; with ``useDeviationThresholds`` both are
offsets from the average usage (up to v0.32 a resource whose ``thresholds`` offset is 0 is compared with its whole
capacity instead: row ``deviation-zero-offset`` of :mod:`desched.executor.releases`); up to v0.32 usage is compared as
quantities (row ``utilization-quantities``). Nothing happens without underutilized nodes, with no more of them than
``numberOfNodes``, when every node is underutilized, or without an overutilized node. Sources go from the highest usage
score down; each is drained while it is over its target budget and the underutilized nodes' pool has room for every
tracked resource, at most ``evictionLimits.node`` pods per source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desched.executor import nodeutil
from desched.executor.cluster import Json
from desched.executor.plugins import _nodeutilization as nu
from desched.executor.releases import DEVIATION_ZERO_OFFSET
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
        low, high = self.limits(percents)
        under, over = [], []
        for node in usages:
            percent = percents[node.name]
            if not nodeutil.is_unschedulable(node.node) and nu.under(node, percent, low, self.resources, self.handle):
                under.append(node)
            elif nu.over(node, percent, high, self.resources, self.handle):
                over.append(node)
        return nu.Split(usages, percents, low, high, over, under)

    def limits(self, percents: dict[str, nu.Percentages]) -> tuple[nu.Percentages, nu.Percentages]:
        """The (low, high) thresholds of this cycle: as written, or with ``useDeviationThresholds`` around the
        average usage, where up to v0.32 a resource with a 0 offset in ``thresholds`` gets 100 % on both sides."""
        if not self.args.use_deviation_thresholds:
            return self.thresholds, self.targets
        if not self.handle.release.older(DEVIATION_ZERO_OFFSET):
            return nu.deviation_thresholds(percents.values(), self.thresholds, self.targets)
        offsets = {resource: value for resource, value in self.thresholds.items() if value != 0}
        whole = {resource: 100.0 for resource in self.thresholds if resource not in offsets}
        low, high = nu.deviation_thresholds(percents.values(), offsets, self.targets)
        return {**low, **whole}, {**high, **whole}

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
