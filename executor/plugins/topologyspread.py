"""RemovePodsViolatingTopologySpreadConstraint (Balance,
docs/executor-semantics.md#87-removepodsviolatingtopologyspreadconstraint): even out topology domains whose skew is
above ``maxSkew``.

Contract:
* Listed pods are the non-terminal pods of the cycle's nodes passing the namespace/labelSelector filter and
  ``Filter``; only they are counted. Each namespace's constraints come from its listed pods' topologySpreadConstraints
  whose ``whenUnsatisfiable`` is in ``constraints`` (``matchLabelKeys`` merged into the selector with the declaring
  pod's values; ``nodeAffinityPolicy`` defaults to Honor, ``nodeTaintsPolicy`` to Ignore). Up to v0.27
  (:mod:`desched.executor.releases`) every pod of the named namespaces declares constraints and, on the cycle's
  nodes, counts (any phase, Filter and labelSelector or not), and neither ``matchLabelKeys`` nor the inclusion
  policies are read.
* Domains: one per ``topologyKey`` value of the nodes passing the inclusion policies, plus any domain a counted pod
  sits in (even on an excluded node). A constraint with ``max - min <= maxSkew`` is left alone.
* Balancing follows upstream's arithmetic: domains sorted by size, ``i`` from the smallest and ``j`` from the largest,
  ``move = min(ceil(size_j - avg), ceil(avg - size_i), ceil((skew - maxSkew) / 2))`` pods taken from the end of domain
  ``j``, whose pods are ordered (see :func:`sort_domain_pods`; up to v0.32 without priority) with the pods that fit
  a below-average node (``PodFitsAnyOtherNode``) moved last (from v0.34; up to v0.33 the last pods of the sorted
  list are taken:
  :mod:`desched.executor.releases`). Taken pods count as moved either way; they are candidates unless
  ``topologyBalanceNodeFit`` (default true) is on and they fit no below-average node.
* Candidates are evicted in discovery order (upstream: map order; shuffled by a shuffling listing order) after
  re-checking the pod filter and ``PreEvictionFilter``. Node limit: later candidates on that node are skipped; total
  limit: the plugin stops.
* Ties: domains of equal size keep node order (shuffled under a shuffling listing order); a domain's pods are sorted
  with Go's unstable algorithm and upstream's comparator (:func:`sort_domain_pods`), as upstream sorts them.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Callable, Iterator
from itertools import chain
from typing import NamedTuple

from desched.executor import nodeutil, podutil
from desched.executor.cluster import Json, key, node_of
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle, pod_filter
from desched.executor.gosort import sort_slice
from desched.executor.nodefit import NodeSet
from desched.executor.releases import (
    NEWEST_DECISIONS,
    SPREAD_FIT_ORDER,
    SPREAD_INCLUSION_POLICIES,
    SPREAD_INCLUSION_STUBS,
    SPREAD_LISTS_NAMESPACE,
    SPREAD_MATCH_LABEL_KEYS,
    SPREAD_SORT_PRIORITY,
    ReleaseDecisions,
)
from desched.plugins.removepodsviolatingtopologyspreadconstraint import (
    RemovePodsViolatingTopologySpreadConstraintArgs,
)
from desched.workloads.selectors import Selector, compile_selector, label_map

NAME = "RemovePodsViolatingTopologySpreadConstraint"
HONOR = "Honor"


class Constraint(NamedTuple):
    """Upstream's internal topologySpreadConstraint. ``placement`` is a pod stub with the declaring pod's nodeSelector
    and required node affinity (only when nodeAffinityPolicy is Honor), ``tolerating`` one with its tolerations (only
    when nodeTaintsPolicy is Honor); ``inclusion`` identifies the two for caching."""

    max_skew: int
    topology_key: str
    selector: Selector
    placement: Json | None
    tolerating: Json | None
    inclusion: str

    def includes(self, node: Json) -> bool:
        """The node inclusion policies: Honor affinity and Honor taints (NoSchedule/NoExecute) must pass."""
        if self.placement is not None and not nodeutil.pod_matches_node(self.placement, node):
            return False
        return self.tolerating is None or nodeutil.tolerates_no_schedule_or_execute(self.tolerating, node)


def _inclusion_stubs(spread: Json, pod: Json) -> tuple[Json | None, Json | None]:
    """The pod stubs a constraint keeps for its inclusion policies (see :class:`Constraint`)."""
    spec = pod.get("spec") or {}
    placement: Json | None = None
    if (spread.get("nodeAffinityPolicy") or HONOR) == HONOR:
        placement = {"spec": {}}
        if spec.get("nodeSelector"):
            placement["spec"]["nodeSelector"] = spec["nodeSelector"]
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if required is not None:
            placement["spec"]["affinity"] = {
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
            }
    tolerating = (
        {"spec": {"tolerations": spec.get("tolerations") or []}} if spread.get("nodeTaintsPolicy") == HONOR else None
    )
    return placement, tolerating


def _matched_labels(spread: Json, pod: Json, release: ReleaseDecisions) -> tuple[tuple[str, str], ...]:
    """``matchLabelKeys`` with the pod's values, for the keys the pod has (none up to v0.27)."""
    keys = spread.get("matchLabelKeys")
    if not keys or release.older(SPREAD_MATCH_LABEL_KEYS):
        return ()
    labels = label_map((pod.get("metadata") or {}).get("labels"))
    return tuple((key, labels[key]) for key in keys if key in labels)


