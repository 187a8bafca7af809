"""RemovePodsViolatingNodeAffinity (docs/executor-semantics.md#84-removepodsviolatingnodeaffinity): evict pods whose
node affinity their node no longer satisfies.

Contract: for each entry of ``nodeAffinityType`` in order (unknown entries are ignored), then each node, the node's
non-terminal pods passing the namespace/label filters, ``Filter`` and ``PreEvictionFilter`` are listed when they
violate that type, then evicted in listing order:

* ``requiredDuringSchedulingIgnoredDuringExecution``: the pod has a required node affinity (a ``nodeSelector`` alone
  does not count), does not match its node (nodeSelector plus required affinity), and fits some node of the cycle
  (``PodFitsAnyNode``, its own node included);
* ``preferredDuringSchedulingIgnoredDuringExecution``: the pod has preferred terms, the best preferred-weight sum over
  all nodes (feasible or not) beats its node's, and it fits some node of the cycle.

A node limit moves on to the next node, a total limit ends the current type, any other refusal moves on to the next
pod. With both types listed a pod can be a candidate twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

from desched.executor import nodeutil
from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle, pod_filter
from desched.executor.nodefit import NodeSet, node_set
from desched.executor.releases import AFFINITY_FITS_CURRENT
from desched.plugins.removepodsviolatingnodeaffinity import RemovePodsViolatingNodeAffinityArgs

NAME = "RemovePodsViolatingNodeAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

Violation = Callable[[Json, Json], bool]


def _node_affinity(pod: Json) -> Json:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    return affinity.get("nodeAffinity") or {}


class Implementation:
    """One profile's instance, built from the plugin's args."""

    def __init__(self, args: RemovePodsViolatingNodeAffinityArgs, handle: Handle) -> None:
        self.handle = handle
        self.accepts = pod_filter(args.namespaces, args.label_selector)
        self.affinity_types = list(args.node_affinity_type)

    def deschedule(self, nodes: list[Json]) -> None:
        among = node_set(nodes)
        fits_current = self.handle.release.older(AFFINITY_FITS_CURRENT)  # v0.27: and the preferred type is unknown
        for affinity_type in self.affinity_types:
            if affinity_type == REQUIRED:
                self._process(nodes, self._required_violation(among, fits_current))
            elif affinity_type == PREFERRED and not fits_current:
                self._process(nodes, self._preferred_violation(among))

    def _fits_somewhere(self, pod: Json, among: NodeSet) -> bool:
        """``PodFitsAnyNode`` on the plugin's nodes, the pod's own included."""
        return self.handle.node_fit().fits_any(pod, among, skip_own=False)

    def _required_violation(self, among: NodeSet, fits_current: bool) -> Violation:
        """``fits_current``: the pod violates when it does not fit its node (v0.27), not only when its node selector
        and required affinity no longer match it."""

        def misplaced(pod: Json, node: Json) -> bool:
            if not nodeutil.pod_matches_node(pod, node):
                return True
            return fits_current and (
                nodeutil.is_unschedulable(node) or not nodeutil.tolerates_no_schedule_or_execute(pod, node)
            )

        def violates(pod: Json, node: Json) -> bool:
            return (
                _node_affinity(pod).get(REQUIRED) is not None
                and misplaced(pod, node)
                and self._fits_somewhere(pod, among)
            )

        return violates

    def _preferred_violation(self, among: NodeSet) -> Violation:
        best_by_terms: dict[str, int] = {}  # pods of one workload share their terms: weigh every node once per set

        def best_weight(pod: Json, terms: list[Json]) -> int:
            terms_key = json.dumps(terms, sort_keys=True, default=str)
            best = best_by_terms.get(terms_key)
            if best is None:
                best = nodeutil.best_preferred_weight(pod, among.nodes)
                best_by_terms[terms_key] = best
            return best

        def violates(pod: Json, node: Json) -> bool:
            terms = _node_affinity(pod).get(PREFERRED) or []
            return (
                len(terms) > 0
                and best_weight(pod, terms) > nodeutil.preferred_weight(pod, node)
                and self._fits_somewhere(pod, among)
            )

        return violates

    def _process(self, nodes: list[Json], violates: Violation) -> None:
        """Upstream's ``processNodes``. Its listing calls ``Filter`` a second time inside the affinity predicate; the
        result cannot differ, so it is called once here. The cheap affinity tests run before ``PodFitsAnyNode``, the
        violation before ``Filter`` (:meth:`Handle.filter_and`) and ``PreEvictionFilter`` (NodeFit): all of them are
        pure, so only the cost changes."""
        handle = self.handle
        for node in nodes:
            name = str(node["metadata"]["name"])
            violates_here = partial(_on_node, violates, node)
            listed = [
                pod
                for pod in handle.active_pods_on_node(name)
                if self.accepts(pod) and handle.filter_and(pod, violates_here) and handle.pre_eviction_filter(pod)
            ]
            for pod in listed:
                outcome = handle.evict(pod, NAME)
                if outcome is Outcome.NODE_LIMIT:
                    break
                elif outcome is Outcome.TOTAL_LIMIT:
                    return


def _on_node(violates: Violation, node: Json, pod: Json) -> bool:
    """``violates(pod, node)``, with its arguments in the order :func:`functools.partial` binds them."""
    return violates(pod, node)
