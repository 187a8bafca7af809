"""Pod helpers of the executor: effective requests, QoS class, the pod predicates and sorts
(docs/executor-semantics.md#32-filter,
docs/executor-semantics.md#71-effective-requests to docs/executor-semantics.md#73-sorting-by-priority).

Pods are decoded JSON objects (``kubectl get -o json``); absent and ``null`` fields read as Go's zero values. No
function modifies a pod. Resource amounts are in :func:`desched.executor.quantity.resource_value` units (millicores for
``cpu``, whole units otherwise); a malformed quantity raises ``ValueError`` (Go would not decode such a pod at all).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, TypeVar

from desched.executor.quantity import NANO, nano_to_resource_value, nano_value
from desched.tree import JsonView
from desched.validation.vocab import SYSTEM_CRITICAL_PRIORITY

__all__ = [
    "CONFIG_MIRROR_ANNOTATION",
    "CONFIG_SOURCE_ANNOTATION",
    "EVICT_ANNOTATION",
    "PREFER_NO_EVICTION",
    "SYSTEM_CRITICAL_PRIORITY",
    "ZERO_TIME",
    "PriorityKey",
    "created_before",
    "creation_time",
    "has_local_storage",
    "has_pvc",
    "has_resource_claims",
    "is_critical_pod",
    "is_daemonset_pod",
    "is_mirror_pod",
    "is_static_pod",
    "is_terminal",
    "is_terminating",
    "owner_refs",
    "pod_requests",
    "priority",
    "priority_key",
    "qos_class",
    "sort_by_priority_low_to_high",
    "start_time",
    "usage_requests_before_sidecars",
]

P = TypeVar("P", bound=Mapping[str, Any])

PREFER_NO_EVICTION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)
"""Go's zero ``metav1.Time``: what an unset creationTimestamp reads as."""

_TERMINAL_PHASES = ("Succeeded", "Failed")
_QOS_RANK = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}
_EMPTY: Mapping[str, Any] = {}


def _metadata(pod: JsonView) -> JsonView:
    return pod.get("metadata") or _EMPTY


def _spec(pod: JsonView) -> JsonView:
    return pod.get("spec") or _EMPTY


def _annotations(pod: JsonView) -> JsonView:
    return _metadata(pod).get("annotations") or _EMPTY


# --- requests (docs/executor-semantics.md#71-effective-requests) ------------------------------------------------------


def _nano(value: Any) -> int:
    return 0 if value is None else nano_value(value)


def _container_requests(container: JsonView) -> JsonView:
    resources = container.get("resources")
    if not resources:
        return _EMPTY
    return resources.get("requests") or _EMPTY


def _add_into(total: dict[str, int], requests: JsonView) -> None:
    for name, value in requests.items():
        total[name] = total.get(name, 0) + (0 if value is None else nano_value(value))


def _is_pod_level_resource(name: str) -> bool:
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def _requests_nano(pod: JsonView, native_sidecars: bool, overhead_on_zero: bool = True) -> dict[str, int]:
    spec = _spec(pod)
    total: dict[str, int] = {}
    for container in spec.get("containers") or ():
        requests = _container_requests(container)
        if requests:
            _add_into(total, requests)
    init_containers = spec.get("initContainers")
    if init_containers:
        sidecars: dict[str, int] = {}
        init_max: dict[str, int] = {}
        for container in init_containers:
            requests = _container_requests(container)
            if native_sidecars and container.get("restartPolicy") == "Always":
                _add_into(total, requests)
                _add_into(sidecars, requests)
                candidate = sidecars
            else:
                candidate = dict(sidecars)
                _add_into(candidate, requests)
            for name, amount in candidate.items():
                if name not in init_max or amount > init_max[name]:
                    init_max[name] = amount
        for name, amount in init_max.items():
            if name not in total or amount > total[name]:
                total[name] = amount
    pod_resources = spec.get("resources") if native_sidecars else None
    if pod_resources:
        pod_level = pod_resources.get("requests")
        if pod_level and any(_is_pod_level_resource(name) for name in pod_level):
            for name, value in pod_level.items():
                if _is_pod_level_resource(name):
                    total[name] = _nano(value)
    overhead = spec.get("overhead")
    if overhead:
        if overhead_on_zero:
            _add_into(total, overhead)
        else:
            _add_into(total, {name: value for name, value in overhead.items() if total.get(name)})
    return total