_BOTH_HONOURED = {"nodeAffinityPolicy": HONOR, "nodeTaintsPolicy": HONOR}


def constraint_key(spread: Json, pod: Json, release: ReleaseDecisions = NEWEST_DECISIONS) -> str:
    """Equal for two (constraint, declaring pod) pairs that give deep-equal internal constraints at ``release``,
    which upstream processes once. (Unequal keys that still give equal constraints, e.g. with mappings in another
    order, are only processed twice, with the same result.) Up to v0.27 the pod's own constraint is compared; up to
    v0.33 the pod's node affinity and tolerations are compared whatever the inclusion policies
    (:mod:`desched.executor.releases`)."""
    if release.older(SPREAD_INCLUSION_POLICIES):
        return json.dumps(spread, sort_keys=True)
    if release.older(SPREAD_INCLUSION_STUBS):
        policies = (spread.get("nodeAffinityPolicy") or HONOR, spread.get("nodeTaintsPolicy") or "Ignore")
        stubs: tuple[object, ...] = (*policies, *_inclusion_stubs(_BOTH_HONOURED, pod))
    else:
        stubs = _inclusion_stubs(spread, pod)
    selector = (spread.get("maxSkew"), spread.get("topologyKey"), spread.get("labelSelector"))
    return repr((*selector, _matched_labels(spread, pod, release), *stubs))


def build_constraint(spread: Json, pod: Json, release: ReleaseDecisions = NEWEST_DECISIONS) -> Constraint:
    """The internal constraint for one of ``pod``'s topologySpreadConstraints (``newTopologySpreadConstraint``) at
    ``release`` (up to v0.27 without inclusion policies and ``matchLabelKeys``).

    A nil labelSelector matches nothing, ``matchLabelKeys`` included; an invalid one matches nothing, which gives
    the same decisions as upstream skipping the constraint.
    """
    selector = compile_selector(spread.get("labelSelector"), nil_matches=False)
    matched = _matched_labels(spread, pod, release)
    if matched and selector.kind in ("empty", "normal"):
        selector = Selector("normal", matched + selector.match_labels, selector.expressions)
    placement, tolerating = (None, None) if release.older(SPREAD_INCLUSION_POLICIES) else _inclusion_stubs(spread, pod)
    max_skew = spread.get("maxSkew")
    return Constraint(
        max_skew if isinstance(max_skew, int) else 0,
        str(spread.get("topologyKey") or ""),
        selector,
        placement,
        tolerating,
        json.dumps([placement, tolerating], sort_keys=True),
    )


def _has_selector_or_affinity(pod: Json) -> bool:
    spec = pod.get("spec") or {}
    return spec.get("nodeSelector") is not None or (spec.get("affinity") or {}).get("nodeAffinity") is not None


