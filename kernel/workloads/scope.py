"""The eviction scope model: may an enabled deschedule/balance plugin evict a workload's pods?

Pure and offline. For every workload of an :class:`~desched.workloads.model.Inventory` and every deschedule/balance
plugin enabled (at an extension point it implements) in every profile of a v1alpha2 policy, :func:`evaluate` returns
a :class:`Verdict`. A v1alpha1 policy has no profiles and yields nothing; convert it first.

Checks, in upstream order (docs/policy-api.md#2-top-level-fields and docs/policy-api.md#3-profiles):

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

from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import Any, NamedTuple

from desched.plugins.base import PodScope
from desched.policy.model import Policy
from desched.tree import list_or_empty, mapping_or_empty
from desched.versions import NEWEST
from desched.workloads.eviction import (
    EVICT_ANNOTATION,
    PREFER_NO_EVICTION_ANNOTATION,
    Check,
    Claim,
    Evictor,
    FilterFailure,
    evictor,
    filter_failures,
    namespace_failure,
)
from desched.workloads.model import SYSTEM_PRIORITY_CLASSES, Inventory, Workload
from desched.workloads.pdb import PDBIndex
from desched.workloads.selectors import Selector, compile_selector

__all__ = [
    "EVICT_ANNOTATION",
    "PREFER_NO_EVICTION_ANNOTATION",
    "EvictionScope",
    "Summary",
    "Verdict",
    "evaluate",
    "local_storage",
    "pod_priority",
    "pvc_claims",
    "signature",
    "summarize",
]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
SOURCE_ANNOTATION = "kubernetes.io/config.source"


class Verdict(NamedTuple):
    """Whether ``plugin`` of ``profile`` may evict the pods of ``workload``; ``reasons`` explain a refusal and may
    carry notes on an evictable verdict."""

    workload: Workload
    profile: str
    plugin: str
    evictable: bool
    reasons: list[str]


# --- DefaultEvictor settings of one profile -----------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _priority_of(name: str, inventory: Inventory) -> int | None:
    if name in inventory.priority_classes:
        return inventory.priority_classes[name]
    return SYSTEM_PRIORITY_CLASSES.get(name)


# --- per-workload facts -------------------------------------------------------------------------------------------


def _volumes(workload: Workload) -> list[dict[str, Any]]:
    volumes = workload.pod_spec.get("volumes")
    return [volume for volume in list_or_empty(volumes) if isinstance(volume, dict)]


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
            claim = mapping_or_empty(source).get("claimName")
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


# --- the DefaultEvictor decision (desched.eviction) on a workload ------------------------------------------------


class _TemplatePod:
    """A workload's pods as the decision reads them (:class:`desched.eviction.PodView`): from the pod template, or
    from the pod itself for a pod of a snapshot or live cluster. What a manifest cannot tell reads as unknown."""

    __slots__ = ("index", "inventory", "pdb_cache", "workload")

    def __init__(self, workload: Workload, inventory: Inventory, index: PDBIndex, pdb_cache: dict[int, bool]) -> None:
        self.workload = workload
        self.inventory = inventory
        self.index = index
        self.pdb_cache = pdb_cache

    @property
    def namespace(self) -> str:
        return self.workload.namespace

    @property
    def labels(self) -> Mapping[str, str]:
        return self.workload.labels

    @property
    def annotations(self) -> Mapping[str, str]:
        return self.workload.annotations

    def state(self) -> Check | None:
        if self.workload.kind != "Pod":
            return None
        if MIRROR_ANNOTATION in self.annotations:
            return Check.MIRROR
        source = self.annotations.get(SOURCE_ANNOTATION)
        if source is not None and source != "api":
            return Check.STATIC
        return (
            Check.TERMINATING
            if mapping_or_empty(mapping_or_empty(self.workload.document).get("metadata")).get("deletionTimestamp")
            else None
        )

    def static_source(self) -> str:
        return str(self.annotations.get(SOURCE_ANNOTATION, ""))

    def priority(self) -> int | None:
        return pod_priority(self.workload, self.inventory)[0]

    def owned(self) -> bool:
        return self.workload.owner_kind is not None

    def failed(self) -> bool:
        return (
            self.workload.kind == "Pod"
            and mapping_or_empty(mapping_or_empty(self.workload.document).get("status")).get("phase") == "Failed"
        )

    def local_storage(self) -> str | None:
        return local_storage(self.workload)

    def daemonset(self) -> bool:
        return self.workload.owner_kind == "DaemonSet"

    def claims(self) -> Iterator[Claim]:
        for claim in pvc_claims(self.workload):
            found, storage_class = _claim_class(claim, self.workload, self.inventory)
            yield Claim(claim[0], found, storage_class if isinstance(storage_class, str) else "")

    def has_pdb(self) -> bool:
        covered = self.pdb_cache.get(id(self.workload))
        if covered is None:
            covered = self.pdb_cache[id(self.workload)] = bool(self.index.matching(self.workload))
        return covered

    def resource_claims(self) -> bool:
        claims = self.workload.pod_spec.get("resourceClaims")
        return isinstance(claims, list) and bool(claims)

    def single_owner(self) -> bool:
        return self.workload.owner_kind is not None

    def owner_pods(self) -> int | None:
        return self.workload.replicas

    def age_known(self) -> bool:
        return self.workload.kind == "Pod" and isinstance(mapping_or_empty(self.workload.document).get("status"), dict)

    def started(self) -> datetime | None:
        started = mapping_or_empty(mapping_or_empty(self.workload.document).get("status")).get("startTime")
        try:
            return datetime.fromisoformat(str(started).replace("Z", "+00:00")) if started else None
        except ValueError:
            return None

    def namespace_labels(self) -> Mapping[str, str] | None:
        return self.inventory.namespaces.get(self.workload.namespace)


def _wording(failure: FilterFailure, pod: _TemplatePod, settings: Evictor) -> str:
    """The scope report's sentence for a failing check."""
    workload, check, detail = pod.workload, failure.check, failure.detail
    if check in _PRIORITY_CHECKS:
        priority, source = pod_priority(workload, pod.inventory)
        if check == Check.SYSTEM_CRITICAL:
            return f"protected: SystemCriticalPods (priority {priority} from {source})"
        if check == Check.PRIORITY_THRESHOLD:
            return f"protected: priority {priority} ({source}) >= priorityThreshold {settings.threshold}"
        return (
            f"priorityThreshold.name {settings.unknown_threshold_class} is not among the PriorityClasses given: "
            "threshold unknown"
        )
    if check == Check.MIN_REPLICAS:
        return f"DefaultEvictor minReplicas {settings.min_replicas} > {detail} replicas"
    if check == Check.MIN_REPLICAS_UNKNOWN:
        return f"DefaultEvictor minReplicas {settings.min_replicas}: the pod count of a {workload.kind} is unknown"
    if check == Check.MIN_POD_AGE:
        started = mapping_or_empty(mapping_or_empty(workload.document).get("status")).get("startTime")
        return f"pod started at {started}: younger than minPodAge"
    if check == Check.STATIC:
        return f"static pod ({SOURCE_ANNOTATION}: {detail})"
    if check == Check.NAMESPACE_UNKNOWN:
        return f"namespace {workload.namespace} not among the inputs: DefaultEvictor namespaceLabelSelector unknown"
    if check == Check.NAMESPACE_SELECTOR:
        return f"namespace {workload.namespace} labels do not match DefaultEvictor namespaceLabelSelector"
    if check == Check.PVC_PROTECTED_CLASS:
        return f"protected: PodsWithPVC (claim {detail} uses protected storage class {failure.storage_class})"
    return _SENTENCES[check].format(detail=detail)


