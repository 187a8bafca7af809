"""Profiles, extension points and the descheduling cycle (docs/executor-semantics.md#1-the-descheduling-cycle), over one
:class:`~desched.executor.cluster.Cluster`.

Contract:
* :func:`prepare_policy` applies what upstream does at load time (the implicit DefaultEvictor: a default
  ``pluginConfig`` entry when missing; each plugin's argument defaults; the check that every enabled plugin has a
  ``pluginConfig`` entry, :class:`~desched.executor.defaultevictor.UnrunnablePolicy` otherwise) and returns the typed
  model (:mod:`desched.policy.model`) the cycle runs. Validation is the linter's job and happens before. A plugin only
  another descheduler build registers (OpenShift's ``KubevirtMigrationAware``) is refused: desched runs upstream's.
* :func:`run_cycle` picks the ready nodes matching the policy ``nodeSelector``, skips the cycle with fewer than 2, then
  runs every profile's Deschedule plugins, then every profile's Balance plugins, in policy order (v0.27: each profile's
  both in turn, row ``profile-at-a-time`` of :mod:`desched.executor.releases`). A plugin that raises
  is recorded in :attr:`CycleResult.errors` (a :class:`PluginError`: profile, plugin, message) and the cycle goes on.
* The orders upstream takes from its informer's maps (nodes once per cycle, a node's pods at every listing, and the
  maps some plugins range over) are a :class:`ListingOrder`: as listed by default (one deterministic answer), or
  shuffled by a seeded generator (``simulate --samples``: docs/executor-semantics.md#12-listing-orders).
* A plugin module has ``NAME`` and an ``Implementation(args, handle)`` class with ``deschedule(nodes)`` /
  ``balance(nodes)`` methods; its extension points and its args defaults are the registry's (:mod:`desched.plugins`). It
  sees the cluster, the clock and the profile's evictor only through :class:`Handle`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NamedTuple, TypeVar

from desched.executor import nodeutil
from desched.executor.cluster import Cluster, Json, key, node_of
from desched.executor.defaultevictor import DefaultEvictor, UnrunnablePolicy, node_label_selector
from desched.executor.evictions import Outcome, PodEvictor
from desched.executor.nodefit import NodeFit
from desched.executor.plugins import module_for
from desched.executor.podutil import PriorityKey
from desched.executor.releases import (
    NATIVE_SIDECARS,
    NEWEST_DECISIONS,
    PDB_INFORMER_REGISTERED,
    PROFILE_AT_A_TIME,
    PROFILE_BUILT_PER_CYCLE,
    SORT_IGNORES_NO_EVICTION,
    ReleaseDecisions,
    skipped_profiles,
)
from desched.plugins import REGISTRY, elsewhere
from desched.plugins.base import Namespaces
from desched.policy.model import ACTIVE_POINTS, EVICTING_POINTS, PluginConfig, Policy, Profile
from desched.workloads.selectors import compile_selector, label_map

DEFAULT_EVICTOR = "DefaultEvictor"
T = TypeVar("T")


class ListingOrder:
    """The order of what upstream lists from its informer cache or ranges over in a Go map: as listed (``seed``
    ``None``), or a uniform shuffle from a generator seeded with ``seed`` (a str or int), new at every call."""

    def __init__(self, seed: str | int | None = None) -> None:
        self._random = None if seed is None else random.Random(seed)

    @property
    def shuffles(self) -> bool:
        return self._random is not None

    def arrange(self, items: list[T]) -> list[T]:
        """``items`` in this listing's order: the same list, shuffled in place unless the order is as listed."""
        if self._random is not None:  # random keys: a uniform order, in C (random.shuffle draws in Python)
            draw = self._random.random
            items.sort(key=lambda _: draw())
        return items


AS_LISTED = ListingOrder()


class EvictorVerdict(NamedTuple):
    """The DefaultEvictor's decision about one pod (for ``--explain``)."""

    namespace: str
    pod: str
    node: str
    profile: str
    evictable: bool
    reason: str


