"""Workload inputs of the eviction scope model: what :func:`collect` reads from plain Kubernetes manifests.

:func:`collect` takes ``(file, document)`` pairs (plain dicts or :class:`~desched.reading.yamlsrc.YMap` documents;
``kind: List`` and ``*List`` kinds are unpacked) and returns an :class:`Inventory`. It never raises: a document that is
not a mapping, has no usable ``kind``/``metadata.name`` or has fields of the wrong type is skipped or read with
defaults.

Recognised kinds: Deployment, StatefulSet, ReplicaSet, ReplicationController, Job, CronJob, DaemonSet and Pod
(workloads), PodDisruptionBudget (policy/v1 and policy/v1beta1), HorizontalPodAutoscaler (any autoscaling version),
Namespace, PriorityClass, PersistentVolumeClaim and StorageClass. Namespaced objects default to ``default``.
"""

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from desched.reading.yamlsrc import YMap, YSeq, locate
from desched.tree import Path, at_path, list_or_empty, mapping_or_empty
from desched.workloads.selectors import label_map

__all__ = [
    "HPA",
    "PDB",
    "SYSTEM_PRIORITY_CLASSES",
    "WORKLOAD_KINDS",
    "Inventory",
    "Workload",
    "WorkloadKind",
    "at_hpa_minimum",
    "collect",
    "hpa_target",
    "objects",
]


class WorkloadKind(NamedTuple):
    """What desched knows of one workload kind (a kind whose objects run pods)."""

    template: Path  #: where its pod template (the ``metadata``/``spec`` pair) sits; ``()``: the object is the pod
    owner: str | None  #: the ownerReference kind the descheduler sees on its pods (``None``: a bare pod has none)
    scalable: bool  #: whether ``spec.replicas`` counts its pods
    api_versions: tuple[str, ...]  #: the apiVersions that serve it, newest first


_TEMPLATE: Path = ("spec", "template")
#: Every workload kind, the one table of them: the scope model reads these, the descheduler's deployment model
#: (:mod:`desched.deployment.runs`) finds the descheduler in any of them, a live cluster is listed in this order
#: (:mod:`desched.workloads.live`) and the webhook admits them (:mod:`desched.webhook.workloads`).
WORKLOAD_KINDS: dict[str, WorkloadKind] = {
    "Deployment": WorkloadKind(_TEMPLATE, "ReplicaSet", True, ("apps/v1",)),
    "StatefulSet": WorkloadKind(_TEMPLATE, "StatefulSet", True, ("apps/v1",)),
    "ReplicaSet": WorkloadKind(_TEMPLATE, "ReplicaSet", True, ("apps/v1",)),
    "DaemonSet": WorkloadKind(_TEMPLATE, "DaemonSet", False, ("apps/v1",)),
    "ReplicationController": WorkloadKind(_TEMPLATE, "ReplicationController", True, ("v1",)),
    "Job": WorkloadKind(_TEMPLATE, "Job", False, ("batch/v1",)),
    "CronJob": WorkloadKind(("spec", "jobTemplate", *_TEMPLATE), "Job", False, ("batch/v1", "batch/v1beta1")),
    "Pod": WorkloadKind((), None, False, ("v1",)),
}

#: The two built-in PriorityClasses every cluster has.
SYSTEM_PRIORITY_CLASSES: dict[str, int] = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}


