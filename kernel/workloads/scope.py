"""The eviction scope model: may an enabled deschedule/balance plugin evict a workload's pods?

Pure and offline. For every workload of an :class:`~desched.workloads.model.Inventory` and every deschedule/balance
plugin enabled (at an extension point it implements) in every profile of a v1alpha2 policy, :func:`evaluate` returns
a :class:`Verdict`. A v1alpha1 policy has no profiles and yields nothing; convert it first.

Checks, in upstream order (reference "executor semantics" §2 and §3):

1. DefaultEvictor ``Filter``: the ``descheduler.alpha.kubernetes.io/evict`` template annotation passes it at once;
   else ``noEvictionPolicy: Mandatory`` with the ``prefer-no-eviction`` annotation fails it at once; else every pod
   protection active in the profile (``podProtections`` or the legacy booleans), the priority threshold (only while
   SystemCriticalPods is active), ``labelSelector``, ``minReplicas`` and, for pods with a status (snapshots, live
   clusters), ``minPodAge`` against ``status.startTime`` at ``now``. Pods are also refused when mirror, static or
   terminating, and their priority is ``spec.priority`` when admission has set it. None of this applies to templates.
2. DefaultEvictor ``PreEvictionFilter``: ``namespaceLabelSelector`` against the inventory's Namespace labels
   (``nodeFit`` needs nodes and is not modelled).
3. Plugin filters: ``namespaces`` (``evictableNamespaces`` for the node-utilization plugins), ``labelSelector``,
   ``excludeOwnerKinds`` (RemoveDuplicates, RemoveFailedPods; RemoveDuplicates also skips bare pods) and PodLifeTime
   ``ownerKinds``. RemoveFailedPods only evicts Failed pods: noted, the verdict stays evictable.

Anything a manifest cannot tell (an unknown Namespace, PVC, PriorityClass named by ``priorityThreshold.name``, or the
pod count of a DaemonSet/Job under ``minReplicas``) counts as "not evictable", and the reason says so. Reasons are
short sentences naming the setting; informational notes may accompany an evictable verdict.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from desched.goduration import parse_duration
from desched.plugins import REGISTRY
from desched.policy.namespaces import scope_of
from desched.validation.vocab import DEFAULT_POD_PROTECTIONS, EXTRA_POD_PROTECTIONS, LEGACY_FLAG_PROTECTIONS
from desched.workloads.model import SYSTEM_PRIORITY_CLASSES, Inventory, Workload
from desched.workloads.pdb import PDBIndex
from desched.workloads.selectors import Selector, compile_selector

__all__ = [
    "EVICT_ANNOTATION",
    "PREFER_NO_EVICTION_ANNOTATION",
    "Summary",
    "Verdict",
    "active_protections",
    "evaluate",
    "local_storage",
    "pod_priority",
    "pvc_claims",
    "summarize",
]

EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
PREFER_NO_EVICTION_ANNOTATION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SOURCE_ANNOTATION = "kubernetes.io/config.source"
SYSTEM_CRITICAL = 2000000000
_NEWEST = 36
_EVICTING_POINTS = ("deschedule", "balance")
_NO_LABEL_SELECTOR = ("RemoveDuplicates", "LowNodeUtilization", "HighNodeUtilization")
_NODE_UTILIZATION = ("LowNodeUtilization", "HighNodeUtilization")
_EXCLUDE_OWNER_KINDS = ("RemoveDuplicates", "RemoveFailedPods")


class Verdict(NamedTuple):
    """Whether ``plugin`` of ``profile`` may evict the pods of ``workload``; ``reasons`` explain a refusal and may
    carry notes on an evictable verdict."""

    workload: Workload
    profile: str
    plugin: str
    evictable: bool
    reasons: list[str]


# --- DefaultEvictor settings of one profile -----------------------------------------------------------------------


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _priority_of(name: str, inventory: Inventory) -> int | None:
    if name in inventory.priority_classes:
        return inventory.priority_classes[name]
    return SYSTEM_PRIORITY_CLASSES.get(name)


def active_protections(args: dict[str, Any], target: int = _NEWEST) -> frozenset[str]:
    """``getEffectivePodProtections``: the new model when ``extraEnabled``/``defaultDisabled`` is non-empty (v0.34+),
    else the legacy booleans. Unknown names are ignored (validation reports them)."""
    protections = _map(args.get("podProtections")) if target >= 34 else {}
    disabled = _names(protections.get("defaultDisabled"))
    extra = _names(protections.get("extraEnabled"))
    if disabled or extra:
        active = set(DEFAULT_POD_PROTECTIONS) - set(disabled)
        return frozenset(active | (set(extra) & set(EXTRA_POD_PROTECTIONS)))
    active = set(DEFAULT_POD_PROTECTIONS)
    fields = REGISTRY["DefaultEvictor"].args.fields
    for flag, (kind, protection) in LEGACY_FLAG_PROTECTIONS.items():
        if args.get(flag) is True and fields[flag].exists_in(target):
            (active.discard if kind == "defaultDisabled" else active.add)(protection)
    return frozenset(active)


class _Evictor:
    """The DefaultEvictor args of one profile, read once."""

    __slots__ = (
        "label_selector",
        "mandatory",
        "min_pod_age",
        "min_replicas",
        "namespace_selector",
        "protected_classes",
        "protections",
        "threshold",
        "threshold_problem",
    )

    def __init__(self, args: dict[str, Any], inventory: Inventory, target: int) -> None:
        self.protections = active_protections(args, target)
        self.threshold: int | None = SYSTEM_CRITICAL
        self.threshold_problem: str | None = None
        threshold = _map(args.get("priorityThreshold"))
        if _is_int(threshold.get("value")):
            self.threshold = threshold["value"]
        elif isinstance(threshold.get("name"), str) and threshold["name"]:
            self.threshold = _priority_of(threshold["name"], inventory)
            if self.threshold is None:
                self.threshold_problem = (
                    f"priorityThreshold.name {threshold['name']} is not among the PriorityClasses given: "
                    "threshold unknown"
                )
        self.label_selector = compile_selector(args.get("labelSelector"), nil_matches=True, target=target)
        namespace_selector: Selector | None = None
        if target >= 35:
            namespace_selector = compile_selector(args.get("namespaceLabelSelector"), nil_matches=True, target=target)
            if namespace_selector.kind in ("nil", "empty"):
                namespace_selector = None
        self.namespace_selector = namespace_selector
        min_replicas = args.get("minReplicas")
        self.min_replicas = min_replicas if target >= 30 and isinstance(min_replicas, int) else 0
        self.min_pod_age: timedelta | None = None
        min_age = args.get("minPodAge")
        if target >= 31 and isinstance(min_age, str) and min_age:
            try:
                self.min_pod_age = timedelta(microseconds=parse_duration(min_age) // 1000)
            except ValueError:
                self.min_pod_age = None
        self.mandatory = target >= 34 and args.get("noEvictionPolicy") == "Mandatory"
        classes = None
        if target >= 35:
            config = _map(_map(_map(args.get("podProtections")).get("config")).get("PodsWithPVC"))
            listed = config.get("protectedStorageClasses")
            if isinstance(listed, list) and listed:
                classes = frozenset(
                    _map(item).get("name") for item in listed if isinstance(_map(item).get("name"), str)
                )
        self.protected_classes: frozenset[Any] | None = classes


# --- per-workload facts -------------------------------------------------------------------------------------------


def _volumes(workload: Workload) -> list[dict[str, Any]]:
    volumes = workload.pod_spec.get("volumes")
    return [volume for volume in volumes if isinstance(volume, dict)] if isinstance(volumes, list) else []


def _volume_name(volume: dict[str, Any]) -> str:
    name = volume.get("name")
    return name if isinstance(name, str) else "?"


def pod_priority(workload: Workload, inventory: Inventory) -> tuple[int | None, str]:
    """The priority admission would give the pods, and where it comes from; ``None`` when the class is unknown."""
    admitted = workload.pod_spec.get("priority") if workload.kind == "Pod" else None
    if _is_int(admitted):
        return admitted, "spec.priority"
    name = workload.priority_class
    if name is None:
        if inventory.default_priority is not None:
            return inventory.default_priority, "the globalDefault PriorityClass"
        return 0, "no priorityClassName"
    return _priority_of(name, inventory), f"class {name}"


def local_storage(workload: Workload) -> str | None:
    for volume in _volumes(workload):
        for source in ("emptyDir", "hostPath"):
            if volume.get(source) is not None:
                return f"{source} volume {_volume_name(volume)}"
    return None


def pvc_claims(workload: Workload) -> list[tuple[str, str | None, bool]]:
    """``(claim, storage class, known)`` of each PVC volume; StatefulSet claim templates count (known class)."""
    claims: list[tuple[str, str | None, bool]] = []
    for volume in _volumes(workload):
        source = volume.get("persistentVolumeClaim")
        if source is not None:
            claim = _map(source).get("claimName")
            claims.append((claim if isinstance(claim, str) else "", None, False))
    for name, storage_class in workload.claim_templates.items():
        claims.append((name, storage_class, True))
    return claims


def _claim_class(claim: tuple[str, str | None, bool], workload: Workload, inventory: Inventory) -> tuple[bool, Any]:
    """``(found, class)``: the storage class of a claim as the API would hold it (default class filled in)."""
    name, storage_class, known = claim
    if not known:
        if (workload.namespace, name) not in inventory.pvcs:
            return False, None
        storage_class = inventory.pvcs[(workload.namespace, name)]
    if storage_class is None:
        storage_class = inventory.default_storage_class()
    return True, storage_class


# --- the checks: each returns a failure reason or None ------------------------------------------------------------


def _check_system_critical(ev: _Evictor, workload: Workload, inventory: Inventory, notes: list[str]) -> str | None:
    if "SystemCriticalPods" not in ev.protections:
        return None
    priority, source = pod_priority(workload, inventory)
    if priority is None:
        notes.append(f"priority of {source} unknown: assumed not system-critical and below the threshold")
        return None
    if priority >= SYSTEM_CRITICAL:
        return f"protected: SystemCriticalPods (priority {priority} from {source})"
    if ev.threshold_problem is not None:
        return ev.threshold_problem
    if ev.threshold is not None and priority >= ev.threshold:
        return f"protected: priority {priority} ({source}) >= priorityThreshold {ev.threshold}"
    return None


def _check_pod_state(workload: Workload) -> str | None:
    """A pod (snapshot or live) that is a mirror, static or terminating pod: never evicted."""
    if workload.kind != "Pod":
        return None
    if MIRROR_ANNOTATION in workload.annotations:
        return "mirror pod"
    source = workload.annotations.get(SOURCE_ANNOTATION)
    if source is not None and source != "api":
        return f"static pod ({SOURCE_ANNOTATION}: {source})"
    if _map(_map(workload.document).get("metadata")).get("deletionTimestamp"):
        return "terminating pod"
    return None


def _check_min_pod_age(ev: _Evictor, workload: Workload, now: datetime) -> str | None:
    """``minPodAge`` for a pod with a status: its ``startTime`` must be at least that old (none: refused)."""
    if ev.min_pod_age is None or workload.kind != "Pod":
        return None
    status = _map(workload.document).get("status")
    if not isinstance(status, dict):
        return None
    started = status.get("startTime")
    try:
        since = datetime.fromisoformat(str(started).replace("Z", "+00:00")) if started else None
    except ValueError:
        since = None
    if since is None:
        return "pod has no status.startTime: younger than minPodAge"
    if now - since < ev.min_pod_age:
        return f"pod started at {started}: younger than minPodAge"
    return None


def _check_bare(ev: _Evictor, workload: Workload) -> str | None:
    if workload.owner_kind is not None:
        return None
    if "FailedBarePods" in ev.protections:
        return "protected: FailedBarePods (bare pod without an owner)"
    if workload.kind == "Pod" and _map(_map(workload.document).get("status")).get("phase") == "Failed":
        return None
    return "bare pod: evictable only once Failed (FailedBarePods disabled), and a manifest is not Failed"


def _checklocal_storage(ev: _Evictor, workload: Workload) -> str | None:
    if "PodsWithLocalStorage" not in ev.protections:
        return None
    found = local_storage(workload)
    return f"protected: PodsWithLocalStorage ({found})" if found else None


def _check_daemonset(ev: _Evictor, workload: Workload) -> str | None:
    if "DaemonSetPods" in ev.protections and workload.owner_kind == "DaemonSet":
        return "protected: DaemonSetPods (owned by a DaemonSet)"
    return None


def _check_pvc(ev: _Evictor, workload: Workload, inventory: Inventory) -> str | None:
    if "PodsWithPVC" not in ev.protections:
        return None
    for claim in pvc_claims(workload):
        if ev.protected_classes is None:
            return f"protected: PodsWithPVC (claim {claim[0]})"
        found, storage_class = _claim_class(claim, workload, inventory)
        if not found:
            return f"protected: PodsWithPVC (claim {claim[0]} not among the inputs)"
        if not storage_class:
            return f"protected: PodsWithPVC (claim {claim[0]} has no storage class)"
        if storage_class in ev.protected_classes:
            return f"protected: PodsWithPVC (claim {claim[0]} uses protected storage class {storage_class})"
    return None


def _check_pdb(ev: _Evictor, workload: Workload, index: PDBIndex, cache: dict[int, bool]) -> str | None:
    if "PodsWithoutPDB" not in ev.protections:
        return None
    covered = cache.get(id(workload))
    if covered is None:
        covered = cache[id(workload)] = bool(index.matching(workload))
    return None if covered else "protected: PodsWithoutPDB (no PodDisruptionBudget selects its pods)"


def _check_resourcepvc_claims(ev: _Evictor, workload: Workload) -> str | None:
    claims = workload.pod_spec.get("resourceClaims")
    if "PodsWithResourceClaims" in ev.protections and isinstance(claims, list) and claims:
        return "protected: PodsWithResourceClaims (spec.resourceClaims)"
    return None


def _check_label_selector(ev: _Evictor, workload: Workload) -> str | None:
    if ev.label_selector.matches(workload.labels):
        return None
    if ev.label_selector.kind == "invalid":
        return "DefaultEvictor labelSelector is invalid"
    return "labels do not match DefaultEvictor labelSelector"


def _check_min_replicas(ev: _Evictor, workload: Workload) -> str | None:
    if ev.min_replicas <= 1 or workload.owner_kind is None:
        return None
    if workload.replicas is None:
        return f"DefaultEvictor minReplicas {ev.min_replicas}: the pod count of a {workload.kind} is unknown"
    if workload.replicas < ev.min_replicas:
        return f"DefaultEvictor minReplicas {ev.min_replicas} > {workload.replicas} replicas"
    return None


def _check_namespace_selector(ev: _Evictor, workload: Workload, inventory: Inventory) -> str | None:
    if ev.namespace_selector is None:
        return None
    labels = inventory.namespaces.get(workload.namespace)
    if labels is None:
        return f"namespace {workload.namespace} not among the inputs: DefaultEvictor namespaceLabelSelector unknown"
    if ev.namespace_selector.matches(labels):
        return None
    return f"namespace {workload.namespace} labels do not match DefaultEvictor namespaceLabelSelector"


def _evictor_reasons(
    ev: _Evictor, workload: Workload, inventory: Inventory, index: PDBIndex, cache: dict[int, bool], now: datetime
) -> tuple[list[str], list[str]]:
    """``(failures, notes)`` of DefaultEvictor Filter then PreEvictionFilter."""
    failures: list[str] = []
    notes: list[str] = []
    if EVICT_ANNOTATION in workload.annotations:
        notes.append(f"annotation {EVICT_ANNOTATION} overrides the DefaultEvictor protections")
    elif ev.mandatory and PREFER_NO_EVICTION_ANNOTATION in workload.annotations:
        failures.append(f"noEvictionPolicy Mandatory and annotation {PREFER_NO_EVICTION_ANNOTATION}")
    else:
        checks = (
            _check_pod_state(workload),
            _check_system_critical(ev, workload, inventory, notes),
            _check_bare(ev, workload),
            _checklocal_storage(ev, workload),
            _check_daemonset(ev, workload),
            _check_pvc(ev, workload, inventory),
            _check_pdb(ev, workload, index, cache),
            _check_resourcepvc_claims(ev, workload),
            _check_label_selector(ev, workload),
            _check_min_replicas(ev, workload),
            _check_min_pod_age(ev, workload, now),
        )
        failures.extend(reason for reason in checks if reason)
    namespace_reason = _check_namespace_selector(ev, workload, inventory)
    if namespace_reason:
        failures.append(namespace_reason)
    return failures, notes


# --- plugin filters -----------------------------------------------------------------------------------------------


class _Plugin:
    """One enabled plugin's own pod filters, read once."""

    __slots__ = ("exclude_owner_kinds", "label_selector", "name", "owner_exclude", "owner_include", "scope")

    def __init__(self, name: str, args: dict[str, Any], target: int) -> None:
        self.name = name
        self.scope = scope_of(name, args)
        self.label_selector: Selector | None = None
        if name not in _NO_LABEL_SELECTOR:
            self.label_selector = compile_selector(args.get("labelSelector"), nil_matches=True, target=target)
        excluded = _names(args.get("excludeOwnerKinds")) if name in _EXCLUDE_OWNER_KINDS else []
        self.exclude_owner_kinds = frozenset(excluded)
        owner_kinds = _map(args.get("ownerKinds")) if name == "PodLifeTime" and target >= 36 else {}
        self.owner_include = frozenset(_names(owner_kinds.get("include")))
        self.owner_exclude = frozenset(_names(owner_kinds.get("exclude")))

    def reasons(self, workload: Workload) -> tuple[list[str], list[str]]:
        failures: list[str] = []
        notes: list[str] = []
        key = "evictableNamespaces" if self.name in _NODE_UTILIZATION else "namespaces"
        namespace = workload.namespace
        if self.scope.include is not None and namespace not in self.scope.include:
            failures.append(f"namespace {namespace} not in {self.name} {key}.include")
        elif namespace in self.scope.exclude:
            failures.append(f"namespace {namespace} excluded by {self.name} {key}.exclude")
        if self.label_selector is not None and not self.label_selector.matches(workload.labels):
            if self.label_selector.kind == "invalid":
                failures.append(f"{self.name} labelSelector is invalid")
            else:
                failures.append(f"labels do not match {self.name} labelSelector")
        owner = workload.owner_kind
        if self.name == "RemoveDuplicates" and owner is None:
            failures.append("RemoveDuplicates skips pods without an owner")
        if owner is not None and owner in self.exclude_owner_kinds:
            failures.append(f"owner kind {owner} excluded by {self.name} excludeOwnerKinds")
        if self.owner_include:
            if owner not in self.owner_include:
                failures.append(f"owner kind {owner or 'none'} not in PodLifeTime ownerKinds.include")
        elif owner is not None and owner in self.owner_exclude:
            failures.append(f"owner kind {owner} excluded by PodLifeTime ownerKinds.exclude")
        if self.name == "RemoveFailedPods":
            notes.append("RemoveFailedPods evicts only failed pods")
        return failures, notes


