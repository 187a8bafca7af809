"""The DefaultEvictor's decision, written once: may this pod be evicted?

Upstream's DefaultEvictor (kubernetes-sigs/descheduler ``pkg/framework/plugins/defaultevictor/defaultevictor.go``,
v0.34.0 to v0.36.0) runs ``Filter`` and ``PreEvictionFilter`` on every pod a plugin wants to evict. Two parts of
desched ask the same question: the executor about live pods of a cluster (:mod:`desched.executor.defaultevictor`),
and the scope model about workloads written in a repository, judged from their pod template
(:mod:`desched.workloads.scope`). Both are adapters of this module: each shows the pod through a :class:`PodView`
and words the :class:`FilterFailure` values it gets back.

:func:`filter_failures` yields the failing checks of ``Filter`` in upstream's order, at most one per check; the
executor stops at the first, the scope model lists them all. :func:`namespace_failure` is the namespace part of
``PreEvictionFilter`` (node fit needs the cluster's nodes and stays with the executor). :func:`evictor` reads the
DefaultEvictor args once, gated by the release they run on.
"""

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

from desched import versions
from desched.goduration import parse_duration
from desched.plugins import REGISTRY
from desched.plugins.defaultevictor import DefaultEvictorArgs, PodProtections, PriorityThreshold
from desched.tree import TextEnum, mapping_or_empty
from desched.validation.vocab import (
    DEFAULT_POD_PROTECTIONS,
    EXTRA_POD_PROTECTIONS,
    LEGACY_FLAG_PROTECTIONS,
    SYSTEM_CRITICAL_PRIORITY,
)
from desched.workloads.selectors import Selector, compile_selector

__all__ = [
    "EVICT_ANNOTATION",
    "PREFER_NO_EVICTION_ANNOTATION",
    "SYSTEM_CRITICAL",
    "Check",
    "Claim",
    "Evictor",
    "FilterFailure",
    "PodView",
    "active_protections",
    "evictor",
    "filter_failures",
    "namespace_failure",
    "owner_index_conflicts",
]

EVICT_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
PREFER_NO_EVICTION_ANNOTATION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
SYSTEM_CRITICAL = SYSTEM_CRITICAL_PRIORITY


class Check(TextEnum):
    """Why a pod fails (:attr:`FilterFailure.check`)."""

    PREFER_NO_EVICTION = "prefer-no-eviction"  # noEvictionPolicy Mandatory and the prefer-no-eviction annotation
    MIRROR = "mirror"
    STATIC = "static"  # detail: the config.source annotation
    TERMINATING = "terminating"
    SYSTEM_CRITICAL = "system-critical"  # detail: the priority
    THRESHOLD_UNKNOWN = "threshold-unknown"  # detail: the PriorityClass priorityThreshold.name names
    PRIORITY_THRESHOLD = "priority-threshold"  # detail: the priority
    BARE = "bare"  # FailedBarePods protects a pod without an owner
    BARE_NOT_FAILED = "bare-not-failed"  # a pod without an owner is evictable only once Failed
    LOCAL_STORAGE = "local-storage"  # detail: what holds it
    DAEMONSET = "daemonset"
    PVC = "pvc"  # detail: the claim
    PVC_UNKNOWN = "pvc-unknown"  # detail: the claim, which cannot be found
    PVC_NO_CLASS = "pvc-no-class"  # detail: the claim
    PVC_PROTECTED_CLASS = "pvc-protected-class"  # detail: the claim; class: its storage class
    WITHOUT_PDB = "without-pdb"
    RESOURCE_CLAIMS = "resource-claims"
    LABEL_SELECTOR = "label-selector"
    LABEL_SELECTOR_INVALID = "label-selector-invalid"
    MIN_REPLICAS = "min-replicas"  # detail: the owner's pod count
    MIN_REPLICAS_UNKNOWN = "min-replicas-unknown"
    MIN_POD_AGE = "min-pod-age"  # detail: the start time
    NO_START_TIME = "no-start-time"
    NAMESPACE_SELECTOR = "namespace-selector"
    NAMESPACE_UNKNOWN = "namespace-unknown"


class FilterFailure(NamedTuple):
    check: Check
    detail: str = ""
    storage_class: str = ""


class Claim(NamedTuple):
    """A PersistentVolumeClaim a pod uses: ``found`` when its storage class could be read (``storage_class`` is then
    that class, empty when none is set)."""

    name: str
    found: bool
    storage_class: str


