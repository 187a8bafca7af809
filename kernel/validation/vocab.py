"""Closed vocabularies of the descheduler policy API, per release, for reuse by rules and validators.

Every list is written from upstream's source at the release tags (``validation.go``, ``types.go``); releases are minor
numbers (``36`` is v0.36). Orders are upstream's, because several error messages print these lists verbatim.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_POD_PROTECTIONS",
    "EVICTION_MODES",
    "EXTRA_POD_PROTECTIONS",
    "LABEL_SELECTOR_OPERATORS",
    "LEGACY_FLAG_PROTECTIONS",
    "METRICS_SOURCES",
    "METRIC_RESOURCE",
    "NODE_AFFINITY_TYPES",
    "NO_EVICTION_POLICIES",
    "PODLIFETIME_STATE_SINCE",
    "POD_PROTECTIONS",
    "SYSTEM_CRITICAL_PRIORITY",
    "TOO_MANY_RESTARTS_STATES",
    "TOPOLOGY_CONSTRAINTS",
    "default_pod_protections",
    "extra_pod_protections",
    "podlifetime_state_since",
    "podlifetime_states",
    "too_many_restarts_states",
]

#: The release that first accepted each PodLifeTime ``states`` value (podlifetime/validation.go at each tag).
PODLIFETIME_STATE_SINCE: dict[str, int] = {
    # v0.27: pod phases and the two container waiting reasons of kubelet_pods.go
    "Running": 27,
    "Pending": 27,
    "PodInitializing": 27,
    "ContainerCreating": 27,
    # v0.29
    "ImagePullBackOff": 29,
    # v0.30: Unknown phase, pod status reasons, more waiting reasons
    "Unknown": 30,
    "NodeAffinity": 30,
    "NodeLost": 30,
    "Shutdown": 30,
    "UnexpectedAdmissionError": 30,
    "CrashLoopBackOff": 30,
    "CreateContainerConfigError": 30,
    "ErrImagePull": 30,
    "CreateContainerError": 30,
    "InvalidImageName": 30,
    # v0.34: terminal phases
    "Succeeded": 34,
    "Failed": 34,
    # v0.36: container terminated reasons
    "OOMKilled": 36,
    "Error": 36,
    "Completed": 36,
    "DeadlineExceeded": 36,
    "Evicted": 36,
    "ContainerCannotRun": 36,
    "StartError": 36,
}

#: RemovePodsHavingTooManyRestarts ``states`` (v0.28+; the field does not exist before).
TOO_MANY_RESTARTS_STATES = ("CrashLoopBackOff", "Running")

#: RemovePodsViolatingTopologySpreadConstraint ``constraints`` (v0.28+).
TOPOLOGY_CONSTRAINTS = ("DoNotSchedule", "ScheduleAnyway")

#: RemovePodsViolatingNodeAffinity ``nodeAffinityType`` values the plugin acts on; upstream does not validate them.
NODE_AFFINITY_TYPES = (
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
)

#: Deprecated DefaultEvictor boolean -> the podProtections list and entry that means the same when it is true
#: (docs/policy-api.md#42-defaultevictor), in upstream's DefaultEvictorArgs literal order.
LEGACY_FLAG_PROTECTIONS: dict[str, tuple[str, str]] = {
    "evictLocalStoragePods": ("defaultDisabled", "PodsWithLocalStorage"),
    "evictDaemonSetPods": ("defaultDisabled", "DaemonSetPods"),
    "evictSystemCriticalPods": ("defaultDisabled", "SystemCriticalPods"),
    "ignorePvcPods": ("extraEnabled", "PodsWithPVC"),
    "evictFailedBarePods": ("defaultDisabled", "FailedBarePods"),
    "ignorePodsWithoutPDB": ("extraEnabled", "PodsWithoutPDB"),
}

#: DefaultEvictor ``podProtections.defaultDisabled`` values (v0.34+), in upstream's order.
DEFAULT_POD_PROTECTIONS = ("PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods")

#: DefaultEvictor ``podProtections.extraEnabled`` values (v0.34+), in upstream's order.
EXTRA_POD_PROTECTIONS = ("PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims")

#: Every pod protection name.
POD_PROTECTIONS = DEFAULT_POD_PROTECTIONS + EXTRA_POD_PROTECTIONS

#: DefaultEvictor ``noEvictionPolicy`` non-empty values (v0.34+).
NO_EVICTION_POLICIES = ("Preferred", "Mandatory")

#: HighNodeUtilization ``evictionModes`` values (v0.33+).
EVICTION_MODES = ("OnlyThresholdingResources",)

#: ``metricsProviders[].source`` and LowNodeUtilization ``metricsUtilization.source`` values (v0.33+).
METRICS_SOURCES = ("KubernetesMetrics", "Prometheus")

#: The resource name LowNodeUtilization's Prometheus mode requires in both threshold maps (v0.33+).
METRIC_RESOURCE = "MetricResource"

#: The priority from which a pod is system-critical (``utils.SystemCriticalPriority``), and the largest
#: ``priorityThreshold`` upstream accepts.
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000

#: ``metav1.LabelSelectorRequirement.operator`` values.
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def podlifetime_states(target: int) -> list[str]:
    """PodLifeTime ``states`` accepted at release ``target``, sorted (as the v0.27 and v0.34+ messages print them)."""
    return sorted(state for state, since in PODLIFETIME_STATE_SINCE.items() if since <= target)


def podlifetime_state_since(state: str) -> int | None:
    """The first release accepting ``state`` in PodLifeTime ``states``; ``None`` when no release does."""
    return PODLIFETIME_STATE_SINCE.get(state)


def too_many_restarts_states(target: int) -> list[str]:
    """RemovePodsHavingTooManyRestarts ``states`` accepted at ``target`` (empty before v0.28, which lacks the field)."""
    return list(TOO_MANY_RESTARTS_STATES) if target >= 28 else []


def default_pod_protections(target: int) -> list[str]:
    """Pod protections that may be listed in ``defaultDisabled`` at ``target`` (empty before v0.34)."""
    return list(DEFAULT_POD_PROTECTIONS) if target >= 34 else []


def extra_pod_protections(target: int) -> list[str]:
    """Pod protections that may be listed in ``extraEnabled`` at ``target`` (empty before v0.34)."""
    return list(EXTRA_POD_PROTECTIONS) if target >= 34 else []
