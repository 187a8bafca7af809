"""RemovePodsViolatingTopologySpreadConstraint: upstream's TestTopologySpreadConstraint, TestSortDomains and
TestCheckIdenticalConstraints, plus limits, inclusion policies and ordering upstream does not test
(docs/executor-semantics.md#87-removepodsviolatingtopologyspreadconstraint)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desched.executor.evictions import Limits, PodEvictor, SameCycle
from desched.executor.plugins import topologyspread
from desched.executor.releases import NEWEST_DECISIONS, ReleaseDecisions
from desched.plugins import REGISTRY
from tests.executor.builders import build_node, build_pod, defaulted, run_plugin, set_rs_owner

Json = dict[str, Any]
PLUGIN = "RemovePodsViolatingTopologySpreadConstraint"
FOO_BAR = {"foo": "bar"}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}}
HASH_KEY = "pod-template-hash"


def node(
    name: str,
    cpu: int = 2000,
    memory: int = 3000,
    pods: int = 10,
    taints: list[Json] | None = None,
    labels: dict[str, str] | None = None,
    **more_labels: str,
) -> Json:
    built = build_node(name, cpu, memory, pods)
    built["metadata"]["labels"].update(labels or {}, **more_labels)
    if taints:
        built["spec"]["taints"] = taints
    return built


def zone_nodes(*zones: str) -> list[Json]:
    """``n1``, ``n2``, ... with label ``zone`` set to each of ``zones``."""
    return [node(f"n{index}", zone=zone) for index, zone in enumerate(zones, start=1)]


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> Json:
    return {"key": key, "value": value, "effect": effect}


def constraint(
    max_skew: int = 1, key: str = "zone", when: str = "DoNotSchedule", selector: Json | None = None, **extra: Any
) -> Json:
    """``getDefaultTopologyConstraints``: selector ``foo=bar`` unless given."""
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": selector if selector is not None else {"matchLabels": dict(FOO_BAR)},
        **extra,
    }


def match_in(key: str, values: list[str], operator: str) -> Json:
    """``getLabelSelector``."""
    return {"matchExpressions": [{"key": key, "operator": operator, "values": values}]}


def affinity_in(key: str, operator: str, values: list[str] | None = None) -> Json:
    expression: Json = {"key": key, "operator": operator}
    if values is not None:
        expression["values"] = values
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expression]}]
            }
        }
    }


class Group(NamedTuple):
    """One entry of upstream's ``testPodList``."""

    replicas: int
    node: str
    labels: dict[str, str] = FOO_BAR
    constraints: Sequence[Json] = ()
    node_selector: dict[str, str] | None = None
    affinity: Json | None = None
    no_owners: bool = False
    tolerations: list[Json] | None = None
    terminating: bool = False
    priority: int | None = None
    namespace: str = "ns1"


def create_pods(groups: list[Group]) -> list[Json]:
    """``createTestPods`` (``pod-0``, ``pod-1``, ..., 100m cpu each, namespace ns1 unless given), listed by name as
    strings the way upstream's test sorts each node's pods (``pod-10`` before ``pod-8``)."""
    pods: list[Json] = []
    for group in groups:
        for _ in range(group.replicas):
            pod = build_pod(f"pod-{len(pods)}", 100, 0, group.node)
            metadata, spec = pod["metadata"], pod["spec"]
            metadata.update(namespace=group.namespace, labels=dict(group.labels))
            if not group.no_owners:
                set_rs_owner(pod)
            if group.constraints:
                spec["topologySpreadConstraints"] = list(group.constraints)
            if group.node_selector is not None:
                spec["nodeSelector"] = group.node_selector
            if group.affinity is not None:
                spec["affinity"] = group.affinity
            if group.tolerations is not None:
                spec["tolerations"] = group.tolerations
            if group.terminating:
                metadata["deletionTimestamp"] = "2026-11-01T11:00:00Z"
            if group.priority is not None:
                spec["priority"] = group.priority
            pods.append(pod)
    return sorted(pods, key=lambda pod: pod["metadata"]["name"])


class Case(NamedTuple):
    name: str
    nodes: list[Json]
    groups: list[Group]
    expected: int
    names: list[str] | None = None  # upstream: these must be among the evicted; own cases: exactly these, in order
    args: Json | None = None
    node_fit: bool = False
    limits: Limits = Limits()


def run(case: Case, record: list[PodEvictor] | None = None, release: ReleaseDecisions = NEWEST_DECISIONS) -> list[str]:
    """The pods ``release``'s plugin evicts in ``case``."""
    return run_plugin(
        PLUGIN,
        case.args or {},
        case.nodes,
        create_pods(case.groups),
        evictor={"nodeFit": case.node_fit},
        limits=case.limits,
        extra=[NAMESPACE],
        defaults=True,
        record=record,
        release=release,
    )


BOTH = {"constraints": ["DoNotSchedule", "ScheduleAnyway"]}
WINDOWS = {"os": "windows"}


