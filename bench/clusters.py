"""Synthetic cluster snapshots (``kind: List`` objects) for the live-load and simulation benchmarks.

``generate(nodes, pods_per_node, seed)`` is deterministic: the same arguments give the same objects. The cluster has
three zones, a tainted pool, namespaces with labels, two PriorityClasses, ReplicaSet-owned pods spread unevenly (so
utilization and duplicate plugins have work), a few bare, failed and often-restarted pods, and one PDB per application.
Some applications carry zone topology spread constraints, hostname anti-affinity or a required zone affinity, so
every plugin has pods to look at. One application in twenty runs big pods (8 CPUs, 30 GiB: a whole node) that fit no
other node of the packed cluster: what makes DefaultEvictor's ``nodeFit`` work hardest, as in a busy production
cluster.

``pools=True`` gives the other shape real clusters have: nodes in pools (a ``node-pool`` label and its instance type;
general, memory, compute, gpu and batch pools of different sizes, the gpu and batch pools tainted ``NoSchedule``,
and a ``NoSchedule`` maintenance taint on every 17th node), and applications pinned to pools the ways teams pin them:
a ``nodeSelector``, a required node affinity over pools and zones, tolerations for their pool's taint, or nothing.
Their pods are placed on nodes of their pool.
"""

from __future__ import annotations

import random
from typing import Any

Json = dict[str, Any]
ZONES = ("zone-a", "zone-b", "zone-c")
APP_SIZE = 10
#: pool -> (share of the nodes, allocatable cpu, memory, its taint or None)
POOLS = {
    "general": (10, "8", "32Gi", None),
    "memory": (4, "8", "64Gi", None),
    "compute": (3, "16", "32Gi", None),
    "gpu": (1, "8", "64Gi", {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}),
    "batch": (2, "8", "32Gi", {"key": "pool", "value": "batch", "effect": "NoSchedule"}),
}
MAINTENANCE = {"key": "dedicated", "value": "maintenance", "effect": "NoSchedule"}


def generate(
    nodes: int, pods_per_node: int = 25, seed: int = 1, node_sized: bool = True, pools: bool = False
) -> list[Json]:
    """The cluster (see the module docstring); ``node_sized=False`` leaves out the node-sized pods, ``pools=True``
    gives the pooled shape."""
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
    pool_of = _pools(nodes) if pools else ["general"] * nodes
    for index, name in enumerate(node_names):
        objects.append(_node(name, index, pool_of[index] if pools else None))
    total = nodes * pods_per_node
    weights = [1 + (index % 7) for index in range(nodes)]  # uneven: some nodes get far more pods than others
    members = {pool: [i for i, each in enumerate(pool_of) if each == pool] for pool in POOLS}
    for app in range(total // APP_SIZE):
        namespace = namespaces[app % len(namespaces)]
        name, owner_uid = f"app-{app:05d}", f"00000000-0000-4000-8000-{app:012d}"
        labels = {"app": name, "pod-template-hash": "5d8f"}
        pool = _app_pool(app) if pools else "general"
        on = members[pool] or list(range(nodes))  # a pool too small to have nodes: anywhere
        on_weights = [weights[i] for i in on]
        objects.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": name}}},
            }
        )
        for replica in range(APP_SIZE):
            node = node_names[rng.choices(on, on_weights)[0]]
            pod = _pod(f"{name}-{replica}", namespace, node, labels, owner_uid, rng, big=node_sized and app % 20 == 3)
            _constraints(pod, app, name)
            if pools:
                _pin(pod, app, pool)
            objects.append(pod)
    return objects


def _node(name: str, index: int, pool: str | None) -> Json:
    """Node ``index``: the packed shape's (8 CPUs, 32 GiB, every tenth tainted for batch), or one of ``pool``."""
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": ZONES[index % 3]}
    cpu, memory, taints = "8", "32Gi", []
    if pool is None:
        if index % 10 == 9:
            taints.append({"key": "pool", "value": "batch", "effect": "NoSchedule"})
    else:
        _, cpu, memory, taint = POOLS[pool]
        labels["node-pool"] = pool
        labels["node.kubernetes.io/instance-type"] = f"{pool}.{cpu}x{memory.lower()}"
        taints += [taint] if taint else []
        taints += [MAINTENANCE] if index % 17 == 16 else []
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"taints": taints} if taints else {},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def _pools(nodes: int) -> list[str]:
    """Each node's pool, interleaved so that every pool has nodes in every zone."""
    cycle = [pool for pool, (share, *_) in POOLS.items() for _ in range(share)]
    return [cycle[(index * 7) % len(cycle)] for index in range(nodes)]


def _app_pool(app: int) -> str:
    """The pool application ``app`` runs in: most in general, then memory, compute, batch and gpu."""
    return ("general", "general", "memory", "general", "compute", "general", "batch", "general", "memory", "gpu")[
        app % 10
    ]


def _pin(pod: Json, app: int, pool: str) -> None:
    """How the application is pinned to its pool: a nodeSelector, a required node affinity over pools and zones, or
    nothing (general apps only); tolerations for the pool's taint, and sometimes for the maintenance taint."""
    spec = pod["spec"]
    taint = POOLS[pool][3]
    spec["tolerations"] = [{"key": taint["key"], "operator": "Exists", "effect": "NoSchedule"}] if taint else []
    if app % 9 == 4:
        spec["tolerations"].append({"key": "dedicated", "operator": "Equal", "value": "maintenance"})
    way = app % 3
    if way == 0 or pool != "general":
        spec["nodeSelector"] = {"node-pool": pool}
    elif way == 1:
        pools = [pool, "compute"] if pool == "general" else [pool]
        zones = [ZONES[app % 3], ZONES[(app + 1) % 3]]
        spec.setdefault("affinity", {})["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "node-pool", "operator": "In", "values": pools},
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones},
                        ]
                    }
                ]
            }
        }


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
