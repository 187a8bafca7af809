"""The shape of a DeschedulerPolicy, written once: the structural checker and the JSON Schemas derive from it.

Every field carries the release that introduced it (``since``) and, when it was removed, the last release that
had it (``until``), as in reference §2 and §4.13. Types follow the Go types that upstream decodes into, so that
the checker can report what Go's JSON decoding would reject. ``strict`` marks structs decoded with unknown-field
errors (plugin args); elsewhere upstream drops unknown keys silently.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

__all__ = [
    "ARGS",
    "EXTENSION_POINTS",
    "PLUGINS",
    "POLICY_V1ALPHA1",
    "POLICY_V1ALPHA2",
    "Field",
    "Kind",
    "PluginInfo",
    "Type",
]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
UINT64 = (0, 2**64 - 1)


class Kind:
    STRING = "string"
    BOOL = "boolean"
    INT = "integer"
    NUMBER = "number"
    DURATION = "duration"
    LIST = "array"
    MAP = "map"
    STRUCT = "object"
    ANY = "any"


_NO_FIELDS: MappingProxyType[str, Field] = MappingProxyType({})


class Type(NamedTuple):
    """A Go type as seen through JSON: ``kind`` plus bounds, item/value type or struct fields."""

    kind: str
    name: str = ""
    bounds: tuple[int, int] | None = None
    item: Type | None = None
    fields: MappingProxyType[str, Field] = _NO_FIELDS
    strict: bool = False
    description: str = ""


class Field(NamedTuple):
    type: Type
    since: int = 27
    until: int | None = None
    description: str = ""

    def exists_in(self, minor: int) -> bool:
        return self.since <= minor and (self.until is None or minor <= self.until)


def _f(type_: Type, description: str = "", since: int = 27, until: int | None = None) -> Field:
    return Field(type_, since, until, description)


STRING = Type(Kind.STRING)
BOOL = Type(Kind.BOOL)
INT = Type(Kind.INT, bounds=INT64)
INT32_T = Type(Kind.INT, name="int32", bounds=INT32)
INT64_T = Type(Kind.INT, name="int64", bounds=INT64)
UINT = Type(Kind.INT, name="uint", bounds=UINT64)
NUMBER = Type(Kind.NUMBER)
DURATION = Type(Kind.DURATION, description='A Go duration such as "5m" or "1h30m".')
ANY = Type(Kind.ANY)


def _list(item: Type) -> Type:
    return Type(Kind.LIST, item=item)


def _map(value: Type) -> Type:
    return Type(Kind.MAP, item=value)


def _struct(name: str, strict: bool, /, **fields: Field) -> Type:
    return Type(Kind.STRUCT, name=name, fields=MappingProxyType(fields), strict=strict)


STRINGS = _list(STRING)

# --- shared argument types (reference §4.1); strict because they live inside args -----------------------------

NAMESPACES = _struct(
    "Namespaces", True, include=_f(STRINGS, "Namespaces to include."), exclude=_f(STRINGS, "Namespaces to exclude.")
)
LABEL_SELECTOR = _struct(
    "LabelSelector",
    True,
    matchLabels=_f(_map(STRING), "Labels the object must carry."),
    matchExpressions=_f(
        _list(
            _struct(
                "LabelSelectorRequirement",
                True,
                key=_f(STRING),
                operator=_f(STRING, "In, NotIn, Exists or DoesNotExist."),
                values=_f(STRINGS),
            )
        ),
        "Set-based requirements.",
    ),
)
PRIORITY_THRESHOLD = _struct(
    "PriorityThreshold",
    True,
    value=_f(INT32_T, "Priority value; pods at or above it are not evicted."),
    name=_f(STRING, "PriorityClass whose value is the threshold."),
)
THRESHOLDS = _map(NUMBER)


def _args(name: str, /, **fields: Field) -> Type:
    """Plugin args: strict, and TypeMeta is inlined, so ``apiVersion`` and ``kind`` are accepted."""
    return _struct(
        name,
        True,
        apiVersion=_f(STRING, "Ignored TypeMeta field."),
        kind=_f(STRING, "Ignored TypeMeta field."),
        **fields,
    )


_NS = _f(NAMESPACES, "Namespaces the plugin considers: include or exclude, not both.")
_LS = _f(LABEL_SELECTOR, "Only pods whose labels match are considered.")
_EVICTABLE_NS = _f(NAMESPACES, "Namespaces whose pods may be evicted; only exclude is supported.")

ARGS: dict[str, Type] = {
    "DefaultEvictor": _args(
        "DefaultEvictorArgs",
        nodeSelector=_f(STRING, "Candidate nodes for nodeFit (label selector string)."),
        labelSelector=_f(LABEL_SELECTOR, "Only pods whose labels match are evictable."),
        namespaceLabelSelector=_f(LABEL_SELECTOR, "Only pods in namespaces whose labels match are evictable.", 35),
        priorityThreshold=_f(PRIORITY_THRESHOLD, "Pods at or above this priority are not evicted."),
        nodeFit=_f(BOOL, "Evict only pods that fit on another node."),
        minReplicas=_f(UINT, "Evict only pods whose owner has at least this many pods.", 30),
        minPodAge=_f(DURATION, "Evict only pods started at least this long ago.", 31),
        noEvictionPolicy=_f(STRING, '"", Preferred or Mandatory: how the prefer-no-eviction annotation counts.', 34),
        podProtections=_f(
            _struct(
                "PodProtections",
                True,
                extraEnabled=_f(STRINGS, "Extra protections to switch on."),
                defaultDisabled=_f(STRINGS, "Default protections to switch off."),
                config=_f(
                    _struct(
                        "PodProtectionsConfig",
                        True,
                        PodsWithPVC=_f(
                            _struct(
                                "PodsWithPVCConfig",
                                True,
                                protectedStorageClasses=_f(
                                    _list(_struct("ProtectedStorageClass", True, name=_f(STRING))),
                                    "Storage classes whose PVCs protect a pod.",
                                ),
                            )
                        ),
                    ),
                    "Per-protection configuration.",
                    35,
                ),
            ),
            "Pod protections (replaces the deprecated booleans).",
            34,
        ),
        evictLocalStoragePods=_f(BOOL, "Deprecated: disable PodsWithLocalStorage."),
        evictDaemonSetPods=_f(BOOL, "Deprecated: disable DaemonSetPods.", 30),
        evictSystemCriticalPods=_f(BOOL, "Deprecated: disable SystemCriticalPods."),
        ignorePvcPods=_f(BOOL, "Deprecated: enable PodsWithPVC."),
        ignorePodsWithoutPDB=_f(BOOL, "Deprecated: enable PodsWithoutPDB.", 32),
        evictFailedBarePods=_f(BOOL, "Deprecated: disable FailedBarePods."),
    ),
    "LowNodeUtilization": _args(
        "LowNodeUtilizationArgs",
        useDeviationThresholds=_f(BOOL, "Thresholds are deviations from the mean usage."),
        thresholds=_f(THRESHOLDS, "Below every threshold a node is underutilized (percent)."),
        targetThresholds=_f(THRESHOLDS, "Above any target a node is overutilized (percent)."),
        numberOfNodes=_f(INT, "Do nothing while at most this many nodes are underutilized."),
        evictableNamespaces=_EVICTABLE_NS,
        evictionLimits=_f(
            _struct("EvictionLimits", True, node=_f(UINT, "Most evictions per node per cycle.")),
            "Eviction limits for this plugin.",
            33,
        ),
        metricsUtilization=_f(
            _struct(
                "MetricsUtilization",
                True,
                metricsServer=_f(BOOL, "Deprecated: use metrics-server usage.", 32),
                source=_f(STRING, "KubernetesMetrics or Prometheus.", 33),
                prometheus=_f(
                    _struct("MetricsUtilizationPrometheus", True, query=_f(STRING, "PromQL returning 0..1 per node.")),
                    "Prometheus query.",
                    33,
                ),
            ),
            "Use actual usage instead of requests.",
            32,
        ),
    ),
    "HighNodeUtilization": _args(
        "HighNodeUtilizationArgs",
        thresholds=_f(THRESHOLDS, "Below every threshold a node is underutilized (percent)."),
        numberOfNodes=_f(INT, "Do nothing while at most this many nodes are underutilized."),
        evictableNamespaces=_EVICTABLE_NS,
        metricsUtilization=_f(
            _struct("HighNodeUtilizationMetrics", True, metricsServer=_f(BOOL, "Use metrics-server usage.")),
            "Only in v0.32: actual usage instead of requests.",
            32,
            32,
        ),
        evictionModes=_f(STRINGS, "OnlyThresholdingResources: evict only pods requesting a thresholded resource.", 33),
    ),
    "RemoveDuplicates": _args(
        "RemoveDuplicatesArgs",
        namespaces=_NS,
        excludeOwnerKinds=_f(STRINGS, "Skip pods with an owner of these kinds."),
    ),
    "RemovePodsViolatingTopologySpreadConstraint": _args(
        "RemovePodsViolatingTopologySpreadConstraintArgs",
        namespaces=_NS,
        labelSelector=_LS,
        includeSoftConstraints=_f(BOOL, "Also balance ScheduleAnyway constraints (replaced by constraints).", 27, 27),
        constraints=_f(STRINGS, "DoNotSchedule and/or ScheduleAnyway.", 28),
        topologyBalanceNodeFit=_f(BOOL, "Check node fit while balancing (default true).", 28),
    ),
    "PodLifeTime": _args(
        "PodLifeTimeArgs",
        namespaces=_NS,
        labelSelector=_LS,
        maxPodLifeTimeSeconds=_f(UINT, "Evict pods older than this many seconds."),
        states=_f(STRINGS, "Pod phases or container reasons to match."),
        conditions=_f(
            _list(
                _struct(
                    "PodConditionFilter",
                    True,
                    type=_f(STRING),
                    status=_f(STRING),
                    reason=_f(STRING),
                    minTimeSinceLastTransitionSeconds=_f(UINT),
                )
            ),
            "Pod conditions to match (entries are ORed).",
            36,
        ),
        exitCodes=_f(_list(INT32_T), "Terminated container exit codes to match.", 36),
        ownerKinds=_f(
            _struct("OwnerKinds", True, include=_f(STRINGS), exclude=_f(STRINGS)),
            "Owner kinds to include or exclude.",
            36,
        ),
        includingInitContainers=_f(BOOL, "Match init containers too.", 31),
        includingEphemeralContainers=_f(BOOL, "Match ephemeral containers too.", 31),
    ),
    "RemoveFailedPods": _args(
        "RemoveFailedPodsArgs",
        namespaces=_NS,
        labelSelector=_LS,
        excludeOwnerKinds=_f(STRINGS, "Skip pods with an owner of these kinds."),
        minPodLifetimeSeconds=_f(UINT, "Skip pods younger than this (default 3600)."),
        reasons=_f(STRINGS, "Container or pod reasons to match."),
        exitCodes=_f(_list(INT32_T), "Terminated container exit codes to match.", 30),
        includingInitContainers=_f(BOOL, "Match init containers too."),
    ),
    "RemovePodsHavingTooManyRestarts": _args(
        "RemovePodsHavingTooManyRestartsArgs",
        namespaces=_NS,
        labelSelector=_LS,
        podRestartThreshold=_f(INT32_T, "Evict pods with at least this many restarts."),
        includingInitContainers=_f(BOOL, "Count init container restarts too."),
        states=_f(STRINGS, "Running and/or CrashLoopBackOff.", 28),
    ),
    "RemovePodsViolatingInterPodAntiAffinity": _args(
        "RemovePodsViolatingInterPodAntiAffinityArgs", namespaces=_NS, labelSelector=_LS
    ),
    "RemovePodsViolatingNodeAffinity": _args(
        "RemovePodsViolatingNodeAffinityArgs",
        namespaces=_NS,
        labelSelector=_LS,
        nodeAffinityType=_f(STRINGS, "requiredDuringSchedulingIgnoredDuringExecution and/or the preferred form."),
    ),
    "RemovePodsViolatingNodeTaints": _args(
        "RemovePodsViolatingNodeTaintsArgs",
        namespaces=_NS,
        labelSelector=_LS,
        includePreferNoSchedule=_f(BOOL, "Also consider PreferNoSchedule taints."),
        excludedTaints=_f(STRINGS, "Taints (key or key=value) to ignore."),
        includedTaints=_f(STRINGS, "Only these taints (key or key=value) are considered.", 30),
    ),
}


class PluginInfo(NamedTuple):
    name: str
    extension_points: tuple[str, ...]


EXTENSION_POINTS = ("presort", "sort", "deschedule", "balance", "filter", "preevictionfilter")
_EVICTOR = ("filter", "preevictionfilter")
PLUGINS: dict[str, PluginInfo] = {
    name: PluginInfo(name, points)
    for name, points in [
        ("DefaultEvictor", _EVICTOR),
        ("LowNodeUtilization", ("balance",)),
        ("HighNodeUtilization", ("balance",)),
        ("RemoveDuplicates", ("balance",)),
        ("RemovePodsViolatingTopologySpreadConstraint", ("balance",)),
        ("PodLifeTime", ("deschedule",)),
        ("RemoveFailedPods", ("deschedule",)),
        ("RemovePodsHavingTooManyRestarts", ("deschedule",)),
        ("RemovePodsViolatingInterPodAntiAffinity", ("deschedule",)),
        ("RemovePodsViolatingNodeAffinity", ("deschedule",)),
        ("RemovePodsViolatingNodeTaints", ("deschedule",)),
    ]
}

# --- the v1alpha2 envelope (reference §2, §3); not strict: upstream drops unknown keys ---------------------------

PLUGIN_SET = _struct(
    "PluginSet",
    False,
    enabled=_f(STRINGS, "Plugins run at this extension point, in order."),
    disabled=_f(STRINGS, "Never read by upstream."),
)
PLUGIN_CONFIG = _struct(
    "PluginConfig",
    False,
    name=_f(STRING, "A registered plugin name."),
    args=_f(ANY, "The plugin's arguments, decoded strictly into its args type."),
)
PROFILE = _struct(
    "DeschedulerProfile",
    False,
    name=_f(STRING, "Profile name, used in logs, metrics and eviction reasons."),
    pluginConfig=_f(_list(PLUGIN_CONFIG), "Arguments for each plugin."),
    plugins=_f(
        _struct(
            "Plugins",
            False,
            presort=_f(PLUGIN_SET, "Ignored by upstream."),
            sort=_f(PLUGIN_SET, "Ignored by upstream."),
            deschedule=_f(PLUGIN_SET, "Deschedule plugins."),
            balance=_f(PLUGIN_SET, "Balance plugins."),
            filter=_f(PLUGIN_SET, "Evictor filter plugins (DefaultEvictor is always added)."),
            preevictionfilter=_f(PLUGIN_SET, "Evictor pre-eviction filter plugins (DefaultEvictor is always added)."),
        ),
        "Enabled plugins per extension point.",
    ),
)
_SECRET_REF = _struct("SecretReference", False, namespace=_f(STRING), name=_f(STRING))
POLICY_V1ALPHA2 = _struct(
    "DeschedulerPolicy",
    False,
    apiVersion=_f(STRING, "descheduler/v1alpha2"),
    kind=_f(STRING, "DeschedulerPolicy"),
    profiles=_f(_list(PROFILE), "The profiles to run."),
    nodeSelector=_f(STRING, "Label selector restricting the nodes every plugin sees."),
    maxNoOfPodsToEvictPerNode=_f(UINT, "Most evictions per node per cycle."),
    maxNoOfPodsToEvictPerNamespace=_f(UINT, "Most evictions per namespace per cycle."),
    maxNoOfPodsToEvictTotal=_f(UINT, "Most evictions per cycle.", 31),
    evictionFailureEventNotification=_f(BOOL, "Emit an EvictionFailed event when an eviction fails.", 33),
    metricsCollector=_f(
        _struct("MetricsCollector", False, enabled=_f(BOOL)), "Deprecated: enable the metrics-server client.", 32
    ),
    metricsProviders=_f(
        _list(
            _struct(
                "MetricsProvider",
                False,
                source=_f(STRING, "KubernetesMetrics or Prometheus."),
                prometheus=_f(
                    _struct(
                        "Prometheus",
                        False,
                        url=_f(STRING, "Prometheus URL."),
                        authToken=_f(
                            _struct("AuthToken", False, secretReference=_f(_SECRET_REF, "Secret holding the token.")),
                            "Bearer token source.",
                        ),
                    ),
                    "Prometheus connection.",
                ),
            )
        ),
        "Metrics sources for plugins.",
        33,
    ),
    gracePeriodSeconds=_f(INT64_T, "Grace period of each eviction.", 33),
)

# --- v1alpha1 (read by v0.30.x and earlier; reference §6) ----------------------------------------------------------

_NRUT = _struct(
    "NodeResourceUtilizationThresholds",
    False,
    thresholds=_f(THRESHOLDS),
    targetThresholds=_f(THRESHOLDS),
    useDeviationThresholds=_f(BOOL),
    numberOfNodes=_f(INT),
)
STRATEGY_PARAMS = _struct(
    "StrategyParameters",
    False,
    nodeResourceUtilizationThresholds=_f(_NRUT),
    nodeAffinityType=_f(STRINGS),
    podsHavingTooManyRestarts=_f(
        _struct("PodsHavingTooManyRestarts", False, podRestartThreshold=_f(INT32_T), includingInitContainers=_f(BOOL))
    ),
    podLifeTime=_f(
        _struct("PodLifeTime", False, maxPodLifeTimeSeconds=_f(UINT), states=_f(STRINGS), podStatusPhases=_f(STRINGS))
    ),
    removeDuplicates=_f(_struct("RemoveDuplicates", False, excludeOwnerKinds=_f(STRINGS))),
    failedPods=_f(
        _struct(
            "FailedPods",
            False,
            excludeOwnerKinds=_f(STRINGS),
            minPodLifetimeSeconds=_f(UINT),
            reasons=_f(STRINGS),
            includingInitContainers=_f(BOOL),
        )
    ),
    includeSoftConstraints=_f(BOOL),
    namespaces=_f(_struct("Namespaces", False, include=_f(STRINGS), exclude=_f(STRINGS))),
    thresholdPriority=_f(INT32_T),
    thresholdPriorityClassName=_f(STRING),
    labelSelector=_f(LABEL_SELECTOR),
    nodeFit=_f(BOOL),
    includePreferNoSchedule=_f(BOOL),
    excludedTaints=_f(STRINGS),
    includedTaints=_f(STRINGS, since=30),
)
STRATEGY = _struct(
    "DeschedulerStrategy",
    False,
    enabled=_f(BOOL, "Strategies are off unless enabled is true."),
    weight=_f(INT, "Parsed and ignored."),
    params=_f(STRATEGY_PARAMS),
)
POLICY_V1ALPHA1 = _struct(
    "DeschedulerPolicyV1alpha1",
    False,
    apiVersion=_f(STRING, "descheduler/v1alpha1"),
    kind=_f(STRING, "DeschedulerPolicy"),
    strategies=_f(_map(STRATEGY), "Strategies by name."),
    nodeSelector=_f(STRING),
    evictFailedBarePods=_f(BOOL),
    evictLocalStoragePods=_f(BOOL),
    evictSystemCriticalPods=_f(BOOL),
    evictDaemonSetPods=_f(BOOL, since=30),
    ignorePvcPods=_f(BOOL),
    maxNoOfPodsToEvictPerNode=_f(UINT),
    maxNoOfPodsToEvictPerNamespace=_f(UINT),
)