def os_nodes(*windows: str) -> list[Json]:
    linux = [node(f"n{index}", node=f"linNode{letter}", os="linux") for index, letter in enumerate("ABC", start=1)]
    return linux + [
        node(f"n{index}", node=f"winNode{letter}", os="windows") for index, letter in enumerate(windows, start=4)
    ]


def whoami(node_name: str) -> Group:
    selector = {"matchLabels": {"app": "whoami"}}
    return Group(
        1,
        node_name,
        {"app": "whoami"},
        [
            constraint(key="topology.kubernetes.io/zone", when="ScheduleAnyway", selector=selector),
            constraint(key="kubernetes.io/hostname", selector=selector),
        ],
    )


def hostname_zone_node(name: str, zone: str) -> Json:
    built = node(name)
    built["metadata"]["labels"] = {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name}
    return built


TAINT_TEST = [taint("taint-test", "test")]
SERVICE = {"app.kubernetes.io/name": "service"}
SERVICE_CONSTRAINT = [constraint(key="kubernetes.io/hostname", selector={"matchLabels": SERVICE})]
ARM = "kubernetes.io/arch"

TOPOLOGY_SPREAD_CONSTRAINT = [
    Case(
        "2 domains, sizes [2,1], maxSkew=1, move 0 pods",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1"), Group(1, "n2")],
        0,
    ),
    Case(
        "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(2, "n1"), Group(1, "n2")],
        1,
    ),
    Case(
        "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (both constraints)",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint(when="ScheduleAnyway")]), Group(2, "n1"), Group(1, "n2")],
        1,
        args=BOTH,
    ),
    Case(
        "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (soft constraints)",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint(when="ScheduleAnyway")]), Group(2, "n1"), Group(1, "n2")],
        1,
        args=BOTH,
    ),
    Case(
        "2 domains, sizes [3,1], maxSkew=1, no pods eligible, move 0 pods",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(1, "n1", constraints=[constraint()], no_owners=True),
            Group(2, "n1", no_owners=True),
            Group(1, "n2", no_owners=True),
        ],
        0,
    ),
    Case(
        "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2], exclude kube-system namespace",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(2, "n1"), Group(1, "n2")],
        1,
        args={"namespaces": {"exclude": ["kube-system"]}},
        node_fit=True,
    ),
    Case(
        "2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(4, "n1"), Group(2, "n2")],
        1,
    ),
    Case(
        "2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(3, "n1")],
        2,
    ),
    Case(
        "2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and nodeAffinity aren't "
        "evicted",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(1, "n1", constraints=[constraint()], node_selector={"zone": "zoneA"}),
            Group(1, "n1", constraints=[constraint()], node_selector={"zone": "zoneA"}),
            Group(1, "n1", constraints=[constraint()], affinity=affinity_in("foo", "In", ["bar"])),
            Group(1, "n1", constraints=[constraint()]),
        ],
        1,
        node_fit=True,
    ),
    Case(
        "6 domains, sizes [0,0,0,3,3,2], maxSkew=1, No pod is evicted since topology is balanced",
        os_nodes("A", "B", "C"),
        [
            Group(3, "n4", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(3, "n5", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(2, "n6", constraints=[constraint(key="node")], node_selector=WINDOWS),
        ],
        0,
    ),
    Case(
        "7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new node added",
        os_nodes("A", "B", "C", "D"),
        [
            Group(3, "n4", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(3, "n5", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(2, "n6", constraints=[constraint(key="node")], node_selector=WINDOWS),
        ],
        2,
    ),
    Case(
        "6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4",
        os_nodes("A", "B", "C"),
        [
            Group(4, "n4", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(3, "n5", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(1, "n6", constraints=[constraint(key="node")], node_selector=WINDOWS),
        ],
        1,
    ),
    Case(
        "6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of node:winNodeA can only be "
        "scheduled on this node and nodeFit is true ",
        os_nodes("A", "B", "C"),
        [
            Group(4, "n4", constraints=[constraint(key="node")], node_selector={"node": "winNodeA"}),
            Group(3, "n5", constraints=[constraint(key="node")], node_selector=WINDOWS),
            Group(1, "n6", constraints=[constraint(key="node")], node_selector=WINDOWS),
        ],
        0,
        node_fit=True,
    ),
    Case(
        "2 domains, sizes [4,0], maxSkew=1, move 2 pods since selector matches multiple nodes",
        [node("n1", zone="zoneA", region="boston"), node("n2", zone="zoneB", region="boston")],
        [
            Group(1, "n1", constraints=[constraint()], node_selector={"region": "boston"}),
            Group(3, "n1", node_selector={"region": "boston"}),
        ],
        2,
    ),
    Case(
        "3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]",
        zone_nodes("zoneA", "zoneB", "zoneC"),
        [Group(1, "n2", constraints=[constraint()]), Group(100, "n3")],
        66,
    ),
    Case(
        "4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]",
        zone_nodes("zoneA", "zoneB", "zoneC", "zoneD"),
        [Group(1, "n2", constraints=[constraint()]), Group(3, "n3"), Group(5, "n4")],
        3,
    ),
    Case(
        "2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint(2)]), Group(1, "n1"), Group(6, "n2")],
        1,
    ),
    Case(
        "2 domains size [2 6], maxSkew=2, can't move any because of node taints",
        [node("n1", taints=[taint("hardware", "gpu")], zone="zoneA"), node("n2", zone="zoneB")],
        [Group(1, "n1", constraints=[constraint(2)]), Group(1, "n1"), Group(6, "n2")],
        0,
        node_fit=True,
    ),
    Case(
        "2 domains size [2 6], maxSkew=2, can't move any because node1 does not have enough CPU",
        [node("n1", cpu=200, zone="zoneA"), node("n2", zone="zoneB")],
        [Group(1, "n1", constraints=[constraint(2)]), Group(1, "n1"), Group(6, "n2")],
        0,
        node_fit=True,
    ),
    Case(
        "Multiple constraints (6 nodes/2 zones, 4 pods)",
        [hostname_zone_node(f"n{index}", "zoneA" if index <= 3 else "zoneB") for index in range(1, 7)],
        [whoami("n1"), whoami("n2"), whoami("n3"), whoami("n4")],
        1,
        args=BOTH,
    ),
    Case(
        "3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]",
        zone_nodes("zoneA", "zoneB", "zoneC"),
        [Group(8, "n1", constraints=[constraint()]), Group(7, "n2", constraints=[constraint()])],
        5,
        names=["pod-5", "pod-6", "pod-7", "pod-8", "pod-9"],
    ),
    Case(
        "3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]",
        zone_nodes("zoneA", "zoneB", "zoneC"),
        [Group(5, name, constraints=[constraint()]) for name in ("n1", "n2", "n3")],
        0,
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 1 pod since pod tolerates the node with taint",
        [node("n1", zone="zoneA"), node("n2", taints=TAINT_TEST, zone="zoneB")],
        [
            Group(
                1,
                "n1",
                constraints=[constraint()],
                tolerations=[{"key": "taint-test", "value": "test", "operator": "Equal", "effect": "NoSchedule"}],
            ),
            Group(1, "n1", node_selector={"zone": "zoneA"}),
        ],
        1,
        names=["pod-0"],
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node",
        [node("n1", zone="zoneA"), node("n2", taints=TAINT_TEST, zone="zoneB")],
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1", node_selector={"zone": "zoneA"})],
        0,
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node, and NodeFit is "
        "enabled",
        [node("n1", zone="zoneA"), node("n2", taints=TAINT_TEST, zone="zoneB")],
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1", node_selector={"zone": "zoneA"})],
        0,
        node_fit=True,
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with PreferNoSchedule Taint",
        [node("n1", zone="zoneA"), node("n2", taints=[taint("taint-test", "test", "PreferNoSchedule")], zone="zoneB")],
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1", node_selector={"zone": "zoneA"})],
        1,
        names=["pod-0"],
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 0 pod for node with unmatched label filtering",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1")],
        0,
        args={"labelSelector": match_in("foo", ["baz"], "In")},
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1")],
        1,
        names=["pod-1"],
        args={"labelSelector": match_in("foo", ["bar"], "In")},
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering (NotIn op)",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint()]), Group(1, "n1")],
        1,
        names=["pod-1"],
        args={"labelSelector": match_in("foo", ["baz"], "NotIn")},
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same replicaset",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(1, "n1", {"foo": "bar", HASH_KEY: "foo"}, [constraint(matchLabelKeys=[HASH_KEY])]),
            Group(1, "n1", {"foo": "bar", HASH_KEY: "foo"}, [constraint(matchLabelKeys=[HASH_KEY])]),
        ],
        1,
        names=["pod-1"],
        args={"labelSelector": match_in("foo", ["baz"], "NotIn")},
    ),
    Case(
        "2 domains, sizes [2,0], maxSkew=1, move 0 pods given matchLabelKeys on two different replicasets",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(1, "n1", {"foo": "bar", HASH_KEY: "foo"}, [constraint(matchLabelKeys=[HASH_KEY])]),
            Group(1, "n1", {"foo": "bar", HASH_KEY: "bar"}, [constraint(matchLabelKeys=[HASH_KEY])]),
        ],
        0,
        args={"labelSelector": match_in("foo", ["baz"], "NotIn")},
    ),
    Case(
        "2 domains, sizes [4,2], maxSkew=1, 2 pods in termination; nothing should be moved",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(2, "n1", constraints=[constraint()]),
            Group(2, "n1", constraints=[constraint()], terminating=True),
            Group(2, "n2", constraints=[constraint()]),
        ],
        0,
        args={"labelSelector": match_in("foo", ["bar"], "In")},
    ),
    Case(
        "3 domains, sizes [2,3,4], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA; nothing should be moved",
        [
            node("n1", 250, 2000, 9, zone="zoneA"),
            node("n2", 1000, 2000, 9, zone="zoneB"),
            node("n3", 1000, 2000, 9, zone="zoneC"),
        ],
        [
            Group(2, "n1", constraints=[constraint()]),
            Group(3, "n2", constraints=[constraint()]),
            Group(4, "n3", constraints=[constraint()]),
        ],
        0,
        node_fit=True,
    ),
    Case(
        "3 domains, sizes [2,3,4], maxSkew=1, args.NodeFit is false, and not enough cpu on zoneA; 1 should be moved "
        "to force scale-up",
        [
            node("n1", 250, 2000, 9, zone="zoneA"),
            node("n2", 1000, 2000, 9, zone="zoneB"),
            node("n3", 1000, 2000, 9, zone="zoneC"),
        ],
        [
            Group(2, "n1", constraints=[constraint()]),
            Group(3, "n2", constraints=[constraint()]),
            Group(4, "n3", constraints=[constraint()]),
        ],
        1,
        args={"topologyBalanceNodeFit": False},
        node_fit=True,
    ),
    Case(
        "3 domains, sizes [[1,0], [1,1], [2,1]], maxSkew=1, NodeFit is enabled, and not enough cpu on ZoneA; "
        "nothing should be moved",
        [
            node("A1", 150, 2000, 9, zone="zoneA"),
            node("B1", 1000, 2000, 9, zone="zoneB"),
            node("C1", 1000, 2000, 9, zone="zoneC"),
            node("A2", 50, 2000, 9, zone="zoneA"),
            node("B2", 1000, 2000, 9, zone="zoneB"),
            node("C2", 1000, 2000, 9, zone="zoneC"),
        ],
        [
            Group(1, "A1", constraints=[constraint()]),
            Group(1, "B1", constraints=[constraint()]),
            Group(1, "B2", constraints=[constraint()]),
            Group(2, "C1", constraints=[constraint()]),
            Group(1, "C2", constraints=[constraint()]),
        ],
        0,
        node_fit=True,
    ),
    Case(
        "2 domains, sizes [[1,4], [2,1]], maxSkew=1, NodeFit is enabled; should move 1",
        [
            node("A1", 1000, 2000, 9, zone="zoneA"),
            node("A2", 1000, 2000, 9, zone="zoneA"),
            node("B1", 1000, 2000, 9, zone="zoneB"),
            node("B2", 1000, 2000, 9, zone="zoneB"),
        ],
        [
            Group(1, "A1", constraints=[constraint()]),
            Group(4, "A2", constraints=[constraint()]),
            Group(2, "B1", constraints=[constraint()]),
            Group(1, "B2", constraints=[constraint()]),
        ],
        1,
        names=["pod-4"],
        node_fit=True,
    ),
    Case(
        "2 domains, sizes [3, 1], maxSkew=1, Tainted nodes; nothing should be moved",
        [
            node(
                "controlplane1",
                taints=[
                    taint("node-role.kubernetes.io/controlplane", "true"),
                    taint("node-role.kubernetes.io/etcd", "true"),
                ],
                zone="zoneA",
                labels={"kubernetes.io/hostname": "cp-1"},
            ),
            node(
                "infraservices1",
                taints=[taint("infra_service")],
                zone="zoneA",
                infra_service="true",
                labels={"kubernetes.io/hostname": "infra-1"},
            ),
            node("app1", zone="zoneA", app_service="true", labels={"kubernetes.io/hostname": "app-1"}),
            node("app2", zone="zoneB", app_service="true", labels={"kubernetes.io/hostname": "app-2"}),
        ],
        [
            Group(2, "app1", SERVICE, SERVICE_CONSTRAINT, affinity=affinity_in("app_service", "Exists")),
            Group(2, "app2", SERVICE, SERVICE_CONSTRAINT, affinity=affinity_in("app_service", "Exists")),
        ],
        0,
        node_fit=True,
    ),
    Case(
        "3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeTaintsPolicy=Ignore, should move 1 for [1, 1, 1]",
        [node(f"{zone}1", 1000, 2000, 9, zone=f"zone{zone}", labels={ARM: "arm64"}) for zone in "ABC"],
        [
            Group(1, "A1", constraints=[constraint(nodeAffinityPolicy="Ignore")], node_selector={ARM: "arm64"}),
            Group(
                1,
                "A1",
                constraints=[constraint(nodeAffinityPolicy="Ignore")],
                node_selector={"zone": "zoneA", ARM: "arm64"},
            ),
            Group(1, "B1", constraints=[constraint(nodeAffinityPolicy="Ignore")], node_selector={ARM: "arm64"}),
        ],
        1,
        names=["pod-0"],
    ),
]