def pod_requests(pod: JsonView, sidecars: bool = True) -> dict[str, int]:
    """Effective requests of ``pod`` per resource (``PodRequests`` without status,
    docs/executor-semantics.md#71-effective-requests).

    Containers are summed; each restartable init container (``restartPolicy: Always``) adds to the sum and to a
    running sidecar total, each other init container competes as ``its requests + sidecars so far``; the result is the
    per-resource max of the two. Pod-level ``spec.resources.requests`` for cpu, memory and ``hugepages-*`` then replace
    the aggregate (only when one of them is present), and ``spec.overhead`` is added. Every resource named anywhere is
    a key, even at 0. Amounts are summed exactly and converted once (``resource_value`` units).

    ``sidecars=False`` computes as v0.27-v0.34 (``PodRequestsAndLimits``, release row ``native-sidecars``): every
    init container, restartable or not, competes alone with the containers' sum, and pod-level requests are ignored.
    """
    return _in_units(_requests_nano(pod, sidecars))


def usage_requests_before_sidecars(pod: JsonView) -> dict[str, int]:
    """``GetResourceRequestQuantity`` of v0.27-v0.34, what their node-utilization plugins take off a node's usage
    for an evicted pod: ``pod_requests(pod, sidecars=False)``, except that a resource's overhead is added only when
    the containers request some of it."""
    return _in_units(_requests_nano(pod, False, overhead_on_zero=False))


