"""DefaultEvictor: the Filter and PreEvictionFilter every profile applies (docs/executor-semantics.md#3-defaultevictor).

Contract: :meth:`DefaultEvictor.filter_failure` returns ``None`` when the pod passes ``Filter`` and otherwise the
reason of the first failing check, in upstream's order and with upstream's wording (upstream evaluates every check
from the mirror-pod test on and logs them all; the verdict is the same). :meth:`DefaultEvictor.pre_eviction_failure`
does the same for ``PreEvictionFilter`` (NodeFit against the ready nodes matching the evictor's ``nodeSelector``,
then ``namespaceLabelSelector``; v0.35 applies only one with ``matchLabels``, row ``namespace-selector-labels-only`` of
:mod:`desched.executor.releases`). Building the evictor resolves ``priorityThreshold`` (a ``name`` is looked up among
the cluster's PriorityClasses) and raises :class:`UnrunnablePolicy` when it cannot, as upstream fails to start (up to
v0.34 upstream skips the profile instead: :func:`desched.executor.framework.run_cycle` does).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from desched.errors import PolicyRefused
from desched.executor import nodeutil, podutil
from desched.executor.cluster import Cluster, Json
from desched.executor.nodefit import NodeSet, node_set
from desched.executor.releases import ReleaseDecisions
from desched.plugins.defaultevictor import DefaultEvictorArgs
from desched.tree import mapping_or_empty
from desched.validation.labels import label_selector_requirements
from desched.workloads.eviction import (
    SYSTEM_CRITICAL,
    Check,
    Claim,
    Evictor,
    FilterFailure,
    evictor,
    filter_failures,
    namespace_failure,
)
from desched.workloads.selectors import label_map

_UNSEEN = ""  # a cached Filter verdict is None or a non-empty reason: this one marks a pod not yet seen


class UnrunnablePolicy(PolicyRefused):
    """The policy cannot be run in this cluster (upstream fails at start-up with the same problem)."""


# Upstream's wording of each failing check (pkg/framework/plugins/defaultevictor/defaultevictor.go@v0.36.0).
_MESSAGES = {
    Check.PREFER_NO_EVICTION: "pod has the prefer-no-eviction annotation and noEvictionPolicy is Mandatory",
    Check.MIRROR: "pod is a mirror pod",
    Check.STATIC: "pod is a static pod",
    Check.TERMINATING: "pod is terminating",
    Check.SYSTEM_CRITICAL: "pod has system critical priority and is protected against eviction",
    Check.PRIORITY_THRESHOLD: "pod has higher priority than specified priority class threshold",
    Check.BARE: "pod does not have any ownerRefs",
    Check.BARE_NOT_FAILED: "pod does not have any ownerRefs and is not in failed phase",
    Check.LOCAL_STORAGE: "pod has local storage and is protected against eviction",
    Check.DAEMONSET: "daemonset pods are protected against eviction",
    Check.PVC: "pod with PVC is protected against eviction",
    Check.WITHOUT_PDB: "pod does not have a PodDisruptionBudget and is protected against eviction",
    Check.RESOURCE_CLAIMS: "pod has ResourceClaims and descheduler is configured to protect ResourceClaims pods",
    Check.LABEL_SELECTOR: "pod labels do not match the labelSelector filter in the policy parameter",
    Check.LABEL_SELECTOR_INVALID: "pod labels do not match the labelSelector filter in the policy parameter",
    Check.NAMESPACE_SELECTOR: "pod namespace do not match the namespaceLabelSelector filter in the policy parameter",
    Check.NAMESPACE_UNKNOWN: "pod namespace do not match the namespaceLabelSelector filter in the policy parameter",
}


def _wording(failure: FilterFailure, pod: _LivePod, settings: Evictor, args: DefaultEvictorArgs) -> str:
    """Upstream's message for a failing Filter check."""
    check, detail = failure.check, failure.detail
    if check == Check.PVC_UNKNOWN:
        return f'failed to get persistent volume claim "{pod.namespace}"/"{detail}"'
    if check == Check.PVC_NO_CLASS:
        return f'failed to resolve storage class for pod "{pod.namespace}"/"{detail}"'
    if check == Check.PVC_PROTECTED_CLASS:
        return f'pod using protected storage class "{failure.storage_class}"'
    if check in (Check.MIN_REPLICAS, Check.MIN_REPLICAS_UNKNOWN):
        return f"owner has {detail or 0} replicas which is less than minReplicas of {settings.min_replicas}"
    if check in (Check.MIN_POD_AGE, Check.NO_START_TIME):
        return f"pod age is not older than MinPodAge: {args.min_pod_age} seconds"
    return _MESSAGES[check]