class Workload(NamedTuple):
    """One pod template (or bare pod) and what the descheduler would see on its pods.

    ``replicas`` is the smallest pod count it can run at (``spec.replicas``, default 1; with an HPA, the HPA's
    ``minReplicas``, as the autoscaler may scale it down to that whatever ``spec.replicas`` says); it
    is ``None`` when a manifest cannot tell (DaemonSet, Job, CronJob). ``pod_path`` is the path of the pod
    template (``metadata``/``spec`` pair) inside ``document``; ``claim_templates`` maps a StatefulSet's
    ``volumeClaimTemplates`` names to their storage class (``None`` when unset).
    """

    kind: str
    namespace: str
    name: str
    labels: dict[str, str]
    pod_spec: dict[str, Any]
    annotations: dict[str, str]
    replicas: int | None
    owner_kind: str | None
    priority_class: str | None
    file: str
    line: int
    column: int
    pod_path: Path = ()
    claim_templates: dict[str, str | None] = {}  # noqa: RUF012 (a NamedTuple default, never mutated)
    document: Any = None
    owner_uid: str | None = None  # a Pod's controlling owner (snapshots and live clusters): its replicas are counted

    @property
    def key(self) -> str:
        """``Kind/namespace/name``: unique per workload in a well-formed input set."""
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def label(self) -> str:
        """``Kind namespace/name``: how findings and warnings name the workload."""
        return f"{self.kind} {self.namespace}/{self.name}"

    def where(self, path: Path = ()) -> tuple[str, int, int]:
        """``(file, line, column)`` of ``path`` inside the document (nearest existing ancestor; the document itself
        when positions are unknown)."""
        position = locate(self.document, path) if isinstance(self.document, (YMap, YSeq)) else None
        line, column = position if position else (self.line, self.column)
        return self.file, line, column


class PDB(NamedTuple):
    """A PodDisruptionBudget. ``selector`` is the raw decoded ``spec.selector`` (``None`` when absent);
    ``min_available``/``max_unavailable`` are an int, a string (``"N%"`` when well-formed) or ``None``."""

    namespace: str
    name: str
    api_version: str
    selector: Any
    min_available: int | str | None
    max_unavailable: int | str | None
    file: str
    line: int
    column: int

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def label(self) -> str:
        """``PodDisruptionBudget namespace/name``: how findings name the budget."""
        return f"PodDisruptionBudget {self.namespace}/{self.name}"


class HPA(NamedTuple):
    """A HorizontalPodAutoscaler's target (same namespace) and ``minReplicas`` (default 1)."""

    namespace: str
    name: str
    target_kind: str
    target_name: str
    min_replicas: int
    file: str
    line: int
    column: int

    @property
    def target(self) -> tuple[str, str, str]:
        """``(namespace, kind, name)`` of the workload it scales (:func:`hpa_target`)."""
        return self.namespace, self.target_kind, self.target_name


class Inventory:
    """Everything :func:`collect` found.

    ``namespaces``: name -> labels; ``priority_classes``: name -> value (the two system classes are *not* added
    here; see :data:`SYSTEM_PRIORITY_CLASSES`); ``default_priority``: the value of a ``globalDefault`` class, if
    any; ``pvcs``: (namespace, name) -> ``storageClassName`` as written (``None`` when absent);
    ``storage_classes``: name -> whether it is the default class.
    """

    __slots__ = (
        "default_priority",
        "hpas",
        "namespaces",
        "pdbs",
        "priority_classes",
        "pvcs",
        "storage_classes",
        "workloads",
    )

    def __init__(self) -> None:
        self.workloads: list[Workload] = []
        self.pdbs: list[PDB] = []
        self.hpas: list[HPA] = []
        self.namespaces: dict[str, dict[str, str]] = {}
        self.priority_classes: dict[str, int] = {}
        self.default_priority: int | None = None
        self.pvcs: dict[tuple[str, str], str | None] = {}
        self.storage_classes: dict[str, bool] = {}

    def default_storage_class(self) -> str | None:
        """The name of a StorageClass annotated as the default, if any (the first one, by name)."""
        defaults = sorted(name for name, is_default in self.storage_classes.items() if is_default)
        return defaults[0] if defaults else None


# --- readers ------------------------------------------------------------------------------------------------------


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _int_or_string(value: Any) -> int | str | None:
    if isinstance(value, bool):
        return None
    return value if isinstance(value, (int, str)) else None