def domain_less(is_evictable: Callable[[Json], bool], by_priority: bool = True) -> Callable[[Json, Json], bool]:
    """Upstream ``sortDomains``' comparator of a domain's pods, front to back: non-evictable pods, then pods with a
    nodeSelector or node affinity, then the others; ascending priority inside each group, nil first (pods are taken
    from the end). It answers true both ways for two non-evictable pods and for two of equal non-nil priority.
    Without ``by_priority`` (up to v0.32, :mod:`desched.executor.releases`) two pods of one group are never less."""

    def less(pod: Json, other: Json) -> bool:
        evictable, other_evictable = is_evictable(pod), is_evictable(other)
        if not evictable or not other_evictable:
            return not (evictable and not other_evictable)
        placed, other_placed = _has_selector_or_affinity(pod), _has_selector_or_affinity(other)
        if placed != other_placed:
            return placed
        if not by_priority:
            return False
        priority, other_priority = podutil.priority(pod), podutil.priority(other)
        if priority is not None and other_priority is not None:
            return priority <= other_priority
        return priority is None and other_priority is not None

    return less


def sort_domain_pods(pods: list[Json], is_evictable: Callable[[Json], bool], by_priority: bool = True) -> list[Json]:
    """A new list of a domain's pods sorted as upstream sorts them: Go's ``sort.Slice`` with :func:`domain_less`, so
    that equal pods listed node by node land where upstream's land (docs/executor-semantics.md#12-listing-orders)."""
    return sort_slice(list(pods), domain_less(is_evictable, by_priority))


class _Eligible(NamedTuple):
    """The nodes with the topology key that pass a constraint's inclusion policies: their values, each ranked by its
    first node, and (value, node) pairs in node order. Each value is one domain that exists even without pods.
    ``names`` lists each domain's node names; ``outsides`` keeps :meth:`outside`'s answers."""

    rank: dict[str, int]
    nodes: list[tuple[str, Json]]
    names: dict[str, list[str]]
    outsides: dict[frozenset[str], NodeSet]

    def outside(self, values: set[str]) -> NodeSet:
        """The nodes of the domains not in ``values``, in node order: one object per set of domains, so that the
        constraints of many applications over the same domains share it (and node fit's answers about it)."""
        within = frozenset(values)
        found = self.outsides.get(within)
        if found is None:
            nodes = [node for value, node in self.nodes if value not in within]
            names = frozenset(chain.from_iterable(n for v, n in self.names.items() if v not in within))
            found = self.outsides[within] = NodeSet(nodes, names)
        return found


class _Nodes:
    """The cycle's nodes as constraints see them. Nothing is evicted before the final pass, so answers are cached for
    the whole balance."""

    def __init__(self, nodes: list[Json], handle: Handle) -> None:
        self.nodes = nodes
        self.handle = handle
        self.labels = {str(node["metadata"]["name"]): label_map(node["metadata"].get("labels")) for node in nodes}
        self._included: dict[str, list[Json]] = {}
        self._eligible: dict[tuple[str, str], _Eligible] = {}

    def eligible(self, constraint: Constraint) -> _Eligible:
        cache_key = (constraint.inclusion, constraint.topology_key)
        found = self._eligible.get(cache_key)
        if found is None:
            included = self._included.get(constraint.inclusion)
            if included is None:
                included = self._included[constraint.inclusion] = [
                    node for node in self.nodes if constraint.includes(node)
                ]
            pairs = []
            for node in included:
                value = self.labels[str(node["metadata"]["name"])].get(constraint.topology_key)
                if value is not None:
                    pairs.append((value, node))
            rank: dict[str, int] = {}
            names: dict[str, list[str]] = {}
            for value, node in pairs:
                rank.setdefault(value, len(rank))
                names.setdefault(value, []).append(str(node["metadata"]["name"]))
            found = self._eligible[cache_key] = _Eligible(rank, pairs, names, {})
        return found


class _Namespace:
    """One namespace's listed pods, their labels, and an index from label pair to pod positions (listing order)."""

    def __init__(self, pods: list[Json]) -> None:
        self.pods = pods
        self.labels = [label_map(pod["metadata"].get("labels")) for pod in pods]
        self.index: dict[tuple[str, str], list[int]] = {}
        for position, labels in enumerate(self.labels):
            for pair in labels.items():
                self.index.setdefault(pair, []).append(position)

    def matching(self, selector: Selector) -> list[Json]:
        """The pods ``selector`` matches, in listing order."""
        positions: range | list[int] = range(len(self.pods))
        if selector.match_labels:
            positions = min((self.index.get(pair, []) for pair in selector.match_labels), key=len)
        return [self.pods[position] for position in positions if selector.matches(self.labels[position])]