@pytest.mark.parametrize("case", TOPOLOGY_SPREAD_CONSTRAINT, ids=lambda case: case.name)
def test_topology_spread_constraint(case: Case) -> None:
    evicted = run(case)
    assert len(evicted) == case.expected
    assert set(case.names or []) <= set(evicted)


# Beyond upstream's tables. Names are exact and in eviction order (candidates are evicted in discovery order).
LISTED_ON_N3 = sorted(f"pod-{number}" for number in range(1, 101))
SSD_NODES = [node("n1", zone="zoneA", disk="ssd"), node("n2", zone="zoneB", disk="ssd"), node("n3", zone="zoneC")]
SSD = {"disk": "ssd"}
NO_BALANCE_FIT = {"topologyBalanceNodeFit": False}

OWN_CASES = [
    # avg 33.67: 34 move to the empty domain (the last 34 of n3's list), then 32 to the 1-domain (the 32 before them)
    Case(
        "[0,1,100] moves 34 then 32 pods from the end of the big domain",
        zone_nodes("zoneA", "zoneB", "zoneC"),
        [Group(1, "n2", constraints=[constraint()]), Group(100, "n3")],
        66,
        names=LISTED_ON_N3[-34:] + LISTED_ON_N3[-66:-34],
    ),
    # domain order: pod-2 (selector), pod-3 (nil), pod-5 (1), pod-0 (5), pod-4 (10), pod-1 (20); the last 3 move
    Case(
        "pods without a selector go first, highest priority first, nil priority last",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(1, "n1", constraints=[constraint()], priority=5),
            Group(1, "n1", priority=20),
            Group(1, "n1", node_selector={}),
            Group(1, "n1"),
            Group(1, "n1", priority=10),
            Group(1, "n1", priority=1),
        ],
        3,
        names=["pod-0", "pod-4", "pod-1"],
    ),
    # Honor: n3 (no ssd) is no domain: [3,0], one move
    Case(
        "nodeAffinityPolicy Honor: nodes the declaring pod cannot use are no domains",
        SSD_NODES,
        [Group(3, "n1", constraints=[constraint()], node_selector=SSD)],
        1,
        names=["pod-2"],
    ),
    # Ignore: [3,0,0], avg 1: one move to zoneB, one to zoneC; both fit n2, a below-average node
    Case(
        "nodeAffinityPolicy Ignore: every node with the key is a domain",
        SSD_NODES,
        [Group(3, "n1", constraints=[constraint(nodeAffinityPolicy="Ignore")], node_selector=SSD)],
        2,
        names=["pod-2", "pod-1"],
    ),
    Case(
        "nodeTaintsPolicy Honor: a tainted node is no domain, so one domain is balanced",
        [node("n1", zone="zoneA"), node("n2", taints=TAINT_TEST, zone="zoneB")],
        [Group(2, "n1", constraints=[constraint(nodeTaintsPolicy="Honor")])],
        0,
        args=NO_BALANCE_FIT,
    ),
    Case(
        "nodeTaintsPolicy Ignore (default): the tainted node is a domain: [2,0] moves 1",
        [node("n1", zone="zoneA"), node("n2", taints=TAINT_TEST, zone="zoneB")],
        [Group(2, "n1", constraints=[constraint()])],
        1,
        names=["pod-1"],
        args=NO_BALANCE_FIT,
    ),
    Case(
        "nodeTaintsPolicy Honor with a matching toleration keeps the node",
        [node("n1", zone="zoneA"), node("n2", taints=TAINT_TEST, zone="zoneB")],
        [
            Group(
                2,
                "n1",
                constraints=[constraint(nodeTaintsPolicy="Honor")],
                tolerations=[{"key": "taint-test", "operator": "Exists"}],
            )
        ],
        1,
        names=["pod-1"],
    ),
    # pods on n3 (no ssd) create zoneC although n3 fails the affinity policy: [0,0,4], avg 4/3; 2 then 1 move out
    Case(
        "pods on an excluded node still create and fill their domain (quirk)",
        SSD_NODES,
        [Group(4, "n3", constraints=[constraint()], node_selector=SSD)],
        3,
        names=["pod-2", "pod-3", "pod-1"],
    ),
    Case(
        "ScheduleAnyway constraints are ignored by default",
        zone_nodes("zoneA", "zoneB"),
        [Group(1, "n1", constraints=[constraint(when="ScheduleAnyway")]), Group(3, "n1")],
        0,
    ),
    Case(
        "a nil labelSelector matches nothing, matchLabelKeys included",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(
                4,
                "n1",
                {"foo": "bar", HASH_KEY: "x"},
                [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "DoNotSchedule",
                        "matchLabelKeys": [HASH_KEY],
                    }
                ],
            )
        ],
        0,
    ),
    # the selector becomes pod-template-hash=x: [4,0] (everything would give a balanced [4,4])
    Case(
        "an empty labelSelector with matchLabelKeys selects by the key's value",
        zone_nodes("zoneA", "zoneB"),
        [
            Group(4, "n1", {HASH_KEY: "x"}, [constraint(selector={}, matchLabelKeys=[HASH_KEY])]),
            Group(4, "n2", {HASH_KEY: "y"}),
        ],
        2,
        names=["pod-2", "pod-3"],
    ),
    # ns1 alone is [3,0]; counting ns2's pods would give a balanced [3,2]
    Case(
        "pods of other namespaces are not counted",
        zone_nodes("zoneA", "zoneB"),
        [Group(3, "n1", constraints=[constraint()]), Group(2, "n2", namespace="ns2")],
        1,
        names=["pod-2"],
    ),
    # [0,0,6]: candidates pod-4, pod-5 (to zoneB), then pod-2, pod-3 (to zoneC); n1 is exhausted after pod-4
    Case(
        "node limit skips the node's later candidates",
        zone_nodes("zoneA", "zoneB", "zoneC"),
        [Group(6, "n1", constraints=[constraint()])],
        1,
        names=["pod-4"],
        limits=Limits(per_node=1),
    ),
    # [6,6,0]: candidates pod-8, pod-9 (end of n2's list pod-10, pod-11, pod-6 ... pod-9), then pod-4, pod-5
    Case(
        "total limit stops the plugin",
        zone_nodes("zoneA", "zoneB", "zoneC"),
        [Group(6, "n1", constraints=[constraint()]), Group(6, "n2", constraints=[constraint()])],
        3,
        names=["pod-8", "pod-9", "pod-4"],
        limits=Limits(total=3),
    ),
    Case(
        "namespace limit only skips the pod",
        zone_nodes("zoneA", "zoneB"),
        [Group(4, "n1", constraints=[constraint()]), Group(4, "n1", constraints=[constraint()], namespace="ns2")],
        2,
        names=["pod-2", "pod-6"],
        limits=Limits(per_namespace=1),
    ),
    # the only below-average node (n2) is too small, but DefaultEvictor's NodeFit accepts n3
    Case(
        "DefaultEvictor nodeFit checks any other node, not only the below-average ones",
        [node("n1", zone="zoneA"), node("n2", cpu=50, zone="zoneB"), node("n3", zone="zoneA")],
        [Group(4, "n1", constraints=[constraint()])],
        2,
        names=["pod-2", "pod-3"],
        args=NO_BALANCE_FIT,
        node_fit=True,
    ),
    Case(
        "DefaultEvictor nodeFit is checked again at eviction time",
        [node("n1", zone="zoneA"), node("n2", cpu=50, zone="zoneB")],
        [Group(4, "n1", constraints=[constraint()])],
        0,
        args=NO_BALANCE_FIT,
        node_fit=True,
    ),
    Case(
        "topologyBalanceNodeFit keeps pods that fit no below-average node",
        [node("n1", zone="zoneA"), node("n2", cpu=50, zone="zoneB"), node("n3", zone="zoneA")],
        [Group(4, "n1", constraints=[constraint()])],
        0,
        node_fit=True,
    ),
]


