"""The operator's cluster checks (docs/openshift-operator.md#34-cluster-rules), against the cluster objects found beside
a KubeDescheduler.

Contract: :func:`environment_problems` takes a KubeDescheduler object and the other objects of the same run
(repository manifests or a ``kubectl get -A -o yaml`` snapshot passed to the linter) and returns the checks the
operator would fail in that cluster, each with the path in the KubeDescheduler it concerns. A check runs only when the
objects it needs are present: absence from a repository proves nothing. Checks (operator messages quoted):

* ``Scheduler/cluster`` ``spec.profile: HighNodeUtilization`` with a lifecycle profile, or ``LowNodeUtilization``
  with CompactAndScale: the "eviction/scheduling hot loop" refusal (an empty profile never triggers it);
* a KubeVirt profile when Nodes are present and none is labelled ``kubevirt.io/schedulable=true``;
* Prometheus in use (a KubeVirt profile or ``devActualUtilizationProfile``): the ``openshift-monitoring/prometheus-k8s``
  Route without ingress or host, and the operator's namespace without ``openshift.io/cluster-monitoring=true``;
* ``thresholdPriorityClassName`` naming no PriorityClass when PriorityClasses are present (the DefaultEvictor
  cannot resolve its threshold and the descheduler fails).

PSI availability (``/proc/pressure`` on the operator's node) cannot be seen in manifests and is not checked.
"""

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from desched.openshift import model
from desched.tree import Path, list_or_empty

KUBEVIRT_LABEL = ("kubevirt.io/schedulable", "true")
MONITORING_LABEL = ("openshift.io/cluster-monitoring", "true")
SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")


class ClusterProblem(NamedTuple):
    message: str
    path: Path


class _Cluster:
    """The cluster objects of a run, indexed by what the checks ask."""

    def __init__(self, objects: Iterable[Mapping[str, Any]]) -> None:
        self.scheduler: Mapping[str, Any] | None = None
        self.nodes: list[Mapping[str, Any]] = []
        self.route: Mapping[str, Any] | None = None
        self.operator_namespace: Mapping[str, Any] | None = None
        self.priority_classes: set[str] | None = None
        for obj in objects:
            kind, metadata = obj.get("kind"), obj.get("metadata")
            metadata = metadata if isinstance(metadata, Mapping) else {}
            name, namespace = metadata.get("name"), metadata.get("namespace")
            if (
                kind == "Scheduler"
                and str(obj.get("apiVersion", "")).startswith("config.openshift.io/")
                and name == "cluster"
            ):
                self.scheduler = obj
            elif kind == "Node":
                self.nodes.append(obj)
            elif kind == "Route" and (namespace, name) == ("openshift-monitoring", "prometheus-k8s"):
                self.route = obj
            elif kind == "Namespace" and name == model.OPERATOR_NAMESPACE:
                self.operator_namespace = obj
            elif kind == "PriorityClass" and isinstance(name, str):
                self.priority_classes = (self.priority_classes or set()) | {name}


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def environment_problems(kd: Mapping[str, Any], objects: Iterable[Mapping[str, Any]]) -> list[ClusterProblem]:
    """The docs/openshift-operator.md#34-cluster-rules checks the operator would fail for ``kd`` in the cluster
    described by ``objects``."""
    spec = kd.get("spec")
    if not isinstance(spec, Mapping):
        return []
    return list(_check(spec, _Cluster(objects)))


def _check(spec: Mapping[str, Any], cluster: _Cluster) -> Iterator[ClusterProblem]:
    raw = spec.get("profiles")
    listed = [(index, name) for index, name in enumerate(list_or_empty(raw)) if isinstance(name, str)]
    custom = spec.get("profileCustomizations")
    custom = custom if isinstance(custom, Mapping) else {}
    yield from _scheduler(listed, cluster)
    kubevirt = [(index, name) for index, name in listed if name in model.KUBEVIRT]
    if (
        kubevirt
        and cluster.nodes
        and not any(_labels(node).get(KUBEVIRT_LABEL[0]) == KUBEVIRT_LABEL[1] for node in cluster.nodes)
    ):
        for index, name in kubevirt:
            yield ClusterProblem(
                f"profile {name} can only be used when KubeVirt is properly deployed: none of the "
                f"{len(cluster.nodes)} nodes in the inputs is labelled {'='.join(KUBEVIRT_LABEL)}; the operator "
                "scales the descheduler to 0",
                ("spec", "profiles", index),
            )
    utilization = custom.get("devActualUtilizationProfile")
    if kubevirt or utilization:
        where: Path = (
            ("spec", "profiles", kubevirt[0][0])
            if kubevirt
            else ("spec", "profileCustomizations", "devActualUtilizationProfile")
        )
        yield from _prometheus(cluster, where)
    wanted = custom.get("thresholdPriorityClassName")
    known = cluster.priority_classes
    if (
        isinstance(wanted, str)
        and wanted
        and known is not None
        and wanted not in known
        and wanted not in SYSTEM_PRIORITY_CLASSES
    ):
        yield ClusterProblem(
            f"thresholdPriorityClassName {wanted!r} names no PriorityClass of the inputs "
            f"({', '.join(sorted(known))}): the DefaultEvictor cannot resolve its priority threshold and the "
            "descheduler fails",
            ("spec", "profileCustomizations", "thresholdPriorityClassName"),
        )


def _scheduler(listed: list[tuple[int, str]], cluster: _Cluster) -> Iterator[ClusterProblem]:
    if cluster.scheduler is None:
        return
    scheduler_spec = cluster.scheduler.get("spec")
    profile = scheduler_spec.get("profile") if isinstance(scheduler_spec, Mapping) else None
    if profile == "HighNodeUtilization":
        clashing = [(index, name) for index, name in listed if name in model.LIFECYCLE]
        what = "LowNodeUtilization"
    elif profile == "LowNodeUtilization":
        clashing = [(index, name) for index, name in listed if name == "CompactAndScale"]
        what = "CompactAndScale"
    else:
        return
    for index, name in clashing:
        yield ClusterProblem(
            f"enabling Descheduler {what} with Scheduler {profile} may cause an eviction/scheduling hot loop: "
            f"profile {name} conflicts with Scheduler/cluster spec.profile {profile}; the operator scales the "
            "descheduler to 0",
            ("spec", "profiles", index),
        )


def _prometheus(cluster: _Cluster, where: Path) -> Iterator[ClusterProblem]:
    route = cluster.route
    if route is not None:
        status = route.get("status")
        ingress = status.get("ingress") if isinstance(status, Mapping) else None
        first = ingress[0] if isinstance(ingress, list) and ingress else None
        if first is None:
            yield ClusterProblem(
                "No ingress found in openshift-monitoring/prometheus-k8s route: the profile needs Prometheus and "
                "the operator cannot find its URL (the descheduler is scaled to 0)",
                where,
            )
        elif not (isinstance(first, Mapping) and first.get("host")):
            yield ClusterProblem(
                "Host for status.ingress[0] in openshift-monitoring/prometheus-k8s route is empty: the profile "
                "needs Prometheus and the operator cannot build its URL (the descheduler is scaled to 0)",
                where,
            )
    namespace = cluster.operator_namespace
    if namespace is not None and _labels(namespace).get(MONITORING_LABEL[0]) != MONITORING_LABEL[1]:
        yield ClusterProblem(
            f"namespace {model.OPERATOR_NAMESPACE} is not labeled with {'='.join(MONITORING_LABEL)}: the profile "
            "reads Prometheus, and the operator refuses to render the policy until the label is set",
            where,
        )
