"""Decisions per release (:mod:`desched.executor.releases`) of RemovePodsViolatingInterPodAntiAffinity and
RemovePodsViolatingTopologySpreadConstraint: each modelled row's older decision at its last older release next to the
newer one at the first newer release, and upstream's test tables at the older tags where they differ from v0.36.

``pod_antiaffinity_test.go`` at v0.27.1 is the v0.36 table without the total-limit case (no such limit before
v0.31) and without the case 877d9b1 added (a conflict across nodes), and its node ``n1`` carries no labels.
``topologyspreadconstraint_test.go``'s ``TestTopologySpreadConstraint`` is the same table at v0.32.2 and v0.33.0
(v0.33.0 only added ``TestSortDomains``), so the v0.33 port runs again at v0.32.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from desched.executor.cluster import Cluster
from desched.executor.evictions import Limits, PodEvictor
from desched.executor.framework import Handle, ListingOrder
from desched.executor.plugins import topologyspread
from desched.executor.releases import ReleaseDecisions
from desched.plugins import REGISTRY
from tests.executor import test_interpodantiaffinity as anti
from tests.executor import test_topologyspread as spread
from tests.executor.builders import NOW, evictor_from, run_plugin

Json = dict[str, Any]
V27, V28, V32, V33, V34 = (ReleaseDecisions(minor) for minor in (27, 28, 32, 33, 34))

# --- anti-affinity-same-node: up to v0.27 a pod conflicts only with pods on its own node ---------------------------

ACROSS_NODES = "Evict pod violating anti-affinity among different node (all pods have anti-affinity)"
NOT_AT_V0_27 = {"Maximum pods to evict (maxNoOfPodsToEvictTotal)", ACROSS_NODES}


def without_labels(case: anti.Case) -> anti.Case:
    """The case with v0.27.1's unlabelled ``n1`` (v0.36 gives it ``region: main-region``)."""
    nodes = [
        anti.node(node["metadata"]["name"]) if node["metadata"]["labels"] == anti.MAIN_REGION else node
        for node in case.nodes
    ]
    return replace(case, nodes=nodes)


ANTI_AFFINITY_AT_V0_27 = [without_labels(case) for case in anti.UPSTREAM if case.description not in NOT_AT_V0_27]


@pytest.mark.parametrize("case", ANTI_AFFINITY_AT_V0_27, ids=lambda case: case.description)
def test_pod_anti_affinity_upstream_table_at_v0_27(case: anti.Case) -> None:
    evicted = run_plugin(
        anti.PLUGIN, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits, release=V27
    )
    assert len(evicted) == case.expected, evicted
    assert set(evicted) <= case.among


def test_the_v0_27_table_is_a_strict_part_of_v0_36s() -> None:
    assert len(ANTI_AFFINITY_AT_V0_27) == len(anti.UPSTREAM) - 2
    assert all(node["metadata"]["labels"] != anti.MAIN_REGION for case in ANTI_AFFINITY_AT_V0_27 for node in case.nodes)


@pytest.mark.parametrize(("release", "evicted"), [(V27, []), (V28, ["p1"]), (ReleaseDecisions(), ["p1"])], ids=repr)
def test_anti_affinity_across_nodes_from_v0_28(release: ReleaseDecisions, evicted: list[str]) -> None:
    """Upstream's case of 877d9b1: p1 on n1 repels p11 on n5, both nodes in region main-region."""
    case = next(case for case in anti.UPSTREAM if case.description == ACROSS_NODES)
    assert run_plugin(anti.PLUGIN, {}, case.nodes, case.pods, release=release) == evicted


@pytest.mark.parametrize("release", [V27, V28], ids=repr)
def test_anti_affinity_on_the_same_node_at_every_release(release: ReleaseDecisions) -> None:
    """A node without the topology label: only its own pods count, before and after the change."""
    nodes = [anti.node("n1"), anti.node("n2")]
    pods = [anti.with_anti("p1"), anti.pod("q", "n1", labels=anti.FOO_BAR), anti.pod("r", "n2", labels=anti.FOO_BAR)]
    assert run_plugin(anti.PLUGIN, {}, nodes, pods, release=release) == ["p1"]


# --- spread-sort-ignores-priority: up to v0.32 a domain's pods are not sorted by priority -------------------------


PRIORITIES = [
    spread.Group(1, "n1", constraints=[spread.constraint()], priority=5),
    spread.Group(1, "n1", priority=20),
    spread.Group(1, "n1", node_selector={}),
    spread.Group(1, "n1"),
    spread.Group(1, "n1", priority=10),
    spread.Group(1, "n1", priority=1),
]