@pytest.mark.parametrize("case", OWN_CASES, ids=lambda case: case.name)
def test_own_cases(case: Case) -> None:
    evicted = run(case)
    assert len(evicted) == case.expected
    if case.names is not None:
        assert evicted == case.names


def evictable_by_annotation(pod: Json) -> bool:
    return (pod["metadata"].get("annotations") or {}).get("evictable") == "true"


def sort_pod(name: str, evictable: bool, priority: int | None = None, **spec: Any) -> Json:
    pod: Json = {
        "metadata": {"name": name, "annotations": {"evictable": "true" if evictable else "false"}},
        "spec": dict(spec),
    }
    if priority is not None:
        pod["spec"]["priority"] = priority
    return pod


# TestSortDomains: domains are compared after sorting by value, so each domain's pod order is what is tested.
SORT_DOMAINS = [
    pytest.param({}, {}, id="empty input"),
    pytest.param(
        {
            "a": [
                sort_pod("non-evictable-pod", False),
                sort_pod("evictable-with-affinity", True, 10),
                sort_pod("evictable-high-priority", True, 15),
            ]
        },
        {"a": ["non-evictable-pod", "evictable-with-affinity", "evictable-high-priority"]},
        id="single domain with mixed pods",
    ),
    pytest.param(
        {
            "a": [sort_pod("high-priority-affinity", True, 20), sort_pod("low-priority-no-affinity", True, 5)],
            "b": [sort_pod("medium-priority-affinity", True, 15), sort_pod("non-evictable-pod", False)],
        },
        {
            "a": ["low-priority-no-affinity", "high-priority-affinity"],
            "b": ["non-evictable-pod", "medium-priority-affinity"],
        },
        id="multiple domains with different priorities and selectors",
    ),
    pytest.param(
        {
            "a": [
                sort_pod("pod-with-affinity", True, 10, affinity={"nodeAffinity": {}}),
                sort_pod("pod-no-affinity", True, 15),
            ]
        },
        {"a": ["pod-with-affinity", "pod-no-affinity"]},
        id="domain with pods having different selector/affinity",
    ),
]


