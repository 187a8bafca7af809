"""RemovePodsViolatingNodeTaints: upstream's ``TestDeletePodsViolatingNodeTaints`` (all 23 cases) and
``TestToleratesTaint`` (all 6 cases) as data, plus the quirks of
docs/executor-semantics.md#85-removepodsviolatingnodetaints.

Upstream's ``createNoScheduleTaint(key, value, i)`` ignores ``key``/``value``: every taint it builds is
``testTaint<i>=test<i>``. So ``withTestingTaint1`` equals ``withTestTaint1`` and ``withBothTaints1`` holds that taint
twice; the data below reproduces what upstream really builds. Upstream asserts counts only; ``among`` lists the pods
the evictions must come from (the case comments name them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from desched.executor import nodeutil
from desched.executor.evictions import Limits, Outcome
from desched.plugins import REGISTRY
from tests.executor.builders import (
    build_node,
    build_pod,
    run_plugin,
    set_ds_owner,
    set_local_storage,
    set_mirror,
    set_normal_owner,
)

Json = dict[str, Any]
PLUGIN = "RemovePodsViolatingNodeTaints"


def taint(index: int, effect: str = "NoSchedule") -> Json:
    return {"key": f"testTaint{index}", "value": f"test{index}", "effect": effect}


def node(
    name: str,
    *taints: Json,
    labels: dict[str, str] | None = None,
    unschedulable: bool = False,
    size: tuple[int, int, int] = (2000, 3000, 10),
) -> Json:
    built = build_node(name, *size)
    if taints:
        built["spec"]["taints"] = list(taints)
    if labels:
        built["metadata"]["labels"] = dict(labels)
    if unschedulable:
        built["spec"]["unschedulable"] = True
    return built


def toleration(key: str, value: str, index: int, effect: str = "NoSchedule") -> Json:
    """``addTolerationToPod``: operator left empty (Equal)."""
    return {"key": f"{key}{index}", "value": f"{value}{index}", "effect": effect}


def pod(
    name: str,
    node_name: str,
    *tolerations: Json,
    owner: bool = True,
    critical: bool = False,
    local_storage: bool = False,
    mirror: bool = False,
    daemonset: bool = False,
    node_selector: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> Json:
    """``buildTestPodWithNormalOwnerRef`` (``owner=False``: plain ``buildTestPod``) with upstream's modifiers."""
    built = build_pod(name, 100, 0, node_name)
    if owner:
        set_normal_owner(built)
    if daemonset:
        set_ds_owner(built)
    if tolerations:
        built["spec"]["tolerations"] = list(tolerations)
    if critical:
        built["metadata"]["namespace"] = "kube-system"
        built["spec"]["priority"] = 2000000000
    if local_storage:
        set_local_storage(built)
    if mirror:
        set_mirror(built)
    if node_selector:
        built["spec"]["nodeSelector"] = dict(node_selector)
    if labels:
        built["metadata"]["labels"] = dict(labels)
    return built


TOLERATES_1 = toleration("testTaint", "test", 1)
TOLERATES_X1 = toleration("testTaintX", "testX", 1)


@dataclass
class Case:
    description: str
    nodes: list[Json]
    pods: list[Json]
    expected: int
    among: set[str] = field(default_factory=set)
    args: Json = field(default_factory=dict)
    evictor: Json = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)


def critical_set(node_name: str) -> list[Json]:
    """p7 (critical), p8 (DaemonSet, no normal owner), p9 (local storage), p10 (mirror)."""
    return [
        pod("p7", node_name, critical=True),
        pod("p8", node_name, owner=False, daemonset=True),
        pod("p9", node_name, local_storage=True),
        pod("p10", node_name, mirror=True),
    ]


def three_on_n1(*middle: str) -> list[Json]:
    """p1 and the last pod tolerate testTaint1; the pods named in ``middle`` tolerate nothing."""
    return [pod("p1", "n1", TOLERATES_1), *(pod(name, "n1") for name in middle)]


