"""Helpers the pod-status plugins share (PodLifeTime, RemoveFailedPods, RemovePodsHavingTooManyRestarts): container
statuses, their reasons and exit codes, Go's whole-seconds conversion, and evicting one node's candidates in order."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from desched.executor.cluster import Json
from desched.executor.evictions import Outcome
from desched.executor.framework import Handle

_SECOND = timedelta(seconds=1)
MAX_GO_DURATION_SECONDS = (2**63 - 1) // 10**9
"""``time.Time.Sub`` saturates at the largest ``time.Duration``; an unset creationTimestamp (year 1) ages to this."""


def container_statuses(pod: Json, init: bool = False, ephemeral: bool = False) -> list[Json]:
    """``status.containerStatuses``, then the init (``init``) and ephemeral (``ephemeral``) container statuses."""
    status = pod.get("status") or {}
    fields = ["containerStatuses"]
    if init:
        fields.append("initContainerStatuses")
    if ephemeral:
        fields.append("ephemeralContainerStatuses")
    return [entry for field in fields for entry in status.get(field) or [] if isinstance(entry, dict)]


def state_reasons(statuses: Iterable[Json], states: tuple[str, ...] = ("waiting", "terminated")) -> set[str]:
    """The ``reason`` of every present ``state.<states>`` entry (an absent reason reads as ``""``, as in Go)."""
    reasons: set[str] = set()
    for entry in statuses:
        state = entry.get("state") or {}
        for name in states:
            detail = state.get(name)
            if isinstance(detail, dict):
                reasons.add(str(detail.get("reason") or ""))
    return reasons


def exit_codes(statuses: Iterable[Json]) -> set[int]:
    """The ``exitCode`` of every terminated container state (absent reads as 0)."""
    codes: set[int] = set()
    for entry in statuses:
        terminated = (entry.get("state") or {}).get("terminated")
        if isinstance(terminated, dict):
            codes.add(int(terminated.get("exitCode") or 0))
    return codes


def whole_seconds(elapsed: timedelta) -> int:
    """``uint(d.Seconds())`` of a Go duration, saturated as ``time.Time.Sub`` does. A negative span gives a negative
    count, which no threshold accepts (upstream rejects negative spans before converting)."""
    return min(elapsed // _SECOND, MAX_GO_DURATION_SECONDS)


def evict_on_node(handle: Handle, pods: list[Json], plugin: str) -> bool:
    """Evict one node's ``pods`` that pass ``PreEvictionFilter``, in order, until a node limit ends the node; False
    when the total limit stops the plugin. Other refusals move on to the next pod (shared with TooManyRestarts).

    Upstream evaluates ``PreEvictionFilter`` while listing the node; evaluating it just before each eviction decides
    the same, because evicting a pod of this node changes neither the other nodes NodeFit looks at nor the
    namespaces, and it spares NodeFit for the pods a limit leaves untried."""
    for pod in pods:
        if not handle.pre_eviction_filter(pod):
            continue
        outcome = handle.evict(pod, plugin)
        if outcome is Outcome.NODE_LIMIT:
            return True
        if outcome is Outcome.TOTAL_LIMIT:
            return False
    return True