@pytest.mark.parametrize(("domains", "expected"), SORT_DOMAINS)
def test_sort_domains(domains: dict[str, list[Json]], expected: dict[str, list[str]]) -> None:
    got = {
        value: [pod["metadata"]["name"] for pod in topologyspread.sort_domain_pods(pods, evictable_by_annotation)]
        for value, pods in domains.items()
    }
    assert got == expected


@pytest.mark.parametrize(
    ("first", "second", "less"),
    [
        (sort_pod("a", False), sort_pod("b", False), True),  # two non-evictable pods: true both ways
        (sort_pod("a", False), sort_pod("b", True), True),
        (sort_pod("a", True), sort_pod("b", False), False),
        (sort_pod("a", True, nodeSelector={}), sort_pod("b", True), True),
        (sort_pod("a", True), sort_pod("b", True, nodeSelector={}), False),
        (sort_pod("a", True, 5), sort_pod("b", True, 5), True),  # equal priorities: true both ways
        (sort_pod("a", True, 1), sort_pod("b", True, 2), True),
        (sort_pod("a", True, 2), sort_pod("b", True, 1), False),
        (sort_pod("a", True), sort_pod("b", True), False),  # both nil
        (sort_pod("a", True), sort_pod("b", True, 0), True),
        (sort_pod("a", True, 0), sort_pod("b", True), False),
    ],
)
def test_domain_less_is_upstreams_comparator(first: Json, second: Json, less: bool) -> None:
    """sortDomains' less(i, j) in topologyspreadconstraint.go, read case by case (evictable: the annotation)."""
    assert topologyspread.domain_less(evictable_by_annotation)(first, second) is less