class Implementation:
    def __init__(self, args: RemovePodsViolatingTopologySpreadConstraintArgs, handle: Handle) -> None:
        self.handle = handle
        self.args_filter = pod_filter(args.namespaces, args.label_selector)
        self.allowed = set(args.constraints)
        self.balance_node_fit = args.topology_balance_node_fit is not False  # nil reads as true upstream
        self.split_off = _take_last if handle.release.older(SPREAD_FIT_ORDER) else _split_off
        self.by_priority = not handle.release.older(SPREAD_SORT_PRIORITY)
        self.lists_namespace = handle.release.older(SPREAD_LISTS_NAMESPACE)
        self.namespace_filter = pod_filter(args.namespaces)
        # up to v0.27 the counted pods need not pass Filter: the domain sort puts those that fail it first
        self.sorts_evictable: Callable[[Json], bool] = handle.filter if self.lists_namespace else _listed_already

    def _listed(self, pod: Json) -> bool:
        return self.args_filter(pod) and self.handle.filter(pod)

    def balance(self, nodes: list[Json]) -> None:
        cycle_nodes = _Nodes(nodes, self.handle)
        candidates: dict[str, Json] = {}
        for counted, declaring in self._namespaces(cycle_nodes):
            constraints = self._constraints(declaring)
            if not constraints:
                continue
            namespace = _Namespace(counted)
            for constraint in constraints:
                self._balance_constraint(constraint, namespace, cycle_nodes, candidates)
        self._evict(candidates)

    def _namespaces(self, cycle_nodes: _Nodes) -> Iterator[tuple[list[Json], list[Json]]]:
        """Each namespace's pods that count, on the cycle's nodes, and the pods whose constraints it balances: from
        v0.28 the same listed pods; up to v0.27 every pod of the namespaces the args name, by name as the API lists
        them, any phase, Filter and labelSelector or not, counting only on the cycle's nodes."""
        by_namespace: dict[str, list[Json]] = {}
        if self.lists_namespace:
            for pod in sorted(filter(self.namespace_filter, self.handle.cluster.pods.values()), key=key):
                by_namespace.setdefault(key(pod)[0], []).append(pod)
            for pods in by_namespace.values():
                yield [pod for pod in pods if node_of(pod) in cycle_nodes.labels], pods
            return
        for node_name in cycle_nodes.labels:
            for pod in self.handle.active_pods_on_node(node_name):
                if self._listed(pod):
                    by_namespace.setdefault(key(pod)[0], []).append(pod)
        for pods in by_namespace.values():
            yield pods, pods

    def _constraints(self, pods: list[Json]) -> list[Constraint]:
        unique: dict[str, Constraint] = {}
        release = self.handle.release
        for pod in pods:
            for spread in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
                if spread.get("whenUnsatisfiable") not in self.allowed:
                    continue
                identity = constraint_key(spread, pod, release)
                if identity not in unique:
                    unique[identity] = build_constraint(spread, pod, release)
        return list(unique.values())

    def _balance_constraint(
        self, constraint: Constraint, namespace: _Namespace, cycle_nodes: _Nodes, candidates: dict[str, Json]
    ) -> None:
        """Count the domains and, when they are skewed, add the pods upstream's balancing moves to ``candidates``.

        Domains without pods are interchangeable (size 0, below average, never moved from), so they are only counted,
        and the loop skips runs of domains where upstream's iterations change nothing.
        """
        eligible = cycle_nodes.eligible(constraint)
        counted: dict[str, list[Json]] = {}  # value -> its pods, for the domains with pods (first seen first)
        for pod in namespace.matching(constraint.selector):
            value = cycle_nodes.labels[pod["spec"]["nodeName"]].get(constraint.topology_key)
            if value is not None and not podutil.is_terminating(pod):
                counted.setdefault(value, []).append(pod)
        empty = len(eligible.rank) - sum(1 for value in counted if value in eligible.rank)
        counts = [len(pods) for pods in counted.values()]
        if not counts or max(counts) - (0 if empty else min(counts)) <= constraint.max_skew:
            return
        average = sum(counts) / (empty + len(counts))
        at_or_above = {value for value, pods in counted.items() if len(pods) >= average}
        # ties keep node order (upstream: map order); domains that only pods create come last, as they were found
        if self.handle.order.shuffles:  # upstream: equal domains in the order of a Go map
            tie_order = {value: rank for rank, value in enumerate(self.handle.order.arrange(list(counted)))}
        else:
            tie_order = {
                value: eligible.rank.get(value, len(eligible.rank) + seen) for seen, value in enumerate(counted)
            }
        ascending = sorted(counted, key=lambda value: (len(counted[value]), tie_order[value]))
        filled = [sort_domain_pods(counted[value], self.sorts_evictable, self.by_priority) for value in ascending]
        size = [0] * empty + [len(pods) for pods in filled]  # all domains in ascending size, as upstream sorts them
        fit_cache: dict[str, bool] = {}
        below: list[NodeSet] = []  # the nodes of the domains that were below average before the loop, once asked

        def fits(pod: Json) -> bool:
            """``PodFitsAnyOtherNode`` on the nodes of the domains that were below average before the loop."""
            uid = str(pod["metadata"]["uid"])
            if uid not in fit_cache:
                if not below:
                    below.append(eligible.outside(at_or_above))
                fit_cache[uid] = self.handle.node_fit().fits_any(pod, below[0], skip_own=True)
            return fit_cache[uid]

        for high, move in _moves(size, average, constraint.max_skew):
            kept, taken = self.split_off(filled[high - empty], move, fits)
            for pod in taken:
                if not self.balance_node_fit or fits(pod):
                    candidates.setdefault(str(pod["metadata"]["uid"]), pod)
            filled[high - empty] = kept

    def _evict(self, candidates: dict[str, Json]) -> None:
        exhausted: set[str] = set()
        for pod in self.handle.order.arrange(list(candidates.values())):  # upstream: a Go map's order
            node_name = str(pod["spec"].get("nodeName") or "")
            if node_name in exhausted or not self._listed(pod) or not self.handle.pre_eviction_filter(pod):
                continue
            outcome = self.handle.evict(pod, NAME)
            if outcome is Outcome.NODE_LIMIT:
                exhausted.add(node_name)
            elif outcome is Outcome.TOTAL_LIMIT:
                return


