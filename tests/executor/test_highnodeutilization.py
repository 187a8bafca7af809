"""HighNodeUtilization: upstream's tables as data, plus the docs/executor-semantics.md#82-highnodeutilization rules they
miss.

Ported from ``pkg/framework/plugins/nodeutilization/highnodeutilization_test.go``: ``TestHighNodeUtilization`` (all
14 cases, the duplicated "Other node does not have enough Memory" included) and ``TestHighNodeUtilizationWithTaints``
(all 3 cases). Nothing is skipped. Upstream's fake client keeps evicted pods while our PodEvictor removes them (dry
run, docs/executor-semantics.md#11-porting-upstreams-tests); no count here depends on that. ``among`` lists the pods
upstream allows to be evicted.
"""

from __future__ import annotations

from typing import Any

import pytest

from desched.executor.evictions import Limits
from desched.executor.plugins import highnodeutilization
from desched.plugins import REGISTRY
from tests.executor.builders import run_plugin, set_ds_owner, set_rs_owner
from tests.executor.test_lownodeutilization import (
    EXTENDED,
    HIGH_PRIORITY,
    LOW_PRIORITY,
    Case,
    best_effort,
    critical,
    extended_capacity,
    extended_request,
    labels,
    local_storage_mirror,
    namespace,
    node,
    node_selector,
    pod,
    priority,
    rs_pods,
    taints,
    tolerations,
    unschedulable,
)

Json = dict[str, Any]
CPU_PODS_20 = {"thresholds": {"cpu": 20, "pods": 20}}
CPU_PODS_30 = {"thresholds": {"cpu": 30, "pods": 30}}
ONLY_THRESHOLDING = {"evictionModes": ["OnlyThresholdingResources"]}


def three_nodes(cpu: int = 4000, pods: int = 10, cordon_n3: bool = True) -> list[Json]:
    n3 = node("n3", cpu, 3000, 10, unschedulable) if cordon_n3 else node("n3", cpu, 3000, 10)
    return [node("n1", cpu, 3000, pods), node("n2", cpu, 3000, 10), n3]


def extended_nodes(n2_extended: bool) -> list[Json]:
    n2 = node("n2", 4000, 3000, 10, extended_capacity(8)) if n2_extended else node("n2", 4000, 3000, 10)
    return [node("n1", 4000, 3000, 10, extended_capacity(8)), n2, node("n3", 4000, 3000, 10, unschedulable)]


def not_enough_memory() -> Case:
    return Case(
        "Other node does not have enough Memory",
        CPU_PODS_30,
        [
            node("n1", 4000, 200, 9),
            node("n2", 4000, 3000, 10),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3", memory=50),
            pod("p4", 400, 50, "n1", set_ds_owner),
            *rs_pods("n2", "p5", memory=100),
        ],
        0,
    )