class _LivePod:
    """A pod of the cluster as the decision reads it (:class:`desched.eviction.PodView`)."""

    __slots__ = ("annotations", "cluster", "metadata", "pdbs_listed", "pod", "record")

    def __init__(self, pod: Json, cluster: Cluster, pdbs_listed: bool) -> None:
        self.pod = pod
        self.cluster = cluster
        self.pdbs_listed = pdbs_listed
        self.record = cluster.record(pod)
        self.metadata: Json = pod.get("metadata") or {}
        self.annotations: dict[str, str] = self.metadata.get("annotations") or {}

    @property
    def namespace(self) -> str:
        return self.record.namespace

    @property
    def labels(self) -> dict[str, str]:
        return self.record.labels

    def state(self) -> Check | None:
        annotations = self.annotations
        if podutil.CONFIG_MIRROR_ANNOTATION in annotations:
            return Check.MIRROR
        source = annotations.get(podutil.CONFIG_SOURCE_ANNOTATION)
        if source is not None and source != "api":
            return Check.STATIC
        return Check.TERMINATING if self.metadata.get("deletionTimestamp") is not None else None

    def static_source(self) -> str:
        return str(self.annotations.get(podutil.CONFIG_SOURCE_ANNOTATION, ""))

    def priority(self) -> int | None:
        return podutil.priority(self.pod)

    def owned(self) -> bool:
        return bool(self.metadata.get("ownerReferences"))

    def failed(self) -> bool:
        return bool(self.record.phase == "Failed")

    def local_storage(self) -> str | None:
        return "a hostPath or emptyDir volume" if podutil.has_local_storage(self.pod) else None

    def daemonset(self) -> bool:
        return any(owner.get("kind") == "DaemonSet" for owner in self.metadata.get("ownerReferences") or ())

    def claims(self) -> Iterator[Claim]:
        namespace = self.namespace
        for volume in (self.pod.get("spec") or {}).get("volumes") or []:
            reference = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
            if reference is None:
                continue
            name = str(mapping_or_empty(reference).get("claimName") or "")
            claim = self.cluster.pvcs.get((namespace, name))
            storage_class = ((claim or {}).get("spec") or {}).get("storageClassName")
            yield Claim(name, claim is not None, storage_class if isinstance(storage_class, str) else "")

    def has_pdb(self) -> bool:
        return self.pdbs_listed and self.cluster.has_pdb(self.pod)

    def resource_claims(self) -> bool:
        return bool((self.pod.get("spec") or {}).get("resourceClaims"))

    def single_owner(self) -> bool:
        return len(self.metadata.get("ownerReferences") or ()) == 1

    def owner_pods(self) -> int | None:
        return self.cluster.owner_count(str(self.metadata["ownerReferences"][0].get("uid") or ""))

    def age_known(self) -> bool:
        return True

    def started(self) -> datetime | None:
        return podutil.start_time(self.pod)

    def namespace_labels(self) -> dict[str, str] | None:
        namespace = self.cluster.namespaces.get(self.namespace)
        return None if namespace is None else label_map((namespace.get("metadata") or {}).get("labels"))


