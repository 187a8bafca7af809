"""RemovePodsViolatingInterPodAntiAffinity (docs/executor-semantics.md#86-removepodsviolatinginterpodantiaffinity):
evict pods whose own required anti-affinity is violated.

Contract: the *listing* is every non-terminal pod on the cycle's nodes that passes the namespace/label filters,
evictable or not. Node by node, the node's listed pods are sorted by priority, then QoS, then the prefer-no-eviction
annotation (docs/executor-semantics.md#73-sorting-by-priority). A pod conflicts when one of its own required
anti-affinity terms (namespaces: ``term.namespaces``, else the pod's own; ``namespaceSelector`` ignored; a nil selector
matches nothing) matches a listed pod of another name that sits on the same node, or on a node carrying the term's
``topologyKey`` label with the same value (v0.27: only on the same node, :mod:`desched.executor.releases`). An
invalid selector ends the check of that pod with "no conflict". A conflicting pod passing ``Filter`` and
``PreEvictionFilter`` is evicted; once evicted it leaves the listing, so pods that conflicted only with it are
spared. A node limit moves on to the next node, a total limit ends the plugin, any
other refusal moves on to the next pod (which stays listed).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from desched.executor import podutil
from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle, pod_filter
from desched.executor.releases import ANTI_AFFINITY_SAME_NODE
from desched.plugins.removepodsviolatinginterpodantiaffinity import RemovePodsViolatingInterPodAntiAffinityArgs
from desched.workloads.selectors import Selector, compile_selector, label_map

NAME = "RemovePodsViolatingInterPodAntiAffinity"


class _Tally:
    """How many pods a group holds, and how many of them carry each pod name."""

    __slots__ = ("names", "total")

    def __init__(self) -> None:
        self.total = 0
        self.names: dict[str, int] = {}

    def add(self, name: str, step: int) -> None:
        self.total += step
        self.names[name] = self.names.get(name, 0) + step

    def has_other_than(self, name: str) -> bool:
        return self.total > self.names.get(name, 0)


class _TermMatches:
    """The listed pods matching one (namespaces, selector) pair, tallied per node and, on demand, per topology
    domain (``topologyKey`` -> label value)."""

    def __init__(self, node_labels: dict[str, dict[str, str]]) -> None:
        self._node_labels = node_labels
        self._by_node: dict[str, _Tally] = {}
        self._by_domain: dict[str, dict[str, _Tally]] = {}

    def add(self, name: str, node: str, step: int = 1) -> None:
        self._by_node.setdefault(node, _Tally()).add(name, step)
        labels = self._node_labels[node]
        for topology_key, domains in self._by_domain.items():
            if topology_key in labels:
                domains.setdefault(labels[topology_key], _Tally()).add(name, step)

    def conflicts(self, name: str, node: str, topology_key: str | None) -> bool:
        """Whether a pod not named ``name`` sits on ``node`` or in its ``topology_key`` domain (``None``: the node
        only)."""
        value = None if topology_key is None else self._node_labels[node].get(topology_key)
        if topology_key is None or value is None:
            tally = self._by_node.get(node)
        else:
            tally = self._domains(topology_key).get(value)
        return tally is not None and tally.has_other_than(name)

    def _domains(self, topology_key: str) -> dict[str, _Tally]:
        domains = self._by_domain.get(topology_key)
        if domains is None:
            domains = {}
            for node, tally in self._by_node.items():
                value = self._node_labels[node].get(topology_key)
                if value is not None:
                    merged = domains.setdefault(value, _Tally())
                    for name, count in tally.names.items():
                        merged.add(name, count)
            self._by_domain[topology_key] = domains
        return domains


class _Listing:
    """The listed pods by namespace, with a (namespace, label, value) index so that a term's matches are found
    without scanning its namespaces; matches are computed once per distinct term and kept up to date on removal."""

    def __init__(self, pods: Iterable[Json], node_labels: dict[str, dict[str, str]], same_node_only: bool) -> None:
        self._node_labels = node_labels
        self._same_node_only = same_node_only
        self._by_namespace: dict[str, dict[str, Json]] = {}
        self._labels: dict[str, dict[str, str]] = {}
        self._postings: dict[str, dict[tuple[str, str], set[str]]] = {}
        self._terms: dict[str, tuple[Selector, _TermMatches]] = {}
        self._member_of: dict[str, list[_TermMatches]] = {}
        label_sets: dict[frozenset[tuple[str, str]], dict[str, str]] = {}  # one mapping per label set
        for pod in pods:
            metadata = pod["metadata"]
            uid, namespace = str(metadata["uid"]), str(metadata.get("namespace") or "")
            labels = label_map(metadata.get("labels"))
            labels = label_sets.setdefault(frozenset(labels.items()), labels)
            self._by_namespace.setdefault(namespace, {})[uid] = pod
            self._labels[uid] = labels
            postings = self._postings.setdefault(namespace, {})
            for pair in labels.items():
                postings.setdefault(pair, set()).add(uid)

    def remove(self, pod: Json) -> None:
        metadata = pod["metadata"]
        uid, namespace = str(metadata["uid"]), str(metadata.get("namespace") or "")
        if self._by_namespace.get(namespace, {}).pop(uid, None) is None:
            return
        postings = self._postings[namespace]
        for pair in self._labels.pop(uid).items():
            postings[pair].discard(uid)
        for matches in self._member_of.pop(uid, []):
            matches.add(_name(pod), _node(pod), -1)

    def conflicts(self, pod: Json) -> bool:
        """Whether one of ``pod``'s required anti-affinity terms matches another listed pod (module contract); with
        ``same_node_only`` the terms' topology keys are not read."""
        namespace = str(pod["metadata"].get("namespace") or "")
        for term in _required_terms(pod):
            namespaces = sorted(set(term.get("namespaces") or [namespace]))
            selector, matches = self._term(namespaces, term.get("labelSelector"))
            if selector.kind == "invalid":
                return False
            topology_key = None if self._same_node_only else str(term.get("topologyKey") or "")
            if matches.conflicts(_name(pod), _node(pod), topology_key):
                return True
        return False

    def _term(self, namespaces: list[str], raw_selector: object) -> tuple[Selector, _TermMatches]:
        term_key = json.dumps([namespaces, raw_selector], sort_keys=True, default=str)
        found = self._terms.get(term_key)
        if found is None:
            selector = compile_selector(raw_selector, nil_matches=False)
            matches = _TermMatches(self._node_labels)
            for namespace in namespaces:
                pods = self._by_namespace.get(namespace, {})
                for uid in self._candidates(namespace, selector, pods):
                    if selector.matches(self._labels[uid]):
                        matches.add(_name(pods[uid]), _node(pods[uid]))
                        self._member_of.setdefault(uid, []).append(matches)
            found = self._terms[term_key] = (selector, matches)
        return found

    def _candidates(self, namespace: str, selector: Selector, pods: dict[str, Json]) -> Iterable[str]:
        """A superset of the namespace's pods ``selector`` matches: the smallest posting list of an equality or
        ``In`` requirement, else every pod of the namespace (or none for a selector that matches nothing)."""
        if selector.kind in ("nil", "invalid"):
            return ()
        postings = self._postings.get(namespace, {})
        best: set[str] | None = None
        requirements = [{pair} for pair in selector.match_labels] + [
            {(key, value) for value in values} for key, operator, values in selector.expressions if operator == "In"
        ]
        for pairs in requirements:
            found = set().union(*(postings.get(pair, ()) for pair in pairs))
            if best is None or len(found) < len(best):
                best = found
        return pods if best is None else best


