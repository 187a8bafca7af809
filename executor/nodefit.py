"""``PodFitsAnyNode`` and ``PodFitsAnyOtherNode`` at scale (docs/executor-semantics.md#4-node-fit).

The answer is a yes or a no, so it does not depend on the order in which nodes are tried: :class:`FitIndex` tries
only the nodes that can pass. Per basic resource (``cpu``, ``memory``, ``pods``) it keeps the nodes sorted by what
is left (allocatable minus the requests of their non-terminal pods), brought up to date from the cluster's change
log as pods leave during the cycle. Per scheduling signature (node selector, required node affinity, tolerations:
:attr:`PodFacts.signature <desched.executor.nodeutil.PodFacts.signature>`) it keeps the nodes that pass the checks no
cycle changes (cordon, selectors, taints: :func:`~desched.executor.nodeutil.static_fit_failure`), computed once and
shared by every pod with that signature. A query starts from the smallest of three sets: the asked-for nodes, the
signature's nodes, and the nodes with at least the pod's request of its most selective resource (one slot for
``pods``), found by bisection; a node of it that is in the other two and has room for the basic requests then goes
through the rest of the per-node check of the straightforward scan
(:func:`~desched.executor.nodeutil.dynamic_fit_failure`: anti-affinity, every requested resource), until one passes.
The last few nodes where a pod of the same signature fitted are tried first, with the same checks.
A pod that fits nowhere, the expensive case of a scan, costs a bisection, or a walk of its signature's nodes.

:class:`ScanFit` is that straightforward scan (:func:`~desched.executor.nodeutil.pod_fits_any_node`), kept as the
oracle: the differential tests run whole cycles with either and compare the decisions byte for byte.

Both take ``anti_affinity``: whether NodeFit checks the pod's required pod anti-affinity, as releases from v0.30 on
do (:mod:`desched.executor.releases`); without it no anti-affinity term is read, so the room check alone decides
for pods requesting only the indexed resources.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from desched.executor import nodeutil
from desched.tree import JsonView

if TYPE_CHECKING:
    from desched.executor.records import PodRecord

__all__ = ["FitIndex", "NodeFit", "NodeSet", "ScanFit", "node_set"]

_INDEXED = ("pods", "cpu", "memory")  # every node has an amount of these (0 when allocatable does not say)
_SCAN_BELOW = 16  # a set this small is cheaper to scan than to look up
# walk a signature's nodes rather than the resource order when they are this many times fewer: in resource order the
# first nodes have room, so a walk ends after about (nodes / signature's nodes) steps; in a pool's own order, after
# as many full nodes as come first
_FEASIBLE_FIRST = 8
_WITNESSES = 4


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

    def record(self, pod: Any) -> PodRecord: ...


class NodeFit(Protocol):
    def fits_any(self, pod: JsonView, among: NodeSet, *, skip_own: bool) -> bool:
        """Whether ``pod`` fits some node of ``among`` (not its own node when ``skip_own``)."""
        ...


class ScanFit:
    """The oracle: every node of the set in turn (:func:`desched.executor.nodeutil.pod_fits_any_node`)."""

    def __init__(self, cluster: FitCluster, anti_affinity: bool = True) -> None:
        self.cluster = cluster
        self.anti_affinity = anti_affinity

    def fits_any(self, pod: JsonView, among: NodeSet, *, skip_own: bool) -> bool:
        check = nodeutil.pod_fits_any_other_node if skip_own else nodeutil.pod_fits_any_node
        return check(
            pod,
            among.nodes,
            self.cluster.pods_on_node,
            requested_by_node=self.cluster.requested,
            anti_affinity=self.anti_affinity,
            requests=self.cluster.pod_requests(pod),
        )


class FitIndex:
    """The cluster's nodes sorted by what is left of each basic resource, kept current (see the module docstring)."""

    def __init__(self, cluster: FitCluster, anti_affinity: bool = True) -> None:
        self.cluster = cluster
        self.anti_affinity = anti_affinity
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
        self._compiled: nodeutil.SharedTerms = {}  # signature -> required node affinity terms (PodFacts)
        # Pods only leave a running cycle, which frees room and ends conflicts: a pod that fits somewhere keeps
        # fitting there. Yes answers are kept until a pod is added; no answers until a node has more room (every
        # non-terminal pod that leaves frees a pod slot, and only such a pod can end a conflict).
        # (the asked-for nodes, skip_own) -> the uids of the pods answered yes (no)
        self._fitting: dict[tuple[frozenset[str], bool], set[str]] = {}
        self._not_fitting: dict[tuple[frozenset[str], bool], set[str]] = {}
        self._additions = cluster.additions
        self._static: dict[str, frozenset[int]] = {}  # signature -> the nodes passing static_fit_failure
        # signature -> the nodes where pods of it fitted last, tried first (checked in full: only a shortcut)
        self._witnesses: dict[str, list[int]] = {}

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
            if any(after > before for before, after in zip(old, new, strict=True)):
                self._not_fitting.clear()
            for slot, resource in enumerate(_INDEXED):
                ordered = self._sorted[resource]
                del ordered[bisect_left(ordered, (old[slot], index))]
                insort(ordered, (new[slot], index))
            self._left[index] = new
        self._seen = len(changes)

    def fits_any(self, pod: JsonView, among: NodeSet, *, skip_own: bool) -> bool:
        if len(among.names) < _SCAN_BELOW:
            return ScanFit(self.cluster, self.anti_affinity).fits_any(pod, among, skip_own=skip_own)
        self._catch_up()
        uid, question = str((pod.get("metadata") or {}).get("uid")), (among.names, skip_own)
        if uid in self._fitting.get(question, ()):
            return True
        if uid in self._not_fitting.get(question, ()):
            return False
        fits = self._answer(self._parsed(pod), among, skip_own)
        (self._fitting if fits else self._not_fitting).setdefault(question, set()).add(uid)
        return fits

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
        feasible = self._feasible(facts)
        slots = [(_INDEXED.index(resource), need) for resource, need in needs]
        position = self._position
        if len(among.names) < min(len(feasible), len(ordered) - start):  # the asked-for set is the narrowest
            indices: Iterable[int] = (position[name] for name in among.names if name in position)
        elif len(feasible) * _FEASIBLE_FIRST < len(ordered) - start:  # a small pool: its nodes, in any order
            indices = feasible
        else:  # the nodes with enough of the most selective resource, most left first: room is found at once
            indices = (ordered[place][1] for place in range(len(ordered) - 1, start - 1, -1))
        left, names = self._left, self.names
        # with no anti-affinity checked and only indexed resources requested, the room check is the whole dynamic check
        unchecked = not self.anti_affinity or not facts.anti_terms
        room_decides = unchecked and all(resource in _INDEXED for resource in requests)

        def fits(index: int) -> bool:
            name = names[index]
            if name == own or name not in among.names:
                return False
            room = left[index]
            if not all(room[slot] >= need for slot, need in slots):
                return False
            return room_decides or self._passes_dynamic(facts, name)

        witnesses = self._witnesses.setdefault(facts.signature, [])
        if any(fits(index) for index in witnesses):
            return True
        for index in indices:
            if index in feasible and fits(index):
                witnesses.insert(0, index)
                del witnesses[_WITNESSES:]
                return True
        return False

    def _feasible(self, facts: nodeutil.PodFacts) -> frozenset[int]:
        """The nodes that pass the checks a cycle cannot change, for the pod's signature (computed once)."""
        found = self._static.get(facts.signature)
        if found is None:
            nodes = list(self.nodes.values())
            found = frozenset(i for i, node in enumerate(nodes) if nodeutil.static_fit_failure(facts, node) is None)
            self._static[facts.signature] = found
        return found

    def _parsed(self, pod: JsonView) -> nodeutil.PodFacts:
        """The pod's facts, kept on its record: parsed once, as pods do not change in a cycle (again for its
        terminating copy, which :func:`~desched.executor.nodeutil.dynamic_fit_failure` must see as it is)."""
        record = self.cluster.record(pod)
        facts = record.facts
        if facts is None or facts.pod is not pod:
            facts = record.facts = nodeutil.PodFacts(pod, self.cluster.pod_requests(pod), self._compiled)
        return facts

    def _passes(self, facts: nodeutil.PodFacts, name: str) -> bool:
        return nodeutil.static_fit_failure(facts, self.nodes[name]) is None and self._passes_dynamic(facts, name)

    def _passes_dynamic(self, facts: nodeutil.PodFacts, name: str) -> bool:
        pods = partial(self.cluster.pods_on_node, name)
        requested = partial(self.cluster.requested, name)
        failure = nodeutil.dynamic_fit_failure(
            facts, self.nodes[name], pods, requested, anti_affinity=self.anti_affinity
        )
        return failure is None


def _allocatable(node: JsonView) -> tuple[int, ...]:
    """The basic resources of ``status.allocatable`` (absent: 0, as NodeFit reads them)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return tuple(nodeutil.allocatable_amount(allocatable, resource) for resource in _INDEXED)