def test_sort_domain_pods_keeps_listing_order_among_nil_priorities() -> None:
    pods = [sort_pod(f"p{index}", True) for index in range(5)]
    pods.insert(2, sort_pod("selected", True, nodeSelector={}))
    pods.insert(4, sort_pod("affinity-without-node-affinity", True, affinity={}))
    names = [pod["metadata"]["name"] for pod in topologyspread.sort_domain_pods(pods, evictable_by_annotation)]
    assert names == ["selected", "p0", "p1", "p2", "affinity-without-node-affinity", "p3", "p4"]


def identity(max_skew: int, key: str, pod: Json | None = None, **extra: Any) -> str:
    return topologyspread.constraint_key(constraint(max_skew, key, **extra), pod or {"metadata": {}})


def test_check_identical_constraints() -> None:
    """TestCheckIdenticalConstraints: same maxSkew, key and selector are identical; another maxSkew and key are not."""
    assert identity(2, "zone") == identity(2, "zone")
    assert identity(3, "node") != identity(2, "zone")


@pytest.mark.parametrize(
    ("other", "same"),
    [
        ({"metadata": {}, "spec": {"nodeSelector": {"disk": "ssd"}}}, False),
        ({"metadata": {}, "spec": {"tolerations": [{"operator": "Exists"}]}}, True),  # taints policy Ignore by default
        ({"metadata": {"labels": {HASH_KEY: "x"}}}, True),  # no matchLabelKeys
        ({"metadata": {}, "spec": {"priority": 7, "topologySpreadConstraints": [constraint()]}}, True),
    ],
)
def test_identity_covers_what_deep_equality_compares(other: Json, same: bool) -> None:
    assert (identity(1, "zone", other) == identity(1, "zone")) is same