def _required_terms(pod: Json) -> list[Json]:
    """The pod's required anti-affinity terms (``[]`` when it has none: it conflicts with no pod)."""
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {}
    return affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []


def _name(pod: Json) -> str:
    return str(pod["metadata"].get("name") or "")


def _node(pod: Json) -> str:
    return str(pod["spec"]["nodeName"])


class Implementation:
    """One profile's instance, built from the plugin's args."""

    def __init__(self, args: RemovePodsViolatingInterPodAntiAffinityArgs, handle: Handle) -> None:
        self.handle = handle
        self.accepts = pod_filter(args.namespaces, args.label_selector)
        self.same_node_only = handle.release.older(ANTI_AFFINITY_SAME_NODE)

    def deschedule(self, nodes: list[Json]) -> None:
        handle = self.handle
        node_labels = {str(node["metadata"]["name"]): label_map(node["metadata"].get("labels")) for node in nodes}
        by_node = {name: [pod for pod in handle.active_pods_on_node(name) if self.accepts(pod)] for name in node_labels}
        listing = _Listing((pod for pods in by_node.values() for pod in pods), node_labels, self.same_node_only)
        for node in nodes:
            # only pods with required terms can conflict: the others need no place in the (stable) sort
            listed = filter(_required_terms, by_node[str(node["metadata"]["name"])])
            for pod in podutil.sort_by_priority_low_to_high(listed, handle.priority_key):
                if not listing.conflicts(pod) or not (handle.filter(pod) and handle.pre_eviction_filter(pod)):
                    continue
                outcome = handle.evict(pod, NAME)
                if outcome in (Outcome.SUCCESS, Outcome.UNKNOWN):  # an unknown outcome may have evicted: it is gone
                    listing.remove(pod)
                elif outcome is Outcome.NODE_LIMIT:
                    break
                elif outcome is Outcome.TOTAL_LIMIT:
                    return
