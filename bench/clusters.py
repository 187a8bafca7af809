"""Synthetic cluster snapshots (``kind: List`` objects) for the live-load and simulation benchmarks.

``generate(nodes, pods_per_node, seed)`` is deterministic: the same arguments give the same objects. The cluster has
three zones, a tainted pool, namespaces with labels, two PriorityClasses, ReplicaSet-owned pods spread unevenly (so
utilization and duplicate plugins have work), a few bare, failed and often-restarted pods, and one PDB per application.
Some applications carry zone topology spread constraints, hostname anti-affinity or a required zone affinity, so
every plugin has pods to look at. One application in twenty runs big pods (8 CPUs, 30 GiB: a whole node) that fit no
other node of the packed cluster: what makes DefaultEvictor's ``nodeFit`` work hardest, as in a busy production
cluster.
"""

from __future__ import annotations

import random
from typing import Any

Json = dict[str, Any]
ZONES = ("zone-a", "zone-b", "zone-c")
APP_SIZE = 10


def generate(nodes: int, pods_per_node: int = 25, seed: int = 1, node_sized: bool = True) -> list[Json]:
    """The cluster (see the module docstring); ``node_sized=False`` leaves out the node-sized pods."""
    rng = random.Random(seed)
    objects: list[Json] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
        for name, value in (("bench-high", 1000), ("bench-low", 10))
    ]
    namespaces = [f"team-{index}" for index in range(max(1, nodes // 10))]
    objects += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"descheduling": "on"}}}
        for name in namespaces
    ]
    node_names = [f"node-{index:04d}" for index in range(nodes)]
    for index, name in enumerate(node_names):
        spec: Json = {}
        if index % 10 == 9:
            spec["taints"] = [{"key": "pool", "value": "batch", "effect": "NoSchedule"}]
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[index % 3]},
                },
                "spec": spec,
                "status": {
                    "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                    "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                },
            }
        )
    total = nodes * pods_per_node
    weights = [1 + (index % 7) for index in range(nodes)]  # uneven: some nodes get far more pods than others
    for app in range(total // APP_SIZE):
        namespace = namespaces[app % len(namespaces)]
        name, owner_uid = f"app-{app:05d}", f"00000000-0000-4000-8000-{app:012d}"
        labels = {"app": name, "pod-template-hash": "5d8f"}
        objects.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}},
            }
        )
        for replica in range(APP_SIZE):
            node = rng.choices(node_names, weights)[0]
            pod = _pod(f"{name}-{replica}", namespace, node, labels, owner_uid, rng, big=node_sized and app % 20 == 3)
            _constraints(pod, app, name)
            objects.append(pod)
    return objects


def _constraints(pod: Json, app: int, name: str) -> None:
    spec = pod["spec"]
    if app % 5 == 0:
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": name}},
            }
        ]
    if app % 7 == 0:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": name}}}
                ]
            }
        }
    if app % 11 == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a", "zone-b"]}
                            ]
                        }
                    ]
                }
            }
        }
    if app % 13 == 0:
        spec["tolerations"] = []


def _pod(
    name: str, namespace: str, node: str, labels: dict[str, str], owner_uid: str, rng: random.Random, big: bool
) -> Json:
    restarts = rng.choice((0, 0, 0, 0, 1, 12))
    status: Json = {
        "phase": "Running",
        "startTime": "2026-11-01T00:00:00Z",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {
                "name": "app",
                "ready": True,
                "restartCount": restarts,
                "image": "app:1",
                "imageID": "",
                "state": {"running": {"startedAt": "2026-11-01T00:00:05Z"}},
            }
        ],
    }
    if rng.random() < 0.01:
        status = {"phase": "Failed", "reason": "Evicted", "startTime": "2026-11-01T00:00:00Z"}
    created = "2026-11-01T00:00:00Z" if rng.random() < 0.1 else "2026-11-20T00:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "creationTimestamp": created,
            "uid": f"{namespace}-{name}",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": labels["app"] + "-5d8f",
                    "uid": owner_uid,
                    "controller": True,
                }
            ],
        },
        "spec": {
            "nodeName": node,
            "priorityClassName": rng.choice(("bench-high", "bench-low")),
            "tolerations": [{"key": "pool", "operator": "Exists"}],
            "containers": [
                {
                    "name": "app",
                    "image": "app:1",
                    "resources": {
                        "requests": {
                            "cpu": "8" if big else rng.choice(("100m", "250m", "500m")),
                            "memory": "30Gi" if big else rng.choice(("128Mi", "512Mi")),
                        }
                    },
                }
            ],
        },
        "status": status,
    }
