"""LowNodeUtilization and the shared node-utilization code: upstream's tables as data, plus the
docs/executor-semantics.md#81-lownodeutilization rules they miss.

Ported from ``pkg/framework/plugins/nodeutilization``:
* ``lownodeutilization_test.go``: ``TestLowNodeUtilization`` (all 17 cases, requests-based run only) and
  ``TestLowNodeUtilizationWithTaints`` (all 4 cases). Skipped: every "with metrics enabled" variant of
  ``TestLowNodeUtilization`` (metrics-server usage source), ``TestLowNodeUtilizationWithPrometheusMetrics`` (its 4
  cases need a Prometheus usage source) and ``TestLowNodeUtilizationPrometheusClientNilAtCreation`` (Prometheus
  client lifecycle): metricsUtilization is out of scope and refused, see ``test_metrics_utilization_is_refused``.
* ``nodeutilization_test.go``: ``TestSortNodesByUsage`` (2 cases, both directions),
  ``TestResourceUsageToResourceThreshold`` (4 of 6 cases; "nil usage" and "nil capacity" test Go nil quantity
  pointers, which plain integer maps cannot hold), ``TestClassificationUsingDeviationThresholds`` (1 case;
  ``TestUsingDeviationThresholdsWithPointers`` is the same data through pointer types, so the same test covers it)
  and ``TestNormalizeAndClassify`` ("happy path", judged by the plugins' classifiers; "three thresholds" is skipped:
  it exercises the generic three-way classifier helper that neither plugin uses).

Upstream's fake client keeps evicted pods while our PodEvictor removes them (dry run,
docs/executor-semantics.md#11-porting-upstreams-tests); within one LowNodeUtilization run no count depends on that, so
every upstream count is kept as is. Upstream asserts counts and, in one case, the pods that may be evicted (``among``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from desched.executor.cluster import Cluster
from desched.executor.evictions import Limits, Outcome, PodEvictor
from desched.executor.framework import Handle
from desched.executor.plugins import _nodeutilization as nu
from desched.executor.plugins import lownodeutilization
from desched.plugins import REGISTRY
from tests.executor.builders import (
    NOW,
    build_node,
    build_pod,
    evictor_from,
    run_plugin,
    set_critical,
    set_ds_owner,
    set_local_storage,
    set_mirror,
    set_normal_owner,
    set_rs_owner,
)

Json = dict[str, Any]
Change = Callable[[Json], Any]
EXTENDED = "example.com/foo"
LOW_PRIORITY, HIGH_PRIORITY = 0, 10000
NODE_FIT = {"nodeFit": True}


# --- builders for what tests/executor/builders.py leaves out (upstream test helpers of the same names) -------------


def pod(name: str, cpu: int, memory: int, node: str, *changes: Change) -> Json:
    built = build_pod(name, cpu, memory, node)
    for change in changes:
        change(built)
    return built


def node(name: str, cpu: int, memory: int, pods: int, *changes: Change) -> Json:
    built = build_node(name, cpu, memory, pods)
    for change in changes:
        change(built)
    return built


def priority(value: int) -> Change:
    def apply(target: Json) -> None:
        target["spec"]["priority"] = value

    return apply


def namespace(name: str) -> Change:
    def apply(target: Json) -> None:
        target["metadata"]["namespace"] = name

    return apply


def best_effort(target: Json) -> None:
    target["spec"]["containers"][0]["resources"] = {}


def extended_request(amount: int) -> Change:
    def apply(target: Json) -> None:
        target["spec"]["containers"][0]["resources"]["requests"][EXTENDED] = str(amount)

    return apply


def extended_capacity(amount: int) -> Change:
    def apply(target: Json) -> None:
        target["status"]["capacity"][EXTENDED] = str(amount)
        target["status"]["allocatable"][EXTENDED] = str(amount)

    return apply


def unschedulable(target: Json) -> None:
    target["spec"]["unschedulable"] = True


def labels(**values: str) -> Change:
    def apply(target: Json) -> None:
        target["metadata"]["labels"] = dict(values)

    return apply


def node_selector(**values: str) -> Change:
    def apply(target: Json) -> None:
        target["spec"]["nodeSelector"] = dict(values)

    return apply


def required_node_affinity(key: str, value: str) -> Change:
    def apply(target: Json) -> None:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        target["spec"]["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }

    return apply


def taints(*items: Json) -> Change:
    def apply(target: Json) -> None:
        target["spec"]["taints"] = list(items)

    return apply


def tolerations(*items: Json) -> Change:
    def apply(target: Json) -> None:
        target["spec"]["tolerations"] = list(items)

    return apply


def local_storage_mirror(target: Json) -> None:
    """Upstream's "pod with local storage" that is also a mirror pod."""
    set_normal_owner(target)
    set_local_storage(target)
    set_mirror(target)