class Handle:
    """What a plugin may use: the cluster, the clock, the profile's evictor, the shared PodEvictor and the release
    whose decisions it makes (:mod:`desched.executor.releases`)."""

    def __init__(
        self,
        cluster: Cluster,
        now: datetime,
        profile: str,
        evictor: DefaultEvictor,
        pod_evictor: PodEvictor,
        verdicts: dict[tuple[str, str], EvictorVerdict] | None = None,
        order: ListingOrder = AS_LISTED,
        release: ReleaseDecisions = NEWEST_DECISIONS,
    ) -> None:
        self.cluster = cluster
        self.release = release
        self.now = now
        self.profile = profile
        self.default_evictor = evictor
        self.pod_evictor = pod_evictor
        self._verdicts = verdicts
        self.order = order
        self._sort_ignores_no_eviction = release.older(SORT_IGNORES_NO_EVICTION)

    def priority_key(self, pod: Json) -> PriorityKey:
        """The key upstream's ``SortPodsBasedOnPriorityLowToHigh`` sorts ``pod`` by in this release (row
        ``sort-ignores-prefer-no-eviction``: up to v0.33 the prefer-no-eviction annotation does not count)."""
        sort_key = self.cluster.priority_key(pod)
        return (*sort_key[:3], False) if self._sort_ignores_no_eviction else sort_key

    def node_fit(self) -> NodeFit:
        """The cluster's ``PodFitsAnyNode`` answers with this release's NodeFit (row ``nodefit-anti-affinity``)."""
        return self.cluster.fit(self.release.fit_anti_affinity)

    def filter(self, pod: Json) -> bool:
        """The profile's ``Filter`` chain (the DefaultEvictor)."""
        reason = self.default_evictor.filter_failure(pod)
        if self._verdicts is not None:
            self._record(pod, reason)
        return reason is None

    def filter_and(self, pod: Json, test: Callable[[Json], bool]) -> bool:
        """``filter(pod) and test(pod)`` for a pure ``test``; ``test`` goes first unless verdicts are recorded (the
        answer is the same, and a cheap test that fails spares the Filter)."""
        if self._verdicts is None:
            return test(pod) and self.default_evictor.filter_failure(pod) is None
        return self.filter(pod) and test(pod)

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
        self._verdicts[(namespace, name)] = EvictorVerdict(
            namespace, name, node, self.profile, reason is None, reason or ""
        )

    def evict(self, pod: Json, plugin: str) -> Outcome:
        return self.pod_evictor.evict(pod, self.profile, plugin)

    def pods_on_node(self, node: str) -> list[Json]:
        """The pods bound to ``node``, any phase, in a new listing order at each call (upstream's ``ByIndex``)."""
        return self.order.arrange(self.cluster.pods_on_node(node))

    def active_pods_on_node(self, node: str) -> list[Json]:
        """The non-terminal pods bound to ``node``, in a new listing order at each call."""
        return self.order.arrange(self.cluster.active_pods_on_node(node))


def pod_filter(namespaces: Namespaces, label_selector: Mapping[str, Any] | None = None) -> Callable[[Json], bool]:
    """The plugin-level pod filter of ``namespaces.include|exclude`` and ``labelSelector`` (absent: everything)."""
    include = set(namespaces.include)
    exclude = set(namespaces.exclude)
    selector = compile_selector(label_selector, nil_matches=True) if label_selector is not None else None
    if not include and not exclude and selector is None:
        return _everything

    def accept(pod: Json) -> bool:
        metadata = pod.get("metadata") or {}
        namespace = metadata.get("namespace") or ""
        if include and namespace not in include:
            return False
        if exclude and namespace in exclude:
            return False
        return selector is None or selector.matches(label_map(metadata.get("labels")))

    return accept


def _everything(pod: Json) -> bool:
    """The pod filter of a plugin that names no namespaces and no label selector."""
    return True


def prepare_policy(policy: Policy) -> Policy:
    """``policy`` (the typed model, :mod:`desched.policy.model`) as upstream holds it after loading (see the module
    contract): a new model; the input is not modified.

    Raises :class:`~desched.executor.defaultevictor.UnrunnablePolicy` when an enabled Deschedule or Balance plugin has
    no ``pluginConfig`` entry or no implementation, or when the policy names a plugin only another build registers.
    """
    prepared = policy._replace(profiles=tuple(_loaded(profile) for profile in policy.profiles))
    for profile in prepared.profiles:
        _refuse_other_builds(profile)
        for ref in profile.enabled(*EVICTING_POINTS):
            if profile.config(ref.name) is None:
                raise UnrunnablePolicy(f'unable to find "{ref.name}" plugin config in profile "{profile.name}"')
            if module_for(ref.name) is None:
                raise UnrunnablePolicy(f'"{ref.name}" plugin not found in profile "{profile.name}"')
    return prepared