_PRIORITY_CHECKS = (Check.SYSTEM_CRITICAL, Check.PRIORITY_THRESHOLD, Check.THRESHOLD_UNKNOWN)
_SENTENCES = {
    Check.PREFER_NO_EVICTION: f"noEvictionPolicy Mandatory and annotation {PREFER_NO_EVICTION_ANNOTATION}",
    Check.MIRROR: "mirror pod",
    Check.TERMINATING: "terminating pod",
    Check.BARE: "protected: FailedBarePods (bare pod without an owner)",
    Check.BARE_NOT_FAILED: (
        "bare pod: evictable only once Failed (FailedBarePods disabled), and a manifest is not Failed"
    ),
    Check.LOCAL_STORAGE: "protected: PodsWithLocalStorage ({detail})",
    Check.DAEMONSET: "protected: DaemonSetPods (owned by a DaemonSet)",
    Check.PVC: "protected: PodsWithPVC (claim {detail})",
    Check.PVC_UNKNOWN: "protected: PodsWithPVC (claim {detail} not among the inputs)",
    Check.PVC_NO_CLASS: "protected: PodsWithPVC (claim {detail} has no storage class)",
    Check.WITHOUT_PDB: "protected: PodsWithoutPDB (no PodDisruptionBudget selects its pods)",
    Check.RESOURCE_CLAIMS: "protected: PodsWithResourceClaims (spec.resourceClaims)",
    Check.LABEL_SELECTOR: "labels do not match DefaultEvictor labelSelector",
    Check.LABEL_SELECTOR_INVALID: "DefaultEvictor labelSelector is invalid",
    Check.NO_START_TIME: "pod has no status.startTime: younger than minPodAge",
}


