"""PodLifeTime: upstream's table-driven tests of ``pod_lifetime_test.go`` (53 cases), plus the age, ordering and limit
rules of docs/executor-semantics.md#52-how-plugins-react / docs/executor-semantics.md#89-podlifetime /
docs/executor-semantics.md#10-pitfalls items 6, 13 and 14.

Ported functions (cases): TestPodLifeTime (1), TestPodLifeTime_EvictorConfiguration (2),
TestPodLifeTime_GenericFiltering (1), TestPodLifeTime_EvictionLimits (4), TestPodLifeTime_ContainerWaitingReasons (13),
TestPodLifeTime_PodStatusReasons (4), TestPodLifeTime_AgeThreshold (4), TestPodLifeTime_PodPhaseStates (4),
TestStatesWithTerminatedReasons (4), TestConditionFiltering (3), TestTransitionTimeFiltering (4),
TestOwnerKindsFiltering (3), TestStatesWithEphemeralContainers (2), TestExitCodesFiltering (2),
TestCombinedFilters (2).
Skipped: TestValidation (13 cases): argument validation is the linter's job, not the executor's.

Upstream's ``time.Now()`` is the fixed ``NOW`` here. Upstream sets ``deletionTimestamp`` to a zero ``metav1.Time``
(non-nil in Go, but ``null`` once serialised); a real timestamp stands in for it. Expected names are checked as
upstream does: they must be among the evicted pods.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, NamedTuple

import pytest

from desched.executor.evictions import Limits
from desched.plugins import REGISTRY
from tests.executor.builders import NOW, build_node, build_pod, run_plugin, set_rs_owner

Json = dict[str, Any]
NAME = "PodLifeTime"
Apply = Callable[[Json], None] | None


def stamp(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


OLDER = "2009-11-10T23:00:00Z"
NEWER = stamp(0)
OLD_TRANSITION = stamp(2 * 3600)
NEW_TRANSITION = stamp(60)


def node1() -> Json:
    return build_node("n1", 2000, 3000, 10)


def node_named_node1() -> Json:
    return build_node("node1", 2000, 3000, 10)


def pod_for_node1(name: str, created: str, apply: Apply = None, owner: bool = False, phase: str = "") -> Json:
    """``buildTestPodForNode1`` (bare), ``...WithRSOwnerRef...`` (``owner``) and ``...WithPendingPhase...``."""
    pod = build_pod(name, 100, 0, "n1")
    pod["metadata"]["creationTimestamp"] = created
    if owner:
        set_rs_owner(pod)
    if phase:
        pod["status"]["phase"] = phase
    if apply is not None:
        apply(pod)
    return pod


def rs_pod(name: str, created: str, apply: Apply = None) -> Json:
    return pod_for_node1(name, created, apply, owner=True)


def pending_rs_pod(name: str, created: str, apply: Apply = None) -> Json:
    return pod_for_node1(name, created, apply, owner=True, phase="Pending")


def build(name: str, apply: Apply = None) -> Json:
    """``buildPod``: 1m/1 requests on ``node1``, a ReplicaSet owner, no creationTimestamp (so: extremely old)."""
    pod = build_pod(name, 1, 1, "node1")
    pod["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "apiVersion": "v1", "name": "replicaset-1"}]
    if apply is not None:
        apply(pod)
    return pod


def status(**fields: Any) -> Callable[[Json], None]:
    def apply(pod: Json) -> None:
        pod["status"].update(fields)

    return apply


def labels(values: dict[str, str]) -> Callable[[Json], None]:
    def apply(pod: Json) -> None:
        pod["metadata"]["labels"] = values

    return apply


def terminating(pod: Json) -> None:
    pod["metadata"]["deletionTimestamp"] = stamp(0)


def pvc_volume(pod: Json) -> None:
    pod["spec"]["volumes"] = [{"name": "pvc", "persistentVolumeClaim": {"claimName": "foo"}}]


def owned_by_job(pod: Json) -> None:
    pod["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "job1", "apiVersion": "batch/v1"}]


def failed_job(pod: Json) -> None:
    pod["status"]["phase"] = "Failed"
    owned_by_job(pod)


def waiting(reason: str, field: str = "containerStatuses") -> Callable[[Json], None]:
    return status(**{field: [{"state": {"waiting": {"reason": reason}}}]})


def terminated(**state: Any) -> list[Json]:
    return [{"state": {"terminated": state}}]


def stuck(name: str, reason: str) -> Json:
    """A BestEffort ReplicaSet pod, created long ago, whose container waits with ``reason``."""
    pod = build_pod(name, 0, 0, "n1")
    pod["status"]["containerStatuses"] = [{"state": {"waiting": {"reason": reason}}}]
    set_rs_owner(pod)
    pod["metadata"]["creationTimestamp"] = OLDER
    return pod


class Case(NamedTuple):
    description: str
    args: Json
    pods: list[Json]
    expected: int
    names: list[str] | None = None
    limits: Limits = Limits()
    evictor: Json | None = None
    nodes: list[Json] | None = None  # default: [n1]


MAX = {"maxPodLifeTimeSeconds": 600}


def with_max(**args: Any) -> Json:
    return {**MAX, **args}


def waiting_case(description: str, reason: str, expected: int, field: str = "containerStatuses", **flags: bool) -> Case:
    return Case(
        description, with_max(states=[reason], **flags), [pending_rs_pod("p9", OLDER, waiting(reason, field))], expected
    )


def reason_case(reason: str) -> Case:
    return Case(
        f"1 pod with pod status reason {reason} should be evicted",
        with_max(states=[reason]),
        [pending_rs_pod("p9", OLDER, status(reason=reason))],
        1,
    )


def phase_case(phase: str) -> Case:
    return Case(
        f"1 pod with pod status phase v1.Pod{phase} should be evicted",
        with_max(states=[phase]),
        [rs_pod("p16", OLDER, status(phase=phase))],
        1,
    )


N1_CASES = [
    # TestPodLifeTime
    Case(
        "No pod should be evicted since pod terminating",
        with_max(labelSelector={"matchLabels": {"foo": "bar"}}),
        [rs_pod("p14", OLDER, terminating), rs_pod("p15", OLDER, terminating)],
        0,
    ),
    # TestPodLifeTime_EvictorConfiguration
    Case(
        "Does not evict pvc pods with ignorePvcPods set to true",
        MAX,
        [rs_pod("p11", OLDER, pvc_volume)],
        0,
        evictor={"ignorePvcPods": True},
    ),
    Case("Evicts pvc pods with ignorePvcPods set to false (or unset)", MAX, [rs_pod("p11", OLDER, pvc_volume)], 1),
    # TestPodLifeTime_GenericFiltering
    Case(
        "1 pod matching label selector should be evicted",
        with_max(labelSelector={"matchLabels": {"foo": "bar"}}),
        [rs_pod("p12", OLDER, labels({"foo": "bar"})), rs_pod("p13", OLDER, labels({"foo": "bar1"}))],
        1,
        ["p12"],
    ),
    # TestPodLifeTime_EvictionLimits
    Case(
        "2 Oldest pods should be evicted when maxPodsToEvictPerNode and maxPodsToEvictPerNamespace are not set",
        MAX,
        [rs_pod("p1", NEWER), rs_pod("p2", OLDER), pending_rs_pod("p9", OLDER)],
        2,
        ["p2", "p9"],
    ),
    Case(
        "1 Oldest pod should be evicted when maxPodsToEvictPerNamespace is set to 1",
        MAX,
        [rs_pod("p1", NEWER), rs_pod("p2", OLDER)],
        1,
        ["p2"],
        Limits(per_namespace=1),
    ),
    Case(
        "1 Oldest pod should be evicted when maxPodsToEvictTotal is set to 1",
        MAX,
        [rs_pod("p1", NEWER), rs_pod("p2", OLDER)],
        1,
        ["p2"],
        Limits(per_namespace=2, total=1),
    ),
    Case(
        "1 Oldest pod should be evicted when maxPodsToEvictPerNode is set to 1",
        MAX,
        [rs_pod("p1", NEWER), rs_pod("p2", OLDER)],
        1,
        ["p2"],
        Limits(per_node=1),
    ),
    # TestPodLifeTime_ContainerWaitingReasons
    Case(
        "Two pods, one with ContainerCreating state. 1 should be evicted.",
        with_max(states=["ContainerCreating"]),
        [pending_rs_pod("p9", OLDER), stuck("container-creating-stuck", "ContainerCreating")],
        1,
    ),
    Case(
        "Two pods, one with PodInitializing state. 1 should be evicted.",
        with_max(states=["PodInitializing"]),
        [pending_rs_pod("p9", OLDER), stuck("pod-initializing-stuck", "PodInitializing")],
        1,
    ),
    waiting_case("1 pod with container status ImagePullBackOff should be evicted", "ImagePullBackOff", 1),
    waiting_case("1 pod with container status CrashLoopBackOff should be evicted", "CrashLoopBackOff", 1),
    waiting_case(
        "1 pod with container status CreateContainerConfigError should be evicted", "CreateContainerConfigError", 1
    ),
    waiting_case("1 pod with container status ErrImagePull should be evicted", "ErrImagePull", 1),
    waiting_case(
        "1 pod with init container status CreateContainerError should not be evicted without includingInitContainers",
        "CreateContainerError",
        0,
        "initContainerStatuses",
    ),
    waiting_case(
        "1 pod with init container status CreateContainerError should be evicted with includingInitContainers",
        "CreateContainerError",
        1,
        "initContainerStatuses",
        includingInitContainers=True,
    ),
    waiting_case(
        "1 pod with ephemeral container status CreateContainerError should not be evicted without "
        "includingEphemeralContainers",
        "CreateContainerError",
        0,
        "ephemeralContainerStatuses",
    ),
    waiting_case(
        "1 pod with ephemeral container status CreateContainerError should be evicted with "
        "includingEphemeralContainers",
        "CreateContainerError",
        1,
        "ephemeralContainerStatuses",
        includingEphemeralContainers=True,
    ),
    waiting_case("1 pod with container status CreateContainerError should be evicted", "CreateContainerError", 1),
    waiting_case("1 pod with container status InvalidImageName should be evicted", "InvalidImageName", 1),
    Case(
        "1 pod with ImagePullBackOff status should be ignored when States filter is ContainerCreating",
        with_max(states=["ContainerCreating"]),
        [pending_rs_pod("p9", OLDER, waiting("ImagePullBackOff"))],
        0,
    ),
    # TestPodLifeTime_PodStatusReasons
    reason_case("NodeLost"),
    reason_case("NodeAffinity"),
    reason_case("Shutdown"),
    reason_case("UnexpectedAdmissionError"),
    # TestPodLifeTime_AgeThreshold
    Case(
        "Two pods in the default namespace, 1 is new and 1 very is old. 1 should be evicted.",
        MAX,
        [rs_pod("p1", NEWER), rs_pod("p2", OLDER)],
        1,
        ["p2"],
    ),
    Case(
        "Two pods in the default namespace, 2 are new and 0 are old. 0 should be evicted.",
        MAX,
        [rs_pod("p3", NEWER), rs_pod("p4", NEWER)],
        0,
    ),
    Case(
        "Two pods in the default namespace, 1 created 605 seconds ago. 1 should be evicted.",
        MAX,
        [rs_pod("p5", NEWER), rs_pod("p6", stamp(605))],
        1,
        ["p6"],
    ),
    Case(
        "Two pods in the default namespace, 1 created 595 seconds ago. 0 should be evicted.",
        MAX,
        [pod_for_node1("p7", NEWER), pod_for_node1("p8", stamp(595))],
        0,
    ),
    # TestPodLifeTime_PodPhaseStates
    Case(
        "Two old pods with different states. 1 should be evicted.",
        with_max(states=["Pending"]),
        [pending_rs_pod("p9", OLDER), rs_pod("p10", OLDER, status(phase="Running"))],
        1,
        ["p9"],
    ),
    phase_case("Succeeded"),
    phase_case("Failed"),
    phase_case("Unknown"),
]

STALE_COMPLETED = [
    {"type": "Initialized", "status": "True", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION},
    {"type": "Ready", "status": "False", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION},
]

NODE1_CASES = [
    # TestStatesWithTerminatedReasons
    Case(
        "evict pod with matching terminated reason via states",
        {"states": ["NodeAffinity"]},
        [build("p1", status(phase="Failed", containerStatuses=terminated(reason="NodeAffinity")))],
        1,
    ),
    Case(
        "evict pod with matching pod status reason via states",
        {"states": ["Shutdown"]},
        [build("p1", status(phase="Failed", reason="Shutdown"))],
        1,
    ),
    Case(
        "states matches terminated reason on init container",
        {"states": ["CreateContainerConfigError"], "includingInitContainers": True},
        [build("p1", status(initContainerStatuses=terminated(reason="CreateContainerConfigError")))],
        1,
    ),
    Case(
        "states does not match terminated reason on init container without flag",
        {"states": ["CreateContainerConfigError"]},
        [build("p1", status(initContainerStatuses=terminated(reason="CreateContainerConfigError")))],
        0,
    ),
    # TestConditionFiltering
    Case(
        "evict pod with matching condition reason",
        {"conditions": [{"reason": "PodCompleted", "status": "True"}]},
        [
            build(
                "p1",
                status(
                    conditions=[
                        {
                            "type": "Initialized",
                            "status": "True",
                            "reason": "PodCompleted",
                            "lastTransitionTime": OLD_TRANSITION,
                        }
                    ]
                ),
            ),
            build(
                "p2",
                status(
                    conditions=[
                        {
                            "type": "Initialized",
                            "status": "True",
                            "reason": "OtherReason",
                            "lastTransitionTime": OLD_TRANSITION,
                        }
                    ]
                ),
            ),
        ],
        1,
        ["p1"],
    ),
    Case(
        "evict pod matching condition type only",
        {"conditions": [{"type": "Ready"}]},
        [build("p1", status(conditions=[{"type": "Ready", "status": "False", "lastTransitionTime": OLD_TRANSITION}]))],
        1,
    ),
    Case(
        "no matching conditions, 0 evictions",
        {"conditions": [{"reason": "PodCompleted"}]},
        [build("p1", status(conditions=[{"type": "Ready", "status": "True", "reason": "SomethingElse"}]))],
        0,
    ),
    # TestTransitionTimeFiltering
    Case(
        "evict pod with old transition time",
        {
            "states": ["Succeeded"],
            "conditions": [{"reason": "PodCompleted", "status": "True", "minTimeSinceLastTransitionSeconds": 300}],
        },
        [build("p1", status(phase="Succeeded", conditions=STALE_COMPLETED))],
        1,
        ["p1"],
    ),
    Case(
        "do not evict pod with recent transition time",
        {"states": ["Succeeded"], "conditions": [{"minTimeSinceLastTransitionSeconds": 14400}]},
        [
            build(
                "p1",
                status(
                    phase="Succeeded",
                    conditions=[{"type": "Ready", "status": "False", "lastTransitionTime": NEW_TRANSITION}],
                ),
            )
        ],
        0,
    ),
    Case(
        "transition time scoped to matching conditions only",
        {"conditions": [{"reason": "PodCompleted", "minTimeSinceLastTransitionSeconds": 300}]},
        [
            build(
                "p1",
                status(
                    conditions=[
                        {"type": "Initialized", "reason": "PodCompleted", "lastTransitionTime": OLD_TRANSITION},
                        {"type": "Ready", "reason": "OtherReason", "lastTransitionTime": NEW_TRANSITION},
                    ]
                ),
            )
        ],
        1,
        ["p1"],
    ),
    Case(
        "no conditions on pod, transition time filter returns false",
        {"states": ["Running"], "conditions": [{"minTimeSinceLastTransitionSeconds": 300}]},
        [build("p1", status(phase="Running"))],
        0,
    ),
    # TestOwnerKindsFiltering
    Case(
        "exclude Job owner kind: Job-owned pod not evicted",
        {"states": ["Failed"], "ownerKinds": {"exclude": ["Job"]}},
        [build("p1", failed_job)],
        0,
    ),
    Case(
        "exclude Job owner kind: non-Job pod still evicted",
        {"states": ["Failed"], "ownerKinds": {"exclude": ["Job"]}},
        [build("p1", failed_job), build("p2", status(phase="Failed"))],
        1,
        ["p2"],
    ),
    Case(
        "include only Job owner kind",
        {"states": ["Failed"], "ownerKinds": {"include": ["Job"]}},
        [build("p1", failed_job), build("p2", status(phase="Failed"))],
        1,
        ["p1"],
    ),
    # TestStatesWithEphemeralContainers
    Case(
        "states matches terminated reason on ephemeral container",
        {"states": ["OOMKilled"], "includingEphemeralContainers": True},
        [build("p1", status(ephemeralContainerStatuses=terminated(reason="OOMKilled")))],
        1,
    ),
    Case(
        "states does not match ephemeral container without flag",
        {"states": ["OOMKilled"]},
        [build("p1", status(ephemeralContainerStatuses=terminated(reason="OOMKilled")))],
        0,
    ),
    # TestExitCodesFiltering
    Case(
        "evict pod with matching exit code",
        {"states": ["Failed"], "exitCodes": [1]},
        [build("p1", status(phase="Failed", containerStatuses=terminated(exitCode=1)))],
        1,
    ),
    Case(
        "exit code not matched, 0 evictions",
        {"states": ["Failed"], "exitCodes": [2]},
        [build("p1", status(phase="Failed", containerStatuses=terminated(exitCode=1)))],
        0,
    ),
    # TestCombinedFilters
    Case(
        "user scenario: Succeeded + PodCompleted condition + transition time threshold",
        {
            "states": ["Succeeded"],
            "conditions": [{"reason": "PodCompleted", "status": "True", "minTimeSinceLastTransitionSeconds": 300}],
        },
        [
            build("stale-completed", status(phase="Succeeded", conditions=STALE_COMPLETED)),
            build(
                "recent-completed",
                status(
                    phase="Succeeded",
                    conditions=[
                        {
                            "type": "Initialized",
                            "status": "True",
                            "reason": "PodCompleted",
                            "lastTransitionTime": NEW_TRANSITION,
                        }
                    ],
                ),
            ),
            build("running-pod", status(phase="Running")),
        ],
        1,
        ["stale-completed"],
    ),
    Case(
        "failed pod removal compat: Failed + min age + exclude Job",
        {"states": ["Failed"], "maxPodLifeTimeSeconds": 0, "ownerKinds": {"exclude": ["Job"]}},
        [
            build("failed-rs", status(phase="Failed", containerStatuses=terminated(reason="Error"))),
            build("failed-job", failed_job),
        ],
        1,
        ["failed-rs"],
    ),
]
NODE1_CASES = [case._replace(nodes=[node_named_node1()]) for case in NODE1_CASES]


@pytest.mark.parametrize("case", N1_CASES + NODE1_CASES, ids=lambda case: case.description)
def test_upstream_table(case: Case) -> None:
    evicted = run_plugin(NAME, case.args, case.nodes or [node1()], case.pods, evictor=case.evictor, limits=case.limits)
    assert len(evicted) == case.expected, evicted
    assert set(case.names or []) <= set(evicted)


def test_upstream_case_count() -> None:
    assert len(N1_CASES) + len(NODE1_CASES) == 53


@pytest.mark.parametrize(
    ("seconds", "max_seconds", "evicted"),
    [(600, 600, False), (601, 600, True), (1, 0, True), (0, 0, False), (-30, 0, False)],
)
def test_age_must_be_strictly_greater(seconds: int, max_seconds: int, evicted: bool) -> None:
    pods = [rs_pod("p", stamp(seconds))]
    assert run_plugin(NAME, {"maxPodLifeTimeSeconds": max_seconds}, [node1()], pods) == (["p"] if evicted else [])


def test_age_uses_creation_not_start_time() -> None:
    pod = rs_pod("young", NEWER, status(startTime=OLDER))
    assert run_plugin(NAME, MAX, [node1()], [pod]) == []


def test_unset_creation_timestamp_is_extremely_old() -> None:
    pod = rs_pod("p", OLDER)
    del pod["metadata"]["creationTimestamp"]
    assert run_plugin(NAME, {"maxPodLifeTimeSeconds": 10**12}, [node1()], [pod]) == []
    assert run_plugin(NAME, {"maxPodLifeTimeSeconds": 9 * 10**9}, [node1()], [pod]) == ["p"]


def two_node_pods() -> list[Json]:
    """n1: a (oldest) and c; n2: b, in between."""
    pods = [rs_pod("a", stamp(5000)), rs_pod("c", stamp(3000)), rs_pod("b", stamp(4000))]
    pods[2]["spec"]["nodeName"] = "n2"
    return pods


def two_nodes() -> list[Json]:
    return [node1(), build_node("n2", 2000, 3000, 10)]


def test_all_nodes_oldest_first() -> None:
    assert run_plugin(NAME, MAX, two_nodes(), two_node_pods()) == ["a", "b", "c"]


def test_node_limit_skips_only_that_pod() -> None:
    pods = [rs_pod("a", stamp(5000)), rs_pod("c", stamp(4500)), rs_pod("b", stamp(4000))]
    pods[2]["spec"]["nodeName"] = "n2"
    # a (n1), c (n1: refused, skipped), b (n2)
    assert run_plugin(NAME, MAX, two_nodes(), pods, limits=Limits(per_node=1)) == ["a", "b"]


def test_total_limit_stops() -> None:
    assert run_plugin(NAME, MAX, two_nodes(), two_node_pods(), limits=Limits(total=2)) == ["a", "b"]


def test_pre_eviction_filter_applies() -> None:
    pods = [rs_pod("a", stamp(5000)), rs_pod("b", stamp(4000))]
    pods[1]["spec"]["nodeName"] = "n2"
    cordoned = build_node("n2", 2000, 3000, 10)
    cordoned["spec"]["unschedulable"] = True
    # a cannot move to the cordoned n2; b can move to n1
    assert run_plugin(NAME, MAX, [node1(), cordoned], pods, evictor={"nodeFit": True}) == ["b"]


def test_pre_eviction_filter_sees_the_cluster_before_any_eviction() -> None:
    zone_x = build_node("n1", 1000, 3000, 10)
    zone_x["metadata"]["labels"] = {"zone": "x"}
    older = pod_for_node1("a", stamp(5000), owner=True)
    older["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "600m"
    younger = rs_pod("b", stamp(4000), lambda pod: pod["spec"].update(nodeName="n2", nodeSelector={"zone": "x"}))
    younger["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "600m"
    nodes = [zone_x, build_node("n2", 1000, 3000, 10), build_node("n3", 1000, 3000, 10)]
    # b only fits n1, which a fills when the pods are listed; evicting a later does not make b a candidate
    assert run_plugin(NAME, MAX, nodes, [older, younger], evictor={"nodeFit": True}) == ["a"]


def test_conditions_need_a_transition_time_when_a_minimum_is_set() -> None:
    pod = build("p", status(conditions=[{"type": "Ready", "status": "False"}]))
    args = {"conditions": [{"type": "Ready", "minTimeSinceLastTransitionSeconds": 0}]}
    assert run_plugin(NAME, args, [node_named_node1()], [pod]) == []
    pod["status"]["conditions"][0]["lastTransitionTime"] = stamp(-30)  # in the future: never matches
    assert run_plugin(NAME, args, [node_named_node1()], [pod]) == []
    pod["status"]["conditions"][0]["lastTransitionTime"] = "0001-01-01T00:00:00Z"  # Go's zero time: unset
    assert run_plugin(NAME, args, [node_named_node1()], [pod]) == []
    pod["status"]["conditions"][0]["lastTransitionTime"] = NEWER
    assert run_plugin(NAME, args, [node_named_node1()], [pod]) == ["p"]


def test_exit_codes_of_init_containers_need_the_flag() -> None:
    pod = build("p", status(phase="Failed", initContainerStatuses=terminated(exitCode=3)))
    assert run_plugin(NAME, {"exitCodes": [3]}, [node_named_node1()], [pod]) == []
    assert run_plugin(NAME, {"exitCodes": [3], "includingInitContainers": True}, [node_named_node1()], [pod]) == ["p"]


def test_defaults_add_nothing() -> None:

    assert REGISTRY["PodLifeTime"].defaults({"states": ["Running"]}) == {"states": ["Running"]}
