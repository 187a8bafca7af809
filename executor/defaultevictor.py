"""DefaultEvictor: the Filter and PreEvictionFilter every profile applies (semantics §3).

Contract: :meth:`DefaultEvictor.filter_failure` returns ``None`` when the pod passes ``Filter`` and otherwise the
reason of the first failing check, in upstream's order and with upstream's wording (upstream evaluates every check
from the mirror-pod test on and logs them all; the verdict is the same). :meth:`DefaultEvictor.pre_eviction_failure`
does the same for ``PreEvictionFilter`` (NodeFit against the ready nodes matching the evictor's ``nodeSelector``,
then ``namespaceLabelSelector``). Building the evictor resolves ``priorityThreshold`` (a ``name`` is looked up among
the cluster's PriorityClasses) and raises :class:`UnrunnablePolicy` when it cannot, as upstream fails to start.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from desched.errors import PolicyRefused
from desched.executor import nodeutil, podutil
from desched.executor.cluster import Cluster, Json
from desched.goduration import parse_duration
from desched.validation.labels import label_selector_requirements
from desched.workloads.scope import active_protections
from desched.workloads.selectors import compile_selector, label_map

SYSTEM_CRITICAL_PRIORITY = 2000000000
MANDATORY = "Mandatory"


class UnrunnablePolicy(PolicyRefused):
    """The policy cannot be run in this cluster (upstream fails at start-up with the same problem)."""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def resolve_priority_threshold(args: Json, cluster: Cluster) -> int:
    """The numeric threshold: ``value``, the named PriorityClass's value, else the system-critical value."""
    threshold = _map(args.get("priorityThreshold"))
    value, name = threshold.get("value"), threshold.get("name")
    if isinstance(value, int) and not isinstance(value, bool):
        resolved = value
    elif isinstance(name, str) and name:
        found = cluster.priority_classes.get(name)
        if found is None:
            raise UnrunnablePolicy(
                f'unable to get priority class "{name}": priorityclasses.scheduling.k8s.io "{name}" not found'
            )
        resolved = int(found.get("value") or 0)
    else:
        resolved = SYSTEM_CRITICAL_PRIORITY
    if resolved > SYSTEM_CRITICAL_PRIORITY:
        raise UnrunnablePolicy(f"priority threshold can't be greater than {SYSTEM_CRITICAL_PRIORITY}")
    return resolved


