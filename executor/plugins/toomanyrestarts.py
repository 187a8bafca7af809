"""RemovePodsHavingTooManyRestarts (Deschedule, docs/executor-semantics.md#88-removepodshavingtoomanyrestarts): evict
pods whose containers restarted too often.

Contract: node by node, every pod bound to the node, whatever its phase, is a candidate when it passes the plugin's
namespace and label filters, the profile's ``Filter``, the restart threshold (``Σ containerStatuses[].restartCount``,
plus the init containers' with ``includingInitContainers``, at least ``podRestartThreshold``), the ``states`` test
(phase, or a container's waiting reason, or with the flag an init container's: from v0.30 on) and
``PreEvictionFilter`` (checked just before each eviction, see :func:`~desched.executor.plugins._pods.evict_on_node`).
A node's candidates are evicted most restarts first (ties keep listing order; up to v0.33 in listing order). A node
limit moves on to the next node, a total limit stops the plugin, any other refusal moves on to the next pod. The
release rows are in :mod:`desched.executor.releases`.
"""

from __future__ import annotations

from desched.executor.cluster import Json
from desched.executor.framework import Handle, pod_filter
from desched.executor.plugins._pods import container_statuses, evict_on_node, state_reasons
from desched.executor.releases import RESTARTS_INIT_STATES, RESTARTS_SORTED
from desched.plugins.removepodshavingtoomanyrestarts import RemovePodsHavingTooManyRestartsArgs

NAME = "RemovePodsHavingTooManyRestarts"


def total_restarts(pod: Json, including_init: bool) -> int:
    """The restart count summed over the container statuses (and the init container statuses when asked)."""
    return sum(int(entry.get("restartCount") or 0) for entry in container_statuses(pod, init=including_init))


class Implementation:
    """RemovePodsHavingTooManyRestarts over the cycle's nodes (see the module contract)."""

    def __init__(self, args: RemovePodsHavingTooManyRestartsArgs, handle: Handle) -> None:
        self.handle = handle
        self.accepts = pod_filter(args.namespaces, args.label_selector)
        self.threshold = args.pod_restart_threshold
        self.including_init = args.including_init_containers
        self.states = set(args.states)
        self.init_states = self.including_init and not handle.release.older(RESTARTS_INIT_STATES)

    def _in_states(self, pod: Json) -> bool:
        if not self.states or str((pod.get("status") or {}).get("phase") or "") in self.states:
            return True
        waiting = state_reasons(container_statuses(pod, init=self.init_states), states=("waiting",))
        return not self.states.isdisjoint(waiting)

    def _over_threshold(self, pod: Json) -> bool:
        """At least the threshold's restarts, in one of the states: the plugin's own (pure) test of a pod."""
        return total_restarts(pod, self.including_init) >= self.threshold and self._in_states(pod)

    def _restarts(self, pod: Json) -> int | None:
        """The pod's restart count when it is a candidate, else None."""
        if not (self.accepts(pod) and self.handle.filter_and(pod, self._over_threshold)):
            return None
        return total_restarts(pod, self.including_init)

    def deschedule(self, nodes: list[Json]) -> None:
        for node in nodes:
            candidates: list[tuple[int, Json]] = []
            for pod in self.handle.pods_on_node(node["metadata"]["name"]):
                restarts = self._restarts(pod)
                if restarts is not None:
                    candidates.append((restarts, pod))
            if not self.handle.release.older(RESTARTS_SORTED):
                candidates.sort(key=lambda candidate: -candidate[0])
            if not evict_on_node(self.handle, [pod for _, pod in candidates], NAME):
                return
