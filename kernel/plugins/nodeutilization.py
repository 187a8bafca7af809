"""Low- and HighNodeUtilization: their validators and LowNodeUtilization's Prometheus constructor check
(docs/policy-api.md#43-lownodeutilization, docs/policy-api.md#44-highnodeutilization).

Both validators return **only the first** error, like upstream. Go walks the threshold maps in random order; this port
walks them in document order, so with several bad resources it names the first one written.
``metricsUtilization`` (LowNodeUtilization) and ``evictionModes`` (HighNodeUtilization) are checked from v0.33.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    EVICTABLE_NAMESPACES,
    INT,
    STRING,
    STRINGS,
    THRESHOLDS,
    UINT,
    args_struct,
    field,
    struct,
)
from desched.plugins.base import Namespaces, Need, Plugin, PodScope, Setting, When, flag, percentages, raw, texts, whole
from desched.validation.core import (
    ArgError,
    boolean,
    go_key,
    length,
    mapping,
    number,
    path_key,
    string,
    strings,
)
from desched.validation.gofmt import go_list
from desched.validation.vocab import EVICTION_MODES, METRIC_RESOURCE

__all__ = ["construct_low", "validate_high", "validate_low"]

_MIN_PERCENTAGE = 0
_MAX_PERCENTAGE = 100
_DIFFERENT_RESOURCES = "thresholds and targetThresholds configured different resources"


def _thresholds(value: Any) -> list[tuple[str | int, str, float | None]]:
    """A ``ResourceThresholds`` map as (path key, resource name, percentage or None when not a number)."""
    table = mapping(value) or {}
    return [(path_key(key), go_key(key), number(percent)) for key, percent in table.items()]


def _validate_thresholds(field: str, value: Any) -> ArgError | None:
    """``validateThresholds``; ``field`` is the args key the map sits under (for the path only)."""
    entries = _thresholds(value)
    if not entries:
        return ArgError("no resource threshold is configured", (field,), "thresholds")
    for key, name, percent in entries:
        if percent is not None and (percent < _MIN_PERCENTAGE or percent > _MAX_PERCENTAGE):
            message = f"{name} threshold not in [{_MIN_PERCENTAGE}, {_MAX_PERCENTAGE}] range"
            return ArgError(message, (field, key), "range")
    return None


def _evictable_namespaces_rule(args: dict[Any, Any]) -> ArgError | None:
    namespaces = mapping(args.get("evictableNamespaces"))
    if namespaces is not None and length(namespaces.get("include")) > 0:
        return ArgError(
            "only Exclude namespaces can be set, inclusion is not supported", ("evictableNamespaces", "include")
        )
    return None


def _low_thresholds_rule(args: dict[Any, Any]) -> ArgError | None:
    for which in ("thresholds", "targetThresholds"):
        error = _validate_thresholds(which, args.get(which))
        if error is not None:
            return ArgError(f"{which} config is not valid: {error.message}", error.path, error.code)
    thresholds = _thresholds(args.get("thresholds"))
    target_entries = _thresholds(args.get("targetThresholds"))
    targets = {name: percent for _, name, percent in target_entries}
    if len(thresholds) != len(target_entries):
        return ArgError(_DIFFERENT_RESOURCES, ("targetThresholds",), "thresholds")
    deviation = boolean(args.get("useDeviationThresholds"))
    for key, name, percent in thresholds:
        if name not in targets:
            return ArgError(_DIFFERENT_RESOURCES, ("thresholds", key), "thresholds")
        target_percent = targets[name]
        if percent is not None and target_percent is not None and percent > target_percent and not deviation:
            message = f"thresholds' {name} percentage is greater than targetThresholds'"
            return ArgError(message, ("thresholds", key), "order")
    return None


def _metrics_rule(args: dict[Any, Any]) -> ArgError | None:
    metrics = mapping(args.get("metricsUtilization"))
    if metrics is None:
        return None
    source = string(metrics.get("source"))
    if source == "KubernetesMetrics" and boolean(metrics.get("metricsServer")):
        return ArgError(
            'it is not allowed to set both "KubernetesMetrics" source and metricsServer',
            ("metricsUtilization", "metricsServer"),
        )
    if source == "KubernetesMetrics" and metrics.get("prometheus") is not None:
        return ArgError(
            'prometheus configuration is not allowed to set when source is set to "KubernetesMetrics"',
            ("metricsUtilization", "prometheus"),
        )
    if source == "Prometheus":
        prometheus = mapping(metrics.get("prometheus"))
        if prometheus is None or string(prometheus.get("query")) == "":
            path = ("metricsUtilization", "prometheus") if prometheus is not None else ("metricsUtilization",)
            return ArgError('prometheus query is required when metrics source is set to "Prometheus"', path)
    return None


def validate_low(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateLowNodeUtilizationArgs``: at most one error."""
    error = _evictable_namespaces_rule(args) or _low_thresholds_rule(args)
    if error is None and target >= 33:
        error = _metrics_rule(args)
    return [error] if error is not None else []