class PodView(Protocol):
    """What the decision reads about a pod; each adapter answers from what it has (a live pod, a template)."""

    @property
    def namespace(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...

    @property
    def annotations(self) -> Mapping[str, str]: ...

    def state(self) -> Check | None:
        """:attr:`Check.MIRROR`, :attr:`Check.STATIC` or :attr:`Check.TERMINATING` when the pod is one, else None."""
        ...

    def static_source(self) -> str: ...

    def priority(self) -> int | None:
        """The pod's priority; None when unknown (the priority checks then pass)."""
        ...

    def owned(self) -> bool: ...

    def failed(self) -> bool: ...

    def local_storage(self) -> str | None:
        """What gives the pod local storage (an emptyDir or hostPath volume), or None."""
        ...

    def daemonset(self) -> bool: ...

    def claims(self) -> Iterator[Claim]:
        """The pod's PersistentVolumeClaims, in volume order, with their storage classes."""
        ...

    def has_pdb(self) -> bool: ...

    def resource_claims(self) -> bool: ...

    def owner_pods(self) -> int | None:
        """How many pods the pod's only owner has; None when unknown. Only asked for a pod with one owner."""
        ...

    def single_owner(self) -> bool: ...

    def started(self) -> datetime | None:
        """When the pod started; only asked when :meth:`age_known`."""
        ...

    def age_known(self) -> bool:
        """Whether the pod has a status to read its start from (a template has none)."""
        ...

    def namespace_labels(self) -> Mapping[str, str] | None:
        """The labels of the pod's namespace; None when the namespace is unknown."""
        ...


class Evictor(NamedTuple):
    """One profile's DefaultEvictor settings, read once from its args for a release."""

    protections: frozenset[str]
    threshold: int | None  # the resolved priorityThreshold while SystemCriticalPods is active
    unknown_threshold_class: str  # a priorityThreshold.name that could not be resolved
    mandatory: bool
    label_selector: Selector | None
    namespace_selector: Selector | None
    min_replicas: int
    min_pod_age: timedelta | None
    protected_classes: frozenset[str] | None  # None: every PVC protects
    now: datetime


def active_protections(args: DefaultEvictorArgs, target: int = versions.NEWEST) -> frozenset[str]:
    """``getEffectivePodProtections``: the new model when ``extraEnabled``/``defaultDisabled`` is non-empty (v0.34+),
    else the legacy booleans. Unknown names are ignored (validation reports them)."""
    protections = args.pod_protections if target >= 34 else PodProtections()
    disabled, extra = protections.default_disabled, protections.extra_enabled
    if disabled or extra:
        active = set(DEFAULT_POD_PROTECTIONS) - set(disabled)
        return frozenset(active | (set(extra) & set(EXTRA_POD_PROTECTIONS)))
    active = set(DEFAULT_POD_PROTECTIONS)
    fields = REGISTRY["DefaultEvictor"].args.fields
    for flag, (kind, protection) in LEGACY_FLAG_PROTECTIONS.items():
        if flag in args.legacy_flags and fields[flag].exists_in(target):
            (active.discard if kind == "defaultDisabled" else active.add)(protection)
    return frozenset(active)


def _threshold(threshold: PriorityThreshold | None, priority_of: Callable[[str], int | None]) -> tuple[int | None, str]:
    if threshold is not None and threshold.value is not None:
        return threshold.value, ""
    if threshold is not None and threshold.name:
        resolved = priority_of(threshold.name)
        return (resolved, "") if resolved is not None else (None, threshold.name)
    return SYSTEM_CRITICAL, ""


def _selector(value: Mapping[str, Any] | None, target: int) -> Selector | None:
    """A compiled label selector; None when absent or empty (it selects everything)."""
    if not value:
        return None
    selector = compile_selector(value, nil_matches=True, target=target)
    return None if selector.kind in ("nil", "empty") else selector


def _namespace_selector(value: Mapping[str, Any] | None, target: int) -> Selector | None:
    """``namespaceLabelSelector`` at ``target``: from v0.35; at v0.35 only one with ``matchLabels`` filters (one of
    ``matchExpressions`` alone selects every namespace; docs/executor-semantics.md#13-decisions-per-release, row
    ``namespace-selector-labels-only``)."""
    if target < 35 or (target == 35 and not mapping_or_empty(value).get("matchLabels")):
        return None
    return _selector(value, target)


def _min_pod_age(value: str | None) -> timedelta | None:
    if not value:
        return None
    try:
        return timedelta(microseconds=parse_duration(value) // 1000)
    except ValueError:
        return None


def evictor(args: DefaultEvictorArgs, target: int, now: datetime, priority_of: Callable[[str], int | None]) -> Evictor:
    """The settings of DefaultEvictor ``args`` at release ``target`` (fields a release lacks are ignored);
    ``priority_of`` resolves a PriorityClass name to its value (None when unknown)."""
    protections = active_protections(args, target)
    threshold, unknown = (
        _threshold(args.priority_threshold, priority_of) if "SystemCriticalPods" in protections else (None, "")
    )
    classes = args.pod_protections.protected_storage_classes
    return Evictor(
        protections,
        threshold,
        unknown,
        target >= 34 and args.no_eviction_policy == "Mandatory",
        _selector(args.label_selector, target),
        _namespace_selector(args.namespace_label_selector, target),
        args.min_replicas if target >= 30 and args.min_replicas > 1 else 0,
        _min_pod_age(args.min_pod_age) if target >= 31 else None,
        frozenset(classes) if target >= 35 and classes is not None else None,
        now,
    )


def owner_index_conflicts(evictors: Iterable[DefaultEvictorArgs], indexed: bool = False) -> list[int]:
    """Positions (in policy order) of the profiles' DefaultEvictor args whose ``minReplicas > 1`` adds the owner
    index to the shared pod informer when it already holds it: every such one after the first, or every one when
    ``indexed`` (an earlier cycle added it). v0.30 fails to build those profiles (see
    docs/executor-semantics.md#13-decisions-per-release)."""
    conflicts = []
    for position, args in enumerate(evictors):
        if args.min_replicas > 1:
            if indexed:
                conflicts.append(position)
            indexed = True
    return conflicts


def _priority(pod: PodView, settings: Evictor) -> FilterFailure | None:
    priority = pod.priority()
    if priority is None:
        return None
    if priority >= SYSTEM_CRITICAL:
        return FilterFailure(Check.SYSTEM_CRITICAL, str(priority))
    if settings.unknown_threshold_class:
        return FilterFailure(Check.THRESHOLD_UNKNOWN, settings.unknown_threshold_class)
    if settings.threshold is not None and priority >= settings.threshold:
        return FilterFailure(Check.PRIORITY_THRESHOLD, str(priority))
    return None


def _bare(pod: PodView, protections: frozenset[str]) -> FilterFailure | None:
    if pod.owned():
        return None
    if "FailedBarePods" in protections:
        return FilterFailure(Check.BARE)
    return None if pod.failed() else FilterFailure(Check.BARE_NOT_FAILED)


def _pvc(pod: PodView, protected_classes: frozenset[str] | None) -> FilterFailure | None:
    for claim in pod.claims():
        if protected_classes is None:
            return FilterFailure(Check.PVC, claim.name)
        if not claim.found:
            return FilterFailure(Check.PVC_UNKNOWN, claim.name)
        if not claim.storage_class:
            return FilterFailure(Check.PVC_NO_CLASS, claim.name)
        if claim.storage_class in protected_classes:
            return FilterFailure(Check.PVC_PROTECTED_CLASS, claim.name, claim.storage_class)
    return None


def _age(pod: PodView, now: datetime, min_pod_age: timedelta) -> FilterFailure | None:
    started = pod.started()
    if started is None:
        return FilterFailure(Check.NO_START_TIME)
    return FilterFailure(Check.MIN_POD_AGE, started.isoformat()) if now - started < min_pod_age else None


def _replicas(pod: PodView, settings: Evictor) -> FilterFailure | None:
    count = pod.owner_pods()
    if count is None:
        return FilterFailure(Check.MIN_REPLICAS_UNKNOWN)
    return FilterFailure(Check.MIN_REPLICAS, str(count)) if count < settings.min_replicas else None


def filter_failures(pod: PodView, settings: Evictor) -> Iterator[FilterFailure]:
    """Every check of ``Filter`` the pod fails, in upstream's order (at most one per check): the pod's state, the
    protections (system-critical and priority threshold, bare pods, local storage, DaemonSet pods, PVCs, pods
    without a PDB, resource claims), then the label selector, minReplicas and minPodAge."""
    annotations = pod.annotations
    if EVICT_ANNOTATION in annotations:
        return
    if settings.mandatory and PREFER_NO_EVICTION_ANNOTATION in annotations:
        yield FilterFailure(Check.PREFER_NO_EVICTION)
        return
    state = pod.state()
    if state is not None:
        yield FilterFailure(state, pod.static_source() if state == Check.STATIC else "")
    active = settings.protections
    found = _priority(pod, settings) if "SystemCriticalPods" in active else None
    if found is not None:
        yield found
    found = _bare(pod, active)
    if found is not None:
        yield found
    if "PodsWithLocalStorage" in active:
        storage = pod.local_storage()
        if storage:
            yield FilterFailure(Check.LOCAL_STORAGE, storage)
    if "DaemonSetPods" in active and pod.daemonset():
        yield FilterFailure(Check.DAEMONSET)
    found = _pvc(pod, settings.protected_classes) if "PodsWithPVC" in active else None
    if found is not None:
        yield found
    if "PodsWithoutPDB" in active and not pod.has_pdb():
        yield FilterFailure(Check.WITHOUT_PDB)
    if "PodsWithResourceClaims" in active and pod.resource_claims():
        yield FilterFailure(Check.RESOURCE_CLAIMS)
    selector = settings.label_selector
    if selector is not None and not selector.matches(pod.labels):
        yield FilterFailure(Check.LABEL_SELECTOR_INVALID if selector.kind == "invalid" else Check.LABEL_SELECTOR)
    found = _replicas(pod, settings) if settings.min_replicas and pod.single_owner() else None
    if found is not None:
        yield found
    min_pod_age = settings.min_pod_age
    found = _age(pod, settings.now, min_pod_age) if min_pod_age is not None and pod.age_known() else None
    if found is not None:
        yield found


def namespace_failure(pod: PodView, settings: Evictor) -> FilterFailure | None:
    """The namespace part of ``PreEvictionFilter``: ``namespaceLabelSelector`` against the pod's namespace."""
    if settings.namespace_selector is None:
        return None
    labels = pod.namespace_labels()
    if labels is None:
        return FilterFailure(Check.NAMESPACE_UNKNOWN)
    return None if settings.namespace_selector.matches(labels) else FilterFailure(Check.NAMESPACE_SELECTOR)