@pytest.mark.parametrize(
    ("release", "evicted"), [(V32, ["pod-3", "pod-4", "pod-5"]), (V33, ["pod-0", "pod-4", "pod-1"])], ids=repr
)
def test_topology_spread_sorts_by_priority_from_v0_33(release: ReleaseDecisions, evicted: list[str]) -> None:
    """Six pods in zoneA, none in zoneB: three move. Up to v0.32 the domain keeps its listing order behind pod-2 (the
    one with a nodeSelector), so its last three go; from v0.33 the highest priorities go last and are taken."""
    pods = spread.create_pods(PRIORITIES)
    nodes = spread.zone_nodes("zoneA", "zoneB")
    assert run_plugin(spread.PLUGIN, {}, nodes, pods, extra=[spread.NAMESPACE], defaults=True, release=release) == (
        evicted
    )


def test_the_v0_32_comparator_reads_no_priority() -> None:
    """``sortDomains``' less at v0.32.2: non-evictable pods first, then pods with a nodeSelector or node affinity;
    two pods of one group are never less, whatever their priorities."""
    pod, evictable = spread.sort_pod, spread.evictable_by_annotation
    less = topologyspread.domain_less(evictable, by_priority=False)
    assert less(pod("a", True, 1), pod("b", True, 2)) is less(pod("a", True, 2), pod("b", True, 1)) is False
    assert less(pod("a", True, nodeSelector={}), pod("b", True)) is True
    assert less(pod("a", False), pod("b", True)) is True
    pods = [pod("high", True, 20), pod("low", True, 5), pod("selected", True, 9, nodeSelector={})]
    names = [found["metadata"]["name"] for found in topologyspread.sort_domain_pods(pods, evictable, False)]
    assert names == ["selected", "high", "low"]


# --- v0.27's TopologySpread: the namespace's pods from the API, no inclusion policies, no matchLabelKeys ------------

SOFT = {"includeSoftConstraints": True}
CONSTRAINED_ONCE = (
    "2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and nodeAffinity aren't evicted"
)
EIGHT_SEVEN = "3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5]"
# the cases v0.28.1-v0.36 added to TestTopologySpreadConstraint
NOT_AT_V0_27 = {
    "2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2] (both constraints)",
    "6 domains, sizes [0,0,0,3,3,2], maxSkew=1, No pod is evicted since topology is balanced",
    "7 domains, sizes [0,0,0,3,3,2], maxSkew=1, two pods are evicted and moved to new node added",
    "6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from node 4",
    "6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 pod is evicted as pods of node:winNodeA can only be scheduled on "
    "this node and nodeFit is true ",
    "2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same replicaset",
    "2 domains, sizes [2,0], maxSkew=1, move 0 pods given matchLabelKeys on two different replicasets",
    "3 domains, sizes [2,3,4], maxSkew=1, args.NodeFit is false, and not enough cpu on zoneA; 1 should be moved to "
    "force scale-up",
    "3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeTaintsPolicy=Ignore, should move 1 for [1, 1, 1]",
}


def at_v0_27(case: spread.Case) -> spread.Case:
    """The case as ``topologyspreadconstraint_test.go`` has it at v0.27.1: ``includeSoftConstraints`` for both
    constraints, only the first pod of the [4,0] case declares the constraint, and the [8 7 0] case names 4 pods."""
    if case.args == spread.BOTH:
        return case._replace(args=SOFT)
    if case.name == CONSTRAINED_ONCE:
        return case._replace(groups=[case.groups[0], *(group._replace(constraints=()) for group in case.groups[1:])])
    if case.name == EIGHT_SEVEN:
        return case._replace(names=["pod-5", "pod-6", "pod-7", "pod-8"])
    return case


SPREAD_AT_V0_27 = [at_v0_27(case) for case in spread.TOPOLOGY_SPREAD_CONSTRAINT if case.name not in NOT_AT_V0_27]


@pytest.mark.parametrize("case", SPREAD_AT_V0_27, ids=lambda case: case.name)
def test_topology_spread_upstream_table_at_v0_27(case: spread.Case) -> None:
    evicted = spread.run(case, release=V27)
    assert len(evicted) == case.expected
    assert set(case.names or []) <= set(evicted)


def test_the_v0_27_spread_table_has_upstreams_29_cases() -> None:
    assert len(SPREAD_AT_V0_27) == len(spread.TOPOLOGY_SPREAD_CONSTRAINT) - len(NOT_AT_V0_27) == 29
    assert sum(case.args == SOFT for case in SPREAD_AT_V0_27) == 2


