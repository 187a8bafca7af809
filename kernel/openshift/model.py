"""The Kube Descheduler Operator's ``KubeDescheduler`` (operator.openshift.io/v1) as data.

Constants transcribed from the operator (``types_descheduler.go``, ``target_config_reconciler.go``): profiles,
forbidden pairs, enums, threshold presets, which customisation each profile reads, protected namespaces, plus Go
duration parsing and formatting (``metav1.Duration``). Pure: no I/O, no heavy imports.
"""

import re
from typing import NamedTuple

from desched.goduration import format_duration, parse_duration

__all__ = [
    "API_VERSION",
    "DEPRECATED",
    "FORBIDDEN",
    "KIND",
    "KUBEVIRT",
    "LNU_FAMILY",
    "LOG_LEVELS",
    "MODES",
    "MODIFIERS",
    "OPERATOR_NAMESPACE",
    "POLICY_KEY",
    "PROFILES",
    "PROMETHEUS_PROFILES",
    "Forbidden",
    "format_duration",
    "is_protected",
    "parse_duration",
]

API_VERSION = "operator.openshift.io/v1"
KIND = "KubeDescheduler"
OPERATOR_NAMESPACE = "openshift-kube-descheduler-operator"
SINGLETON = "cluster"
#: The data key of the ConfigMap the operator writes the rendered policy into (ConfigMap SINGLETON, its namespace).
POLICY_KEY = "policy.yaml"

PROFILES = (
    "AffinityAndTaints",
    "TopologyAndDuplicates",
    "LifecycleAndUtilization",
    "DevPreviewLongLifecycle",
    "LongLifecycle",
    "SoftTopologyAndDuplicates",
    "EvictPodsWithLocalStorage",
    "EvictPodsWithPVC",
    "CompactAndScale",
    "DevKubeVirtRelieveAndMigrate",
    "KubeVirtRelieveAndMigrate",
)
MAX_PROFILES = 11
MODIFIERS = ("EvictPodsWithLocalStorage", "EvictPodsWithPVC")
KUBEVIRT = ("DevKubeVirtRelieveAndMigrate", "KubeVirtRelieveAndMigrate")
LIFECYCLE = ("LifecycleAndUtilization", "LongLifecycle", "DevPreviewLongLifecycle")
LNU_FAMILY = LIFECYCLE + KUBEVIRT
RENAMED = {"DevPreviewLongLifecycle": "LongLifecycle", "DevKubeVirtRelieveAndMigrate": "KubeVirtRelieveAndMigrate"}
DEPRECATED = RENAMED

MODES = ("Automatic", "Predictive")
LOG_LEVELS = ("", "Normal", "Debug", "Trace", "TraceAll")
MANAGEMENT_STATE = re.compile(r"^(Managed|Unmanaged|Force|Removed)$")

LOW_THRESHOLDS = {"": (20, 50), "Low": (10, 30), "Medium": (20, 50), "High": (40, 70)}
DEVIATION_THRESHOLDS = {
    "Low": (10, 10),
    "Medium": (20, 20),
    "High": (30, 30),
    "AsymmetricLow": (0, 10),
    "AsymmetricMedium": (0, 20),
    "AsymmetricHigh": (0, 30),
}
HIGH_THRESHOLDS = {"": 20, "Minimal": 10, "Modest": 20, "Moderate": 30}

# Queries of the operator's utilizationProfileToPrometheusQuery, verbatim (spacing and quoting included).
PROMETHEUS_PROFILES = {
    "PrometheusCPUUsage": "instance:node_cpu:rate:sum",
    "PrometheusCPUPSIPressure": "rate(node_pressure_cpu_waiting_seconds_total[1m])",
    "PrometheusCPUPSIPressureByUtilization": (
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and "
        '(1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m]))) > 0.7 or '
        "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0"
    ),
    "PrometheusMemoryPSIPressure": "rate(node_pressure_memory_waiting_seconds_total[1m])",
    "PrometheusIOPSIPressure": "rate(node_pressure_io_waiting_seconds_total[1m])",
    "PrometheusCPUCombined": "descheduler:combined_utilization_and_pressure:avg1m",
    "PrometheusCPUMemoryCombinedProfile": "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m",
}
QUERY_PREFIX = "query:"
KUBEVIRT_DEFAULT_QUERY = PROMETHEUS_PROFILES["PrometheusCPUMemoryCombinedProfile"]
DEFAULT_PROMETHEUS_HOST = "prometheus-k8s-openshift-monitoring.apps.example.com"


