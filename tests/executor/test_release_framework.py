"""Decisions per release for NodeFit, the DefaultEvictor, the PodEvictor's limits, RemoveDuplicates and the
descheduler loop (rows ``profile-at-a-time``, ``sort-ignores-prefer-no-eviction``, ``profile-built-per-cycle``,
``namespace-selector-labels-only`` and ``pdb-informer-registered`` of :mod:`desched.executor.releases`).

Upstream's ``TestSortPodsBasedOnPriorityLowToHigh`` (``pkg/descheduler/pod/pods_test.go``) at v0.33.0 is six pods
without the prefer-no-eviction annotation; it runs here at v0.33, and v0.36's twelve-pod table (ported in
``test_podutil.py``) runs at v0.33 and v0.34 to show the annotation counting from v0.34 on. Each plugin that sorts
that way (HighNodeUtilization, LowNodeUtilization, RemovePodsViolatingInterPodAntiAffinity) shows the difference in
its pick. ``descheduler_test.go`` has no case on the order of profiles at v0.27.1, nor on a profile that fails to
build at v0.34.0; the cycle tests below show both. ``TestNamespaceLabelSelectorAllOperations``
(``defaultevictor_test.go``) came with the matchExpressions fix in v0.36.0: its cases (ported in
``test_defaultevictor.py``) run at v0.35, where only those with ``matchLabels`` filter. Upstream's unit tables
register the PodDisruptionBudget lister themselves, which hides the v0.35 start-up order; the cycle test shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from desched.executor.cluster import Cluster
from desched.executor.defaultevictor import UnrunnablePolicy
from desched.executor.evictions import Limits, PodEvictor, SameCycle
from desched.executor.framework import Handle, prepare_policy, run_cycle
from desched.executor.podutil import sort_by_priority_low_to_high
from desched.executor.releases import ReleaseDecisions
from desched.policy.model import decode
from tests.executor import test_highnodeutilization as high
from tests.executor import test_interpodantiaffinity as anti
from tests.executor import test_lownodeutilization as low
from tests.executor.builders import NOW, build_node, build_pod, evictor_from, run_plugin, set_rs_owner
from tests.executor.test_defaultevictor import NAMESPACE_OPERATIONS, OPERATION_OBJECTS, OPERATION_PODS
from tests.executor.test_podutil import (
    HIGH_PRIORITY,
    LOW_PRIORITY,
    make_best_effort,
    make_burstable,
    make_guaranteed,
    names,
    prefer_no_eviction,
    priority_and_qos_pods,
    with_priority,
)
from tests.executor.test_releases import cluster_objects, owned_pods, profile

Json = dict[str, Any]
V27, V28, V33, V34, V35, V36 = (ReleaseDecisions(minor) for minor in (27, 28, 33, 34, 35, 36))


def release_sort(pods: list[Json], release: ReleaseDecisions) -> list[str]:
    """``pods`` sorted low to high as ``release``'s plugins sort them (through :meth:`Handle.priority_key`)."""
    cluster = Cluster.from_objects([build_node("n1", 4000, 2**30, 110), *pods])
    handle = Handle(cluster, NOW, "p", evictor_from({}, cluster, NOW), PodEvictor(cluster, Limits()), release=release)
    return names(sort_by_priority_low_to_high(list(cluster.pods.values()), handle.priority_key))


def v0_33_table() -> tuple[list[Json], list[str]]:
    """TestSortPodsBasedOnPriorityLowToHigh at v0.33.0: its pods in input order and the order it expects."""
    p1, p2, p3, p4, p5, p6 = priority_and_qos_pods(build_pod)  # the cluster's pods: kind and unique uids
    return [p4, p3, p2, p1, p6, p5], ["p5", "p6", "p1", "p2", "p3", "p4"]


@pytest.mark.parametrize("release", [V33, V34])
def test_sort_upstream_table_of_v0_33(release: ReleaseDecisions) -> None:
    pods, expected = v0_33_table()
    assert release_sort(pods, release) == expected