@pytest.mark.parametrize(("release", "evicted"), [(V27, 1), (V28, 0)], ids=repr)
def test_topology_spread_reads_match_label_keys_from_v0_28(release: ReleaseDecisions, evicted: int) -> None:
    """Upstream's case of 704a82b: two replicasets' pods in zoneA, one pod each; v0.27 counts both under foo=bar."""
    case = next(
        case for case in spread.TOPOLOGY_SPREAD_CONSTRAINT if case.name in NOT_AT_V0_27 and "two different" in case.name
    )
    assert len(spread.run(case, release=release)) == evicted


@pytest.mark.parametrize(("release", "evicted"), [(V27, ["pod-1", "pod-2"]), (V28, ["pod-2"])], ids=repr)
def test_topology_spread_honours_node_affinity_policy_from_v0_28(release: ReleaseDecisions, evicted: list[str]) -> None:
    """Three ssd-only pods on n1 (zoneA); zoneC's n3 has no ssd. From v0.28 zoneC is no domain ([3,0]: one move); at
    v0.27 it is ([3,0,0]: a move to each), and both moved pods fit n2, the below-average node with ssd."""
    groups = [spread.Group(3, "n1", constraints=[spread.constraint()], node_selector=spread.SSD)]
    case = spread.Case("ssd", spread.SSD_NODES, groups, len(evicted))
    assert sorted(spread.run(case, release=release)) == evicted


def off_the_listing(owned: bool = True) -> list[spread.Group]:
    """zoneA: pod-0 (declaring the constraint), pod-1 and pod-2 (``owned`` or not); zoneB: pod-3."""
    return [
        spread.Group(1, "n1", constraints=[spread.constraint()]),
        spread.Group(1, "n1"),
        spread.Group(1, "n1", no_owners=not owned),
        spread.Group(1, "n2"),
    ]


@pytest.mark.parametrize(("release", "evicted"), [(V27, ["pod-1"]), (V28, [])], ids=repr)
def test_topology_spread_counts_pods_failing_filter_at_v0_27(release: ReleaseDecisions, evicted: list[str]) -> None:
    """pod-2 has no owner (Filter refuses it): v0.27 counts it ([3,1]) and sorts it first, so pod-1 moves; v0.28
    lists only evictable pods ([2,1]: balanced)."""
    pods = spread.create_pods(off_the_listing(owned=False))
    nodes = spread.zone_nodes("zoneA", "zoneB")
    assert run_plugin(spread.PLUGIN, {}, nodes, pods, extra=[spread.NAMESPACE], defaults=True, release=release) == (
        evicted
    )


@pytest.mark.parametrize(("release", "evicted"), [(V27, ["pod-2"]), (V28, [])], ids=repr)
def test_topology_spread_counts_succeeded_pods_at_v0_27(release: ReleaseDecisions, evicted: list[str]) -> None:
    """pod-2 has Succeeded: v0.27 counts it ([3,1]) and, last of zoneA, takes it; v0.28 lists only non-terminal
    pods."""
    pods = spread.create_pods(off_the_listing())
    pods[2]["status"]["phase"] = "Succeeded"
    nodes = spread.zone_nodes("zoneA", "zoneB")
    assert run_plugin(spread.PLUGIN, {}, nodes, pods, extra=[spread.NAMESPACE], defaults=True, release=release) == (
        evicted
    )