def critical(target: Json) -> None:
    set_normal_owner(target)
    set_critical(target)


@dataclass
class Case:
    name: str
    args: Json
    nodes: list[Json]
    pods: list[Json]
    expected: int
    among: list[str] | None = None
    evictor: Json = field(default_factory=lambda: dict(NODE_FIT))
    limits: Limits | None = None


def standard_nodes(n3: bool = True) -> list[Json]:
    """n1 (9 pods), n2 and the cordoned n3 of most upstream cases."""
    nodes = [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10)]
    return [*nodes, node("n3", 4000, 3000, 10, unschedulable)] if n3 else nodes


def unevictable(node_name: str, cpu: int = 400, memory: int = 0, first: int = 6) -> list[Json]:
    """A DaemonSet pod, a local-storage mirror pod and a critical pod (p6, p7, p8 in upstream's cases)."""
    return [
        pod(f"p{first}", cpu, memory, node_name, set_ds_owner),
        pod(f"p{first + 1}", cpu, memory, node_name, local_storage_mirror),
        pod(f"p{first + 2}", cpu, memory, node_name, critical),
    ]


def rs_pods(node_name: str, *names: str, cpu: int = 400, memory: int = 0) -> list[Json]:
    return [pod(name, cpu, memory, node_name, set_rs_owner) for name in names]


CPU_PODS = {"thresholds": {"cpu": 30, "pods": 30}, "targetThresholds": {"cpu": 50, "pods": 50}}
DEVIATION = {
    "thresholds": {"cpu": 5, "pods": 5},
    "targetThresholds": {"cpu": 5, "pods": 5},
    "useDeviationThresholds": True,
}
EXTENDED_PODS = {"thresholds": {"pods": 30, EXTENDED: 30}, "targetThresholds": {"pods": 50, EXTENDED: 50}}
WEST = required_node_affinity("datacenter", "west")

