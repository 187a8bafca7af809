"""``PodFitsAnyNode`` and ``PodFitsAnyOtherNode`` at scale (docs/executor-semantics.md#4-node-fit).

The answer is a yes or a no, so it does not depend on the order in which nodes are tried: :class:`FitIndex` tries
only the nodes that can pass. Per basic resource (``cpu``, ``memory``, ``pods``) it keeps the nodes sorted by what
is left (allocatable minus the requests of their non-terminal pods), brought up to date from the cluster's change
log as pods leave during the cycle. A query takes the pod's most selective resource: the nodes with at least the
pod's request of it (one slot for ``pods``) are a superset of the nodes it fits, found by bisection. Each of those in
the asked-for set then goes through the very same per-node check as the straightforward scan
(:func:`desched.executor.nodeutil.node_fit_failure`'s), taints, selectors and anti-affinity included, until one
passes. A pod that fits nowhere, the expensive case of a scan, costs a bisection.

:class:`ScanFit` is that straightforward scan (:func:`~desched.executor.nodeutil.pod_fits_any_node`), kept as the
oracle: the differential tests run whole cycles with either and compare the decisions byte for byte.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple, Protocol

from desched.executor import nodeutil
from desched.tree import JsonView

__all__ = ["FitIndex", "NodeFit", "NodeSet", "ScanFit", "node_set"]

_INDEXED = ("pods", "cpu", "memory")  # every node has an amount of these (0 when allocatable does not say)
_SCAN_BELOW = 16  # a set this small is cheaper to scan than to look up


class NodeSet(NamedTuple):
    """Nodes a fit question is about: in order (for the scan) and by name (for the index)."""

    nodes: Sequence[JsonView]
    names: frozenset[str]


def node_set(nodes: Iterable[JsonView]) -> NodeSet:
    listed = list(nodes)
    return NodeSet(listed, frozenset(nodeutil.node_name(node) for node in listed))


class FitCluster(Protocol):
    """What fit checks read of the cycle's cluster (:class:`desched.executor.cluster.Cluster`)."""

    nodes: list[Any]
    changes: list[str]
    additions: int

    def pods_on_node(self, node: str) -> list[Any]: ...

    def requested(self, node: str) -> dict[str, int]: ...

    def pod_requests(self, pod: Any) -> dict[str, int]: ...


class NodeFit(Protocol):
    def fits_any(self, pod: JsonView, among: NodeSet, *, skip_own: bool) -> bool:
        """Whether ``pod`` fits some node of ``among`` (not its own node when ``skip_own``)."""
        ...


class ScanFit:
    """The oracle: every node of the set in turn (:func:`desched.executor.nodeutil.pod_fits_any_node`)."""

    def __init__(self, cluster: FitCluster) -> None:
        self.cluster = cluster

    def fits_any(self, pod: JsonView, among: NodeSet, *, skip_own: bool) -> bool:
        check = nodeutil.pod_fits_any_other_node if skip_own else nodeutil.pod_fits_any_node
        return check(pod, among.nodes, self.cluster.pods_on_node, requested_by_node=self.cluster.requested)