def _evictor_reasons(pod: _TemplatePod, settings: Evictor) -> tuple[list[str], list[str]]:
    """``(failures, notes)`` of DefaultEvictor Filter then the namespace part of PreEvictionFilter."""
    notes: list[str] = []
    refused_at_once = settings.mandatory and PREFER_NO_EVICTION_ANNOTATION in pod.annotations
    if EVICT_ANNOTATION in pod.annotations:
        notes.append(f"annotation {EVICT_ANNOTATION} overrides the DefaultEvictor protections")
    elif not refused_at_once and "SystemCriticalPods" in settings.protections and pod.priority() is None:
        source = pod_priority(pod.workload, pod.inventory)[1]
        notes.append(f"priority of {source} unknown: assumed not system-critical and below the threshold")
    failures = [_wording(failure, pod, settings) for failure in filter_failures(pod, settings)]
    namespace = namespace_failure(pod, settings)
    if namespace is not None:
        failures.append(_wording(namespace, pod, settings))
    return failures, notes


# --- plugin filters -----------------------------------------------------------------------------------------------


class _Plugin:
    """One enabled plugin's own pod filters (its :class:`~desched.plugins.base.PodScope`), read once."""

    __slots__ = ("label_selector", "name", "scope")

    def __init__(self, name: str, scope: PodScope, target: int) -> None:
        self.name = name
        self.scope = scope
        self.label_selector: Selector | None = None
        if scope.label_selector is not None:
            self.label_selector = compile_selector(scope.label_selector, nil_matches=True, target=target)

    def reasons(self, workload: Workload) -> tuple[list[str], list[str]]:
        failures: list[str] = []
        scope, key, namespace = self.scope, self.scope.namespaces_key, workload.namespace
        if scope.namespaces.include and namespace not in scope.namespaces.include:
            failures.append(f"namespace {namespace} not in {self.name} {key}.include")
        elif namespace in scope.namespaces.exclude:
            failures.append(f"namespace {namespace} excluded by {self.name} {key}.exclude")
        if self.label_selector is not None and not self.label_selector.matches(workload.labels):
            if self.label_selector.kind == "invalid":
                failures.append(f"{self.name} labelSelector is invalid")
            else:
                failures.append(f"labels do not match {self.name} labelSelector")
        owner = workload.owner_kind
        if scope.owned_only and owner is None:
            failures.append(f"{self.name} skips pods without an owner")
        if owner is not None and owner in scope.exclude_owner_kinds:
            failures.append(f"owner kind {owner} excluded by {self.name} excludeOwnerKinds")
        if scope.owner_kinds.include:
            if owner not in scope.owner_kinds.include:
                failures.append(f"owner kind {owner or 'none'} not in {self.name} ownerKinds.include")
        elif owner is not None and owner in scope.owner_kinds.exclude:
            failures.append(f"owner kind {owner} excluded by {self.name} ownerKinds.exclude")
        return failures, [scope.note] if scope.note else []