def v0_36_table() -> list[Json]:
    """TestSortPodsBasedOnPriorityLowToHigh at v0.36.0, in its input order: the v0.33 pods and six more, five with
    the prefer-no-eviction annotation."""
    by_name = {pod["metadata"]["name"]: pod for pod in v0_33_table()[0]}
    by_name["p7"] = prefer_no_eviction(with_priority(build_pod("p7", 400, 0, "n1"), LOW_PRIORITY))
    by_name["p8"] = prefer_no_eviction(make_best_effort(with_priority(build_pod("p8", 400, 0, "n1"), HIGH_PRIORITY)))
    by_name["p9"] = prefer_no_eviction(make_burstable(with_priority(build_pod("p9", 400, 0, "n1"), HIGH_PRIORITY)))
    by_name["p10"] = prefer_no_eviction(make_guaranteed(with_priority(build_pod("p10", 400, 100, "n1"), HIGH_PRIORITY)))
    by_name["p11"] = make_burstable(build_pod("p11", 400, 0, "n1"))
    by_name["p12"] = prefer_no_eviction(make_burstable(build_pod("p12", 400, 0, "n1")))
    return [by_name[name] for name in ("p1", "p8", "p9", "p10", "p2", "p3", "p4", "p5", "p6", "p7", "p11", "p12")]


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        # equal priority and QoS: input order (upstream's sort.Slice leaves such pods in no defined order)
        (V33, ["p5", "p11", "p12", "p6", "p1", "p7", "p8", "p2", "p9", "p3", "p10", "p4"]),
        # upstream's expected order at v0.36.0: the annotated pod after its unannotated peer
        (V34, ["p5", "p11", "p12", "p6", "p1", "p7", "p2", "p8", "p3", "p9", "p4", "p10"]),
    ],
)
def test_sort_counts_prefer_no_eviction_from_v0_34(release: ReleaseDecisions, expected: list[str]) -> None:
    assert release_sort(v0_36_table(), release) == expected


def annotated_first(node: str, make: Callable[[str, str], Json]) -> list[Json]:
    """Two pods on ``node`` alike but for the prefer-no-eviction annotation, the annotated one listed first."""
    return [prefer_no_eviction(make("annotated", node)), make("plain", node)]


def owned(name: str, node: str) -> Json:
    return low.pod(name, 400, 0, node, set_rs_owner)


