"""RemoveFailedPods (Deschedule, docs/executor-semantics.md#810-removefailedpods): evict pods in phase Failed.

Contract: node by node, every pod bound to the node with ``status.phase == Failed`` is a candidate when it passes the
plugin's namespace and label filters, the profile's ``Filter``, the criteria below and ``PreEvictionFilter`` (see
:func:`~desched.executor.plugins._pods.evict_on_node`):

* ``minPodLifetimeSeconds`` (when set): whole seconds since creationTimestamp ``>=`` it. A creationTimestamp in the
  future counts as age 0 (upstream's ``uint`` of a negative float is platform-dependent: it wraps on amd64);
* ``excludeOwnerKinds``: no ownerReference has a listed kind;
* ``reasons`` (when non-empty): the non-empty waiting and terminated reasons of the containers (and of the init
  containers with ``includingInitContainers``), plus ``status.reason``, intersect it;
* ``exitCodes`` (when non-empty): the terminated exit codes of the same containers intersect it.

Candidates are evicted in listing order. A node limit moves on to the next node, a total limit stops the plugin, any
other refusal moves on to the next pod. ``minPodLifetimeSeconds`` defaults to 3600
(:mod:`desched.plugins.removefailedpods`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from desched.executor import podutil
from desched.executor.cluster import Json
from desched.executor.framework import Handle, pod_filter
from desched.executor.plugins._pods import container_statuses, evict_on_node, exit_codes, state_reasons, whole_seconds
from desched.plugins.removefailedpods import RemoveFailedPodsArgs

NAME = "RemoveFailedPods"


class Implementation:
    """RemoveFailedPods over the cycle's nodes (see the module contract)."""

    def __init__(self, args: RemoveFailedPodsArgs, handle: Handle) -> None:
        self.handle = handle
        self.accepts = pod_filter(args.namespaces, args.label_selector)
        self.min_age = args.min_pod_lifetime_seconds
        self.excluded_kinds = set(args.exclude_owner_kinds)
        self.reasons = set(args.reasons)
        self.exit_codes = set(args.exit_codes)
        self.including_init = args.including_init_containers

    def _old_enough(self, pod: Json, now: datetime) -> bool:
        if self.min_age is None:
            return True
        return whole_seconds(max(now - podutil.creation_time(pod), timedelta(0))) >= self.min_age

    def _matches(self, pod: Json) -> bool:
        if not self._old_enough(pod, self.handle.now):
            return False
        if self.excluded_kinds and any(ref.get("kind") in self.excluded_kinds for ref in podutil.owner_refs(pod)):
            return False
        statuses = container_statuses(pod, init=self.including_init)
        if self.reasons:
            reasons = state_reasons(statuses) | {str((pod.get("status") or {}).get("reason") or "")}
            reasons.discard("")
            if self.reasons.isdisjoint(reasons):
                return False
        return not self.exit_codes or not self.exit_codes.isdisjoint(exit_codes(statuses))

    def _candidate(self, pod: Json) -> bool:
        return (
            (pod.get("status") or {}).get("phase") == "Failed"
            and self.accepts(pod)
            and self.handle.filter(pod)
            and self._matches(pod)
        )

    def deschedule(self, nodes: list[Json]) -> None:
        for node in nodes:
            candidates = [pod for pod in self.handle.pods_on_node(node["metadata"]["name"]) if self._candidate(pod)]
            if not evict_on_node(self.handle, candidates, NAME):
                return