def test_identity_ignores_when_unsatisfiable() -> None:
    assert identity(1, "zone", when="ScheduleAnyway") == identity(1, "zone")


def test_identity_distinguishes_match_label_keys_values() -> None:
    def with_hash(value: str) -> str:
        return identity(1, "zone", {"metadata": {"labels": {HASH_KEY: value}}}, matchLabelKeys=[HASH_KEY])

    assert with_hash("a") == with_hash("a")
    assert with_hash("a") != with_hash("b")


def test_defaults() -> None:
    plugin = REGISTRY["RemovePodsViolatingTopologySpreadConstraint"]
    assert plugin.decode({}).topology_balance_node_fit is None  # unset until defaulted, as upstream's *bool
    fresh = defaulted("RemovePodsViolatingTopologySpreadConstraint", {})
    assert (fresh.topology_balance_node_fit, fresh.constraints) == (True, ("DoNotSchedule",))
    kept = plugin.decode({"topologyBalanceNodeFit": False, "constraints": ["ScheduleAnyway"], "labelSelector": {}})
    assert plugin.defaults(kept) == kept


def test_without_defaults_no_constraint_is_allowed() -> None:
    """Upstream's plugin test applies the defaulter; without it ``constraints`` is empty and nothing is considered."""
    pods = create_pods([Group(4, "n1", constraints=[constraint()])])
    nodes = zone_nodes("zoneA", "zoneB")
    assert run_plugin(PLUGIN, {}, nodes, pods, extra=[NAMESPACE]) == []
    assert len(run_plugin(PLUGIN, {}, nodes, pods, extra=[NAMESPACE], defaults=True)) == 2


