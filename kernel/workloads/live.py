"""Workload inputs read from a live cluster (``desched scope --kubeconfig``), read-only.

Contract: :func:`read_cluster` lists every kind the scope model uses, each at the newest version the server serves
(PodDisruptionBudgets at ``policy/v1`` or ``policy/v1beta1``, HPAs at ``autoscaling/v2``, ``v2beta2`` or ``v1``,
CronJobs at ``batch/v1`` or ``batch/v1beta1``), and returns the objects as snapshot documents for
:func:`~desched.workloads.model.collect`, plus one warning per kind it may not list (RBAC) or that the server does not
serve. Only ``get`` and ``list`` requests are made. Connection and configuration errors raise
:class:`~desched.runtime.kube.KubeError`.
"""

from typing import NamedTuple

from desched.errors import KubeError
from desched.runtime.kube import Json, KubeClient
from desched.workloads.model import WORKLOAD_KINDS

# (kind, apiVersions in order of preference)
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Namespace", ("v1",)),
    ("PriorityClass", ("scheduling.k8s.io/v1",)),
    ("StorageClass", ("storage.k8s.io/v1",)),
    ("PersistentVolumeClaim", ("v1",)),
    *((kind, workload.api_versions) for kind, workload in WORKLOAD_KINDS.items()),
    ("PodDisruptionBudget", ("policy/v1", "policy/v1beta1")),
    ("HorizontalPodAutoscaler", ("autoscaling/v2", "autoscaling/v2beta2", "autoscaling/v1")),
)


class LiveInputs(NamedTuple):
    objects: list[Json]
    warnings: list[str]


def read_cluster(cluster: KubeClient) -> LiveInputs:
    """Every object of :data:`KINDS` the credentials may list (see the module contract)."""
    objects: list[Json] = []
    warnings: list[str] = []
    for kind, versions in KINDS:
        resource = cluster.find(kind, versions)
        if resource is None:
            warnings.append(f"the server serves no {kind} (tried {', '.join(versions)})")
            continue
        try:
            objects.extend(cluster.list(resource))
        except KubeError as error:
            if error.status not in (401, 403):
                raise
            warnings.append(f"cannot list {kind} ({resource.api_version}): {error}; workloads are judged without them")
    return LiveInputs(objects, warnings)
