"""Profiles, extension points and the descheduling cycle (docs/executor-semantics.md#1-the-descheduling-cycle), over one
:class:`~desched.executor.cluster.Cluster`.

Contract:
* :func:`prepare_policy` applies what upstream does at load time: the implicit DefaultEvictor (first in
  ``filter``/``preEvictionFilter``, a default ``pluginConfig`` entry when missing), each plugin's argument defaults,
  and the check that every enabled plugin has a ``pluginConfig`` entry
  (:class:`~desched.executor.defaultevictor.UnrunnablePolicy` otherwise). Validation is the linter's job and happens
  before.
* :func:`run_cycle` picks the ready nodes matching the policy ``nodeSelector``, skips the cycle with fewer than 2, then
  runs every profile's Deschedule plugins, then every profile's Balance plugins, in policy order. A plugin that raises
  is recorded in :attr:`CycleResult.errors` and the cycle goes on.
* A plugin module has ``NAME`` and an ``Implementation(args, handle)`` class with ``deschedule(nodes)`` /
  ``balance(nodes)`` methods; its extension points and its args defaults are the registry's (:mod:`desched.plugins`). It
  sees the cluster, the clock and the profile's evictor only through :class:`Handle`.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from desched.executor import nodeutil
from desched.executor.cluster import Cluster, Json, key, node_of
from desched.executor.defaultevictor import DefaultEvictor, UnrunnablePolicy, node_label_selector
from desched.executor.evictions import Outcome, PodEvictor
from desched.executor.plugins import module_for
from desched.plugins import REGISTRY
from desched.plugins.base import Namespaces
from desched.workloads.selectors import compile_selector, label_map

DEFAULT_EVICTOR = "DefaultEvictor"


class Verdict(NamedTuple):
    """The DefaultEvictor's decision about one pod (for ``--explain``)."""

    namespace: str
    pod: str
    node: str
    profile: str
    evictable: bool
    reason: str


class Handle:
    """What a plugin may use: the cluster, the clock, the profile's evictor and the shared PodEvictor."""

    def __init__(
        self,
        cluster: Cluster,
        now: datetime,
        profile: str,
        evictor: DefaultEvictor,
        pod_evictor: PodEvictor,
        verdicts: dict[tuple[str, str], Verdict] | None = None,
    ) -> None:
        self.cluster = cluster
        self.now = now
        self.profile = profile
        self.default_evictor = evictor
        self.pod_evictor = pod_evictor
        self._verdicts = verdicts

    def filter(self, pod: Json) -> bool:
        """The profile's ``Filter`` chain (the DefaultEvictor)."""
        reason = self.default_evictor.filter_failure(pod)
        if self._verdicts is not None:
            self._record(pod, reason)
        return reason is None

    def pre_eviction_filter(self, pod: Json) -> bool:
        """The profile's ``PreEvictionFilter`` chain (the DefaultEvictor)."""
        return self.default_evictor.pre_eviction_failure(pod) is None

    def _record(self, pod: Json, filter_reason: str | None) -> None:
        """Explain mode: the first verdict on a pod, ``Filter`` then ``PreEvictionFilter`` (evictable only if both)."""
        assert self._verdicts is not None
        namespace, name = key(pod)
        if (namespace, name) in self._verdicts:
            return
        reason = filter_reason or self.default_evictor.pre_eviction_failure(pod)
        node = node_of(pod)
        self._verdicts[(namespace, name)] = Verdict(namespace, name, node, self.profile, reason is None, reason or "")

    def evict(self, pod: Json, plugin: str) -> Outcome:
        return self.pod_evictor.evict(pod, self.profile, plugin)

    def pods_on_node(self, node: str) -> list[Json]:
        return self.cluster.pods_on_node(node)

    def active_pods_on_node(self, node: str) -> list[Json]:
        return self.cluster.active_pods_on_node(node)


def pod_filter(namespaces: Namespaces, label_selector: Mapping[str, Any] | None = None) -> Callable[[Json], bool]:
    """The plugin-level pod filter of ``namespaces.include|exclude`` and ``labelSelector`` (absent: everything)."""
    include = set(namespaces.include)
    exclude = set(namespaces.exclude)
    selector = compile_selector(label_selector, nil_matches=True) if label_selector is not None else None

    def accept(pod: Json) -> bool:
        metadata = pod.get("metadata") or {}
        namespace = metadata.get("namespace") or ""
        if include and namespace not in include:
            return False
        if exclude and namespace in exclude:
            return False
        return selector is None or selector.matches(label_map(metadata.get("labels")))

    return accept


