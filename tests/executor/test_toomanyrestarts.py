"""RemovePodsHavingTooManyRestarts: upstream's ``TestRemovePodsHavingTooManyRestarts`` table (all 20 cases), plus
the limit and ordering rules of docs/executor-semantics.md#52-how-plugins-react /
docs/executor-semantics.md#88-removepodshavingtoomanyrestarts.

Upstream asserts counts only. Where a per-node limit cuts the list, the evicted names are forced by the distinct
restart counts (most restarts first), so those cases also pin the names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from desched.executor.evictions import Limits
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
NAME = "RemovePodsHavingTooManyRestarts"


def node(name: str, cpu_milli: int = 2000, edit: Callable[[Json], None] | None = None) -> Json:
    built = build_node(name, cpu_milli, 3000, 10)
    if edit is not None:
        edit(built)
    return built


def taint_gpu(built: Json) -> None:
    built["spec"]["taints"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def cordon(built: Json) -> None:
    built["spec"] = {"unschedulable": True}


def restarting_pod(name: str, base: int, apply: Callable[[Json], None] | None) -> Json:
    """``initPodContainersWithStatusRestartCount``: 5*base init restarts, 10*base in each of two containers."""
    pod = set_normal_owner(build_pod(name, 100, 0, "node1"))
    pod["status"] = {
        "initContainerStatuses": [{"restartCount": 5 * base}],
        "containerStatuses": [{"restartCount": 10 * base}, {"restartCount": 10 * base}],
    }
    if apply is not None:
        apply(pod)
    return pod


def init_pods(apply: Callable[[Json], None] | None = None) -> list[Json]:
    """``initPods``: pod-0..pod-9 on node1 (pod-6 DaemonSet, pod-7 local storage, pod-8 mirror) and two CPU
    consumers on node4 and node5."""
    protections: dict[int, Callable[[Json], Any]] = {6: set_ds_owner, 7: set_local_storage, 8: set_mirror}
    pods = []
    for index in range(10):
        pod = restarting_pod(f"pod-{index}", index, None)
        if index in protections:
            protections[index](pod)
        if apply is not None:
            apply(pod)
        pods.append(pod)
    pods.append(set_normal_owner(build_pod("CPU-consumer-1", 150, 100, "node4")))
    pods.append(set_normal_owner(build_pod("CPU-consumer-2", 150, 100, "node5")))
    return pods


def crash_loop_first_container(pod: Json) -> None:
    pod["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}


def crash_loop_init_container(pod: Json) -> None:
    pod["status"]["initContainerStatuses"] = [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]


def phase(value: str) -> Callable[[Json], None]:
    def apply(pod: Json) -> None:
        pod["status"]["phase"] = value

    return apply


class Case(NamedTuple):
    description: str
    args: Json
    pods: list[Json]
    nodes: list[Json]
    expected: int
    limits: Limits = Limits()
    node_fit: bool = False
    names: list[str] | None = None


def threshold(restarts: int, including_init: bool) -> Json:
    return {"podRestartThreshold": restarts, "includingInitContainers": including_init}


# The three pods with the most restarts that the DefaultEvictor accepts: pod-9, pod-5, pod-4.
TOP_THREE = ["pod-9", "pod-5", "pod-4"]

UPSTREAM_CASES = [
    Case(
        "All pods have total restarts under threshold, no pod evictions",
        threshold(10000, True),
        init_pods(),
        [node("node1")],
        0,
    ),
    Case("Some pods have total restarts bigger than threshold", threshold(1, True), init_pods(), [node("node1")], 6),
    Case(
        "Nine pods have total restarts equals threshold(includingInitContainers=true), 6 pod evictions",
        threshold(25, True),
        init_pods(),
        [node("node1")],
        6,
    ),
    Case(
        "Nine pods have total restarts equals threshold(includingInitContainers=false), 5 pod evictions",
        threshold(25, False),
        init_pods(),
        [node("node1")],
        5,
    ),
    Case(
        "All pods have total restarts equals threshold(includingInitContainers=true), 6 pod evictions",
        threshold(20, True),
        init_pods(),
        [node("node1")],
        6,
    ),
    Case(
        "Nine pods have total restarts equals threshold(includingInitContainers=false), 6 pod evictions",
        threshold(20, False),
        init_pods(),
        [node("node1")],
        6,
    ),
    Case(
        "Five pods have total restarts bigger than threshold(includingInitContainers=true), but only 1 pod eviction",
        threshold(5 * 25 + 1, True),
        init_pods(),
        [node("node1")],
        1,
        names=["pod-9"],
    ),
    Case(
        "Five pods have total restarts bigger than threshold(includingInitContainers=false), but only 1 pod eviction",
        threshold(5 * 20 + 1, False),
        init_pods(),
        [node("node1")],
        1,
        names=["pod-9"],
    ),
    Case(
        "All pods have total restarts equals threshold(maxPodsToEvictPerNode=3), 3 pod evictions",
        threshold(1, True),
        init_pods(),
        [node("node1")],
        3,
        Limits(per_node=3),
        names=TOP_THREE,
    ),
    Case(
        "All pods have total restarts equals threshold(maxNoOfPodsToEvictPerNamespace=3), 3 pod evictions",
        threshold(1, True),
        init_pods(),
        [node("node1")],
        3,
        Limits(per_namespace=3),
        names=TOP_THREE,
    ),
    Case(
        "All pods have total restarts equals threshold(maxPodsToEvictPerNode=3) but the only other node is tainted, "
        "0 pod evictions",
        threshold(1, True),
        init_pods(),
        [node("node1"), node("node2", edit=taint_gpu)],
        0,
        Limits(per_node=3),
        True,
    ),
    Case(
        "All pods have total restarts equals threshold(maxPodsToEvictPerNode=3) but the only other node is not "
        "schedulable, 0 pod evictions",
        threshold(1, True),
        init_pods(),
        [node("node1"), node("node3", edit=cordon)],
        0,
        Limits(per_node=3),
        True,
    ),
    Case(
        "All pods have total restarts equals threshold(maxPodsToEvictPerNode=3) but the only other node does not "
        "have enough CPU, 0 pod evictions",
        threshold(1, True),
        init_pods(),
        [node("node1"), node("node4", 200)],
        0,
        Limits(per_node=3),
        True,
    ),
    Case(
        "All pods have total restarts equals threshold(maxPodsToEvictPerNode=3) but the only other node has enough "
        "CPU, 3 pod evictions",
        threshold(1, True),
        init_pods(),
        [node("node1"), node("node5")],
        3,
        Limits(per_node=3),
        True,
        TOP_THREE,
    ),
    Case(
        "pods are in CrashLoopBackOff with states=CrashLoopBackOff, 3 pod evictions",
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]},
        init_pods(crash_loop_first_container),
        [node("node1"), node("node5")],
        3,
        Limits(per_node=3),
        True,
    ),
    Case(
        "pods without CrashLoopBackOff with states=CrashLoopBackOff, 0 pod evictions",
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]},
        init_pods(),
        [node("node1"), node("node5")],
        0,
        Limits(per_node=3),
        True,
    ),
    Case(
        "pods running with state=Running, 3 pod evictions",
        {"podRestartThreshold": 1, "states": ["Running"]},
        init_pods(phase("Running")),
        [node("node1")],
        3,
        Limits(per_node=3),
    ),
    Case(
        "pods pending with state=Running, 0 pod evictions",
        {"podRestartThreshold": 1, "states": ["Running"]},
        init_pods(phase("Pending")),
        [node("node1")],
        0,
        Limits(per_node=3),
    ),
    Case(
        "pods pending with initContainer with states=CrashLoopBackOff threshold(includingInitContainers=true), "
        "3 pod evictions",
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"], "includingInitContainers": True},
        init_pods(crash_loop_init_container),
        [node("node1")],
        3,
        Limits(per_node=3),
    ),
    Case(
        "pods pending with initContainer with states=CrashLoopBackOff threshold(includingInitContainers=false), "
        "0 pod evictions",
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"], "includingInitContainers": False},
        init_pods(crash_loop_init_container),
        [node("node1")],
        0,
        Limits(per_node=3),
    ),
]


@pytest.mark.parametrize("case", UPSTREAM_CASES, ids=lambda case: case.description)
def test_upstream_table(case: Case) -> None:
    evicted = run_plugin(NAME, case.args, case.nodes, case.pods, evictor={"nodeFit": case.node_fit}, limits=case.limits)
    assert len(evicted) == case.expected, evicted
    if case.names is not None:
        assert evicted == case.names


def two_node_pods() -> list[Json]:
    """Three restarting pods on node1 (30, 20, 10 restarts) and one on node2 (40)."""
    pods = [restarting_pod(f"a-{restarts}", restarts // 10, None) for restarts in (10, 30, 20)]
    pods.append(restarting_pod("b-40", 4, None))
    pods[-1]["spec"]["nodeName"] = "node2"
    return pods


def test_most_restarts_first_within_each_node_in_node_order() -> None:
    evicted = run_plugin(NAME, threshold(1, False), [node("node1"), node("node2")], two_node_pods())
    assert evicted == ["a-30", "a-20", "a-10", "b-40"]


def test_node_limit_moves_to_the_next_node() -> None:
    evicted = run_plugin(
        NAME, threshold(1, False), [node("node1"), node("node2")], two_node_pods(), limits=Limits(per_node=1)
    )
    assert evicted == ["a-30", "b-40"]


def test_total_limit_stops_the_plugin() -> None:
    evicted = run_plugin(
        NAME, threshold(1, False), [node("node1"), node("node2")], two_node_pods(), limits=Limits(total=2)
    )
    assert evicted == ["a-30", "a-20"]


def test_namespace_limit_tries_the_next_pod() -> None:
    pods = two_node_pods()
    pods[0]["metadata"]["namespace"] = "other"  # a-10, tried after a-20 is refused
    evicted = run_plugin(NAME, threshold(1, False), [node("node1")], pods, limits=Limits(per_namespace=1))
    assert evicted == ["a-30", "a-10"]


def test_terminal_pods_are_candidates() -> None:
    pods = [restarting_pod("failed", 1, phase("Failed")), restarting_pod("succeeded", 1, phase("Succeeded"))]
    assert sorted(run_plugin(NAME, threshold(1, False), [node("node1")], pods)) == ["failed", "succeeded"]


def test_states_ignore_terminated_reasons() -> None:
    def terminated(pod: Json) -> None:
        pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"reason": "CrashLoopBackOff"}}

    pods = [restarting_pod("p", 1, terminated)]
    assert run_plugin(NAME, {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]}, [node("node1")], pods) == []


def test_plugin_namespace_and_label_filters() -> None:
    pods = [restarting_pod(name, 1, None) for name in ("kept", "other-namespace", "unlabelled")]
    pods[0]["metadata"]["labels"] = {"app": "x"}
    pods[1]["metadata"].update(namespace="other", labels={"app": "x"})
    args = {
        "podRestartThreshold": 1,
        "namespaces": {"include": ["default"]},
        "labelSelector": {"matchLabels": {"app": "x"}},
    }
    assert run_plugin(NAME, args, [node("node1")], pods) == ["kept"]


def test_defaults_add_nothing() -> None:

    assert REGISTRY["RemovePodsHavingTooManyRestarts"].defaults({"podRestartThreshold": 3}) == {
        "podRestartThreshold": 3
    }