def _in_units(result: dict[str, int]) -> dict[str, int]:
    """Nano amounts, in place, in ``resource_value`` units."""
    for name, amount in result.items():
        if amount >= 0:  # the common case, inlined: ceil to millicores (cpu) or whole units
            result[name] = -(-amount // 1_000_000) if name == "cpu" else -(-amount // NANO)
        else:
            result[name] = nano_to_resource_value(name, amount)
    return result


# --- QoS (docs/executor-semantics.md#72-qos-class) --------------------------------------------------------------------


def qos_class(pod: JsonView) -> str:
    """``GetPodQOS``: ``status.qosClass`` when set, else computed from cpu/memory of containers and init containers.

    BestEffort: no positive cpu/memory request or limit. Guaranteed: every container has positive cpu and memory
    limits, the summed positive requests equal the summed limits, and both name the same number of resources.
    Burstable otherwise.
    """
    status = pod.get("status") or _EMPTY
    declared = status.get("qosClass")
    if declared:
        return str(declared)
    spec = _spec(pod)
    request_cpu = request_memory = limit_cpu = limit_memory = 0  # sums of the positive amounts
    guaranteed = True
    for group in (spec.get("containers"), spec.get("initContainers")):
        for container in group or ():
            resources = container.get("resources") or _EMPTY
            requests = resources.get("requests")
            if requests:
                amount = _nano(requests.get("cpu"))
                if amount > 0:
                    request_cpu += amount
                amount = _nano(requests.get("memory"))
                if amount > 0:
                    request_memory += amount
            limits = resources.get("limits")
            cpu_limited = memory_limited = False
            if limits:
                amount = _nano(limits.get("cpu"))
                if amount > 0:
                    limit_cpu += amount
                    cpu_limited = True
                amount = _nano(limits.get("memory"))
                if amount > 0:
                    limit_memory += amount
                    memory_limited = True
            if not (cpu_limited and memory_limited):
                guaranteed = False
    if not (request_cpu or request_memory or limit_cpu or limit_memory):
        return "BestEffort"
    if (
        guaranteed
        and (not request_cpu or request_cpu == limit_cpu)
        and (not request_memory or request_memory == limit_memory)
        and (request_cpu > 0) + (request_memory > 0) == (limit_cpu > 0) + (limit_memory > 0)
    ):
        return "Guaranteed"
    return "Burstable"


# --- predicates ---------------------------------------------------------------------------------------------------


def is_terminal(pod: JsonView) -> bool:
    """``status.phase`` is Succeeded or Failed (an empty phase is not terminal)."""
    return (pod.get("status") or _EMPTY).get("phase") in _TERMINAL_PHASES


def is_terminating(pod: JsonView) -> bool:
    """``metadata.deletionTimestamp`` is set, to any value."""
    return _metadata(pod).get("deletionTimestamp") is not None


def priority(pod: JsonView) -> int | None:
    """``spec.priority``, or None when unset."""
    value = _spec(pod).get("priority")
    if value is None or isinstance(value, bool):
        return None
    return int(value)


def owner_refs(pod: JsonView) -> list[dict[str, Any]]:
    """``metadata.ownerReferences`` (empty list when unset)."""
    refs = _metadata(pod).get("ownerReferences")
    return list(refs) if refs else []


def is_mirror_pod(pod: JsonView) -> bool:
    """Annotation ``kubernetes.io/config.mirror`` is present (any value)."""
    return CONFIG_MIRROR_ANNOTATION in _annotations(pod)


def is_static_pod(pod: JsonView) -> bool:
    """Annotation ``kubernetes.io/config.source`` is present and its value is not ``api``."""
    annotations = _annotations(pod)
    return CONFIG_SOURCE_ANNOTATION in annotations and annotations[CONFIG_SOURCE_ANNOTATION] != "api"


def is_critical_pod(pod: JsonView) -> bool:
    """``IsCriticalPriorityPod``: ``spec.priority >= 2000000000`` (the class name is never read)."""
    value = priority(pod)
    return value is not None and value >= SYSTEM_CRITICAL_PRIORITY


def has_local_storage(pod: JsonView) -> bool:
    """Some volume sets ``hostPath`` or ``emptyDir`` (any medium)."""
    for volume in _spec(pod).get("volumes") or ():
        if volume.get("hostPath") is not None or volume.get("emptyDir") is not None:
            return True
    return False


def has_pvc(pod: JsonView) -> bool:
    """Some volume sets ``persistentVolumeClaim``."""
    return any(volume.get("persistentVolumeClaim") is not None for volume in _spec(pod).get("volumes") or ())


def has_resource_claims(pod: JsonView) -> bool:
    """``spec.resourceClaims`` is non-empty."""
    return bool(_spec(pod).get("resourceClaims"))


def is_daemonset_pod(pod: JsonView) -> bool:
    """Some ownerReference has ``kind == "DaemonSet"`` (only the kind is compared)."""
    return any(ref.get("kind") == "DaemonSet" for ref in owner_refs(pod))


# --- timestamps ---------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def _parse_time(text: str) -> datetime:
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed


def _time(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    return _parse_time(value)


def creation_time(pod: JsonView) -> datetime:
    """``metadata.creationTimestamp`` (timezone-aware); unset reads as Go's zero time (year 1, UTC)."""
    return _time(_metadata(pod).get("creationTimestamp")) or ZERO_TIME


def start_time(pod: JsonView) -> datetime | None:
    """``status.startTime`` (timezone-aware), or None when unset."""
    return _time((pod.get("status") or _EMPTY).get("startTime"))


# --- sorts (docs/executor-semantics.md#73-sorting-by-priority) --------------------------------------------------------


PriorityKey = tuple[bool, int, int, bool]


def priority_key(pod: JsonView) -> PriorityKey:
    """The key :func:`sort_by_priority_low_to_high` sorts by."""
    value = priority(pod)
    return (
        value is not None,
        value or 0,
        _QOS_RANK.get(qos_class(pod), 3),
        PREFER_NO_EVICTION in _annotations(pod),
    )


def sort_by_priority_low_to_high(pods: Iterable[P], key: Callable[[P], PriorityKey] = priority_key) -> list[P]:
    """A new list, stably sorted: nil priority first, then ascending priority; then BestEffort < Burstable <
    Guaranteed; then pods without the prefer-no-eviction annotation before pods with it. Ties keep input order.
    ``key`` is :func:`priority_key` or a memo of it."""
    return sorted(pods, key=key)


def created_before(pod: JsonView, other: JsonView) -> bool:
    """Upstream ``SortPodsBasedOnAge``'s comparator (``CreationTimestamp.Before``): strictly older."""
    return creation_time(pod) < creation_time(other)