def _loaded(profile: Profile) -> Profile:
    """``profile`` with the implicit DefaultEvictor entry first when it has none, and every registered plugin's args
    defaulted (upstream's ``SetDefaults_<Plugin>Args``)."""
    configs = list(profile.configs)
    if profile.config(DEFAULT_EVICTOR) is None:
        configs.insert(0, PluginConfig(DEFAULT_EVICTOR, {}, (*profile.path, "pluginConfig"), REGISTRY[DEFAULT_EVICTOR]))
    defaulted = tuple(
        config.with_args(REGISTRY[config.name].defaults(config.args)) if config.name in REGISTRY else config
        for config in configs
    )
    return profile._replace(configs=defaulted)


def _refuse_other_builds(profile: Profile) -> None:
    """:class:`UnrunnablePolicy` for the first plugin of ``profile`` (configured or enabled at a point upstream runs)
    that only another descheduler build registers."""
    names = [config.name for config in profile.configs] + [ref.name for ref in profile.enabled(*ACTIVE_POINTS)]
    for name in names:
        build = elsewhere(name)
        if build is not None:
            raise UnrunnablePolicy(f"{name} exists only in {build.title}; desched cannot execute it")


class PluginError(NamedTuple):
    """A plugin that raised during the cycle; written ``profile P: plugin X: MESSAGE``."""

    profile: str
    plugin: str
    message: str

    def __str__(self) -> str:
        return f"profile {self.profile}: plugin {self.plugin}: {self.message}"


class CycleResult(NamedTuple):
    skipped: bool
    nodes: int
    errors: list[PluginError]
    verdicts: list[EvictorVerdict]
    durations: dict[tuple[str, str], float]


def cycle_nodes(policy: Policy, cluster: Cluster) -> list[Json]:
    """Ready nodes matching the policy's ``nodeSelector`` (cordoned nodes included), in listing order."""
    matches = node_label_selector(policy.node_selector or "")
    return [
        node
        for node in cluster.nodes
        if matches(label_map((node.get("metadata") or {}).get("labels"))) and nodeutil.is_ready(node)
    ]


_POINTS = ("deschedule", "balance")
_Built = tuple[str, list[tuple[str, Any]], list[tuple[str, Any]]]


def _schedule(built: list[_Built], release: ReleaseDecisions) -> list[tuple[str, str, list[tuple[str, Any]]]]:
    """The order the profiles' plugins run in, as (profile, point, plugins): every profile's Deschedule plugins, then
    every profile's Balance plugins; a release of row ``profile-at-a-time`` runs each profile whole in turn."""
    if release.older(PROFILE_AT_A_TIME):
        return [
            (name, point, plugins) for name, *points in built for point, plugins in zip(_POINTS, points, strict=True)
        ]
    return [(name, point, points[index]) for index, point in enumerate(_POINTS) for name, *points in built]