UPSTREAM = [
    Case(
        "Pods not tolerating node taint should be evicted",
        [node("n1", taint(1))],
        [*three_on_n1("p2"), pod("p3", "n1", TOLERATES_1)],
        1,
        {"p2"},
    ),
    Case(
        "Pods with tolerations but not tolerating node taint should be evicted",
        [node("n1", taint(1))],
        [pod("p1", "n1", TOLERATES_1), pod("p3", "n1", TOLERATES_1), pod("p4", "n1", TOLERATES_X1)],
        1,
        {"p4"},
    ),
    Case(
        "Only <maxNoOfPodsToEvictTotal> number of Pods not tolerating node taint should be evicted",
        [node("n1", taint(1))],
        three_on_n1("p5", "p6"),
        1,
        {"p5", "p6"},
        limits=Limits(per_node=2, total=1),
    ),
    Case(
        "Only <maxPodsToEvictPerNode> number of Pods not tolerating node taint should be evicted",
        [node("n1", taint(1))],
        three_on_n1("p5", "p6"),
        1,
        {"p5", "p6"},
        limits=Limits(per_node=1),
    ),
    Case(
        "Only <maxNoOfPodsToEvictPerNamespace> number of Pods not tolerating node taint should be evicted",
        [node("n1", taint(1))],
        three_on_n1("p5", "p6"),
        1,
        {"p5", "p6"},
        limits=Limits(per_namespace=1),
    ),
    Case(
        "Only <maxNoOfPodsToEvictPerNamespace> number of Pods not tolerating node taint should be evicted (2)",
        [node("n1", taint(1))],
        three_on_n1("p5", "p6"),
        1,
        {"p5", "p6"},
        limits=Limits(per_namespace=1),
    ),
    Case(
        "Critical pods not tolerating node taint should not be evicted", [node("n2", taint(1))], critical_set("n2"), 0
    ),
    Case(
        "Critical pods except storage pods not tolerating node taint should not be evicted",
        [node("n2", taint(1))],
        critical_set("n2"),
        1,
        {"p9"},
        evictor={"evictLocalStoragePods": True},
    ),
    Case(
        "Critical and non critical pods, only non critical pods not tolerating node taint should be evicted",
        [node("n2", taint(1))],
        [
            pod("p7", "n2", critical=True),
            pod("p8", "n2", owner=False, daemonset=True),
            pod("p10", "n2", mirror=True),
            pod("p11", "n2"),
        ],
        1,
        {"p11"},
    ),
    Case(
        "Critical and non critical pods, pods not tolerating node taint should be evicted even if they are critical",
        [node("n1", taint(1)), node("n2", taint(1))],
        [
            pod("p2", "n1"),
            pod("p7", "n2", critical=True),
            pod("p9", "n2", local_storage=True),
            pod("p10", "n2", mirror=True),
        ],
        2,
        {"p2", "p7"},
        evictor={"evictSystemCriticalPods": True},
    ),
    Case(
        "Pod p2 doesn't tolerate taint on it's node, but also doesn't tolerate taints on other nodes",
        [node("n1", taint(1)), node("n2", taint(1))],
        [*three_on_n1("p2"), pod("p3", "n1", TOLERATES_1)],
        0,
        evictor={"nodeFit": True},
    ),
    Case(
        "Pod p12 doesn't tolerate taint on it's node, but other nodes don't match it's selector",
        [node("n1", taint(1)), node("n3", labels={"datacenter": "east"})],
        [
            pod("p1", "n1", TOLERATES_1),
            pod("p3", "n1", TOLERATES_1),
            pod("p11", "n2", node_selector={"datacenter": "west"}),
        ],
        0,
        evictor={"nodeFit": True},
    ),
    Case(
        "Pod p2 doesn't tolerate taint on it's node, but other nodes are unschedulable",
        [node("n1", taint(1)), node("n4", unschedulable=True)],
        [*three_on_n1("p2"), pod("p3", "n1", TOLERATES_1)],
        0,
        evictor={"nodeFit": True},
    ),
    Case(
        "Pods not tolerating PreferNoSchedule node taint should not be evicted when not enabled",
        [node("n5", taint(1, "PreferNoSchedule"))],
        [pod("p13", "n5", toleration("testTaint", "test", 0, "PreferNoSchedule"))],
        0,
    ),
    Case(
        "Pods not tolerating PreferNoSchedule node taint should be evicted when enabled",
        [node("n5", taint(1, "PreferNoSchedule"))],
        [pod("p13", "n5", toleration("testTaint", "test", 0, "PreferNoSchedule"))],
        1,
        {"p13"},
        args={"includePreferNoSchedule": True},
    ),
    Case(
        "Pods not tolerating excluded node taints (by key) should not be evicted",
        [node("n1", taint(1))],
        [pod("p2", "n1")],
        0,
        args={"excludedTaints": ["excludedTaint1", "testTaint1"]},
    ),
    Case(
        "Pods not tolerating excluded node taints (by key and value) should not be evicted",
        [node("n1", taint(1))],
        [pod("p2", "n1")],
        0,
        args={"excludedTaints": ["testTaint1=test1"]},
    ),
    Case(
        "The excluded taint matches the key of node1's taint, but does not match the value",
        [node("n1", taint(1))],
        [pod("p2", "n1")],
        1,
        {"p2"},
        args={"excludedTaints": ["testTaint1=test2"]},
    ),
    Case(
        "Critical and non critical pods, pods not tolerating node taint can't be evicted because the only available "
        "node does not have enough resources.",
        [node("n1", taint(1)), node("n6", taint(1, "PreferNoSchedule"), size=(1, 1, 1))],
        [
            pod("p2", "n1"),
            pod("p7", "n2", critical=True),
            pod("p9", "n2", local_storage=True),
            pod("p10", "n2", mirror=True),
        ],
        0,
        evictor={"evictSystemCriticalPods": True, "nodeFit": True},
    ),
    Case(
        "Pods tolerating included taints should not get evicted even with other taints present",
        [node("n7", taint(1), taint(1))],
        [pod("p1", "n1", TOLERATES_1)],
        0,
        args={"includedTaints": ["testTaint1=test1"]},
    ),
    Case(
        "Pods not tolerating not included taints should not get evicted",
        [node("n1", taint(1))],
        [pod("p1", "n1", TOLERATES_1), pod("p2", "n1"), pod("p4", "n1", TOLERATES_X1)],
        0,
        args={"includedTaints": ["testTaint2=test2"]},
    ),
    Case(
        "Pods tolerating includedTaint should not get evicted. Pods not tolerating includedTaints should get evicted",
        [node("n1", taint(1))],
        [*three_on_n1("p2"), pod("p3", "n1", TOLERATES_1)],
        1,
        {"p2"},
        args={"includedTaints": ["testTaint1=test1"]},
    ),
    # addTolerationToPod replaces the tolerations, so p15 tolerates only testingTaint1=testing1 and is the one evicted
    Case(
        "Pods not tolerating all taints are evicted when includedTaints is empty",
        [node("n7", taint(1), taint(1))],
        [pod("p14", "n7", TOLERATES_1), pod("p15", "n7", toleration("testingTaint", "testing", 1))],
        1,
        {"p15"},
    ),
]