class DefaultEvictor:
    """One profile's DefaultEvictor, built from its (defaulted) args."""

    def __init__(self, args: Json, cluster: Cluster, now: datetime, target: int = 36) -> None:
        self.args = args
        self.cluster = cluster
        self.now = now
        self.protections = active_protections(args, target)
        self.threshold: int | None = None
        if "SystemCriticalPods" in self.protections:
            self.threshold = resolve_priority_threshold(args, cluster)
        self.mandatory = args.get("noEvictionPolicy") == MANDATORY
        label_selector = args.get("labelSelector")
        self.label_selector = compile_selector(label_selector, nil_matches=True) if label_selector else None
        if self.label_selector is not None and self.label_selector.kind == "empty":
            self.label_selector = None
        namespace_selector = args.get("namespaceLabelSelector")
        self.namespace_selector = compile_selector(namespace_selector, nil_matches=True) if namespace_selector else None
        if self.namespace_selector is not None and self.namespace_selector.kind == "empty":
            self.namespace_selector = None
        min_replicas = args.get("minReplicas")
        self.min_replicas = min_replicas if isinstance(min_replicas, int) and min_replicas > 1 else 0
        min_age = args.get("minPodAge")
        self.min_pod_age = (
            timedelta(microseconds=parse_duration(min_age) // 1000) if isinstance(min_age, str) and min_age else None
        )
        protected = _map(_map(_map(args.get("podProtections")).get("config")).get("PodsWithPVC"))
        classes = protected.get("protectedStorageClasses")
        self.protected_classes = (
            {str(item.get("name")) for item in classes if isinstance(item, dict)}
            if isinstance(classes, list)
            else set()
        )
        self.node_fit = args.get("nodeFit") is True
        node_selector = args.get("nodeSelector")
        self.node_selector = node_selector if isinstance(node_selector, str) else ""
        self._fit_nodes_cache: list[Json] | None = None  # nodes do not change within a cycle

    # -- Filter ------------------------------------------------------------------------------------------------

    def filter(self, pod: Json) -> bool:
        return self.filter_failure(pod) is None

    def filter_failure(self, pod: Json) -> str | None:
        metadata = pod.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        if podutil.EVICT_ANNOTATION in annotations:
            return None
        if self.mandatory and podutil.PREFER_NO_EVICTION in annotations:
            return "pod has the prefer-no-eviction annotation and noEvictionPolicy is Mandatory"
        if podutil.is_mirror_pod(pod):
            return "pod is a mirror pod"
        if podutil.is_static_pod(pod):
            return "pod is a static pod"
        if podutil.is_terminating(pod):
            return "pod is terminating"
        return self._protection_failure(pod) or self._constraint_failure(pod)

    def _protection_failure(self, pod: Json) -> str | None:
        active = self.protections
        owners = podutil.owner_refs(pod)
        if "SystemCriticalPods" in active:
            priority = podutil.priority(pod)
            if priority is not None and priority >= SYSTEM_CRITICAL_PRIORITY:
                return "pod has system critical priority and is protected against eviction"
            if self.threshold is not None and priority is not None and priority >= self.threshold:
                return "pod has higher priority than specified priority class threshold"
        if "FailedBarePods" in active:
            if not owners:
                return "pod does not have any ownerRefs"
        elif not owners and (pod.get("status") or {}).get("phase") != "Failed":
            return "pod does not have any ownerRefs and is not in failed phase"
        if "PodsWithLocalStorage" in active and podutil.has_local_storage(pod):
            return "pod has local storage and is protected against eviction"
        if "DaemonSetPods" in active and podutil.is_daemonset_pod(pod):
            return "daemonset pods are protected against eviction"
        if "PodsWithPVC" in active:
            failure = self._pvc_failure(pod)
            if failure:
                return failure
        if "PodsWithoutPDB" in active and not self.cluster.has_pdb(pod):
            return "pod does not have a PodDisruptionBudget and is protected against eviction"
        if "PodsWithResourceClaims" in active and (pod.get("spec") or {}).get("resourceClaims"):
            return "pod has ResourceClaims and descheduler is configured to protect ResourceClaims pods"
        return None

    def _pvc_failure(self, pod: Json) -> str | None:
        if not self.protected_classes:
            return "pod with PVC is protected against eviction" if podutil.has_pvc(pod) else None
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            claim_ref = volume.get("persistentVolumeClaim") if isinstance(volume, dict) else None
            if not isinstance(claim_ref, dict):
                continue
            claim_name = str(claim_ref.get("claimName") or "")
            claim = self.cluster.pvcs.get((namespace, claim_name))
            if claim is None:
                return f'failed to get persistent volume claim "{namespace}"/"{claim_name}"'
            storage_class = (claim.get("spec") or {}).get("storageClassName")
            if not storage_class:
                return f'failed to resolve storage class for pod "{namespace}"/"{claim_name}"'
            if storage_class in self.protected_classes:
                return f'pod using protected storage class "{storage_class}"'
        return None

    def _constraint_failure(self, pod: Json) -> str | None:
        metadata = pod.get("metadata") or {}
        if self.label_selector is not None and not self.label_selector.matches(label_map(metadata.get("labels"))):
            return "pod labels do not match the labelSelector filter in the policy parameter"
        if self.min_replicas:
            owners = podutil.owner_refs(pod)
            if len(owners) == 1:
                replicas = self.cluster.owner_count(str(owners[0].get("uid") or ""))
                if replicas < self.min_replicas:
                    return f"owner has {replicas} replicas which is less than minReplicas of {self.min_replicas}"
        if self.min_pod_age is not None:
            started = podutil.start_time(pod)
            if started is None or self.now - started < self.min_pod_age:
                return f"pod age is not older than MinPodAge: {self.args.get('minPodAge')} seconds"
        return None

    # -- PreEvictionFilter ---------------------------------------------------------------------------------------

    def pre_eviction_filter(self, pod: Json) -> bool:
        return self.pre_eviction_failure(pod) is None

    def pre_eviction_failure(self, pod: Json) -> str | None:
        if self.node_fit:
            nodes = self._fit_nodes()
            if not nodeutil.pod_fits_any_other_node(
                pod, nodes, self.cluster.pods_on_node, requested_by_node=self.cluster.requested
            ):
                return (
                    "pod does not fit on any other node because of nodeSelector(s), Taint(s), or nodes marked "
                    "as unschedulable"
                )
        if self.namespace_selector is not None:
            namespace = self.cluster.namespaces.get(str((pod.get("metadata") or {}).get("namespace") or ""))
            labels = label_map(((namespace or {}).get("metadata") or {}).get("labels"))
            if namespace is None or not self.namespace_selector.matches(labels):
                return "pod namespace do not match the namespaceLabelSelector filter in the policy parameter"
        return None

    def _fit_nodes(self) -> list[Json]:
        """Ready nodes matching the evictor's ``nodeSelector``, computed once (the evictor lives for one cycle)."""
        if self._fit_nodes_cache is None:
            selector = node_label_selector(self.node_selector)
            self._fit_nodes_cache = [
                node
                for node in self.cluster.nodes
                if nodeutil.is_ready(node) and selector(label_map((node.get("metadata") or {}).get("labels")))
            ]
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