class DefaultEvictor:
    """One profile's DefaultEvictor, built from its (defaulted) args: an adapter of :mod:`desched.eviction` for the
    pods of one cluster, with upstream's wording and node fit."""

    def __init__(
        self, args: DefaultEvictorArgs, cluster: Cluster, now: datetime, target: int = 36, pdbs_listed: bool = True
    ) -> None:
        """``pdbs_listed`` false: the PodsWithoutPDB protection sees no PodDisruptionBudget (row
        ``pdb-informer-registered``: a real run from v0.35)."""
        self.args = args
        self.pdbs_listed = pdbs_listed
        self.cluster = cluster
        self.settings = evictor(args, target, now, self._priority_class_value)
        if self.settings.unknown_threshold_class:
            name = self.settings.unknown_threshold_class
            raise UnrunnablePolicy(
                f'unable to get priority class "{name}": priorityclasses.scheduling.k8s.io "{name}" not found'
            )
        if self.settings.threshold is not None and self.settings.threshold > SYSTEM_CRITICAL:
            raise UnrunnablePolicy(f"priority threshold can't be greater than {SYSTEM_CRITICAL}")
        self.protections = self.settings.protections
        self.protected_classes = self.settings.protected_classes
        self.node_fit = args.node_fit
        self._fit_anti_affinity = ReleaseDecisions(target).fit_anti_affinity
        self.node_selector = args.node_selector
        self._fit_nodes_cache: NodeSet | None = None  # nodes do not change within a cycle
        # Filter's answer per pod uid: only minReplicas reads what changes as pods leave (their owners' counts)
        self._filtered: dict[str, str | None] | None = None if self.settings.min_replicas else {}

    def _priority_class_value(self, name: str) -> int | None:
        found = self.cluster.priority_classes.get(name)
        return None if found is None else int(found.get("value") or 0)

    # -- Filter ------------------------------------------------------------------------------------------------

    def filter(self, pod: Json) -> bool:
        return self.filter_failure(pod) is None

    def filter_failure(self, pod: Json) -> str | None:
        metadata = pod.get("metadata") or {}
        uid = str(metadata.get("uid"))
        # an evicted pod of a real run turns terminating within the cycle: its verdict is not cached
        cached = self._filtered if metadata.get("deletionTimestamp") is None else None
        if cached is not None:
            found = cached.get(uid, _UNSEEN)
            if found != _UNSEEN:
                return found
        view = _LivePod(pod, self.cluster, self.pdbs_listed)
        failure = next(filter_failures(view, self.settings), None)
        reason = None if failure is None else _wording(failure, view, self.settings, self.args)
        if cached is not None:
            cached[uid] = reason
        return reason

    # -- PreEvictionFilter ---------------------------------------------------------------------------------------

    def pre_eviction_filter(self, pod: Json) -> bool:
        return self.pre_eviction_failure(pod) is None

    def pre_eviction_failure(self, pod: Json) -> str | None:
        if self.node_fit and not self._fits_other_node(pod):
            return (
                "pod does not fit on any other node because of nodeSelector(s), Taint(s), or nodes marked "
                "as unschedulable"
            )
        failure = namespace_failure(_LivePod(pod, self.cluster, self.pdbs_listed), self.settings)
        return None if failure is None else _MESSAGES[failure.check]

    def _fits_other_node(self, pod: Json) -> bool:
        """``PodFitsAnyOtherNode`` on :meth:`_fit_nodes`, with the NodeFit of the evictor's release."""
        return self.cluster.fit(self._fit_anti_affinity).fits_any(pod, self._fit_nodes(), skip_own=True)

    def _fit_nodes(self) -> NodeSet:
        """Ready nodes matching the evictor's ``nodeSelector``, computed once (the evictor lives for one cycle)."""
        if self._fit_nodes_cache is None:
            selector = node_label_selector(self.node_selector)
            self._fit_nodes_cache = node_set(
                node
                for node in self.cluster.nodes
                if nodeutil.is_ready(node) and selector(label_map((node.get("metadata") or {}).get("labels")))
            )
        return self._fit_nodes_cache


def node_label_selector(text: str) -> Any:
    """A predicate over node labels for a ``labels.Parse`` selector string (``""`` matches every node); UnrunnablePolicy
    when the string does not parse."""
    try:
        requirements = label_selector_requirements(text) if text else []
    except ValueError as error:
        raise UnrunnablePolicy(f"unable to parse node selector {text!r}: {error}") from None

    def matches(labels: dict[str, str]) -> bool:
        return all(_requirement(labels, *requirement) for requirement in requirements)

    return matches


def _requirement(labels: dict[str, str], key: str, operator: str, values: list[str]) -> bool:
    present = key in labels
    if operator in ("=", "==", "in"):
        return present and labels[key] in values
    if operator in ("!=", "notin"):
        return not present or labels[key] not in values
    if operator == "exists":
        return present
    if operator == "!":
        return not present
    if operator in ("gt", "lt"):
        try:
            actual, bound = int(labels[key]), int(values[0])
        except (KeyError, ValueError, IndexError):
            return False
        return actual > bound if operator == "gt" else actual < bound
    return False