@pytest.mark.parametrize(("release", "evicted"), [(V27, ["pod-2"]), (V28, [])], ids=repr)
def test_topology_spread_reads_constraints_off_the_cycle_nodes_at_v0_27(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """Only a pending pod declares the constraint: v0.27 reads it from the API ([3,1] on the cycle's nodes), v0.28
    lists only the pods on the cycle's nodes and finds no constraint."""
    groups = [spread.Group(3, "n1"), spread.Group(1, "n2"), spread.Group(1, "", constraints=[spread.constraint()])]
    pods = spread.create_pods(groups)
    nodes = spread.zone_nodes("zoneA", "zoneB")
    assert run_plugin(spread.PLUGIN, {}, nodes, pods, extra=[spread.NAMESPACE], defaults=True, release=release) == (
        evicted
    )


@pytest.mark.parametrize(("release", "evicted"), [(V27, ["pod-2"]), (V28, [])], ids=repr)
def test_topology_spread_counts_pods_outside_the_label_selector_at_v0_27(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """The args' labelSelector picks the pods labelled ``move: yes``, all but pod-0; up to v0.27 it is only checked
    at eviction, so pod-0 counts ([3,1]) and pod-2, last of zoneA, moves; from v0.28 zoneA counts 2 ([2,1])."""
    moving = {**spread.FOO_BAR, "move": "yes"}
    groups = [
        spread.Group(1, "n1", constraints=[spread.constraint()]),
        spread.Group(2, "n1", moving, [spread.constraint()]),
        spread.Group(1, "n2", moving, [spread.constraint()]),
    ]
    pods = spread.create_pods(groups)
    nodes = spread.zone_nodes("zoneA", "zoneB")
    args = {"labelSelector": {"matchLabels": {"move": "yes"}}}
    assert run_plugin(spread.PLUGIN, args, nodes, pods, extra=[spread.NAMESPACE], defaults=True, release=release) == (
        evicted
    )


# --- spread-inclusion-stubs: v0.28-v0.33 balance constraints that differ only in the pods' tolerations apart ------


def evicted_in_order(pods: list[Json], release: ReleaseDecisions, seed: int) -> set[str]:
    """The pods one balance evicts on zones A, B, C with upstream's map orders drawn from ``seed``."""
    nodes = spread.zone_nodes("zoneA", "zoneB", "zoneC")
    cluster = Cluster.from_objects(copy.deepcopy([*nodes, *pods, spread.NAMESPACE]))
    pod_evictor = PodEvictor(cluster, Limits())
    evictor = evictor_from({}, cluster, NOW, release.minor)
    handle = Handle(cluster, NOW, "p", evictor, pod_evictor, order=ListingOrder(seed), release=release)
    registered = REGISTRY[spread.PLUGIN]
    topologyspread.Implementation(registered.defaults(registered.decode({})), handle).balance(cluster.nodes)
    return {eviction.pod for eviction in pod_evictor.evictions}


def tolerating_apart() -> list[Json]:
    """zoneA and zoneB hold two pods each, zoneC none; pod-0 and pod-2 declare the same constraint but tolerate
    different taints (nodeTaintsPolicy unset: Ignore). One pod moves, from whichever of the tied zones ends last."""
    groups = [
        spread.Group(1, "n1", constraints=[spread.constraint()], tolerations=[{"key": "a", "operator": "Exists"}]),
        spread.Group(1, "n1"),
        spread.Group(1, "n2", constraints=[spread.constraint()], tolerations=[{"key": "b", "operator": "Exists"}]),
        spread.Group(1, "n2"),
    ]
    return spread.create_pods(groups)


@pytest.mark.parametrize(("release", "most"), [(V28, 2), (V33, 2), (V34, 1), (ReleaseDecisions(), 1)], ids=repr)
def test_constraints_differing_in_tolerations_are_balanced_apart_up_to_v0_33(
    release: ReleaseDecisions, most: int
) -> None:
    """Up to v0.33 the two constraints are balanced one after the other, each breaking the zoneA/zoneB tie in its
    own map order: over 20 orders some take a pod from each zone. From v0.34 they are one constraint."""
    outcomes = [evicted_in_order(tolerating_apart(), release, seed) for seed in range(20)]
    assert max(len(evicted) for evicted in outcomes) == most
    assert min(len(evicted) for evicted in outcomes) == 1


@pytest.mark.parametrize(("release", "count"), [(V27, 1), (V28, 2), (V33, 2), (V34, 1)], ids=repr)
def test_constraint_identity_per_release(release: ReleaseDecisions, count: int) -> None:
    """v0.27 compares the pods' own constraints (equal here), v0.28-v0.33 the internal ones with the tolerations,
    v0.34 on the internal ones without them (Ignore)."""
    pods = tolerating_apart()
    keys = {topologyspread.constraint_key(pods[index]["spec"]["topologySpreadConstraints"][0], pods[index], release)
            for index in (0, 2)}  # fmt: skip
    assert len(keys) == count


def test_v0_27_compares_the_whole_constraint() -> None:
    """v0.27's deep equality of ``v1.TopologySpreadConstraint`` reads ``whenUnsatisfiable`` and ``matchLabelKeys``
    too; later releases compare the internal constraint, which has neither field."""
    pod: Json = {"metadata": {"labels": {}}}
    soft = spread.constraint(when="ScheduleAnyway")
    keyed = spread.constraint(matchLabelKeys=["absent"])
    for other in (soft, keyed):
        assert topologyspread.constraint_key(other, pod, V27) != topologyspread.constraint_key(
            spread.constraint(), pod, V27
        )
        assert topologyspread.constraint_key(other, pod, V28) == topologyspread.constraint_key(
            spread.constraint(), pod, V28
        )