def _listed_already(pod: Json) -> bool:
    """From v0.28 every counted pod passed Filter, and nothing is evicted before the final pass: Filter holds."""
    return True


def _moves(size: list[int], average: float, max_skew: int) -> Iterator[tuple[int, int]]:
    """Upstream's balancing loop over the domain sizes in ascending order: yields ``(j, move)`` for each move of
    ``move`` pods out of domain ``j``, and updates ``size``.

    Two shortcuts give the same moves with fewer iterations: a run of untouched domains the size of ``i`` gives the
    same outcome as ``i`` while ``j`` stays, and the loop ends once no domain left can give pods.
    """
    low, high = 0, len(size) - 1
    while low < high:
        stepped_down = size[high] <= average
        if stepped_down:
            high -= 1
            if size[high] <= average and (high - 1 <= low or size[high - 1] <= average):
                return
        skew = size[high] - size[low]
        move = (
            0
            if skew <= max_skew
            else min(math.ceil(size[high] - average), math.ceil(average - size[low]), math.ceil((skew - max_skew) / 2))
        )
        if move <= 0:
            same = not stepped_down and size[low + 1] == size[low]
            low = bisect.bisect_right(size, size[low], low + 1, high) if same else low + 1
            continue
        yield high, move
        size[high] -= move
        size[low] += move


def _take_last(pods: list[Json], move: int, fits: Callable[[Json], bool]) -> tuple[list[Json], list[Json]]:
    """Up to v0.33: the last ``move`` pods of the sorted domain, fitting or not: returns ``(kept, taken)``."""
    return pods[:-move], pods[-move:]


def _split_off(pods: list[Json], move: int, fits: Callable[[Json], bool]) -> tuple[list[Json], list[Json]]:
    """Upstream's stable sort of a domain (pods that fit moved to the end) followed by taking the last ``move`` pods:
    returns ``(kept, taken)``.

    Only as many pods are checked, from the end, as needed to find ``move`` that fit. The unchecked prefix stays
    unsorted in ``kept``: ``kept`` is the unchecked prefix plus checked pods that do not fit, so sorting it again
    later gives exactly the order upstream keeps.
    """
    fitting: list[Json] = []
    not_fitting: list[Json] = []
    start = len(pods)
    while start > 0 and len(fitting) < move:
        start -= 1
        (fitting if fits(pods[start]) else not_fitting).append(pods[start])
    ordered = pods[:start] + not_fitting[::-1] + fitting[::-1]
    return ordered[:-move], ordered[-move:]