def test_topology_balance_node_fit_unset_means_true() -> None:
    """Without the defaulter (``topologyBalanceNodeFit`` nil) upstream dereferences it as true."""
    nodes = [node("n1", zone="zoneA"), node("n2", cpu=50, zone="zoneB"), node("n3", zone="zoneA")]
    pods = create_pods([Group(4, "n1", constraints=[constraint()])])
    assert run_plugin(PLUGIN, {"constraints": ["DoNotSchedule"]}, nodes, pods, extra=[NAMESPACE]) == []
    assert (
        len(run_plugin(PLUGIN, {"constraints": ["DoNotSchedule"], **NO_BALANCE_FIT}, nodes, pods, extra=[NAMESPACE]))
        == 2
    )


def test_filter_is_checked_again_after_earlier_evictions() -> None:
    """Dry run: evicting pod-2 leaves the ReplicaSet 3 pods, below minReplicas 4, so pod-3 fails Filter at the final
    check. In a real run pod-2 is terminating and still counts, so both go (as upstream's fake client keeps it)."""
    pods = create_pods([Group(4, "n1", constraints=[constraint()])])
    nodes = zone_nodes("zoneA", "zoneB")
    strict = {"minReplicas": 4}
    dry = run_plugin(PLUGIN, {}, nodes, pods, evictor=strict, extra=[NAMESPACE], defaults=True, view=SameCycle.DRY_RUN)
    assert dry == ["pod-2"]
    assert run_plugin(PLUGIN, {}, nodes, pods, evictor=strict, extra=[NAMESPACE], defaults=True) == ["pod-2", "pod-3"]
    assert run_plugin(PLUGIN, {}, nodes, pods, evictor={"minReplicas": 3}, extra=[NAMESPACE], defaults=True) == [
        "pod-2",
        "pod-3",
    ]


@pytest.mark.parametrize(
    ("prefix", "limits", "evicted", "refused"),
    [
        ("node limit", Limits(per_node=1), ["pod-4"], 1),  # pod-5 refused; pod-2 and pod-3 are skipped unasked
        ("total limit", Limits(total=2), ["pod-8", "pod-9"], 1),  # pod-4 refused and the plugin stops
    ],
)
def test_limit_refusals(prefix: str, limits: Limits, evicted: list[str], refused: int) -> None:
    """After a node-limit refusal later candidates on that node are skipped without asking the evictor; a total-limit
    refusal ends the plugin (refusals show in the metrics)."""
    evictors: list[PodEvictor] = []
    case = next(case for case in OWN_CASES if case.name.startswith(prefix))
    assert run(case._replace(limits=limits), record=evictors) == evicted
    assert sum(evictors[0].refusals.values()) == refused


@given(st.lists(st.booleans(), max_size=30), st.lists(st.integers(min_value=1, max_value=5), max_size=6))
def test_split_off_matches_upstreams_full_stable_sort(fit_flags: list[bool], moves: list[int]) -> None:
    """Checking pods lazily from the end takes the same pods, move after move, as sorting the whole domain each time."""
    pods = [{"metadata": {"uid": str(index)}, "fits": fits} for index, fits in enumerate(fit_flags)]
    lazy, full = list(pods), list(pods)
    for move in moves:
        if move > len(full):
            break
        lazy, taken = topologyspread._split_off(lazy, move, lambda pod: bool(pod["fits"]))
        full = sorted(full, key=lambda pod: bool(pod["fits"]))
        full, expected = full[:-move], full[-move:]
        assert taken == expected
        assert len(lazy) == len(full)


def upstream_moves(size: list[int], average: float, max_skew: int) -> list[tuple[int, int]]:
    """Upstream's balanceDomains loop transcribed over sizes only, every iteration spelled out."""
    moves = []
    i, j = 0, len(size) - 1
    while i < j:
        if size[j] <= average:
            j -= 1
        skew = size[j] - size[i]
        if skew <= max_skew:
            i += 1
            continue
        move = min(math.ceil(size[j] - average), math.ceil(average - size[i]), math.ceil((skew - max_skew) / 2))
        if move <= 0:
            i += 1
            continue
        moves.append((j, move))
        size[j] -= move
        size[i] += move
    return moves


@given(st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=40), st.integers(1, 3))
def test_moves_match_upstreams_loop(sizes: list[int], max_skew: int) -> None:
    """The shortcuts in ``_moves`` (runs of equal domains, early end) give exactly upstream's moves."""
    ordered = sorted(sizes)
    average = sum(ordered) / len(ordered)
    expected = upstream_moves(list(ordered), average, max_skew)
    got_sizes = list(ordered)
    assert list(topologyspread._moves(got_sizes, average, max_skew)) == expected
