"""The shape of a DeschedulerPolicy's envelope, written once: the structural checker and the JSON Schemas read it.

Profiles, plugin sets, plugin configs and the policy-level settings of v1alpha2, and v1alpha1's strategies, with the
release that introduced each field (``since``) and the last release that had it (``until``); see
docs/policy-api.md. Plugin args are declared by each plugin (:mod:`desched.plugins`). Types follow the Go types upstream
decodes into (:mod:`desched.api.types`), so that the checker can report what Go's JSON decoding would reject.
"""

from __future__ import annotations

from desched.api.types import (
    ANY,
    BOOL,
    INT,
    INT32_T,
    INT64_T,
    LABEL_SELECTOR,
    STRING,
    STRINGS,
    THRESHOLDS,
    UINT,
    field,
    list_of,
    map_of,
    struct,
)

__all__ = ["EXTENSION_POINTS", "POLICY_V1ALPHA1", "POLICY_V1ALPHA2"]

EXTENSION_POINTS = ("presort", "sort", "deschedule", "balance", "filter", "preevictionfilter")

# --- the v1alpha2 envelope (docs/policy-api.md); not strict: upstream drops unknown keys --------------------------

PLUGIN_SET = struct(
    "PluginSet",
    False,
    enabled=field(STRINGS, "Plugins run at this extension point, in order."),
    disabled=field(STRINGS, "Never read by upstream."),
)
PLUGIN_CONFIG = struct(
    "PluginConfig",
    False,
    name=field(STRING, "A registered plugin name."),
    args=field(ANY, "The plugin's arguments, decoded strictly into its args type."),
)
PROFILE = struct(
    "DeschedulerProfile",
    False,
    name=field(STRING, "Profile name, used in logs, metrics and eviction reasons."),
    pluginConfig=field(list_of(PLUGIN_CONFIG), "Arguments for each plugin."),
    plugins=field(
        struct(
            "Plugins",
            False,
            presort=field(PLUGIN_SET, "Ignored by upstream."),
            sort=field(PLUGIN_SET, "Ignored by upstream."),
            deschedule=field(PLUGIN_SET, "Deschedule plugins."),
            balance=field(PLUGIN_SET, "Balance plugins."),
            filter=field(PLUGIN_SET, "Evictor filter plugins (DefaultEvictor is always added)."),
            preevictionfilter=field(
                PLUGIN_SET, "Evictor pre-eviction filter plugins (DefaultEvictor is always added)."
            ),
        ),
        "Enabled plugins per extension point.",
    ),
)
_SECRET_REF = struct("SecretReference", False, namespace=field(STRING), name=field(STRING))
POLICY_V1ALPHA2 = struct(
    "DeschedulerPolicy",
    False,
    apiVersion=field(STRING, "descheduler/v1alpha2"),
    kind=field(STRING, "DeschedulerPolicy"),
    profiles=field(list_of(PROFILE), "The profiles to run."),
    nodeSelector=field(STRING, "Label selector restricting the nodes every plugin sees."),
    maxNoOfPodsToEvictPerNode=field(UINT, "Most evictions per node per cycle."),
    maxNoOfPodsToEvictPerNamespace=field(UINT, "Most evictions per namespace per cycle."),
    maxNoOfPodsToEvictTotal=field(UINT, "Most evictions per cycle.", 31),
    evictionFailureEventNotification=field(BOOL, "Emit an EvictionFailed event when an eviction fails.", 33),
    metricsCollector=field(
        struct("MetricsCollector", False, enabled=field(BOOL)), "Deprecated: enable the metrics-server client.", 32
    ),
    metricsProviders=field(
        list_of(
            struct(
                "MetricsProvider",
                False,
                source=field(STRING, "KubernetesMetrics or Prometheus."),
                prometheus=field(
                    struct(
                        "Prometheus",
                        False,
                        url=field(STRING, "Prometheus URL."),
                        authToken=field(
                            struct("AuthToken", False, secretReference=field(_SECRET_REF, "Secret holding the token.")),
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
    gracePeriodSeconds=field(INT64_T, "Grace period of each eviction.", 33),
)

# --- v1alpha1 (read by v0.30.x and earlier; docs/policy-api.md) ------------------------------------------------

_NRUT = struct(
    "NodeResourceUtilizationThresholds",
    False,
    thresholds=field(THRESHOLDS),
    targetThresholds=field(THRESHOLDS),
    useDeviationThresholds=field(BOOL),
    numberOfNodes=field(INT),
)
STRATEGY_PARAMS = struct(
    "StrategyParameters",
    False,
    nodeResourceUtilizationThresholds=field(_NRUT),
    nodeAffinityType=field(STRINGS),
    podsHavingTooManyRestarts=field(
        struct(
            "PodsHavingTooManyRestarts", False, podRestartThreshold=field(INT32_T), includingInitContainers=field(BOOL)
        )
    ),
    podLifeTime=field(
        struct(
            "PodLifeTime",
            False,
            maxPodLifeTimeSeconds=field(UINT),
            states=field(STRINGS),
            podStatusPhases=field(STRINGS),
        )
    ),
    removeDuplicates=field(struct("RemoveDuplicates", False, excludeOwnerKinds=field(STRINGS))),
    failedPods=field(
        struct(
            "FailedPods",
            False,
            excludeOwnerKinds=field(STRINGS),
            minPodLifetimeSeconds=field(UINT),
            reasons=field(STRINGS),
            includingInitContainers=field(BOOL),
        )
    ),
    includeSoftConstraints=field(BOOL),
    namespaces=field(struct("Namespaces", False, include=field(STRINGS), exclude=field(STRINGS))),
    thresholdPriority=field(INT32_T),
    thresholdPriorityClassName=field(STRING),
    labelSelector=field(LABEL_SELECTOR),
    nodeFit=field(BOOL),
    includePreferNoSchedule=field(BOOL),
    excludedTaints=field(STRINGS),
    includedTaints=field(STRINGS, since=30),
)
STRATEGY = struct(
    "DeschedulerStrategy",
    False,
    enabled=field(BOOL, "Strategies are off unless enabled is true."),
    weight=field(INT, "Parsed and ignored."),
    params=field(STRATEGY_PARAMS),
)
POLICY_V1ALPHA1 = struct(
    "DeschedulerPolicyV1alpha1",
    False,
    apiVersion=field(STRING, "descheduler/v1alpha1"),
    kind=field(STRING, "DeschedulerPolicy"),
    strategies=field(map_of(STRATEGY), "Strategies by name."),
    nodeSelector=field(STRING),
    evictFailedBarePods=field(BOOL),
    evictLocalStoragePods=field(BOOL),
    evictSystemCriticalPods=field(BOOL),
    evictDaemonSetPods=field(BOOL, since=30),
    ignorePvcPods=field(BOOL),
    maxNoOfPodsToEvictPerNode=field(UINT),
    maxNoOfPodsToEvictPerNamespace=field(UINT),
)