UPSTREAM_CASES = [
    Case(
        "no node below threshold usage",
        CPU_PODS_20,
        three_nodes(cordon_n3=False),
        [
            *rs_pods("n1", "p1", "p2", "p3"),
            *rs_pods("n2", "p4", "p5", "p6"),
            *rs_pods("n3", "p7", "p8", "p9"),
        ],
        0,
    ),
    Case(
        "no evictable pods",
        {"thresholds": {"cpu": 40, "pods": 40}},
        three_nodes(pods=9, cordon_n3=False),
        [
            pod("p1", 400, 0, "n1", local_storage_mirror),
            pod("p2", 400, 0, "n1", critical),
            pod("p3", 400, 0, "n2", set_ds_owner),
            pod("p4", 400, 0, "n2", set_ds_owner),
            *rs_pods("n3", "p5", "p6", "p7", "p8"),
        ],
        0,
    ),
    Case(
        "no node to schedule evicted pods",
        CPU_PODS_20,
        three_nodes(),
        [
            *rs_pods("n1", "p1"),
            *rs_pods("n2", "p2"),
            *rs_pods("n3", "p3", "p4", "p5"),
        ],
        0,
    ),
    Case(
        "without priorities",
        CPU_PODS_30,
        three_nodes(),
        [
            *rs_pods("n1", "p1"),
            pod("p2", 400, 0, "n1", critical),
            *rs_pods("n2", "p3", "p4", "p5", "p6"),
            *rs_pods("n3", "p7"),
        ],
        2,
        among=["p1", "p7"],
    ),
    Case(
        "without priorities stop when resource capacity is depleted",
        CPU_PODS_30,
        three_nodes(cpu=2000),
        [
            *rs_pods("n1", "p1"),
            *rs_pods("n2", "p2", "p3", "p4", "p5"),
            *rs_pods("n3", "p6"),
        ],
        1,
    ),
    Case(
        "with priorities",
        {"thresholds": {"cpu": 30}},
        [
            node("n1", 4000, 3000, 10),
            node("n2", 2000, 3000, 10),
            node("n3", 2000, 3000, 10, unschedulable),
        ],
        [
            pod("p1", 400, 0, "n1", set_rs_owner, priority(LOW_PRIORITY)),
            pod("p2", 400, 0, "n1", set_rs_owner, priority(HIGH_PRIORITY)),
            *rs_pods("n2", "p5", "p6", "p7", "p8"),
            pod("p9", 400, 0, "n3", set_ds_owner),
        ],
        1,
        among=["p1"],
    ),
    Case(
        "without priorities evicting best-effort pods only",
        {"thresholds": {"cpu": 30}},
        [
            node("n1", 3000, 3000, 10),
            node("n2", 3000, 3000, 5),
            node("n3", 3000, 3000, 10, unschedulable),
        ],
        [
            pod("p1", 0, 0, "n1", set_rs_owner, best_effort),
            *rs_pods("n1", "p2"),
            *rs_pods("n2", "p3", "p4", "p5", "p6"),
        ],
        1,
        among=["p1"],
    ),
    Case(
        "with extended resource",
        {"thresholds": {"cpu": 20, EXTENDED: 40}},
        extended_nodes(True),
        [
            pod("p1", 100, 0, "n1", set_rs_owner, extended_request(1)),
            pod("p2", 100, 0, "n1", set_rs_owner, extended_request(1)),
            *[pod(f"p{i}", 500, 0, "n2", set_rs_owner, extended_request(1)) for i in range(3, 7)],
        ],
        2,
        among=["p1", "p2"],
    ),
    # n2 lacks the extended resource, so the pool holds none of it.
    Case(
        "with extended resource in some of nodes",
        {"thresholds": {"cpu": 40, EXTENDED: 40}},
        extended_nodes(False),
        [
            pod("p1", 100, 0, "n1", set_rs_owner, extended_request(1)),
            pod("p2", 100, 0, "n1", set_rs_owner, extended_request(1)),
            *rs_pods("n2", "p3", "p4", "p5", "p6", cpu=500),
        ],
        0,
    ),
    Case(
        "Other node match pod node selector",
        CPU_PODS_30,
        [
            node("n1", 4000, 3000, 9, labels(datacenter="west")),
            node("n2", 4000, 3000, 10),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3"),
            pod("p4", 400, 0, "n1", set_ds_owner),
            pod("p5", 400, 0, "n2", set_rs_owner, node_selector(datacenter="west")),
        ],
        1,
    ),
    Case(
        "Other node does not match pod node selector",
        CPU_PODS_30,
        [
            node("n1", 4000, 3000, 9),
            node("n2", 4000, 3000, 10),
        ],
        [
            *rs_pods("n1", "p1", "p2", "p3"),
            pod("p4", 400, 0, "n1", set_ds_owner),
            pod("p5", 400, 0, "n2", set_rs_owner, node_selector(datacenter="west")),
        ],
        0,
    ),
    not_enough_memory(),
    not_enough_memory(),
    Case(
        "with extended resource threshold and no extended resource pods",
        {
            "thresholds": {EXTENDED: 40},
            **ONLY_THRESHOLDING,
        },
        [node(name, 4000, 3000, 10, extended_capacity(10)) for name in ("n1", "n2", "n3")],
        [
            pod("p1", 100, 0, "n1", set_rs_owner, extended_request(3)),
            pod("p2", 100, 0, "n1", set_rs_owner, extended_request(3)),
            *rs_pods("n2", "p3", "p4", "p5", "p6", cpu=500),
        ],
        0,
    ),
]

# TestHighNodeUtilizationWithTaints: DefaultEvictor without nodeFit, PodEvictor per-node limit = expected count.
TAINTED_N3 = node("n3", 1000, 3000, 10, taints({"key": "key", "value": "value", "effect": "NoSchedule"}))
CPU_40 = {"thresholds": {"cpu": 40}}
TAINT_CASES = [
    Case(
        "No taints",
        CPU_40,
        [node(name, 1000, 3000, 10) for name in ("n1", "n2", "n3")],
        [
            *[pod(f"pod_{i}_n1", 200, 0, "n1", set_rs_owner) for i in (1, 2, 3)],
            pod("pod_4_n2", 200, 0, "n2", set_rs_owner),
        ],
        1,
        evictor={},
        limits=Limits(per_node=1),
    ),
    Case(
        "No pod tolerates node taint",
        CPU_40,
        [node("n1", 1000, 3000, 10), TAINTED_N3],
        [
            pod("pod_1_n1", 200, 0, "n1", set_rs_owner),
            pod("pod_2_n3", 200, 0, "n3", set_rs_owner),
        ],
        0,
        evictor={},
        limits=Limits(per_node=0),
    ),
    Case(
        "Pod which tolerates node taint",
        CPU_40,
        [node("n1", 1000, 3000, 10), TAINTED_N3],
        [
            pod("pod_1_n1", 100, 0, "n1", set_rs_owner),
            pod("tolerate_pod", 200, 0, "n1", set_rs_owner, tolerations({"key": "key", "value": "value"})),
            pod("pod_9_n3", 500, 0, "n3", set_rs_owner),
        ],
        1,
        among=["tolerate_pod"],
        evictor={},
        limits=Limits(per_node=1),
    ),
]


