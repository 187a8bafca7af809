"""Hypothesis strategies for small clusters: every kind the workload checks read, with few names, namespaces and labels
so that objects collide, replace one another, select one another and miss one another."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from desched.workloads.model import WORKLOAD_KINDS as KINDS

Obj = dict[str, Any]

NAMESPACES = ("a", "b")
NAMES = ("n1", "n2", "n3")
#: Every workload kind with a pod template (bare Pods are not drawn)
WORKLOAD_KINDS = tuple(kind for kind, workload in KINDS.items() if workload.template)
_values = st.sampled_from(("x", "y"))
#: Template labels and matchLabels: mostly an ``app``, sometimes a ``tier``, sometimes nothing.
labels = st.one_of(
    st.fixed_dictionaries({"app": _values}, optional={"tier": _values}),
    st.fixed_dictionaries({}, optional={"tier": _values}),
)
_names = st.sampled_from(NAMES)
_namespaces = st.sampled_from(NAMESPACES)


def key(obj: Obj) -> tuple[str, str, str]:
    """``(kind, namespace, name)``, namespace ``default`` when absent (cluster-scoped kinds)."""
    metadata = obj["metadata"]
    return obj["kind"], metadata.get("namespace") or "default", metadata["name"]


@st.composite
def workloads(draw: st.DrawFn, kinds: tuple[str, ...] = WORKLOAD_KINDS) -> Obj:
    kind = draw(st.sampled_from(kinds))
    pod: Obj = {"containers": [{"name": "c", "image": "i"}]}
    volume = draw(st.sampled_from((None, "emptyDir", "claim")))
    if volume == "emptyDir":
        pod["volumes"] = [{"name": "v", "emptyDir": {}}]
    elif volume == "claim":
        pod["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": draw(st.sampled_from(("c1", "c2")))}}]
    priority = draw(st.sampled_from((None, "system-cluster-critical", "high", "low", "unknown")))
    if priority is not None:
        pod["priorityClassName"] = priority
    metadata: Obj = {"labels": draw(labels)}
    if draw(st.booleans()):
        metadata["annotations"] = {"descheduler.alpha.kubernetes.io/evict": "true"}
    template = {"metadata": metadata, "spec": pod}
    spec: Obj = {"jobTemplate": {"spec": {"template": template}}} if kind == "CronJob" else {"template": template}
    replicas = draw(st.one_of(st.none(), st.integers(0, 3)))
    if replicas is not None:
        spec["replicas"] = replicas
    if kind == "StatefulSet" and draw(st.booleans()):
        storage = draw(st.sampled_from((None, "fast", "slow")))
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {"storageClassName": storage}}]
    return {
        "apiVersion": KINDS[kind].api_versions[0],
        "kind": kind,
        "metadata": {"name": draw(_names), "namespace": draw(_namespaces)},
        "spec": spec,
    }


_expressions = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(("app", "tier")),
            "operator": st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Bogus")),
        },
        optional={"values": st.lists(st.sampled_from(("x", "y")), max_size=2)},
    ),
    min_size=1,
    max_size=2,
)
selectors = st.one_of(
    st.none(),
    st.just({}),
    labels.map(lambda pairs: {"matchLabels": pairs}),
    _expressions.map(lambda expressions: {"matchExpressions": expressions}),
    st.tuples(labels, _expressions).map(lambda both: {"matchLabels": both[0], "matchExpressions": both[1]}),
)
_budgets = st.sampled_from(
    (
        {},
        {"maxUnavailable": 1},
        {"maxUnavailable": 0},
        {"maxUnavailable": "50%"},
        {"minAvailable": 2},
        {"minAvailable": "100%"},
    )
)


@st.composite
def pdbs(draw: st.DrawFn) -> Obj:
    spec = dict(draw(_budgets))
    selector = draw(selectors)
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": draw(st.sampled_from(("policy/v1", "policy/v1beta1"))),
        "kind": "PodDisruptionBudget",
        "metadata": {"name": draw(_names), "namespace": draw(_namespaces)},
        "spec": spec,
    }


@st.composite
def hpas(draw: st.DrawFn) -> Obj:
    target = {"kind": draw(st.sampled_from(("Deployment", "StatefulSet", "Job"))), "name": draw(_names)}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": draw(_names), "namespace": draw(_namespaces)},
        "spec": {"scaleTargetRef": target, "minReplicas": draw(st.integers(1, 3))},
    }


@st.composite
def context(draw: st.DrawFn) -> Obj:
    """A Namespace, PriorityClass, PersistentVolumeClaim or StorageClass."""
    kind = draw(st.sampled_from(("Namespace", "PriorityClass", "PersistentVolumeClaim", "StorageClass")))
    if kind == "Namespace":
        return {"apiVersion": "v1", "kind": kind, "metadata": {"name": draw(_namespaces), "labels": draw(labels)}}
    if kind == "PriorityClass":
        return {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": draw(st.sampled_from(("high", "low")))},
            "value": draw(st.sampled_from((0, 1000, 2000000000))),
            "globalDefault": draw(st.booleans()),
        }
    if kind == "PersistentVolumeClaim":
        storage = draw(st.sampled_from((None, "fast", "slow")))
        spec = {"storageClassName": storage} if storage else {}
        metadata = {"name": draw(st.sampled_from(("c1", "c2"))), "namespace": draw(_namespaces)}
        return {"apiVersion": "v1", "kind": kind, "metadata": metadata, "spec": spec}
    default = {"storageclass.kubernetes.io/is-default-class": "true"} if draw(st.booleans()) else {}
    metadata = {"name": draw(st.sampled_from(("fast", "slow"))), "annotations": default}
    return {"apiVersion": "storage.k8s.io/v1", "kind": kind, "metadata": metadata}


cluster_objects = st.one_of(workloads(), workloads(), workloads(), pdbs(), pdbs(), hpas(), context())
#: Watch events in order: ``(deleted, object)``; a deletion names the object by its key.
events = st.lists(st.tuples(st.integers(0, 5).map(lambda draw: draw == 0), cluster_objects), min_size=2, max_size=30)