def prepare_policy(policy: Json) -> Json:
    """The policy as upstream holds it after loading (see the module contract); the input is not modified."""
    prepared = copy.deepcopy(policy)
    for profile in prepared.get("profiles") or []:
        name = profile.get("name", "")
        configs = profile.setdefault("pluginConfig", []) or []
        profile["pluginConfig"] = configs
        if not any(config.get("name") == DEFAULT_EVICTOR for config in configs):
            configs.insert(0, {"name": DEFAULT_EVICTOR, "args": {}})
        plugins = profile.setdefault("plugins", {}) or {}
        profile["plugins"] = plugins
        for point in ("filter", "preEvictionFilter"):
            section = plugins.setdefault(point, {}) or {}
            plugins[point] = section
            enabled = section.setdefault("enabled", []) or []
            section["enabled"] = enabled
            if DEFAULT_EVICTOR not in enabled:
                enabled.insert(0, DEFAULT_EVICTOR)
        by_name = {config.get("name"): config for config in configs}
        for point in ("deschedule", "balance"):
            for plugin in (plugins.get(point) or {}).get("enabled") or []:
                if plugin not in by_name:
                    raise UnrunnablePolicy(f'unable to find "{plugin}" plugin config in profile "{name}"')
                if module_for(plugin) is None:
                    raise UnrunnablePolicy(f'"{plugin}" plugin not found in profile "{name}"')
        for config in configs:
            registered = REGISTRY.get(str(config.get("name")))
            args = config.get("args") if isinstance(config.get("args"), dict) else {}
            config["args"] = registered.defaults(args) if registered is not None else args
    return prepared


class CycleResult(NamedTuple):
    skipped: bool
    nodes: int
    errors: list[str]
    verdicts: list[Verdict]
    durations: dict[tuple[str, str], float]


def cycle_nodes(policy: Json, cluster: Cluster) -> list[Json]:
    """Ready nodes matching the policy's ``nodeSelector`` (cordoned nodes included), in listing order."""
    selector = policy.get("nodeSelector")
    matches = node_label_selector(selector if isinstance(selector, str) else "")
    return [
        node
        for node in cluster.nodes
        if matches(label_map((node.get("metadata") or {}).get("labels"))) and nodeutil.is_ready(node)
    ]


def run_cycle(
    policy: Json,
    cluster: Cluster,
    now: datetime,
    pod_evictor: PodEvictor,
    explain: bool = False,
    observe: Callable[[str, str, float], None] | None = None,
) -> CycleResult:
    """One descheduling cycle of the prepared ``policy`` (see the module contract)."""
    pod_evictor.new_cycle(cluster)
    nodes = cycle_nodes(policy, cluster)
    if len(nodes) < 2:
        return CycleResult(True, len(nodes), [], [], {})
    verdicts: dict[tuple[str, str], Verdict] | None = {} if explain else None
    built: list[tuple[str, list[tuple[str, Any]], list[tuple[str, Any]]]] = []
    for profile in policy.get("profiles") or []:
        name = profile.get("name", "")
        configs = {config.get("name"): config.get("args") or {} for config in profile.get("pluginConfig") or []}
        evictor = DefaultEvictor(configs.get(DEFAULT_EVICTOR, {}), cluster, now)
        handle = Handle(cluster, now, name, evictor, pod_evictor, verdicts)
        instances: dict[str, Any] = {}
        points: dict[str, list[tuple[str, Any]]] = {"deschedule": [], "balance": []}
        for point in points:
            for plugin in ((profile.get("plugins") or {}).get(point) or {}).get("enabled") or []:
                module = module_for(plugin)
                if module is None:
                    continue
                if point not in REGISTRY[plugin].extension_points:
                    continue
                if plugin not in instances:
                    instances[plugin] = module.Implementation(REGISTRY[plugin].decode(configs[plugin]), handle)
                points[point].append((plugin, instances[plugin]))
        built.append((name, points["deschedule"], points["balance"]))
    errors: list[str] = []
    durations: dict[tuple[str, str], float] = {}
    for point in ("deschedule", "balance"):
        for name, deschedule, balance in built:
            for plugin, instance in deschedule if point == "deschedule" else balance:
                started = time.perf_counter()
                try:
                    getattr(instance, point)(nodes)
                except Exception as error:  # a plugin error is logged and the cycle goes on (upstream)
                    errors.append(f"profile {name}: plugin {plugin}: {error}")
                elapsed = time.perf_counter() - started
                durations[(name, plugin)] = durations.get((name, plugin), 0.0) + elapsed
                if observe is not None:
                    observe(name, plugin, elapsed)
    listed = sorted((verdicts or {}).values(), key=lambda v: (v.namespace, v.pod))
    return CycleResult(False, len(nodes), errors, listed, durations)