@pytest.mark.parametrize(("release", "evicted"), [(V33, ["annotated"]), (V34, ["plain"])])
def test_high_node_utilization_picks_the_unannotated_pod_from_v0_34(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """n1 is underutilized; with one eviction per node, the first pod of its sorted list goes."""
    pods = [*annotated_first("n1", owned), *low.rs_pods("n2", "q1", "q2", "q3", "q4")]
    limits = Limits(per_node=1)
    chosen = run_plugin(
        "HighNodeUtilization", high.CPU_PODS_30, high.three_nodes(), pods, limits=limits, release=release
    )
    assert chosen == evicted


@pytest.mark.parametrize(("release", "evicted"), [(V33, ["annotated"]), (V34, ["plain"])])
def test_low_node_utilization_picks_the_unannotated_pod_from_v0_34(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """n1 is overutilized and n2 under; with one eviction per node, the first pod of n1's sorted list goes."""
    nodes = [low.node("n1", 4000, 3000, 10), low.node("n2", 4000, 3000, 10)]
    pods = [*annotated_first("n1", owned), *low.rs_pods("n1", "q1", "q2", "q3", "q4", "q5")]
    limits = Limits(per_node=1)
    assert run_plugin("LowNodeUtilization", low.CPU_PODS, nodes, pods, limits=limits, release=release) == evicted


def with_anti_affinity(name: str, node: str) -> Json:
    return anti.pod(name, node, anti.term("foo", "bar"))


@pytest.mark.parametrize(("release", "evicted"), [(V33, ["annotated"]), (V34, ["plain"])])
def test_inter_pod_anti_affinity_picks_the_unannotated_pod_from_v0_34(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """Both pods' anti-affinity matches ``target``; with one eviction per node, the first of the sorted list goes."""
    pods = [*annotated_first("n1", with_anti_affinity), anti.pod("target", "n1", labels=anti.FOO_BAR)]
    nodes = [anti.node("n1", anti.MAIN_REGION)]
    assert run_plugin(anti.PLUGIN, {}, nodes, pods, limits=Limits(per_node=1), release=release) == evicted


def two_profiles() -> Json:
    """Profile ``balance`` runs RemoveDuplicates, the later profile ``deschedule`` PodLifeTime (one hour)."""
    duplicates = {
        "name": "balance",
        "pluginConfig": [{"name": "RemoveDuplicates", "args": {}}],
        "plugins": {"balance": {"enabled": ["RemoveDuplicates"]}},
    }
    lifetime = {
        "name": "deschedule",
        "pluginConfig": [{"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 3600}}],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
    }
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [duplicates, lifetime]}


@pytest.mark.parametrize(
    ("release", "plugins"),
    [
        (V27, ["RemoveDuplicates", "PodLifeTime", "PodLifeTime"]),
        (V28, ["PodLifeTime", "PodLifeTime", "PodLifeTime"]),
    ],
)
def test_v0_27_runs_each_profile_whole_in_turn(release: ReleaseDecisions, plugins: list[str]) -> None:
    """Three old pods of one ReplicaSet on n1 of two nodes: RemoveDuplicates moves one, PodLifeTime evicts them all.
    v0.27 runs the first profile's balance plugin before the second profile's deschedule plugin; from v0.28 every
    deschedule plugin runs first and leaves RemoveDuplicates only terminating pods."""
    nodes = [build_node("n1", 4000, 2**33, 110), build_node("n2", 4000, 2**33, 110)]
    cluster = Cluster.from_objects([*nodes, *owned_pods("a")])
    pod_evictor = PodEvictor(cluster, Limits())
    result = run_cycle(prepare_policy(decode(two_profiles())), cluster, NOW, pod_evictor, release=release)
    assert result.errors == []
    assert [eviction.plugin for eviction in pod_evictor.evictions] == plugins
    assert len({eviction.pod for eviction in pod_evictor.evictions}) == 3


def unbuildable_first(threshold: Json) -> Json:
    """Profiles ``a`` (its DefaultEvictor's ``priorityThreshold`` is ``threshold``) and ``b``, each PodLifeTime in its
    own namespace."""
    profiles = [profile("a", 0, "a"), profile("b", 0, "b")]
    profiles[0]["pluginConfig"][0]["args"] = {"priorityThreshold": threshold}
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": profiles}


UNBUILDABLE = [
    ({"name": "missing"}, 'unable to get priority class "missing"'),
    ({"value": 2000000001}, "priority threshold can't be greater than 2000000000"),
]


@pytest.mark.parametrize(("threshold", "message"), UNBUILDABLE)
def test_up_to_v0_34_a_profile_that_cannot_be_built_is_skipped(threshold: Json, message: str) -> None:
    """Up to v0.34 the cycle builds the profiles: ``a`` fails and is skipped, ``b`` runs. From v0.35 they are built at
    start-up and the descheduler does not start."""
    policy = prepare_policy(decode(unbuildable_first(threshold)))
    cluster = Cluster.from_objects(cluster_objects("a", "b"))
    pod_evictor = PodEvictor(cluster, Limits())
    result = run_cycle(policy, cluster, NOW, pod_evictor, release=V34)
    assert {eviction.namespace for eviction in pod_evictor.evictions} == {"b"}
    assert [(error.profile, error.plugin) for error in result.errors] == [("a", "DefaultEvictor")]
    assert message in result.errors[0].message
    with pytest.raises(UnrunnablePolicy, match=message):
        run_cycle(policy, Cluster.from_objects(cluster_objects("a", "b")), NOW, pod_evictor, release=V35)


@pytest.mark.parametrize(("selector", "passing", "failing"), NAMESPACE_OPERATIONS)
def test_namespace_label_selector_at_v0_35_needs_match_labels(
    selector: Json, passing: list[str], failing: list[str]
) -> None:
    """v0.36's cases at v0.35: a selector with ``matchLabels`` answers as at v0.36; one with only
    ``matchExpressions`` is not applied and every pod passes."""
    evictor = evictor_from({"namespaceLabelSelector": selector}, Cluster.from_objects(OPERATION_OBJECTS), NOW, 35)
    rejected = failing if "matchLabels" in selector else []
    for key in passing + failing:
        assert evictor.pre_eviction_filter(OPERATION_PODS[key]) == (key not in rejected), key


@pytest.mark.parametrize(("release", "evicted"), [(V35, {"ns-prod", "ns-test"}), (V36, {"ns-prod"})])
def test_namespace_label_selector_expressions_apply_from_v0_36(release: ReleaseDecisions, evicted: set[str]) -> None:
    """PodLifeTime through a DefaultEvictor whose selector is ``env In [prod]`` only."""
    selector = {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]}
    pods = [OPERATION_PODS["prod"], OPERATION_PODS["test"]]
    nodes = [node for node in OPERATION_OBJECTS if node["kind"] == "Node"]
    namespaces = [item for item in OPERATION_OBJECTS if item["kind"] == "Namespace"]
    chosen = run_plugin(
        "PodLifeTime",
        {"maxPodLifeTimeSeconds": 60},
        nodes,
        pods,
        evictor={"namespaceLabelSelector": selector},
        extra=namespaces,
        release=release,
    )
    namespace_of = {pod["metadata"]["name"]: pod["metadata"]["namespace"] for pod in pods}
    assert {namespace_of[name] for name in chosen} == evicted


def test_v0_30_a_profile_that_cannot_be_built_adds_no_owner_index() -> None:
    """Profile ``a`` (minReplicas 2) fails on its priority threshold before adding the owner index, so ``b``
    (minReplicas 3) adds it without a conflict and runs."""
    policy = unbuildable_first({"name": "missing"})
    policy["profiles"][0]["pluginConfig"][0]["args"]["minReplicas"] = 2
    policy["profiles"][1]["pluginConfig"][0]["args"]["minReplicas"] = 3
    cluster = Cluster.from_objects(cluster_objects("a", "b"))
    pod_evictor = PodEvictor(cluster, Limits())
    result = run_cycle(prepare_policy(decode(policy)), cluster, NOW, pod_evictor, release=ReleaseDecisions(30))
    assert {eviction.namespace for eviction in pod_evictor.evictions} == {"b"}
    assert [(error.profile, error.plugin) for error in result.errors] == [("a", "DefaultEvictor")]
    assert 'unable to get priority class "missing"' in result.errors[0].message


def pdb_protected_cycle(release: ReleaseDecisions, view: SameCycle, lists_budgets: bool = False) -> set[str]:
    """The namespaces a PodLifeTime cycle evicts from when the DefaultEvictor protects pods without a PDB: namespace
    ``a`` has a PDB selecting every pod, ``b`` none. ``lists_budgets``: desched's own run (``PodEvictor``)."""
    protecting = profile("p", 0, "a")
    protecting["pluginConfig"][0]["args"] = {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}
    protecting["pluginConfig"][1]["args"]["namespaces"] = {"include": ["a", "b"]}
    policy = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": [protecting]}
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "all", "namespace": "a"},
        "spec": {"selector": {}, "maxUnavailable": 1},
    }
    cluster = Cluster.from_objects([*cluster_objects("a", "b"), budget])
    pod_evictor = PodEvictor(cluster, Limits(), view=view, lists_budgets=lists_budgets)
    result = run_cycle(prepare_policy(decode(policy)), cluster, NOW, pod_evictor, release=release)
    assert result.errors == []
    return {eviction.namespace for eviction in pod_evictor.evictions}


@pytest.mark.parametrize(
    ("release", "view", "evicted"),
    [
        (V34, SameCycle.REAL, {"a"}),
        (V35, SameCycle.REAL, set()),
        (V35, SameCycle.DRY_RUN, {"a"}),
        (V36, SameCycle.REAL, set()),
    ],
)
def test_from_v0_35_a_real_run_sees_no_pdb(release: ReleaseDecisions, view: SameCycle, evicted: set[str]) -> None:
    assert pdb_protected_cycle(release, view) == evicted


@pytest.mark.parametrize("release", [V35, V36])
def test_desched_run_lists_the_budgets_at_every_release(release: ReleaseDecisions) -> None:
    """``desched run`` lists the budgets itself: upstream's start-up order, which hides them, is not reproduced."""
    assert pdb_protected_cycle(release, SameCycle.REAL, lists_budgets=True) == {"a"}