def init_extended_request(target: Json) -> None:
    target["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {EXTENDED: "0"}}}]


# Rules of docs/executor-semantics.md#82-highnodeutilization that no upstream case pins down. n1 and n2 are
# underutilized sources (n2 first: lower score), n3 is
# the only destination (cpu 50%, extended resource 50%) with room for everything.
SOURCES = [node(name, 4000, 3000, 10, extended_capacity(10)) for name in ("n1", "n2", "n3")]
SOURCE_PODS = [
    pod("with", 100, 0, "n1", set_rs_owner, extended_request(1)),
    pod("without", 100, 0, "n1", set_rs_owner),
    pod("init", 100, 0, "n1", set_rs_owner, init_extended_request),
    pod("empty", 0, 0, "n1", set_rs_owner, best_effort),
    pod("n2pod", 10, 0, "n2", set_rs_owner, namespace("other")),
    pod("big", 2000, 0, "n3", set_rs_owner, extended_request(5)),
]
CPU_20 = {"thresholds": {"cpu": 20}}
OWN_CASES = [
    Case("every pod of the underutilized nodes may move by default", CPU_20, SOURCES, SOURCE_PODS, 5),
    # A request key counts whatever its value (build_pod always writes cpu), in containers and init containers.
    Case(
        "OnlyThresholdingResources on cpu keeps only the pod without requests",
        {**CPU_20, **ONLY_THRESHOLDING},
        SOURCES,
        SOURCE_PODS,
        4,
        among=["with", "without", "init", "n2pod"],
    ),
    Case(
        "OnlyThresholdingResources on an extended resource",
        {"thresholds": {EXTENDED: 20}, **ONLY_THRESHOLDING},
        SOURCES,
        SOURCE_PODS,
        2,
        among=["with", "init"],
    ),
    Case(
        "evictableNamespaces.exclude",
        {**CPU_20, "evictableNamespaces": {"exclude": ["other"]}},
        SOURCES,
        SOURCE_PODS,
        4,
        among=["with", "without", "init", "empty"],
    ),
    Case(
        "numberOfNodes at the number of underutilized nodes does nothing",
        {**CPU_20, "numberOfNodes": 2},
        SOURCES,
        SOURCE_PODS,
        0,
    ),
    Case(
        "a cordoned node is no destination",
        CPU_20,
        [*SOURCES[:2], node("n3", 4000, 3000, 10, unschedulable)],
        SOURCE_PODS,
        0,
    ),
    Case("a total limit stops every source", CPU_20, SOURCES, SOURCE_PODS, 1, limits=Limits(total=1), among=["n2pod"]),
    Case("a node limit moves on to the next source", CPU_20, SOURCES, SOURCE_PODS, 2, limits=Limits(per_node=1)),
]


@pytest.mark.parametrize("case", [*UPSTREAM_CASES, *TAINT_CASES, *OWN_CASES], ids=lambda case: case.name)
def test_high_node_utilization(case: Case) -> None:
    evicted = run_plugin(
        highnodeutilization.NAME, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits
    )
    assert len(evicted) == case.expected, evicted
    if case.among is not None:
        assert set(evicted) <= set(case.among), evicted


def test_sources_go_from_the_lowest_score_up() -> None:
    evicted = run_plugin(highnodeutilization.NAME, CPU_20, SOURCES, SOURCE_PODS)
    assert evicted[0] == "n2pod" and set(evicted[1:]) == {"with", "without", "init", "empty"}, evicted


def test_the_pool_running_out_stops_every_source() -> None:
    # n3 has 210m free: n2pod (10m), then a and b (100m each) leave nothing, so c stays.
    nodes = [node(name, 4000, 3000, 10) for name in ("n1", "n2", "n3")]
    pods = [
        *[pod(name, 100, 0, "n1", set_rs_owner, priority(rank)) for rank, name in enumerate("abc")],
        pod("n2pod", 10, 0, "n2", set_rs_owner),
        *rs_pods("n3", "big", cpu=3790),
    ]
    assert run_plugin(highnodeutilization.NAME, CPU_20, nodes, pods) == ["n2pod", "a", "b"]


def test_defaults_change_nothing() -> None:
    args = {"thresholds": {"cpu": 20}}
    plugin = REGISTRY["HighNodeUtilization"]
    assert plugin.defaults(plugin.decode(args)) == plugin.decode(args)
