"""RemovePodsViolatingInterPodAntiAffinity: upstream's ``TestPodAntiAffinity`` (all 12 cases, one of them listed
twice upstream) as data, plus the behaviour of docs/executor-semantics.md#86-removepodsviolatinginterpodantiaffinity
that upstream's table does not reach.

Upstream asserts counts only; ``among`` lists the pods the evictions must come from. Where the count alone could hide
a wrong choice (the sort case), ``among`` has exactly ``expected`` names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from desched.executor.evictions import Limits, Outcome
from desched.plugins import REGISTRY
from tests.executor.builders import build_node, build_pod, run_plugin, set_normal_owner

Json = dict[str, Any]
PLUGIN = "RemovePodsViolatingInterPodAntiAffinity"
MAIN_REGION = {"region": "main-region"}


def node(
    name: str,
    labels: dict[str, str] | None = None,
    size: tuple[int, int, int] = (2000, 3000, 10),
    unschedulable: bool = False,
) -> Json:
    built = build_node(name, *size)
    built["metadata"]["labels"] = dict(labels or {})
    if unschedulable:
        built["spec"] = {"unschedulable": True}
    return built


def term(key: str, value: str, topology: str = "region", namespaces: list[str] | None = None) -> Json:
    """``test.SetPodAntiAffinity``'s term: ``key In [value]`` over ``topology``."""
    built: Json = {
        "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
        "topologyKey": topology,
    }
    if namespaces is not None:
        built["namespaces"] = namespaces
    return built