UPSTREAM_CASES = [
    Case(
        "no evictable pods",
        CPU_PODS,
        standard_nodes(),
        [
            pod("p1", 400, 0, "n1", set_ds_owner),
            pod("p2", 400, 0, "n1", set_ds_owner),
            pod("p3", 400, 0, "n1", set_ds_owner),
            pod("p4", 400, 0, "n1", set_ds_owner),
            pod("p5", 400, 0, "n1", local_storage_mirror),
            pod("p6", 400, 0, "n1", set_critical),
            *rs_pods("n2", "p9"),
        ],
        0,
    ),
    Case(
        "without priorities",
        CPU_PODS,
        standard_nodes(),
        [
            *rs_pods("n1", "p1", "p2", "p3", "p4", "p5"),
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        4,
    ),
    Case(
        "without priorities, but excluding namespaces",
        {**CPU_PODS, "evictableNamespaces": {"exclude": ["namespace1"]}},
        standard_nodes(),
        [
            *[pod(f"p{i}", 400, 0, "n1", set_normal_owner, namespace("namespace1")) for i in range(1, 6)],
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        0,
    ),
    # Upstream passes evictableNamespaces.include, which validation rejects and the code ignores: p3-p5 are bare pods.
    Case(
        "without priorities, but include only default namespace",
        {**CPU_PODS, "evictableNamespaces": {"include": ["default"]}},
        standard_nodes(),
        [
            *rs_pods("n1", "p1", "p2"),
            pod("p3", 400, 0, "n1", namespace("namespace3")),
            pod("p4", 400, 0, "n1", namespace("namespace4")),
            pod("p5", 400, 0, "n1", namespace("namespace5")),
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        2,
    ),
    Case(
        "without priorities stop when cpu capacity is depleted",
        CPU_PODS,
        standard_nodes(),
        [
            *rs_pods("n1", "p1", "p2", "p3", "p4", "p5"),
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        4,
    ),
    Case(
        "with priorities",
        CPU_PODS,
        standard_nodes(),
        [
            *[pod(f"p{i}", 400, 0, "n1", set_rs_owner, priority(HIGH_PRIORITY)) for i in range(1, 5)],
            pod("p5", 400, 0, "n1", set_rs_owner, priority(LOW_PRIORITY)),
            pod("p6", 400, 0, "n1", set_ds_owner, priority(HIGH_PRIORITY)),
            pod("p7", 400, 0, "n1", local_storage_mirror, priority(LOW_PRIORITY)),
            pod("p8", 400, 0, "n1", critical),
            *rs_pods("n2", "p9"),
        ],
        4,
    ),
    Case(
        "without priorities evicting best-effort pods only",
        CPU_PODS,
        standard_nodes(),
        [
            pod("p1", 400, 0, "n1", set_rs_owner, best_effort),
            pod("p2", 400, 0, "n1", set_rs_owner, best_effort),
            *rs_pods("n1", "p3"),
            pod("p4", 400, 0, "n1", set_rs_owner, best_effort),
            pod("p5", 400, 0, "n1", set_rs_owner, best_effort),
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        4,
        among=["p1", "p2", "p4", "p5"],
    ),
    # 4 pods could go by the pods budget, the extended resource runs out after 3.
    Case(
        "with extended resource",
        EXTENDED_PODS,
        [
            node("n1", 4000, 3000, 9, extended_capacity(8)),
            node("n2", 4000, 3000, 10, extended_capacity(8)),
            node("n3", 4000, 3000, 10, unschedulable),
        ],
        [
            *[pod(f"p{i}", 0, 0, "n1", set_rs_owner, extended_request(1)) for i in range(1, 6)],
            pod("p6", 0, 0, "n1", set_normal_owner, extended_request(1)),
            pod("p7", 0, 0, "n1", local_storage_mirror, extended_request(1)),
            pod("p8", 0, 0, "n1", critical, extended_request(1)),
            pod("p9", 0, 0, "n2", set_rs_owner, extended_request(1)),
        ],
        3,
    ),
    # n2 lacks the extended resource, so the pool holds none of it.
    Case(
        "with extended resource in some of nodes",
        EXTENDED_PODS,
        [
            node("n1", 4000, 3000, 9, extended_capacity(8)),
            node("n2", 4000, 3000, 10),
            node("n3", 4000, 3000, 10, unschedulable),
        ],
        [pod("p1", 0, 0, "n1", set_rs_owner, extended_request(1)), *rs_pods("n2", "p9", cpu=0)],
        0,
    ),
    Case(
        "with extended resource in some of nodes with deviation",
        {
            "thresholds": {"pods": 5, EXTENDED: 10},
            "targetThresholds": {"pods": 5, EXTENDED: 10},
            "useDeviationThresholds": True,
        },
        [
            node("n1", 4000, 3000, 10, extended_capacity(8)),
            node("n2", 4000, 3000, 10, extended_capacity(8)),
            node("n3", 4000, 3000, 10, unschedulable),
        ],
        [
            pod("p1", 0, 0, "n1", set_rs_owner, extended_request(1)),
            pod("p2", 0, 0, "n2", set_rs_owner, extended_request(7)),
            *rs_pods("n2", "p3", cpu=0),
            *rs_pods("n3", "p8", "p9", cpu=0),
        ],
        1,
    ),
    Case(
        "without priorities, but only other node is unschedulable",
        CPU_PODS,
        [
            node("n1", 4000, 3000, 9),
            node("n2", 4000, 3000, 10, unschedulable),
        ],
        [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5"), *unevictable("n1")],
        0,
    ),
    Case(
        "without priorities, but only other node doesn't match pod node selector for p4 and p5",
        CPU_PODS,
        [
            node("n1", 4000, 3000, 9),
            node("n2", 4000, 3000, 10, labels(datacenter="east")),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3"),
            pod("p4", 400, 0, "n1", set_normal_owner, node_selector(datacenter="west")),
            pod("p5", 400, 0, "n1", set_normal_owner, node_selector(datacenter="west")),
            *unevictable("n1"),
        ],
        3,
    ),
    Case(
        "without priorities, but only other node doesn't match pod node affinity for p4 and p5",
        CPU_PODS,
        [
            node("n1", 4000, 3000, 9),
            node("n2", 4000, 3000, 10, labels(datacenter="east")),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3"),
            pod("p4", 400, 0, "n1", set_normal_owner, WEST),
            pod("p5", 400, 0, "n1", set_normal_owner, WEST),
            *unevictable("n1"),
            *rs_pods("n2", "p9", cpu=0),
        ],
        3,
    ),
    Case(
        "deviation thresholds",
        DEVIATION,
        standard_nodes(),
        [
            *rs_pods("n1", "p1", "p2", "p3", "p4", "p5"),
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        2,
    ),
    # n1 and n2 are memory-full: the pool has no memory, so nothing moves.
    Case(
        "deviation thresholds and overevicting memory",
        DEVIATION,
        [
            node("n1", 4000, 3000, 10),
            node("n2", 4000, 3000, 10),
            node("n3", 4000, 3000, 10, unschedulable),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3", "p4", "p5", memory=375),
            *unevictable("n1", memory=375),
            *rs_pods("n2", "p9", memory=3000),
        ],
        0,
    ),
    # Upstream expects 3 from requests (2 only with metrics enabled, out of scope).
    Case(
        "without priorities different evictions for requested and actual resources",
        CPU_PODS,
        [
            node("n1", 4000, 3000, 9),
            node("n2", 4000, 3000, 10, labels(datacenter="east")),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3"),
            pod("p4", 400, 0, "n1", set_normal_owner, WEST),
            pod("p5", 400, 0, "n1", set_normal_owner, WEST),
            *unevictable("n1"),
            *rs_pods("n2", "p9", cpu=0),
        ],
        3,
    ),
    Case(
        "without priorities with node eviction limit",
        {**CPU_PODS, "evictionLimits": {"node": 2}},
        standard_nodes(),
        [
            *rs_pods("n1", "p1", "p2", "p3", "p4", "p5"),
            *unevictable("n1"),
            *rs_pods("n2", "p9"),
        ],
        2,
    ),
]

# TestLowNodeUtilizationWithTaints: upstream sets the PodEvictor's per-node limit to the expected count (its
# maxPodsToEvictPerNode/maxPodsToEvictTotal fields are unused), so the last case runs with a per-node limit of 0.
TAINT = {"key": "key", "value": "value", "effect": "NoSchedule"}
TAINT_NODES = [node("n1", 2000, 3000, 10), node("n2", 1000, 3000, 10), node("n3", 1000, 3000, 10)]
TAINTED_N3 = node("n3", 1000, 3000, 10, taints(TAINT))
PODS_ONLY = {"thresholds": {"pods": 20}, "targetThresholds": {"pods": 70}}


def taint_pods(count: int, tolerating: bool) -> list[Json]:
    pods = [pod(f"pod_{i}_n1", 200, 0, "n1", set_rs_owner) for i in range(1, count + 1)]
    if tolerating:
        pods.append(pod("tolerate_pod", 200, 0, "n1", set_rs_owner, tolerations({"key": "key", "value": "value"})))
    return pods


TAINT_CASES = [
    Case(
        "No taints",
        PODS_ONLY,
        TAINT_NODES,
        [*taint_pods(8, False), pod("pod_9_n2", 200, 0, "n2", set_rs_owner)],
        1,
        limits=Limits(per_node=1),
    ),
    Case(
        "No pod tolerates node taint",
        PODS_ONLY,
        [TAINT_NODES[0], TAINTED_N3],
        [*taint_pods(8, False), pod("pod_9_n3", 200, 0, "n3", set_rs_owner)],
        0,
        limits=Limits(per_node=0),
    ),
    Case(
        "Pod which tolerates node taint",
        PODS_ONLY,
        [TAINT_NODES[0], TAINTED_N3],
        [*taint_pods(7, True), pod("pod_9_n3", 200, 0, "n3", set_rs_owner)],
        1,
        among=["tolerate_pod"],
        limits=Limits(per_node=1),
    ),
    Case(
        "Pod which tolerates node taint, set maxPodsToEvictTotal(0), should not be expelled",
        PODS_ONLY,
        [TAINT_NODES[0], TAINTED_N3],
        [*taint_pods(7, True), pod("pod_9_n3", 200, 0, "n3", set_rs_owner)],
        0,
        limits=Limits(per_node=0),
    ),
]


def succeeded(target: Json) -> None:
    target["status"]["phase"] = "Succeeded"


def two_sources(
    name: str, expected: int, args: Json = CPU_PODS, limits: Limits | None = None, among: list[str] | None = None
) -> Case:
    """Two overutilized nodes and a large empty one. a (6 x 500m of 4000m, a3 in namespace "other") must shed 2 pods
    to reach its 2000m budget, b (5 x 500m) 1 pod; a has the higher score and goes first."""
    nodes = [node("a", 4000, 3000, 10), node("b", 4000, 3000, 10), node("c", 40000, 30000, 100)]
    pods = [
        *rs_pods("a", "a1", "a2", cpu=500),
        pod("a3", 500, 0, "a", set_rs_owner, namespace("other")),
        *rs_pods("a", "a4", "a5", "a6", cpu=500),
        *rs_pods("b", "b1", "b2", "b3", "b4", "b5", cpu=500),
    ]
    return Case(name, args, nodes, pods, expected, among=among, limits=limits)


# Rules of docs/executor-semantics.md#81-lownodeutilization that no upstream case pins down.
OWN_CASES = [
    Case(
        "numberOfNodes at the number of underutilized nodes does nothing",
        {**CPU_PODS, "numberOfNodes": 1},
        standard_nodes(),
        [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5"), *unevictable("n1"), *rs_pods("n2", "p9")],
        0,
    ),
    Case(
        "numberOfNodes below the number of underutilized nodes",
        {**CPU_PODS, "numberOfNodes": 1},
        [*standard_nodes(n3=False), node("n3", 4000, 3000, 10)],
        [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5"), *unevictable("n1"), *rs_pods("n2", "p9")],
        4,
    ),
    Case(
        "a cordoned node can be a source",
        CPU_PODS,
        [node("n1", 4000, 3000, 9, unschedulable), node("n2", 4000, 3000, 10)],
        [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5"), *unevictable("n1")],
        4,
    ),
    # n1 runs 2 pods of 9 (underutilized); its 6 Succeeded pods count neither toward usage nor as pods.
    Case(
        "terminal pods do not count toward usage",
        CPU_PODS,
        standard_nodes(),
        [
            *rs_pods("n1", "p1", "p2"),
            *[pod(f"done{i}", 400, 0, "n1", set_rs_owner, succeeded) for i in range(6)],
            *rs_pods("n2", "p9"),
        ],
        0,
    ),
    # The destinations' taints count with every effect, and a node with more taints than the pod has tolerations is
    # rejected unexamined, even when one wildcard toleration would cover them
    # (docs/executor-semantics.md#74-taints-tolerations-and-selectors).
    Case(
        "PreferNoSchedule taints and the count shortcut",
        PODS_ONLY,
        [
            node("n1", 2000, 3000, 10),
            node(
                "n2",
                1000,
                3000,
                10,
                taints({"key": "a", "effect": "PreferNoSchedule"}, {"key": "b", "effect": "PreferNoSchedule"}),
            ),
        ],
        [
            *[pod(f"wild{i}", 200, 0, "n1", set_rs_owner, tolerations({"operator": "Exists"})) for i in range(4)],
            pod(
                "both",
                200,
                0,
                "n1",
                set_rs_owner,
                tolerations({"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}),
            ),
            *rs_pods("n1", "plain1", "plain2", "plain3", cpu=200),
        ],
        1,
        among=["both"],
        evictor={},
    ),
    Case(
        "usage at the low threshold is underutilized",
        {"thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 50}},
        [node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10)],
        [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5", "p6"), *rs_pods("n2", "q1", "q2", "q3")],
        1,
    ),
    # n1 sits exactly at its cpu target, so it is not overutilized, although its memory (no threshold, so budgeted at
    # full capacity) is overcommitted and would keep a source draining.
    Case(
        "usage at the target is not overutilized",
        {"thresholds": {"cpu": 30}, "targetThresholds": {"cpu": 50}},
        [node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10)],
        [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5", memory=800), *rs_pods("n2", "q1")],
        0,
    ),
    # Average cpu 40%: low 30% (n2 and n3 underutilized), high 70% (n1 drains from 80% to its 2800m budget).
    Case(
        "deviation thresholds with different spans",
        {
            "thresholds": {"cpu": 10},
            "targetThresholds": {"cpu": 30},
            "useDeviationThresholds": True,
        },
        [node("n1", 4000, 3000, 10), node("n2", 4000, 3000, 10), node("n3", 4000, 3000, 10)],
        [
            *rs_pods("n1", *[f"p{i}" for i in range(1, 9)]),
            *rs_pods("n2", "q1"),
            *rs_pods("n3", "r1", "r2", "r3"),
        ],
        1,
    ),
    Case(
        "the taints of any destination will do",
        PODS_ONLY,
        [
            node("n1", 2000, 3000, 10),
            node("n2", 1000, 3000, 10, taints({"key": "a", "effect": "NoSchedule"})),
            node("n3", 1000, 3000, 10, taints({"key": "b", "effect": "NoSchedule"})),
        ],
        [
            *rs_pods("n1", *[f"plain{i}" for i in range(7)], cpu=200),
            pod("tolerates_b", 200, 0, "n1", set_rs_owner, tolerations({"key": "b", "operator": "Exists"})),
        ],
        1,
        among=["tolerates_b"],
        evictor={},
    ),
    two_sources("each source drains to its target budget", 3),
    two_sources("evictionLimits.node caps each source separately", 2, args={**CPU_PODS, "evictionLimits": {"node": 1}}),
    two_sources("a total limit stops every source", 1, limits=Limits(total=1)),
    two_sources("a node limit moves on to the next source", 2, limits=Limits(per_node=1)),
    # a1 goes, a2 hits the namespace limit and is skipped, a3 (namespace "other") goes; b's pods all hit the limit.
    two_sources(
        "a namespace limit skips the pod, not the source", 2, limits=Limits(per_namespace=1), among=["a1", "a3"]
    ),
]


def run(case: Case) -> list[str]:
    return run_plugin(
        lownodeutilization.NAME, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits
    )


@pytest.mark.parametrize("case", [*UPSTREAM_CASES, *TAINT_CASES, *OWN_CASES], ids=lambda case: case.name)
def test_low_node_utilization(case: Case) -> None:
    evicted = run(case)
    assert len(evicted) == case.expected, evicted
    if case.among is not None:
        assert set(evicted) <= set(case.among), evicted


def test_sources_go_from_the_highest_score_down() -> None:
    evicted = run(two_sources("order", 3))
    assert [name[0] for name in evicted] == ["a", "a", "b"], evicted
    with_limit = run(two_sources("order", 2, limits=Limits(per_node=1)))
    assert [name[0] for name in with_limit] == ["a", "b"], with_limit


def test_a_total_limit_ends_the_run() -> None:
    # After the refusal no other source asks the PodEvictor again (a refusal is counted in the metrics).
    case = two_sources("total", 1)
    cluster = Cluster.from_objects(copy.deepcopy([*case.nodes, *case.pods]))
    pod_evictor = PodEvictor(cluster, Limits(total=1))
    handle = Handle(cluster, NOW, "profile", evictor_from({}, cluster, NOW), pod_evictor)
    args = REGISTRY["LowNodeUtilization"].decode(case.args)
    lownodeutilization.Implementation(args, handle).balance(list(cluster.nodes))
    assert len(pod_evictor.evictions) == 1 and pod_evictor.refusals == {Outcome.TOTAL_LIMIT.value: 1}


def test_pods_budget_is_truncated() -> None:
    # pods target 50% of 9 allocatable pods is int(4.5) = 4: from 6 pods exactly 2 go, cpu keeps nothing back.
    args = {"thresholds": {"pods": 20}, "targetThresholds": {"pods": 50}}
    nodes = [node("n1", 4000, 3000, 9), node("n2", 4000, 3000, 10), node("n3", 4000, 3000, 10)]
    pods = [*rs_pods("n1", "p1", "p2", "p3", "p4", "p5", "p6", cpu=10), *rs_pods("n2", "q1", cpu=10)]
    assert len(run(Case("truncation", args, nodes, pods, 2))) == 2


@pytest.mark.parametrize(
    "metrics",
    [
        {"source": "KubernetesMetrics"},
        {"source": "Prometheus", "prometheus": {"query": "q"}},
        {"metricsServer": True},
        {},
    ],
)
def test_metrics_utilization_is_refused(metrics: Json) -> None:
    case = UPSTREAM_CASES[1]
    with pytest.raises(RuntimeError, match=r"LowNodeUtilization: metricsUtilization \(.*\) is not supported"):
        run(Case(case.name, {**case.args, "metricsUtilization": metrics}, case.nodes, case.pods, 0))


def test_defaults_change_nothing() -> None:
    args = {"thresholds": {"cpu": 10}, "targetThresholds": {"cpu": 20}}
    plugin = REGISTRY["LowNodeUtilization"]
    assert plugin.defaults(plugin.decode(args)) == plugin.decode(args)


# --- nodeutilization_test.go ------------------------------------------------------------------------------------------


def usage_node(name: str, usage: dict[str, int]) -> nu.NodeUsage:
    return nu.NodeUsage({"metadata": {"name": name}}, name, [], usage, {})


@pytest.mark.parametrize(
    "usages, descending",
    [
        (
            {
                "node1": {"cpu": 1730, "memory": 3038982964, "pods": 25},
                "node2": {"cpu": 1220, "memory": 3038982964, "pods": 11},
                "node3": {"cpu": 1530, "memory": 5038982964, "pods": 20},
            },
            ["node3", "node1", "node2"],
        ),
        (
            {"node1": {"memory": 3038982964}, "node2": {"memory": 2038982964}, "node3": {"memory": 5038982964}},
            ["node3", "node1", "node2"],
        ),
    ],
    ids=["cpu memory pods", "memory"],
)
def test_sort_nodes_by_usage(usages: dict[str, dict[str, int]], descending: list[str]) -> None:
    nodes = [usage_node(name, usage) for name, usage in usages.items()]
    assert [n.name for n in sorted(nodes, key=nu.usage_score, reverse=True)] == descending
    assert [n.name for n in sorted(nodes, key=nu.usage_score)] == descending[::-1]


@pytest.mark.parametrize(
    "usage, capacity, expected",
    [
        ({"cpu": 100}, {"cpu": 1000}, {"cpu": 10.0}),
        ({"cpu": 100}, {"cpu": 0}, {"cpu": 0.0}),
        ({"does-not-exist": 100}, {"cpu": 100, "memory": 1}, {}),
        ({"does-not-exist": 100, "cpu": 200}, {"cpu": 1000, "memory": 1}, {"cpu": 20.0}),
    ],
    ids=["10 percent", "zeroed out capacity", "non existing usage", "existing and non existing usage"],
)
def test_percentages(usage: dict[str, int], capacity: dict[str, int], expected: dict[str, float]) -> None:
    assert nu.percentages(usage, capacity) == expected


def classify(
    percents: dict[str, nu.Percentages], low: nu.Percentages, high: nu.Percentages
) -> tuple[set[str], set[str]]:
    under = {name for name, usage in percents.items() if nu.below(usage, low)}
    over = {name for name, usage in percents.items() if name not in under and nu.above(usage, high)}
    return under, over


def test_classification_using_deviation_thresholds() -> None:
    # Average 50%: low 45%, high 55%. node1 (10%) is under, node5 (90%) over, 48/52/50% are in between.
    capacity = {"cpu": 1000 * 1000, "memory": 1000}
    percents = {
        name: nu.percentages({"cpu": used * 1000, "memory": used}, capacity)
        for name, used in {"node1": 100, "node2": 480, "node3": 520, "node4": 500, "node5": 900}.items()
    }
    spans = {"cpu": 5.0, "memory": 5.0}
    low, high = nu.deviation_thresholds(percents.values(), spans, spans)
    assert low == pytest.approx({"cpu": 45.0, "memory": 45.0}) and high == pytest.approx({"cpu": 55.0, "memory": 55.0})
    assert classify(percents, low, high) == ({"node1"}, {"node5"})


def test_normalize_and_classify_happy_path() -> None:
    # Upstream's generic classifier wants every resource over the limit; the plugins' "overutilized" wants any one,
    # so node4 (cpu 10%, memory 90%) is overutilized here.
    capacity = {"cpu": 100 * 1000, "memory": 100}
    percents = {
        name: nu.percentages({"cpu": cpu * 1000, "memory": memory}, capacity)
        for name, (cpu, memory) in {"node1": (10, 10), "node2": (90, 90), "node3": (50, 50), "node4": (10, 90)}.items()
    }
    limits = ({"cpu": 20.0, "memory": 20.0}, {"cpu": 80.0, "memory": 80.0})
    assert classify(percents, *limits) == ({"node1"}, {"node2", "node4"})


def test_deviation_average_skips_nodes_without_the_resource() -> None:
    low, high = nu.deviation_thresholds([{EXTENDED: 20.0}, {EXTENDED: 60.0}, {}], {EXTENDED: 10.0}, {EXTENDED: 50.0})
    assert (low, high) == ({EXTENDED: 30.0}, {EXTENDED: 90.0})
    assert nu.deviation_thresholds([{"cpu": 95.0}], {"cpu": 5.0}, {"cpu": 20.0}) == ({"cpu": 90.0}, {"cpu": 100.0})
    assert nu.deviation_thresholds([{"cpu": 3.0}], {"cpu": 5.0}, {"cpu": 5.0}) == ({"cpu": 0.0}, {"cpu": 8.0})


def test_cap_to_threshold() -> None:
    capacity = {"cpu": 4000, "memory": 3000, "pods": 9}
    thresholds = {"cpu": 35.0, "pods": 50.0, EXTENDED: 50.0}
    capped = nu.cap_to_threshold(capacity, thresholds, ["cpu", "memory", "pods", EXTENDED])
    assert capped == {"cpu": 1400, "memory": 3000, "pods": 4, EXTENDED: 0}
