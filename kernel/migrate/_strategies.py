"""The mapping table: v1alpha1 strategy params -> v1alpha2 plugin args, as upstream's ``StrategyParamsToPluginArgs``.

One builder per strategy (docs/policy-api.md#72-mapping, read from v0.30.2 ``pkg/api/v1alpha1/strategymigration.go``).
Each reads the decoded params (``{}`` when the strategy has none) and returns the args upstream builds, recording for
every output node the source node it comes from. Go zero values that upstream writes (``false``, ``0``, nil slices) are
left out unless the source wrote them, which is the same policy after decoding. Nothing here adds keys an args type
lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desched.plugins import REGISTRY
from desched.tree import Path, mapping_or_empty
from desched.validation.core import go_key, path_key

__all__ = ["BUILDERS", "EXTENSION_POINT", "USES", "Args", "copy_value", "is_zero"]


def copy_value(value: Any, out: Path, src: Path, origins: dict[Path, Path]) -> Any:
    """Copy decoded ``value`` to the output, keys as Go's JSON keys, recording ``origins[out...] = src...``."""
    origins[out] = src
    if isinstance(value, dict):
        return {
            go_key(key): copy_value(item, (*out, go_key(key)), (*src, path_key(key)), origins)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [copy_value(item, (*out, index), (*src, index), origins) for index, item in enumerate(value)]
    return value


def is_zero(value: Any) -> bool:
    """Go's zero value, as the source can write it: ``false``, ``0``, ``""``, ``[]``, ``{}``."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value == 0
    if isinstance(value, (str, list, dict)):
        return len(value) == 0
    return value is None


class Args:
    """Plugin args under construction: ``values`` plus ``origins`` (args-relative path -> source path)."""

    __slots__ = ("origins", "plugin", "values")

    def __init__(self, plugin: str) -> None:
        self.plugin = plugin
        self.values: dict[str, Any] = {}
        self.origins: dict[Path, Path] = {}

    def copy(self, key: str, value: Any, src: Path) -> None:
        self.values[key] = copy_value(value, (key,), src, self.origins)

    def put(self, key: str, value: Any, src: Path | None) -> None:
        self.values[key] = value
        if src is not None:
            self.origins[(key,)] = src

    def remove(self, key: str) -> None:
        self.values.pop(key, None)
        for path in [path for path in self.origins if path[:1] == (key,)]:
            del self.origins[path]

    def source_of(self, path: Path) -> Path | None:
        """Source of ``path`` or of its nearest recorded ancestor."""
        for end in range(len(path), 0, -1):
            found = self.origins.get(path[:end])
            if found is not None:
                return found
        return None

    def ordered(self) -> None:
        """Put the keys in the args type's field order (deterministic, and the order upstream's docs use)."""
        order = list(REGISTRY[self.plugin].args.fields)
        self.values = dict(sorted(self.values.items(), key=lambda item: order.index(item[0])))


def _namespaces(args: Args, key: str, params: dict[str, Any], pp: Path) -> None:
    """``v1alpha1NamespacesToInternal``: nil stays nil; each list is copied only when non-nil."""
    namespaces = params.get("namespaces")
    if isinstance(namespaces, dict):
        args.copy(key, {k: namespaces[k] for k in ("include", "exclude") if k in namespaces}, (*pp, "namespaces"))


def _label_selector(args: Args, params: dict[str, Any], pp: Path) -> None:
    if "labelSelector" in params:
        args.copy("labelSelector", params["labelSelector"], (*pp, "labelSelector"))


def _copy_present(args: Args, block: dict[str, Any], bp: Path, *keys: str) -> None:
    for key in keys:
        if key in block:
            args.copy(key, block[key], (*bp, key))


def _sub(params: dict[str, Any], pp: Path, key: str) -> tuple[dict[str, Any], Path]:
    block = params.get(key)
    return mapping_or_empty(block), (*pp, key)


def _node_taints(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemovePodsViolatingNodeTaints")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    _copy_present(args, params, pp, "includePreferNoSchedule", "excludedTaints")
    return args


def _failed_pods(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemoveFailedPods")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    block, bp = _sub(params, pp, "failedPods")
    _copy_present(args, block, bp, "includingInitContainers", "minPodLifetimeSeconds", "excludeOwnerKinds", "reasons")
    return args


def _node_affinity(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemovePodsViolatingNodeAffinity")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    _copy_present(args, params, pp, "nodeAffinityType")
    return args


def _anti_affinity(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemovePodsViolatingInterPodAntiAffinity")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    return args


def _too_many_restarts(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemovePodsHavingTooManyRestarts")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    block, bp = _sub(params, pp, "podsHavingTooManyRestarts")
    _copy_present(args, block, bp, "podRestartThreshold", "includingInitContainers")
    return args


def _pod_lifetime(params: dict[str, Any], pp: Path) -> Args:
    args = Args("PodLifeTime")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    block, bp = _sub(params, pp, "podLifeTime")
    _copy_present(args, block, bp, "maxPodLifeTimeSeconds")
    # states <- podStatusPhases followed by states; Go's append leaves nil when both are empty.
    merged: list[tuple[Any, Path]] = []
    for key in ("podStatusPhases", "states"):
        merged.extend((value, (*bp, key, index)) for index, value in enumerate(block.get(key) or []))
    if merged:
        args.put("states", [value for value, _ in merged], (*bp, "states" if "states" in block else "podStatusPhases"))
        for index, (_, src) in enumerate(merged):
            args.origins[("states", index)] = src
    return args


def _remove_duplicates(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemoveDuplicates")
    _namespaces(args, "namespaces", params, pp)
    block, bp = _sub(params, pp, "removeDuplicates")
    _copy_present(args, block, bp, "excludeOwnerKinds")
    return args


def _topology_spread(params: dict[str, Any], pp: Path) -> Args:
    args = Args("RemovePodsViolatingTopologySpreadConstraint")
    _namespaces(args, "namespaces", params, pp)
    _label_selector(args, params, pp)
    soft = params.get("includeSoftConstraints") is True
    source = (*pp, "includeSoftConstraints") if "includeSoftConstraints" in params else None
    args.put("constraints", ["DoNotSchedule", "ScheduleAnyway"] if soft else ["DoNotSchedule"], source)
    if soft and source is not None:
        args.origins[("constraints", 1)] = source
    args.put("topologyBalanceNodeFit", True, None)
    return args


def _thresholds(args: Args, key: str, block: dict[str, Any], bp: Path, fallback: Path) -> None:
    """Thresholds are always converted into a non-nil map (an empty one when missing)."""
    if key in block:
        args.copy(key, block[key], (*bp, key))
    else:
        args.put(key, {}, fallback)


def _high_utilization(params: dict[str, Any], pp: Path) -> Args:
    args = Args("HighNodeUtilization")
    _namespaces(args, "evictableNamespaces", params, pp)
    block, bp = _sub(params, pp, "nodeResourceUtilizationThresholds")
    fallback = bp if "nodeResourceUtilizationThresholds" in params else pp
    _thresholds(args, "thresholds", block, bp, fallback)
    _copy_present(args, block, bp, "numberOfNodes")
    return args


def _low_utilization(params: dict[str, Any], pp: Path) -> Args:
    args = Args("LowNodeUtilization")
    _namespaces(args, "evictableNamespaces", params, pp)
    block, bp = _sub(params, pp, "nodeResourceUtilizationThresholds")
    fallback = bp if "nodeResourceUtilizationThresholds" in params else pp
    _thresholds(args, "thresholds", block, bp, fallback)
    _thresholds(args, "targetThresholds", block, bp, fallback)
    _copy_present(args, block, bp, "useDeviationThresholds", "numberOfNodes")
    return args


#: ``StrategyParamsToPluginArgs``: strategy name -> builder(params, params path).
BUILDERS: dict[str, Callable[[dict[str, Any], Path], Args]] = {
    "RemovePodsViolatingNodeTaints": _node_taints,
    "RemoveFailedPods": _failed_pods,
    "RemovePodsViolatingNodeAffinity": _node_affinity,
    "RemovePodsViolatingInterPodAntiAffinity": _anti_affinity,
    "RemovePodsHavingTooManyRestarts": _too_many_restarts,
    "PodLifeTime": _pod_lifetime,
    "RemoveDuplicates": _remove_duplicates,
    "RemovePodsViolatingTopologySpreadConstraint": _topology_spread,
    "HighNodeUtilization": _high_utilization,
    "LowNodeUtilization": _low_utilization,
}

#: The extension point upstream finds by building a throw-away plugin and checking its interfaces.
EXTENSION_POINT: dict[str, str] = {
    name: "balance"
    if name
    in ("RemoveDuplicates", "LowNodeUtilization", "HighNodeUtilization", "RemovePodsViolatingTopologySpreadConstraint")
    else "deschedule"
    for name in BUILDERS
}

_COMMON = frozenset({"namespaces", "thresholdPriority", "thresholdPriorityClassName", "nodeFit"})

#: The params keys each strategy reads (docs/policy-api.md#63-params); any other non-zero key is lost by the conversion.
USES: dict[str, frozenset[str]] = {
    name: _COMMON | frozenset(keys)
    for name, keys in {
        "RemoveDuplicates": ("removeDuplicates",),
        "LowNodeUtilization": ("nodeResourceUtilizationThresholds",),
        "HighNodeUtilization": ("nodeResourceUtilizationThresholds",),
        "RemovePodsViolatingTopologySpreadConstraint": ("labelSelector", "includeSoftConstraints"),
        "RemovePodsViolatingInterPodAntiAffinity": ("labelSelector",),
        "RemovePodsViolatingNodeAffinity": ("labelSelector", "nodeAffinityType"),
        "RemovePodsViolatingNodeTaints": (
            "labelSelector",
            "includePreferNoSchedule",
            "excludedTaints",
            "includedTaints",
        ),
        "RemovePodsHavingTooManyRestarts": ("labelSelector", "podsHavingTooManyRestarts"),
        "PodLifeTime": ("labelSelector", "podLifeTime"),
        "RemoveFailedPods": ("labelSelector", "failedPods"),
    }.items()
}
