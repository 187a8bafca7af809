"""What the Kube Descheduler Operator writes into ConfigMap ``cluster`` key ``policy.yaml`` for a KubeDescheduler.

:func:`render` follows ``manageConfigMap`` and the per-profile builders of the operator
(docs/openshift-operator.md#2-from-profiles-to-plugins): profiles become descheduler/v1alpha2 profiles in the order
listed, the ``EvictPodsWith*`` modifiers change every DefaultEvictor but KubeVirt's, namespaces are excluded through the
protected list, thresholds come from the presets, and eviction limits, the KubeVirt node selector and the Prometheus
provider are set at policy level. ``origins`` maps every path of the output to the path in the CR it came from, so
findings on the policy point at the CR.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.errors import PolicyRefused
from desched.openshift import model
from desched.openshift.validate import REFUSED, Problem, problems
from desched.tree import Path

__all__ = ["Environment", "RenderError", "Rendering", "render", "rendered_policy"]

_CUSTOM = ("spec", "profileCustomizations")


class RenderError(PolicyRefused):
    """The operator refuses to render this KubeDescheduler (API rejection, scale to 0, or retry)."""


class Environment(NamedTuple):
    """What the operator reads from the cluster: namespaces existing at its start (besides its own) and the host
    of the Prometheus route."""

    namespaces: tuple[str, ...] = ()
    prometheus_host: str = model.DEFAULT_PROMETHEUS_HOST


class Rendering(NamedTuple):
    """The rendered ``DeschedulerPolicy``, where each output path came from, and what the operator would log."""

    policy: dict[str, Any]
    origins: dict[Path, Path]
    notes: list[str]


def render(kube_descheduler: Mapping[str, Any], target: Environment | None = None) -> Rendering:
    """The policy the operator generates for ``kube_descheduler`` (the whole object).

    Raises :class:`RenderError` with the operator's message when the CR is rejected or not rendered.
    """
    errors = [p for p in problems(kube_descheduler) if p.category in REFUSED and not _deployment_only(p)]
    if errors:
        raise RenderError(errors[0].message, errors[0].path)
    return _Builder(kube_descheduler, target or Environment()).build()


def rendered_policy(kube_descheduler: Mapping[str, Any]) -> tuple[dict[str, Any], dict[Path, Path]] | None:
    """The policy the operator renders from a KubeDescheduler and its origins; ``None`` when it refuses the CR (the
    renderer :mod:`desched.policy.effective` names for ``kubedescheduler`` documents)."""
    try:
        rendering = render(kube_descheduler)
    except RenderError:
        return None
    return rendering.policy, rendering.origins


def _deployment_only(problem: Problem) -> bool:
    """Problems that do not stop ``manageConfigMap`` (the interval is checked by ``sync``; name by the API)."""
    return (
        problem.path[:2] in (("spec", "deschedulingIntervalSeconds"), ("metadata", "name"))
        or (problem.path == ("spec",) and "deschedulingIntervalSeconds" in problem.message)
        or (problem.path == () and "singleton" in problem.message)
    )


class _Builder:
    __slots__ = ("custom", "env", "names", "notes", "origins", "protected", "spec")

    def __init__(self, kd: Mapping[str, Any], env: Environment) -> None:
        self.spec: Mapping[str, Any] = kd["spec"]
        custom = self.spec.get("profileCustomizations")
        self.custom: Mapping[str, Any] = custom if isinstance(custom, Mapping) else {}
        self.names = [name for name in self.spec.get("profiles") or [] if isinstance(name, str)]
        self.env = env
        self.protected = model.protected(env.namespaces)
        self.origins: dict[Path, Path] = {(): ("spec",)}
        self.notes: list[str] = []

    def build(self) -> Rendering:
        policy: dict[str, Any] = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy"}
        kubevirt = any(name in model.KUBEVIRT for name in self.names)
        profiles: list[dict[str, Any]] = []
        for index, name in enumerate(self.names):
            if name in model.MODIFIERS:
                continue
            out: Path = ("profiles", len(profiles))
            self.origins[out] = ("spec", "profiles", index)
            profiles.append(self._profile(name, out))
        limits = self.spec.get("evictionLimits")
        limits = limits if isinstance(limits, Mapping) else {}
        if kubevirt:
            policy["maxNoOfPodsToEvictPerNode"] = 2
            policy["maxNoOfPodsToEvictTotal"] = 5
            policy["nodeSelector"] = "kubevirt.io/schedulable=true"
            self.origins[("nodeSelector",)] = ("spec", "profiles", self._first(model.KUBEVIRT))
        for field, key in (("total", "maxNoOfPodsToEvictTotal"), ("node", "maxNoOfPodsToEvictPerNode")):
            if limits.get(field) is not None:
                policy[key] = _uint32(limits[field])
                self.origins[(key,)] = ("spec", "evictionLimits", field)
        if kubevirt or self.custom.get("devActualUtilizationProfile"):
            policy["metricsProviders"] = [
                {"source": "Prometheus", "prometheus": {"url": f"https://{self.env.prometheus_host}"}}
            ]
        policy["profiles"] = profiles
        return Rendering(policy, self.origins, self.notes)

    def _first(self, names: tuple[str, ...]) -> int:
        return next(index for index, name in enumerate(self.names) if name in names)

    def _profile(self, name: str, out: Path) -> dict[str, Any]:
        configs: list[dict[str, Any]] = []
        plugins: dict[str, dict[str, list[str]]] = {"filter": {"enabled": ["DefaultEvictor"]}}

        def add(plugin: str, args: dict[str, Any]) -> dict[str, Any]:
            configs.append({"name": plugin, "args": args})
            return args

        def at(plugin: str, *rest: str) -> Path:
            index = next(i for i, entry in enumerate(configs) if entry["name"] == plugin)
            return (*out, "pluginConfig", index, "args", *rest)

        if name == "AffinityAndTaints":
            deschedule = [
                "RemovePodsViolatingInterPodAntiAffinity",
                "RemovePodsViolatingNodeTaints",
                "RemovePodsViolatingNodeAffinity",
            ]
            for plugin in deschedule:
                args = add(plugin, {})
                self._namespaces(args, at(plugin))
            configs[2]["args"]["nodeAffinityType"] = ["requiredDuringSchedulingIgnoredDuringExecution"]
            plugins["deschedule"] = {"enabled": deschedule}
        elif name in ("TopologyAndDuplicates", "SoftTopologyAndDuplicates"):
            constraints = ["DoNotSchedule"] + (["ScheduleAnyway"] if name.startswith("Soft") else [])
            args = add("RemovePodsViolatingTopologySpreadConstraint", {"constraints": constraints})
            self._namespaces(args, at("RemovePodsViolatingTopologySpreadConstraint"))
            self._namespaces(add("RemoveDuplicates", {}), at("RemoveDuplicates"))
            plugins["balance"] = {"enabled": ["RemovePodsViolatingTopologySpreadConstraint", "RemoveDuplicates"]}
        elif name in model.LIFECYCLE:
            deschedule = ["RemovePodsHavingTooManyRestarts"]
            if name == "LifecycleAndUtilization":
                deschedule.insert(0, "PodLifeTime")
                lifetime = self.custom.get("podLifetime")
                seconds = 86400 if lifetime in (None, "") else model.parse_duration(lifetime) // 10**9
                args = add("PodLifeTime", {"maxPodLifeTimeSeconds": _uint(seconds)})
                if lifetime not in (None, ""):
                    self.origins[at("PodLifeTime", "maxPodLifeTimeSeconds")] = (*_CUSTOM, "podLifetime")
                self._namespaces(args, at("PodLifeTime"))
            args = add("RemovePodsHavingTooManyRestarts", {"podRestartThreshold": 100, "includingInitContainers": True})
            self._namespaces(args, at("RemovePodsHavingTooManyRestarts"))
            self._low_node_utilization(add("LowNodeUtilization", {}), at("LowNodeUtilization"), kubevirt=False)
            plugins["deschedule"] = {"enabled": deschedule}
            plugins["balance"] = {"enabled": ["LowNodeUtilization"]}
        elif name == "CompactAndScale":
            preset = self.custom.get("devHighNodeUtilizationThresholds") or ""
            value = model.HIGH_THRESHOLDS[preset]
            args = add("HighNodeUtilization", {"thresholds": {"cpu": value, "memory": value, "pods": value}})
            if preset:
                self.origins[at("HighNodeUtilization", "thresholds")] = (*_CUSTOM, "devHighNodeUtilizationThresholds")
            if self._included():
                self.notes.append(
                    "CompactAndScale: namespaces.included is ignored by HighNodeUtilization, which gets no "
                    "evictableNamespaces at all"
                )
            else:
                args["evictableNamespaces"] = {"exclude": self._excluded()}
                self._namespace_origin(at("HighNodeUtilization", "evictableNamespaces"))
            plugins["balance"] = {"enabled": ["HighNodeUtilization"]}
        elif name in model.KUBEVIRT:
            self._low_node_utilization(add("LowNodeUtilization", {}), at("LowNodeUtilization"), kubevirt=True)
            plugins["balance"] = {"enabled": ["LowNodeUtilization"]}
        evictor = add("DefaultEvictor", self._evictor(kubevirt=name in model.KUBEVIRT))
        self._evictor_origins(at("DefaultEvictor"))
        del evictor
        if name in model.KUBEVIRT:
            plugins["filter"]["enabled"].append("KubevirtMigrationAware")
            plugins["preevictionfilter"] = {"enabled": ["KubevirtMigrationAware"]}
            migration: dict[str, Any] = {}
            for field, key in (
                ("devMigrationCooldown", "migrationCooldown"),
                ("devMaxMigrationCooldown", "maxMigrationCooldown"),
                ("devMigrationHistoryWindow", "migrationHistoryWindow"),
            ):
                if self.custom.get(field):
                    migration[key] = model.format_duration(model.parse_duration(self.custom[field]))
            add("KubevirtMigrationAware", migration)
            for field, key in (
                ("devMigrationCooldown", "migrationCooldown"),
                ("devMaxMigrationCooldown", "maxMigrationCooldown"),
                ("devMigrationHistoryWindow", "migrationHistoryWindow"),
            ):
                if key in migration:
                    self.origins[at("KubevirtMigrationAware", key)] = (*_CUSTOM, field)
        return {"name": model.RENAMED.get(name, name), "pluginConfig": configs, "plugins": plugins}

    def _included(self) -> list[str]:
        namespaces = self.custom.get("namespaces")
        included = namespaces.get("included") if isinstance(namespaces, Mapping) else None
        return list(included) if included else []

    def _excluded(self) -> list[str]:
        namespaces = self.custom.get("namespaces")
        excluded = namespaces.get("excluded") if isinstance(namespaces, Mapping) else None
        return [*self.protected, *(excluded or [])]

    def _namespace_origin(self, path: Path) -> None:
        if isinstance(self.custom.get("namespaces"), Mapping):
            self.origins[path] = (*_CUSTOM, "namespaces")

    def _namespaces(self, args: dict[str, Any], path: Path) -> None:
        included = self._included()
        args["namespaces"] = {"include": included} if included else {"exclude": self._excluded()}
        self._namespace_origin((*path, "namespaces"))

    def _low_node_utilization(self, args: dict[str, Any], path: Path, *, kubevirt: bool) -> None:
        args["evictableNamespaces"] = {"exclude": self._excluded()}
        self._namespace_origin((*path, "evictableNamespaces"))
        if self._included():
            self.notes.append(
                "LowNodeUtilization: namespaces.included is not supported; falling back to excluding the protected "
                "namespaces"
            )
        limits = self.spec.get("evictionLimits")
        node = limits.get("node") if isinstance(limits, Mapping) else None
        if node is not None:
            args["evictionLimits"] = {"node": _uint32(node)}
            self.origins[(*path, "evictionLimits")] = ("spec", "evictionLimits", "node")
        elif kubevirt:
            args["evictionLimits"] = {"node": 2}
        profile = self.custom.get("devActualUtilizationProfile") or ""
        query = _query(profile) if profile else (model.KUBEVIRT_DEFAULT_QUERY if kubevirt else "")
        if query:
            args["metricsUtilization"] = {"source": "Prometheus", "prometheus": {"query": query}}
            if profile:
                self.origins[(*path, "metricsUtilization")] = (*_CUSTOM, "devActualUtilizationProfile")
        low, deviation = self.custom.get("devLowNodeUtilizationThresholds"), self.custom.get("devDeviationThresholds")
        source: str | None = None
        if kubevirt and low is None:
            use_deviation = True
            low_value, target = model.DEVIATION_THRESHOLDS[deviation] if deviation else (0, 10)
            source = "devDeviationThresholds" if deviation else None
        elif kubevirt and low == "":
            use_deviation, (low_value, target), source = (
                True,
                model.LOW_THRESHOLDS[""],
                "devLowNodeUtilizationThresholds",
            )
        else:
            use_deviation = False
            low_value, target = model.LOW_THRESHOLDS[low or ""]
            source = "devLowNodeUtilizationThresholds" if low is not None else None
        resources = ("MetricResource",) if query else ("cpu", "memory", "pods")
        args["thresholds"] = {resource: low_value for resource in resources}
        args["targetThresholds"] = {resource: target for resource in resources}
        if use_deviation:
            args["useDeviationThresholds"] = True
        if source:
            for key in ("thresholds", "targetThresholds"):
                self.origins[(*path, key)] = (*_CUSTOM, source)

    def _evictor(self, *, kubevirt: bool) -> dict[str, Any]:
        args: dict[str, Any] = {}
        if kubevirt:
            args.update({"evictLocalStoragePods": True, "noEvictionPolicy": "Mandatory"})
        else:
            if "EvictPodsWithLocalStorage" in self.names:
                args["evictLocalStoragePods"] = True
            if "EvictPodsWithPVC" not in self.names:
                args["ignorePvcPods"] = True
        args["podProtections"] = {}
        if self.custom.get("thresholdPriority") is not None:
            args["priorityThreshold"] = {"name": "", "value": self.custom["thresholdPriority"]}
        elif self.custom.get("thresholdPriorityClassName"):
            args["priorityThreshold"] = {"name": self.custom["thresholdPriorityClassName"]}
        return args

    def _evictor_origins(self, path: Path) -> None:
        for field in ("thresholdPriority", "thresholdPriorityClassName"):
            if self.custom.get(field) is not None:
                self.origins[(*path, "priorityThreshold")] = (*_CUSTOM, field)
        for index, name in enumerate(self.names):
            if name == "EvictPodsWithLocalStorage":
                self.origins[(*path, "evictLocalStoragePods")] = ("spec", "profiles", index)


def _query(profile: str) -> str:
    if profile.startswith(model.QUERY_PREFIX):
        return profile[len(model.QUERY_PREFIX) :]
    return model.PROMETHEUS_PROFILES[profile]


def _uint(value: int) -> int:
    """Go's conversion of a negative duration to ``uint``: wraps around."""
    return value % 2**64


def _uint32(value: Any) -> Any:
    """Negative int32 limits cast to ``uint`` wrap to a huge number (docs/openshift-operator.md#11-top-level-fields)."""
    return value % 2**64 if isinstance(value, int) and value < 0 else value