def _profile_evictors(
    policy: Policy,
    cluster: Cluster,
    now: datetime,
    release: ReleaseDecisions,
    pdbs_listed: bool,
    cached: dict[str, DefaultEvictor] | None,
    indexed: bool,
) -> tuple[dict[str, DefaultEvictor], list[PluginError]]:
    """The DefaultEvictor of each profile the cycle runs, by name (``pdbs_listed`` as there; ``cached`` ones reused,
    new ones added to it), and the errors of the profiles it skips. A profile that cannot be built raises
    :class:`UnrunnablePolicy` (upstream fails to start) or, for a release of row ``profile-built-per-cycle``, is
    skipped (upstream skips it in that cycle); then the release's owner-index conflicts skip more
    (:func:`~desched.executor.releases.skipped_profiles`, ``indexed`` as there), among the profiles built only: a
    DefaultEvictor that fails adds no index (its minReplicas check comes last)."""
    usable: dict[str, DefaultEvictor] = {}
    errors: list[PluginError] = []
    for profile in policy.profiles:
        evictor = (cached or {}).get(profile.name)
        if evictor is None:
            try:
                evictor = DefaultEvictor(profile.evictor_args(), cluster, now, release.minor, pdbs_listed)
            except UnrunnablePolicy as error:
                if not release.older(PROFILE_BUILT_PER_CYCLE):
                    raise
                errors.append(PluginError(profile.name, DEFAULT_EVICTOR, str(error)))
                continue
        usable[profile.name] = evictor
    skipped = skipped_profiles(tuple(p for p in policy.profiles if p.name in usable), release, indexed)
    errors += [PluginError(name, DEFAULT_EVICTOR, message) for name, message in skipped.items()]
    runnable = {name: evictor for name, evictor in usable.items() if name not in skipped}
    if cached is not None:
        cached.update(runnable)
    return runnable, errors


def run_cycle(
    policy: Policy,
    cluster: Cluster,
    now: datetime,
    pod_evictor: PodEvictor,
    explain: bool = False,
    observe: Callable[[str, str, float], None] | None = None,
    order: ListingOrder = AS_LISTED,
    evictors: dict[str, DefaultEvictor] | None = None,
    release: ReleaseDecisions = NEWEST_DECISIONS,
    indexed: bool = False,
) -> CycleResult:
    """One descheduling cycle of the prepared ``policy`` (see the module contract); ``order`` draws the node order
    once, shared by every plugin, as upstream lists the nodes once per cycle. ``evictors`` keeps each profile's
    DefaultEvictor for the next cycle on the same cluster and clock (its answers depend on the pods, not on the
    listing order: ``simulate --samples`` builds them once). The cycle makes ``release``'s decisions; a profile that
    release cannot build (:func:`~desched.executor.releases.skipped_profiles`, ``indexed`` as there; up to v0.34 also
    one whose DefaultEvictor the newer releases refuse to start with) runs no plugin and is recorded in the errors
    under the plugin ``DefaultEvictor``."""
    cluster.count_sidecars(not release.older(NATIVE_SIDECARS))
    pod_evictor.new_cycle(cluster)
    nodes = order.arrange(cycle_nodes(policy, cluster))
    if len(nodes) < 2:
        return CycleResult(True, len(nodes), [], [], {})
    verdicts: dict[tuple[str, str], EvictorVerdict] | None = {} if explain else None
    built: list[_Built] = []
    pdbs_listed = pod_evictor.dry_run or pod_evictor.lists_budgets or release.older(PDB_INFORMER_REGISTERED)
    runnable, errors = _profile_evictors(policy, cluster, now, release, pdbs_listed, evictors, indexed)
    for profile in policy.profiles:
        evictor = runnable.get(profile.name)
        if evictor is None:
            continue
        handle = Handle(cluster, now, profile.name, evictor, pod_evictor, verdicts, order, release)
        instances: dict[str, Any] = {}
        points: dict[str, list[tuple[str, Any]]] = {point: [] for point in EVICTING_POINTS}
        for ref, config in profile.evicting():
            module = module_for(ref.name)
            if module is None or config is None:
                continue  # prepare_policy refuses both
            if ref.name not in instances:
                instances[ref.name] = module.Implementation(config.args, handle)
            points[ref.point].append((ref.name, instances[ref.name]))
        built.append((profile.name, points["deschedule"], points["balance"]))
    durations: dict[tuple[str, str], float] = {}
    for name, point, plugins in _schedule(built, release):
        for plugin, instance in plugins:
            started = time.perf_counter()
            try:
                getattr(instance, point)(nodes)
            except Exception as error:  # a plugin error is logged and the cycle goes on (upstream)
                errors.append(PluginError(name, plugin, str(error)))
            elapsed = time.perf_counter() - started
            durations[(name, plugin)] = durations.get((name, plugin), 0.0) + elapsed
            if observe is not None:
                observe(name, plugin, elapsed)
    listed = sorted((verdicts or {}).values(), key=lambda v: (v.namespace, v.pod))
    return CycleResult(False, len(nodes), errors, listed, durations)