# --- driver -------------------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """JSON for what :func:`signature` meets beyond lists and mappings: sets in sorted order."""
    return sorted(value) if isinstance(value, frozenset) else str(value)


def signature(policy: Policy, target: int) -> str:
    """What decides ``policy``'s eviction scope at release ``target``, as a string: policies with equal signatures
    evict alike (profile names aside), so one :class:`EvictionScope` serves them all."""
    import json

    reduced = [
        (scopes, profile.evictor_args()) for profile in policy.profiles if (scopes := profile.pod_scopes(target))
    ]
    return json.dumps([target, reduced], sort_keys=True, default=_plain)


class _Profile(NamedTuple):
    """One profile's evicting plugins and DefaultEvictor settings, read once."""

    name: str
    plugins: list[_Plugin]
    settings: Evictor


class EvictionScope:
    """A policy's eviction scope, compiled once: each profile's evicting plugins and DefaultEvictor settings.

    ``policy`` and ``target`` are read as :func:`evaluate` reads them; ``inventory`` only for the PriorityClass a
    ``priorityThreshold.name`` names (compile again when the PriorityClasses change); ``now`` is the clock of
    ``minPodAge``. :meth:`evaluate` judges the workloads of any inventory against it.
    """

    __slots__ = ("profiles",)

    def __init__(self, policy: Policy, inventory: Inventory, target: int = NEWEST, now: datetime | None = None) -> None:
        moment = now if now is not None else datetime.now(timezone.utc)
        self.profiles: list[_Profile] = []
        for profile in policy.profiles:
            scopes = profile.pod_scopes(target)
            if not scopes:
                continue
            settings = evictor(profile.evictor_args(), target, moment, lambda name: _priority_of(name, inventory))
            compiled = [_Plugin(name, scope, target) for name, scope in scopes]
            self.profiles.append(_Profile(profile.name or f"profiles[{profile.path[-1]}]", compiled, settings))

    def evaluate(self, inventory: Inventory, index: PDBIndex | None = None) -> list[Verdict]:
        """One :class:`Verdict` per (profile, plugin, workload of ``inventory``), in profile, inventory and plugin
        order; ``index`` (default: built from ``inventory.pdbs``) says which PDBs cover a workload."""
        if index is None:
            index = PDBIndex(inventory.pdbs)
        pdb_cache: dict[int, bool] = {}
        verdicts: list[Verdict] = []
        for profile in self.profiles:
            for workload in inventory.workloads:
                pod = _TemplatePod(workload, inventory, index, pdb_cache)
                failures, notes = _evictor_reasons(pod, profile.settings)
                for plugin in profile.plugins:
                    plugin_failures, plugin_notes = plugin.reasons(workload)
                    refused = failures + plugin_failures
                    verdicts.append(
                        Verdict(workload, profile.name, plugin.name, not refused, refused + notes + plugin_notes)
                    )
        return verdicts


def evaluate(
    policy: Policy,
    inventory: Inventory,
    target: int = NEWEST,
    index: PDBIndex | None = None,
    now: datetime | None = None,
) -> list[Verdict]:
    """One :class:`Verdict` per (profile, enabled deschedule/balance plugin, workload), in profile, plugin and
    inventory order. ``policy`` is the typed v1alpha2 policy (:func:`desched.policy.model.decode`; a v1alpha1 or
    KubeDescheduler document through :func:`desched.policy.effective.effective_policy`). ``target`` is the descheduler
    minor release (36 for v0.36): args a release does not know are ignored. ``now`` (default: the current time) is
    the clock for ``minPodAge``. Never raises on malformed policies. The same as an :class:`EvictionScope` compiled
    once and evaluated.
    """
    return EvictionScope(policy, inventory, target, now).evaluate(inventory, index)


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