def pod(
    name: str,
    node_name: str = "n1",
    *terms: Json,
    labels: dict[str, str] | None = None,
    priority: int | None = None,
    owned: bool = True,
    namespace: str = "default",
    terminating: bool = False,
    node_selector: dict[str, str] | None = None,
) -> Json:
    built = build_pod(name, 100, 0, node_name)
    if owned:
        set_normal_owner(built)
    if terms:
        built["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}
    if labels:
        built["metadata"]["labels"] = dict(labels)
    if priority is not None:
        built["spec"]["priority"] = priority
    built["metadata"]["namespace"] = namespace
    if terminating:
        built["metadata"]["deletionTimestamp"] = "1970-01-01T00:00:00Z"
    if node_selector:
        built["spec"]["nodeSelector"] = dict(node_selector)
    return built


FOO_BAR = {"foo": "bar"}


def with_anti(name: str, node_name: str = "n1") -> Json:
    """``buildTestPodWithAntiAffinityForNode1``."""
    return pod(name, node_name, term("foo", "bar"))


def p2() -> Json:
    return pod("p2", labels=FOO_BAR)


def non_evictable() -> Json:
    """``buildTestPodNonEvictableForNode1``: system-critical priority, no owner, labelled foo=bar."""
    return pod("non-evict", labels=FOO_BAR, priority=2000000000, owned=False)


def preferred_only(name: str) -> Json:
    """A pod whose only anti-affinity term is a preferred one."""
    built = pod(name)
    preferred = [{"weight": 1, "podAffinityTerm": term("foo", "bar")}]
    built["spec"]["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}
    return built


def four_pods() -> list[Json]:
    return [with_anti("p1"), p2(), with_anti("p3"), with_anti("p4")]


def west_p8() -> Json:
    return pod("p8", node_selector={"datacenter": "west"}, owned=False)


@dataclass
class Case:
    description: str
    nodes: list[Json]
    pods: list[Json]
    expected: int
    among: set[str] = field(default_factory=set)
    limits: Limits = field(default_factory=Limits)
    evictor: Json = field(default_factory=dict)
    args: Json = field(default_factory=dict)


UPSTREAM = [
    Case("Maximum pods to evict - 0", [node("n1", MAIN_REGION)], four_pods(), 3, {"p1", "p3", "p4"}),
    Case(
        "Maximum pods to evict - 3", [node("n1", MAIN_REGION)], four_pods(), 3, {"p1", "p3", "p4"}, Limits(per_node=3)
    ),
    Case(
        "Maximum pods to evict (maxPodsToEvictPerNamespace=3) - 3",
        [node("n1", MAIN_REGION)],
        four_pods(),
        3,
        {"p1", "p3", "p4"},
        Limits(per_namespace=3),
    ),
    Case(
        "Maximum pods to evict (maxNoOfPodsToEvictTotal)",
        [node("n1", MAIN_REGION)],
        four_pods(),
        1,
        {"p1", "p3", "p4"},
        Limits(per_namespace=3, total=1),
    ),
    # p7 (priority 0) goes first; once it is gone p5 and p6 no longer conflict
    Case(
        "Evict only 1 pod after sorting",
        [node("n1", MAIN_REGION)],
        [
            pod("p5", "n1", term("foo1", "bar1"), labels=FOO_BAR, priority=100),
            pod("p6", "n1", term("foo1", "bar1"), labels=FOO_BAR, priority=50),
            pod("p7", "n1", term("foo", "bar"), labels={"foo1": "bar1"}, priority=0),
        ],
        1,
        {"p7"},
    ),
    Case(
        "Evicts pod that conflicts with critical pod (but does not evict critical pod)",
        [node("n1", MAIN_REGION)],
        [with_anti("p1"), non_evictable()],
        1,
        {"p1"},
        Limits(per_node=1),
    ),
    Case(
        "Evicts pod that conflicts with critical pod (but does not evict critical pod) (2)",
        [node("n1", MAIN_REGION)],
        [with_anti("p1"), non_evictable()],
        1,
        {"p1"},
        Limits(per_node=1),
    ),
    Case(
        "Won't evict pods because node selectors don't match available nodes",
        [node("n1", MAIN_REGION), node("n2", {"datacenter": "east"})],
        [west_p8(), non_evictable()],
        0,
        limits=Limits(per_node=1),
        evictor={"nodeFit": True},
    ),
    Case(
        "Won't evict pods because only other node is not schedulable",
        [node("n1", MAIN_REGION), node("n3", unschedulable=True)],
        [west_p8(), non_evictable()],
        0,
        limits=Limits(per_node=1),
        evictor={"nodeFit": True},
    ),
    Case(
        "No pod to evicted since all pod terminating",
        [node("n1", MAIN_REGION)],
        [pod(name, "n1", term("foo", "bar"), terminating=True) for name in ("p9", "p10")],
        0,
    ),
    Case(
        "Won't evict pods because only other node doesn't have enough resources",
        [node("n1", MAIN_REGION), node("n4", size=(2, 2, 1))],
        four_pods(),
        0,
        limits=Limits(per_node=3),
        evictor={"nodeFit": True},
    ),
    Case(
        "Evict pod violating anti-affinity among different node (all pods have anti-affinity)",
        [node("n1", MAIN_REGION), node("n5", MAIN_REGION, size=(200, 3000, 10))],
        [with_anti("p1"), pod("p11", "n5", labels=FOO_BAR)],
        1,
        {"p1"},
    ),
]

TWO_REGIONS = [node("n1", MAIN_REGION), node("n2", {"region": "other"}), node("n3")]
INVALID = {
    "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "In", "values": []}]},
    "topologyKey": "region",
}

BEHAVIOUR = [
    Case(
        "a matching pod in another topology domain does not conflict",
        TWO_REGIONS,
        [with_anti("p1"), pod("q", "n2", labels=FOO_BAR)],
        0,
    ),
    Case(
        "without the topology label only the same node counts",
        TWO_REGIONS,
        [with_anti("p1", "n3"), pod("q", "n1", labels=FOO_BAR)],
        0,
    ),
    Case(
        "without the topology label the same node still conflicts",
        TWO_REGIONS,
        [with_anti("p1", "n3"), pod("q", "n3", labels=FOO_BAR)],
        1,
        {"p1"},
    ),
    Case(
        "a pod never conflicts with itself",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar"), labels=FOO_BAR)],
        0,
    ),
    Case(
        "a pod of the same name in another namespace is skipped",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar", namespaces=["other"])), pod("p1", "n1", labels=FOO_BAR, namespace="other")],
        0,
    ),
    Case(
        "term namespaces are looked up instead of the pod's own",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar", namespaces=["other"])), pod("q", "n1", labels=FOO_BAR)],
        0,
    ),
    Case(
        "term namespaces find pods of other namespaces",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar", namespaces=["other"])), pod("q", "n1", labels=FOO_BAR, namespace="other")],
        1,
        {"p1"},
    ),
    Case(
        "the plugin's namespace filter also hides the other side",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar", namespaces=["other"])), pod("q", "n1", labels=FOO_BAR, namespace="other")],
        0,
        args={"namespaces": {"include": ["default"]}},
    ),
    Case(
        "the plugin's labelSelector also hides the other side",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar"), labels={"app": "x"}), p2()],
        0,
        args={"labelSelector": {"matchLabels": {"app": "x"}}},
    ),
    Case(
        "a pod failing Filter stays listed and still causes conflicts",
        [node("n1", MAIN_REGION), node("n2")],
        [
            pod("low", "n1", term("foo", "bar"), labels={"x": "y"}, priority=0, owned=False),
            pod("high", "n1", term("x", "y"), labels=FOO_BAR, priority=10),
        ],
        1,
        {"high"},
    ),
    Case(
        "an evicted pod on an earlier node spares a later node's pod",
        [node("n1", MAIN_REGION), node("n2", MAIN_REGION)],
        [pod("a", "n1", term("foo", "bar"), labels={"x": "y"}), pod("b", "n2", term("x", "y"), labels=FOO_BAR)],
        1,
        {"a"},
    ),
    Case(
        "a node limit moves on to the next node",
        [node("n1", MAIN_REGION), node("n2", MAIN_REGION)],
        [with_anti("a1"), with_anti("a2"), with_anti("b1", "n2"), pod("q", "n2", labels=FOO_BAR)],
        2,
        {"a1", "b1"},
        Limits(per_node=1),
    ),
    Case(
        "an invalid selector ends the pod's check",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", INVALID, term("foo", "bar")), p2()],
        0,
    ),
    Case(
        "terms before an invalid selector still count",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", term("foo", "bar"), INVALID), p2()],
        1,
        {"p1"},
    ),
    Case(
        "a nil term selector matches nothing",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", {"topologyKey": "region"}), p2()],
        0,
    ),
    Case(
        "an empty term selector matches every other pod",
        [node("n1", MAIN_REGION), node("n2")],
        [pod("p1", "n1", {"labelSelector": {}, "topologyKey": "region"}), pod("q", "n1")],
        1,
        {"p1"},
    ),
    Case(
        "matchLabels and In values are both honoured",
        [node("n1", MAIN_REGION), node("n2")],
        [
            pod(
                "p1",
                "n1",
                {
                    "labelSelector": {
                        "matchLabels": {"app": "db"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
                    },
                    "topologyKey": "region",
                },
            ),
            pod("q1", "n1", labels={"app": "db", "tier": "c"}),
            pod("q2", "n1", labels={"app": "web", "tier": "b"}),
        ],
        0,
    ),
    Case(
        "matchLabels and In values select the conflicting pod",
        [node("n1", MAIN_REGION), node("n2")],
        [
            pod(
                "p1",
                "n1",
                {
                    "labelSelector": {
                        "matchLabels": {"app": "db"},
                        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
                    },
                    "topologyKey": "region",
                },
            ),
            pod("q1", "n1", labels={"app": "db", "tier": "b"}),
        ],
        1,
        {"p1"},
    ),
    Case("preferred anti-affinity is ignored", [node("n1", MAIN_REGION), node("n2")], [preferred_only("p1"), p2()], 0),
    Case(
        "terminal pods are neither candidates nor the other side",
        [node("n1", MAIN_REGION), node("n2")],
        [with_anti("p1"), p2() | {"status": {"phase": "Succeeded"}}],
        0,
    ),
]


@pytest.mark.parametrize("case", UPSTREAM + BEHAVIOUR, ids=lambda case: case.description)
def test_pod_anti_affinity(case: Case) -> None:
    evicted = run_plugin(PLUGIN, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits)
    assert len(evicted) == case.expected, evicted
    assert set(evicted) <= case.among


def test_an_eviction_refused_by_a_limit_keeps_the_pod_listed() -> None:
    """``blocker`` uses up namespace ``default``'s limit; ``low`` is then refused and stays listed, so ``high``, in
    namespace ``other``, still conflicts with it."""
    pods = [
        pod("filler", "n2"),
        pod("blocker", "n2", {"labelSelector": {}, "topologyKey": "none"}),
        pod("low", "n1", term("foo", "bar", namespaces=["other"]), labels={"x": "y"}, priority=0),
        pod("high", "n1", term("x", "y", namespaces=["default"]), labels=FOO_BAR, priority=10, namespace="other"),
    ]
    nodes = [node("n2", MAIN_REGION), node("n1", MAIN_REGION)]
    evicted = run_plugin(PLUGIN, {}, nodes, pods, limits=Limits(per_namespace=1))
    assert evicted == ["blocker", "high"]


S, NODE, TOTAL = Outcome.SUCCESS, Outcome.NODE_LIMIT, Outcome.TOTAL_LIMIT


@pytest.mark.parametrize(("limits", "outcomes"), [(Limits(per_node=1), [S, NODE, S]), (Limits(total=1), [S, TOTAL])])
def test_limits_end_the_node_or_the_plugin(limits: Limits, outcomes: list[Outcome]) -> None:
    recorded: list[Outcome] = []
    pods = [with_anti("a1"), with_anti("a2"), with_anti("a3"), with_anti("b1", "n2"), pod("q", "n2", labels=FOO_BAR)]
    run_plugin(PLUGIN, {}, [node("n1", MAIN_REGION), node("n2", MAIN_REGION)], pods, limits=limits, outcomes=recorded)
    assert recorded == outcomes


def test_defaults_change_nothing_and_copy() -> None:
    args = {"namespaces": {"include": ["a"]}}
    plugin = REGISTRY["RemovePodsViolatingInterPodAntiAffinity"]
    assert plugin.defaults(plugin.decode(args)) == plugin.decode(args)