def _position(doc: Any) -> tuple[int, int]:
    if isinstance(doc, (YMap, YSeq)):
        return doc.line, doc.column
    return 1, 1


def objects(documents: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each mapping of ``documents`` as (file, object), the items of ``kind: *List`` documents flattened."""
    for file, doc in documents:
        if not isinstance(doc, dict):
            continue
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            for item in doc["items"]:
                if isinstance(item, dict):
                    yield file, item
        else:
            yield file, doc


# --- per-kind readers ---------------------------------------------------------------------------------------------


def _workload(file: str, doc: dict[str, Any], kind: str, namespace: str, name: str) -> Workload:
    template_path = WORKLOAD_KINDS[kind].template
    template = mapping_or_empty(at_path(doc, template_path)) if template_path else doc
    meta = mapping_or_empty(template.get("metadata"))
    spec = mapping_or_empty(template.get("spec"))
    replicas: int | None = None
    if WORKLOAD_KINDS[kind].scalable:
        replicas = max(_int(at_path(doc, ("spec", "replicas")), 1), 0)
    elif kind == "Pod":
        replicas = 1
    claims: dict[str, str | None] = {}
    if kind == "StatefulSet":
        raw_claims = at_path(doc, ("spec", "volumeClaimTemplates"))
        for claim in list_or_empty(raw_claims):
            claim_name = at_path(claim, ("metadata", "name"))
            if isinstance(claim_name, str):
                storage_class = at_path(claim, ("spec", "storageClassName"))
                claims[claim_name] = storage_class if isinstance(storage_class, str) else None
    priority_class = spec.get("priorityClassName")
    line, column = _position(doc)
    owner_kind, owner_uid = WORKLOAD_KINDS[kind].owner, None
    if kind == "Pod":
        owner_kind, owner_uid = _pod_owner(meta.get("ownerReferences"))
    return Workload(
        kind=kind,
        namespace=namespace,
        name=name,
        labels=label_map(meta.get("labels")),
        pod_spec=spec,
        annotations=label_map(meta.get("annotations")),
        replicas=replicas,
        owner_kind=owner_kind,
        priority_class=priority_class if isinstance(priority_class, str) and priority_class else None,
        file=file,
        line=line,
        column=column,
        pod_path=template_path,
        claim_templates=claims,
        document=doc,
        owner_uid=owner_uid,
    )


def _pod_owner(references: Any) -> tuple[str | None, str | None]:
    """A pod's owner kind and UID: its controller reference, else its first reference; ``(None, None)`` if bare."""
    listed = [ref for ref in list_or_empty(references) if isinstance(ref, dict)]
    if not listed:
        return None, None
    chosen = next((ref for ref in listed if ref.get("controller") is True), listed[0])
    kind, uid = chosen.get("kind"), chosen.get("uid")
    return (kind if isinstance(kind, str) else ""), (uid if isinstance(uid, str) else "")


def _count_owned_pods(inventory: Inventory) -> None:
    """A snapshot pod's replicas are the pods sharing its owner (as the DefaultEvictor's minReplicas counts them)."""
    counts: dict[str, int] = {}
    for workload in inventory.workloads:
        if workload.kind == "Pod" and workload.owner_uid is not None:
            counts[workload.owner_uid] = counts.get(workload.owner_uid, 0) + 1
    if counts:
        inventory.workloads[:] = [
            workload._replace(replicas=counts[workload.owner_uid])
            if workload.kind == "Pod" and workload.owner_uid is not None
            else workload
            for workload in inventory.workloads
        ]


def _read(file: str, doc: dict[str, Any], inventory: Inventory) -> None:
    kind = doc.get("kind")
    meta = mapping_or_empty(doc.get("metadata"))
    name = meta.get("name")
    if not isinstance(kind, str) or not isinstance(name, str) or not name:
        return
    raw_namespace = meta.get("namespace")
    namespace = raw_namespace if isinstance(raw_namespace, str) and raw_namespace else "default"
    line, column = _position(doc)
    spec = mapping_or_empty(doc.get("spec"))
    if kind in WORKLOAD_KINDS:
        inventory.workloads.append(_workload(file, doc, kind, namespace, name))
    elif kind == "PodDisruptionBudget":
        api_version = doc.get("apiVersion")
        inventory.pdbs.append(
            PDB(
                namespace,
                name,
                api_version if isinstance(api_version, str) else "",
                spec.get("selector"),
                _int_or_string(spec.get("minAvailable")),
                _int_or_string(spec.get("maxUnavailable")),
                file,
                line,
                column,
            )
        )
    elif kind == "HorizontalPodAutoscaler":
        target = mapping_or_empty(spec.get("scaleTargetRef"))
        target_kind, target_name = target.get("kind"), target.get("name")
        if isinstance(target_kind, str) and isinstance(target_name, str):
            minimum = _int(spec.get("minReplicas"), 1)
            inventory.hpas.append(HPA(namespace, name, target_kind, target_name, minimum, file, line, column))
    elif kind == "Namespace":
        inventory.namespaces[name] = label_map(meta.get("labels"))
    elif kind == "PriorityClass":
        value = doc.get("value")
        if isinstance(value, int) and not isinstance(value, bool):
            inventory.priority_classes[name] = value
            if doc.get("globalDefault") is True:
                inventory.default_priority = value
    elif kind == "PersistentVolumeClaim":
        storage_class = spec.get("storageClassName")
        inventory.pvcs[(namespace, name)] = storage_class if isinstance(storage_class, str) else None
    elif kind == "StorageClass":
        annotations = label_map(meta.get("annotations"))
        is_default = annotations.get("storageclass.kubernetes.io/is-default-class") == "true"
        inventory.storage_classes[name] = is_default


def _apply_hpas(inventory: Inventory) -> None:
    """A scalable workload an HPA targets is judged at the HPA's ``minReplicas`` (the smallest of several)."""
    minimums: dict[tuple[str, str, str], int] = {}
    for hpa in inventory.hpas:
        minimums[hpa.target] = min(minimums.get(hpa.target, hpa.min_replicas), hpa.min_replicas)
    if not minimums:
        return
    for index, workload in enumerate(inventory.workloads):
        inventory.workloads[index] = at_hpa_minimum(workload, minimums.get(hpa_target(workload)))


def hpa_target(workload: Workload) -> tuple[str, str, str]:
    """``(namespace, kind, name)``: the :attr:`HPA.target` of the HPAs that scale ``workload``."""
    return workload.namespace, workload.kind, workload.name


def at_hpa_minimum(workload: Workload, minimum: int | None) -> Workload:
    """``workload`` judged at an HPA's ``minReplicas`` (the smallest of those targeting it; ``None``: no HPA does)."""
    if minimum is not None and WORKLOAD_KINDS[workload.kind].scalable and workload.replicas is not None:
        return workload._replace(replicas=minimum)
    return workload


def collect(documents: Iterable[tuple[str, Any]]) -> Inventory:
    """Read ``(file, document)`` pairs into an :class:`Inventory`; never raises on malformed documents.

    A workload an HPA targets has the HPA's ``minReplicas`` (default 1) as its ``replicas``, below or above
    ``spec.replicas``: the autoscaler may run it at that count.

    >>> inv = collect([("a.yaml", {"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}})])
    >>> inv.workloads[0].key, inv.workloads[0].replicas, inv.workloads[0].owner_kind
    ('Deployment/default/web', 2, 'ReplicaSet')
    """
    inventory = Inventory()
    for file, doc in objects(documents):
        try:
            _read(file, doc, inventory)
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError):  # pragma: no cover - defensive
            continue
    _count_owned_pods(inventory)
    _apply_hpas(inventory)
    return inventory