QUIRKS = [
    Case(
        "includedTaints explicitly empty names no taint, so nothing is evicted",
        [node("n1", taint(1))],
        [pod("p2", "n1")],
        0,
        args={"includedTaints": []},
    ),
    Case(
        "includedTaints by key alone includes the taint",
        [node("n1", taint(1))],
        [pod("p2", "n1")],
        1,
        {"p2"},
        args={"includedTaints": ["testTaint1"]},
    ),
    Case(
        "NoExecute taints are never looked at",
        [node("n1", taint(1, "NoExecute"))],
        [pod("p2", "n1")],
        0,
        args={"includePreferNoSchedule": True},
    ),
    Case(
        "an empty-valued taint is not named by 'key='",
        [node("n1", {"key": "k", "effect": "NoSchedule"})],
        [pod("p2", "n1")],
        1,
        {"p2"},
        args={"excludedTaints": ["k="]},
    ),
    Case(
        "an empty-valued taint is named by its key",
        [node("n1", {"key": "k", "effect": "NoSchedule"})],
        [pod("p2", "n1")],
        0,
        args={"excludedTaints": ["k"]},
    ),
    Case(
        "a wildcard Exists toleration tolerates every taint",
        [node("n1", taint(1), taint(2))],
        [pod("p2", "n1", {"operator": "Exists"})],
        0,
    ),
    Case(
        "a node limit moves on to the next node",
        [node("n1", taint(1)), node("n2", taint(1))],
        [pod("a1", "n1"), pod("a2", "n1"), pod("b1", "n2"), pod("b2", "n2")],
        2,
        {"a1", "b1"},
        limits=Limits(per_node=1),
    ),
    Case(
        "pods of excluded namespaces are not listed",
        [node("n1", taint(1))],
        [pod("p2", "n1"), pod("p7", "n1", critical=True)],
        1,
        {"p7"},
        args={"namespaces": {"exclude": ["default"]}},
        evictor={"evictSystemCriticalPods": True},
    ),
    Case(
        "the plugin labelSelector limits the listing",
        [node("n1", taint(1))],
        [pod("p2", "n1", labels={"app": "x"}), pod("p3", "n1")],
        1,
        {"p2"},
        args={"labelSelector": {"matchLabels": {"app": "x"}}},
    ),
]


