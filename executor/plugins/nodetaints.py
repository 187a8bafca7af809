"""RemovePodsViolatingNodeTaints (docs/executor-semantics.md#85-removepodsviolatingnodetaints): evict pods that do not
tolerate a counted taint of their node.

Contract: a taint counts when its effect is ``NoSchedule`` (or ``PreferNoSchedule`` with ``includePreferNoSchedule``;
``NoExecute`` never counts), it is not named by ``excludedTaints`` and, when ``includedTaints`` is given, it is named
there; a name is ``key`` or ``key=value`` (the latter only for a non-empty value). An explicitly empty
``includedTaints`` names nothing, so no taint counts (upstream quirk). For each node in order, the node's
non-terminal pods (up to v0.33 every pod, Failed and Succeeded too: :mod:`desched.executor.releases`) passing the
namespace/label filters, ``Filter`` and ``PreEvictionFilter`` are listed; each one that leaves a counted taint
untolerated is evicted. A node limit moves on to the next node, a total limit ends the plugin, any other refusal
moves on to the next pod.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from desched.executor import nodeutil
from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle, pod_filter
from desched.executor.releases import TAINTS_LIST_TERMINAL
from desched.plugins.removepodsviolatingnodetaints import RemovePodsViolatingNodeTaintsArgs

NAME = "RemovePodsViolatingNodeTaints"


def _names_taint(names: set[str], taint: Json) -> bool:
    """Whether ``names`` holds the taint's ``key``, or its ``key=value`` when the value is non-empty."""
    key = str(taint.get("key") or "")
    value = str(taint.get("value") or "")
    return key in names or (value != "" and f"{key}={value}" in names)


def taint_counts(args: RemovePodsViolatingNodeTaintsArgs) -> Callable[[Json], bool]:
    """The predicate telling which node taints the plugin checks (see the module contract)."""
    effects = {"NoSchedule", "PreferNoSchedule"} if args.include_prefer_no_schedule else {"NoSchedule"}
    excluded = set(args.excluded_taints)
    included = None if args.included_taints is None else set(args.included_taints)

    def counts(taint: Json) -> bool:
        return (
            taint.get("effect") in effects
            and not _names_taint(excluded, taint)
            and (included is None or _names_taint(included, taint))
        )

    return counts


class Implementation:
    """One profile's instance, built from the plugin's args."""

    def __init__(self, args: RemovePodsViolatingNodeTaintsArgs, handle: Handle) -> None:
        self.handle = handle
        self.accepts = pod_filter(args.namespaces, args.label_selector)
        self.counts = taint_counts(args)
        self.listing = handle.pods_on_node if handle.release.older(TAINTS_LIST_TERMINAL) else handle.active_pods_on_node

    def deschedule(self, nodes: list[Json]) -> None:
        handle = self.handle
        for node in nodes:
            name = str(node["metadata"]["name"])
            taints = [taint for taint in (node.get("spec") or {}).get("taints") or [] if self.counts(taint)]
            # the listing's checks are pure: the cheap toleration test goes before PreEvictionFilter (NodeFit)
            untolerated = partial(_untolerated, taints)
            listed = [
                pod
                for pod in self.listing(name)
                if self.accepts(pod) and handle.filter_and(pod, untolerated) and handle.pre_eviction_filter(pod)
            ]
            for pod in listed:
                outcome = handle.evict(pod, NAME)
                if outcome is Outcome.NODE_LIMIT:
                    break
                if outcome is Outcome.TOTAL_LIMIT:
                    return


def _untolerated(taints: list[Json], pod: Json) -> bool:
    """Whether one of ``taints`` is not tolerated by the pod."""
    return not nodeutil.tolerations_tolerate_taints((pod.get("spec") or {}).get("tolerations") or [], taints)