class Forbidden(NamedTuple):
    """One CEL rule of ``spec.profiles``: ``first`` and ``second`` cannot both be listed, because ``reason``."""

    number: str
    first: str
    second: str
    reason: str


_TWO_LNU = (
    "both render a LowNodeUtilization balance plugin, and two utilization profiles would evict the same pods for "
    "different targets"
)
_SAME_KUBEVIRT = "DevKubeVirtRelieveAndMigrate is the deprecated name of KubeVirtRelieveAndMigrate (the same profile)"
_COMPACT = (
    "CompactAndScale's HighNodeUtilization packs pods onto fewer nodes while LowNodeUtilization spreads them out: "
    "the two would evict each other's placements in a loop"
)
_COMPACT_TOPOLOGY = (
    "CompactAndScale packs pods onto fewer nodes while TopologyAndDuplicates spreads replicas across nodes and zones"
)
_TOPOLOGY = (
    "both enable RemovePodsViolatingTopologySpreadConstraint and RemoveDuplicates; SoftTopologyAndDuplicates "
    "already includes everything TopologyAndDuplicates does"
)

FORBIDDEN = (
    Forbidden("P2", "DevPreviewLongLifecycle", "LifecycleAndUtilization", _TWO_LNU),
    Forbidden("P3", "LongLifecycle", "LifecycleAndUtilization", _TWO_LNU),
    Forbidden("P4", "DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate", _TWO_LNU),
    Forbidden("P5", "LongLifecycle", "DevKubeVirtRelieveAndMigrate", _TWO_LNU),
    Forbidden("P6", "LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate", _TWO_LNU),
    Forbidden("P7", "KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate", _SAME_KUBEVIRT),
    Forbidden("P8", "DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate", _TWO_LNU),
    Forbidden("P9", "LongLifecycle", "KubeVirtRelieveAndMigrate", _TWO_LNU),
    Forbidden("P10", "LifecycleAndUtilization", "KubeVirtRelieveAndMigrate", _TWO_LNU),
    Forbidden("P11", "SoftTopologyAndDuplicates", "TopologyAndDuplicates", _TOPOLOGY),
    Forbidden("P12", "CompactAndScale", "LifecycleAndUtilization", _COMPACT),
    Forbidden("P13", "CompactAndScale", "LongLifecycle", _COMPACT),
    Forbidden("P14", "CompactAndScale", "DevPreviewLongLifecycle", _COMPACT),
    Forbidden("P15", "CompactAndScale", "DevKubeVirtRelieveAndMigrate", _COMPACT),
    Forbidden("P16", "CompactAndScale", "KubeVirtRelieveAndMigrate", _COMPACT),
    Forbidden("P17", "CompactAndScale", "TopologyAndDuplicates", _COMPACT_TOPOLOGY),
)

# Which profiles read each profileCustomizations field (docs/openshift-operator.md#12-profilecustomizations); a field no
# enabled profile reads is ignored.
USED_BY: dict[str, tuple[str, ...]] = {
    "podLifetime": ("LifecycleAndUtilization",),
    "devLowNodeUtilizationThresholds": LNU_FAMILY,
    "devActualUtilizationProfile": LNU_FAMILY,
    "devDeviationThresholds": KUBEVIRT,
    "devHighNodeUtilizationThresholds": ("CompactAndScale",),
    "devMigrationCooldown": KUBEVIRT,
    "devMaxMigrationCooldown": KUBEVIRT,
    "devMigrationHistoryWindow": KUBEVIRT,
}
DURATIONS = ("podLifetime", "devMigrationCooldown", "devMaxMigrationCooldown", "devMigrationHistoryWindow")

_PROTECTED_EXACT = ("kube-system", "hypershift", "openshift")


def protected(existing: tuple[str, ...]) -> list[str]:
    """The operator's protected list: the fixed names, then every existing ``openshift-*`` namespace, sorted (the
    operator's own namespace always exists)."""
    found = {ns for ns in (*existing, OPERATOR_NAMESPACE) if ns.startswith("openshift-")}
    return [*_PROTECTED_EXACT, *sorted(found)]


def is_protected(namespace: str) -> bool:
    """Stricter than the operator: any ``openshift-*`` name counts, whether or not it existed at operator start."""
    return namespace in _PROTECTED_EXACT or namespace.startswith("openshift-")
