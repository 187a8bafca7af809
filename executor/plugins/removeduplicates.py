"""RemoveDuplicates (Balance, docs/executor-semantics.md#83-removeduplicates): spread the duplicates of one owner evenly
over the nodes they may use.

Contract:
* Listed pods are each node's non-terminal pods passing the namespace filter, ``Filter`` and ``PreEvictionFilter``;
  pods without ownerReferences, or with any owner whose kind is in ``excludeOwnerKinds``, are left out.
* An owner key is (namespace, owner kind, owner name, sorted regular-container images joined by ``#``). Every listed
  pod counts once per ownerReference toward its keys' occurrences, cluster-wide.
* On one node, a pod whose signature (the sorted ``<ns>/<kind>/<name>/<image>`` strings over its owners and images)
  equals an earlier pod's is a duplicate, recorded under each of its owner keys. Pods on different nodes never are.
* Per owner key: the target nodes are the union, over its duplicates, of the nodes whose NoSchedule/NoExecute taints
  the pod tolerates and whose labels match its nodeSelector and required node affinity, counting only pods that match
  at least 2 nodes (cordon and resources are ignored). With fewer than 2 targets the key is skipped; otherwise each
  node keeps ``ceil(occurrences / targets)`` pods of the key (its original included) and the surplus duplicates are
  evicted, in listing order. Node limit: next node of the key; total limit: the plugin stops.
* Keys, and each key's nodes, are processed in discovery order (upstream: map order, unspecified; shuffled by a
  shuffling listing order).
"""

from __future__ import annotations

import json
from typing import NamedTuple

from desched.executor import nodeutil, podutil
from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle, pod_filter
from desched.plugins.removeduplicates import RemoveDuplicatesArgs

NAME = "RemoveDuplicates"


class OwnerKey(NamedTuple):
    namespace: str
    kind: str
    name: str
    images: str


def _placement(pod: Json) -> str:
    """What decides a pod's target nodes (tolerations, required node affinity, nodeSelector), as a hashable key."""
    spec = pod.get("spec") or {}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return json.dumps([spec.get("tolerations"), required, spec.get("nodeSelector")], sort_keys=True)


class Implementation:
    def __init__(self, args: RemoveDuplicatesArgs, handle: Handle) -> None:
        self.handle = handle
        self.excluded_kinds = set(args.exclude_owner_kinds)
        self.in_namespaces = pod_filter(args.namespaces)

    def _listed(self, pod: Json) -> bool:
        return self.in_namespaces(pod) and self.handle.filter(pod) and self.handle.pre_eviction_filter(pod)

    def balance(self, nodes: list[Json]) -> None:
        occurrences: dict[OwnerKey, int] = {}
        duplicates: dict[OwnerKey, dict[str, list[Json]]] = {}
        for node in nodes:
            node_name = str(node["metadata"]["name"])
            signatures: set[tuple[str, ...]] = set()
            for pod in self.handle.active_pods_on_node(node_name):
                if not self._listed(pod):
                    continue
                owners = podutil.owner_refs(pod)
                if not owners or any(owner.get("kind") in self.excluded_kinds for owner in owners):
                    continue
                namespace = str(pod["metadata"].get("namespace") or "")
                images = sorted(str(container.get("image") or "") for container in pod["spec"].get("containers") or [])
                owner_keys = [
                    OwnerKey(namespace, str(owner.get("kind") or ""), str(owner.get("name") or ""), "#".join(images))
                    for owner in owners
                ]
                for owner_key in owner_keys:
                    occurrences[owner_key] = occurrences.get(owner_key, 0) + 1
                signature = tuple(
                    sorted(
                        "/".join((namespace, owner_key.kind, owner_key.name, image))
                        for owner_key in owner_keys
                        for image in images
                    )
                )
                if signature not in signatures:
                    signatures.add(signature)
                    continue
                for owner_key in owner_keys:
                    duplicates.setdefault(owner_key, {}).setdefault(node_name, []).append(pod)

        placements: dict[str, list[str]] = {}
        order = self.handle.order  # upstream ranges over two Go maps here: owners, then an owner's nodes
        for owner_key, by_node in order.arrange(list(duplicates.items())):
            targets = self._target_nodes(by_node, nodes, placements)
            if len(targets) < 2:
                continue
            keep = -(-occurrences[owner_key] // len(targets))
            for pods in order.arrange(list(by_node.values())):
                if len(pods) + 1 <= keep:
                    continue
                for pod in pods[keep - 1 :]:
                    outcome = self.handle.evict(pod, NAME)
                    if outcome is Outcome.NODE_LIMIT:
                        break
                    if outcome is Outcome.TOTAL_LIMIT:
                        return

    @staticmethod
    def _target_nodes(by_node: dict[str, list[Json]], nodes: list[Json], placements: dict[str, list[str]]) -> set[str]:
        """Union of the nodes each duplicate may land on, for duplicates that may land on at least 2 (``placements``
        caches the matching node names per placement key for the whole cycle)."""
        targets: set[str] = set()
        seen: set[str] = set()
        for pods in by_node.values():
            for pod in pods:
                placement = _placement(pod)
                if placement in seen:
                    continue
                seen.add(placement)
                matching = placements.get(placement)
                if matching is None:
                    matching = [
                        str(node["metadata"]["name"])
                        for node in nodes
                        if nodeutil.tolerates_no_schedule_or_execute(pod, node)
                        and not nodeutil.pod_selection_excludes_node(pod, node)
                    ]
                    placements[placement] = matching
                if len(matching) > 1:
                    targets.update(matching)
        return targets