@pytest.mark.parametrize("case", UPSTREAM + QUIRKS, ids=lambda case: case.description)
def test_delete_pods_violating_node_taints(case: Case) -> None:
    evicted = run_plugin(PLUGIN, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits)
    assert len(evicted) == case.expected, evicted
    assert set(evicted) <= case.among


@pytest.mark.parametrize(
    ("limits", "refused"), [(Limits(per_node=1), Outcome.NODE_LIMIT), (Limits(total=1), Outcome.TOTAL_LIMIT)]
)
def test_a_limit_refusal_ends_the_node_or_the_plugin(limits: Limits, refused: Outcome) -> None:
    outcomes: list[Outcome] = []
    nodes = [node("n1", taint(1)), node("n2")]
    evicted = run_plugin(
        PLUGIN, {}, nodes, [pod("a1", "n1"), pod("a2", "n1"), pod("a3", "n1")], limits=limits, outcomes=outcomes
    )
    assert evicted == ["a1"]
    assert outcomes == [Outcome.SUCCESS, refused]


def test_terminal_pods_are_not_listed() -> None:
    failed = pod("p2", "n1")
    failed["status"]["phase"] = "Failed"
    assert run_plugin(PLUGIN, {}, [node("n1", taint(1))], [failed, pod("p3", "n1")]) == ["p3"]


def test_defaults_change_nothing_and_copy() -> None:
    args: Json = {"includedTaints": [], "excludedTaints": None}
    plugin = REGISTRY["RemovePodsViolatingNodeTaints"]
    assert plugin.defaults(plugin.decode(args)) == plugin.decode(args)
    assert plugin.defaults(plugin.decode({})) == plugin.decode({})


TOLERATES_TAINT = [
    (
        "same key and effect, Exists, taint without value",
        {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "foo", "effect": "NoSchedule"},
        True,
    ),
    (
        "same key and effect, Exists, taint with a value",
        {"key": "foo", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "foo", "value": "bar", "effect": "NoSchedule"},
        True,
    ),
    (
        "same effect, empty key with Exists matches all taints",
        {"key": "", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "foo", "value": "bar", "effect": "NoSchedule"},
        True,
    ),
    (
        "same key, effect and value, Equal",
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
        {"key": "foo", "value": "bar", "effect": "NoSchedule"},
        True,
    ),
    (
        "same key and effect, different values, Equal",
        {"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"},
        {"key": "foo", "value": "value2", "effect": "NoSchedule"},
        False,
    ),
    (
        "same key and value, different effects, Equal",
        {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"},
        {"key": "foo", "value": "bar", "effect": "NoExecute"},
        False,
    ),
]


@pytest.mark.parametrize(
    ("toleration_", "taint_", "tolerated"),
    [case[1:] for case in TOLERATES_TAINT],
    ids=[case[0] for case in TOLERATES_TAINT],
)
def test_tolerates_taint(toleration_: Json, taint_: Json, tolerated: bool) -> None:
    assert nodeutil.tolerates(toleration_, taint_) is tolerated