class FitIndex:
    """The cluster's nodes sorted by what is left of each basic resource, kept current (see the module docstring)."""

    def __init__(self, cluster: FitCluster) -> None:
        self.cluster = cluster
        self.nodes = {nodeutil.node_name(node): node for node in cluster.nodes}
        self.names = list(self.nodes)
        self._position = {name: index for index, name in enumerate(self.names)}
        self._allocatable = [_allocatable(node) for node in self.nodes.values()]
        self._left: list[tuple[int, ...]] = [self._compute(index) for index in range(len(self.names))]
        self._sorted = {
            resource: sorted((left[slot], index) for index, left in enumerate(self._left))
            for slot, resource in enumerate(_INDEXED)
        }
        self._seen = len(cluster.changes)
        self._facts: dict[str, nodeutil.PodFacts] = {}  # uid -> the pod parsed once: pods do not change in a cycle
        # Pods only leave a running cycle, which frees room and ends conflicts: a pod that fits somewhere keeps
        # fitting there. Yes answers are kept until a pod is added.
        self._fitting: set[tuple[str, frozenset[str], bool]] = set()
        self._additions = cluster.additions

    def _compute(self, index: int) -> tuple[int, ...]:
        used = self.cluster.requested(self.names[index])
        allocatable = self._allocatable[index]
        return tuple(allocatable[slot] - used.get(resource, 0) for slot, resource in enumerate(_INDEXED))

    def _catch_up(self) -> None:
        """Re-sort the nodes whose pods changed since the last question."""
        changes = self.cluster.changes
        if self._seen == len(changes):
            return
        if self._additions != self.cluster.additions:
            self._fitting.clear()
            self._additions = self.cluster.additions
        for name in set(changes[self._seen :]):
            index = self._position.get(name)
            if index is None:
                continue
            old, new = self._left[index], self._compute(index)
            if old == new:
                continue
            for slot, resource in enumerate(_INDEXED):
                ordered = self._sorted[resource]
                del ordered[bisect_left(ordered, (old[slot], index))]
                insort(ordered, (new[slot], index))
            self._left[index] = new
        self._seen = len(changes)

    def fits_any(self, pod: JsonView, among: NodeSet, *, skip_own: bool) -> bool:
        if len(among.names) < _SCAN_BELOW:
            return ScanFit(self.cluster).fits_any(pod, among, skip_own=skip_own)
        self._catch_up()
        facts = self._parsed(pod)
        asked = (str((pod.get("metadata") or {}).get("uid")), among.names, skip_own)
        if asked in self._fitting:
            return True
        if self._answer(facts, among, skip_own):
            self._fitting.add(asked)
            return True
        return False

    def _answer(self, facts: nodeutil.PodFacts, among: NodeSet, skip_own: bool) -> bool:
        own = facts.node_name
        # on its own node a pod's resources are not checked: that node cannot come from the resource lists
        if not skip_own and own in among.names and own in self.nodes and self._passes(facts, own):
            return True
        requests = facts.requests
        needs = [("pods", max(1, requests.get("pods", 0)))]
        needs += [(resource, requests[resource]) for resource in _INDEXED[1:] if resource in requests]
        ordered: list[tuple[int, int]] = []
        start = 0
        for resource, need in needs:
            sorted_left = self._sorted[resource]
            first = bisect_left(sorted_left, (need, -1))
            if first == len(sorted_left):
                return False  # no node has enough of it left
            if not ordered or len(sorted_left) - first < len(ordered) - start:
                ordered, start = sorted_left, first
        if len(among.names) < len(ordered) - start:  # the set is the narrower way in
            names: Iterable[str] = among.names
        else:  # most left first
            names = (self.names[ordered[position][1]] for position in range(len(ordered) - 1, start - 1, -1))
        return any(
            name != own and name in among.names and name in self.nodes and self._passes(facts, name) for name in names
        )

    def _parsed(self, pod: JsonView) -> nodeutil.PodFacts:
        uid = str((pod.get("metadata") or {}).get("uid"))
        facts = self._facts.get(uid)
        if facts is None or facts.pod is not pod:
            facts = self._facts[uid] = nodeutil.PodFacts(pod, self.cluster.pod_requests(pod))
        return facts

    def _passes(self, facts: nodeutil.PodFacts, name: str) -> bool:
        pods = partial(self.cluster.pods_on_node, name)
        return nodeutil.fit_failure(facts, self.nodes[name], pods, partial(self.cluster.requested, name)) is None


def _allocatable(node: JsonView) -> tuple[int, ...]:
    """The basic resources of ``status.allocatable`` (absent: 0, as NodeFit reads them)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return tuple(nodeutil.allocatable_amount(allocatable, resource) for resource in _INDEXED)