def validate_high(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateHighNodeUtilizationArgs``: at most one error."""
    error = _evictable_namespaces_rule(args) or _validate_thresholds("thresholds", args.get("thresholds"))
    if error is None and target >= 33:
        for index, mode in strings(args.get("evictionModes")):
            if mode not in EVICTION_MODES:
                error = ArgError(f"invalid eviction mode {mode}", ("evictionModes", index))
                break
    return [error] if error is not None else []


def construct_low(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``NewLowNodeUtilization`` with ``metricsUtilization.source: Prometheus`` (v0.33+).

    Both threshold maps must name exactly ``MetricResource``. The constructor's own "prometheus property/query is
    missing" checks are left out: validation (phase C) rejects those cases before the constructor runs.
    """
    metrics = mapping(args.get("metricsUtilization"))
    if target < 33 or metrics is None or string(metrics.get("source")) != "Prometheus":
        return []
    for key in ("thresholds", "targetThresholds"):
        names = [name for _, name, _ in _thresholds(args.get(key))]
        if names != [METRIC_RESOURCE]:
            return [
                ArgError(
                    f'{key} are expected to specify a single instance of "{METRIC_RESOURCE}" resource, '
                    f"got {go_list(names)} instead",
                    (key,),
                    "metrics",
                )
            ]
    return []


#: ``LowNodeUtilizationArgs`` as upstream decodes it (strictly).
LOW_NODE_UTILIZATION_ARGS = args_struct(
    "LowNodeUtilizationArgs",
    useDeviationThresholds=field(BOOL, "Thresholds are deviations from the mean usage."),
    thresholds=field(THRESHOLDS, "Below every threshold a node is underutilized (percent)."),
    targetThresholds=field(THRESHOLDS, "Above any target a node is overutilized (percent)."),
    numberOfNodes=field(INT, "Do nothing while at most this many nodes are underutilized."),
    evictableNamespaces=EVICTABLE_NAMESPACES,
    evictionLimits=field(
        struct("EvictionLimits", True, node=field(UINT, "Most evictions per node per cycle.")),
        "Eviction limits for this plugin.",
        33,
    ),
    metricsUtilization=field(
        struct(
            "MetricsUtilization",
            True,
            metricsServer=field(BOOL, "Deprecated: use metrics-server usage.", 32),
            source=field(STRING, "KubernetesMetrics or Prometheus.", 33),
            prometheus=field(
                struct("MetricsUtilizationPrometheus", True, query=field(STRING, "PromQL returning 0..1 per node.")),
                "Prometheus query.",
                33,
            ),
        ),
        "Use actual usage instead of requests.",
        32,
    ),
)


#: ``HighNodeUtilizationArgs`` as upstream decodes it (strictly).
HIGH_NODE_UTILIZATION_ARGS = args_struct(
    "HighNodeUtilizationArgs",
    thresholds=field(THRESHOLDS, "Below every threshold a node is underutilized (percent)."),
    numberOfNodes=field(INT, "Do nothing while at most this many nodes are underutilized."),
    evictableNamespaces=EVICTABLE_NAMESPACES,
    metricsUtilization=field(
        struct("HighNodeUtilizationMetrics", True, metricsServer=field(BOOL, "Use metrics-server usage.")),
        "Only in v0.32: actual usage instead of requests.",
        32,
        32,
    ),
    evictionModes=field(STRINGS, "OnlyThresholdingResources: evict only pods requesting a thresholded resource.", 33),
)


class LowNodeUtilizationArgs(NamedTuple):
    """``LowNodeUtilizationArgs`` as upstream reads it; ``metrics_utilization`` is kept as written."""

    use_deviation_thresholds: bool
    thresholds: Mapping[str, float]
    target_thresholds: Mapping[str, float]
    number_of_nodes: int
    evictable_namespaces: Namespaces
    eviction_limit_per_node: int | None
    metrics_utilization: Mapping[str, Any] | None

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "LowNodeUtilizationArgs":
        limits = raw(args.get("evictionLimits")) or {}
        return cls(
            flag(args.get("useDeviationThresholds")),
            percentages(args.get("thresholds")),
            percentages(args.get("targetThresholds")),
            whole(args.get("numberOfNodes")) or 0,
            Namespaces.decode(args.get("evictableNamespaces")),
            whole(limits.get("node")),
            raw(args.get("metricsUtilization")),
        )


class HighNodeUtilizationArgs(NamedTuple):
    """``HighNodeUtilizationArgs`` as upstream reads it."""

    thresholds: Mapping[str, float]
    number_of_nodes: int
    evictable_namespaces: Namespaces
    eviction_modes: tuple[str, ...]

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "HighNodeUtilizationArgs":
        return cls(
            percentages(args.get("thresholds")),
            whole(args.get("numberOfNodes")) or 0,
            Namespaces.decode(args.get("evictableNamespaces")),
            texts(args.get("evictionModes")),
        )


def scope(args: LowNodeUtilizationArgs | HighNodeUtilizationArgs, target: int) -> PodScope:
    """``evictableNamespaces`` alone: neither plugin has a labelSelector."""
    return PodScope(args.evictable_namespaces, "evictableNamespaces")


def _actual_usage(setting: Setting, args: LowNodeUtilizationArgs) -> bool:
    """The node usage comes from metrics-server (``metricsServer`` in v0.32, ``source: KubernetesMetrics`` after)."""
    metrics = args.metrics_utilization or {}
    return metrics.get("metricsServer") is True or metrics.get("source") == "KubernetesMetrics"


#: LowNodeUtilization with actual usage GETs each candidate pod's metrics (the nodes' come from the policy's metrics
#: collector, a need of the core).
LOW_NODE_UTILIZATION_NEEDS = (
    Need(
        "metrics.k8s.io", "pods", ("get",), 32, None,
        "v0.32.0 pkg/framework/plugins/nodeutilization/lownodeutilization.go:93-97, usageclients.go:142; "
        "v0.36.0 lownodeutilization.go:377-385",
        When("metricsUtilization from metrics-server (metricsServer, source KubernetesMetrics)", _actual_usage),
    ),
)  # fmt: skip


PLUGINS = (
    Plugin(
        "LowNodeUtilization",
        ("balance",),
        LOW_NODE_UTILIZATION_ARGS,
        validate_low,
        construct=construct_low,
        decode=LowNodeUtilizationArgs.decode,
        scope=scope,
        needs=LOW_NODE_UTILIZATION_NEEDS,
    ),
    Plugin(
        "HighNodeUtilization",
        ("balance",),
        HIGH_NODE_UTILIZATION_ARGS,
        validate_high,
        decode=HighNodeUtilizationArgs.decode,
        scope=scope,
    ),
)