# --- driver -------------------------------------------------------------------------------------------------------


def _first_args(profile: dict[str, Any], plugin: str) -> dict[str, Any]:
    entries = profile.get("pluginConfig")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("name") == plugin:
            return _map(entry.get("args"))
    return {}


def _evicting_plugins(profile: dict[str, Any]) -> list[str]:
    plugins = _map(profile.get("plugins"))
    found: list[str] = []
    for point in _EVICTING_POINTS:
        for name in _names(_map(plugins.get(point)).get("enabled")):
            info = REGISTRY.get(name)
            if info is not None and point in info.extension_points and name not in found:
                found.append(name)
    return found


def evaluate(
    policy: Any,
    inventory: Inventory,
    target: int = _NEWEST,
    index: PDBIndex | None = None,
    now: datetime | None = None,
) -> list[Verdict]:
    """One :class:`Verdict` per (profile, enabled deschedule/balance plugin, workload), in profile, plugin and
    inventory order. ``policy`` is the decoded v1alpha2 policy mapping, or an object with a ``.policy`` mapping (a
    rule :class:`~desched.linter.rules._base.Context`). ``target`` is the descheduler minor release (36 for v0.36):
    args a release does not know are ignored. ``now`` (default: the current time) is the clock for ``minPodAge``. Never
    raises on malformed policies.
    """
    moment = now if now is not None else datetime.now(timezone.utc)
    root = getattr(policy, "policy", policy)
    profiles = root.get("profiles") if isinstance(root, dict) else None
    if not isinstance(profiles, list):
        return []
    if index is None:
        index = PDBIndex(inventory.pdbs)
    pdb_cache: dict[int, bool] = {}
    verdicts: list[Verdict] = []
    for position, profile in enumerate(profiles):
        if not isinstance(profile, dict):
            continue
        plugins = [_Plugin(name, _first_args(profile, name), target) for name in _evicting_plugins(profile)]
        if not plugins:
            continue
        name = profile.get("name")
        profile_name = name if isinstance(name, str) and name else f"profiles[{position}]"
        evictor = _Evictor(_first_args(profile, "DefaultEvictor"), inventory, target)
        for workload in inventory.workloads:
            failures, notes = _evictor_reasons(evictor, workload, inventory, index, pdb_cache, moment)
            for plugin in plugins:
                plugin_failures, plugin_notes = plugin.reasons(workload)
                all_failures = failures + plugin_failures
                verdicts.append(
                    Verdict(workload, profile_name, plugin.name, not all_failures, all_failures + notes + plugin_notes)
                )
    return verdicts


class Summary(NamedTuple):
    """Per workload: evictable by some plugin, the ``profile/plugin`` pairs that may evict it, and the reasons of
    the refusals (prefixed with ``profile/plugin: ``)."""

    evictable: bool
    targeted_by: list[str]
    reasons: list[str]


def summarize(verdicts: list[Verdict]) -> dict[str, Summary]:
    """Fold verdicts by workload key (``Kind/namespace/name``), keeping first-seen order."""
    result: dict[str, Summary] = {}
    for verdict in verdicts:
        entry = result.get(verdict.workload.key)
        if entry is None:
            entry = result[verdict.workload.key] = Summary(False, [], [])
        label = f"{verdict.profile}/{verdict.plugin}"
        if verdict.evictable:
            entry.targeted_by.append(label)
            if not entry.evictable:
                result[verdict.workload.key] = entry._replace(evictable=True)
        else:
            entry.reasons.extend(f"{label}: {reason}" for reason in verdict.reasons)
    return result
