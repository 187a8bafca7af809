"""desched.executor.podutil: effective requests, QoS, pod predicates and the two sorts
(docs/executor-semantics.md#32-filter,
docs/executor-semantics.md#71-effective-requests to docs/executor-semantics.md#73-sorting-by-priority).

Ported from upstream: ``pkg/descheduler/pod/pods_test.go`` (TestSortPodsBasedOnPriorityLowToHigh,
TestSortPodsBasedOnAge), ``pkg/descheduler/evictions/evictions_test.go`` (TestPodTypes), the QoS table of
``pkg/utils/qos_test.go`` (commit b2b8c1dd0, TestComputePodQOS) and the request cases of
``pkg/descheduler/node/node_test.go`` (sidecars and overhead in TestNodeFit).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from desched.executor import podutil
from desched.executor.gosort import sort_slice
from desched.executor.podutil import (
    EVICT_ANNOTATION,
    PREFER_NO_EVICTION,
    ZERO_TIME,
    created_before,
    creation_time,
    has_local_storage,
    has_pvc,
    has_resource_claims,
    is_critical_pod,
    is_daemonset_pod,
    is_mirror_pod,
    is_static_pod,
    is_terminal,
    is_terminating,
    owner_refs,
    pod_requests,
    priority,
    qos_class,
    sort_by_priority_low_to_high,
    start_time,
)

Json = dict[str, Any]


def build_pod(name: str, cpu: int = 0, memory: int = 0, node: str = "") -> Json:
    """``test.BuildTestPod``: one container requesting ``cpu`` millicores and ``memory`` bytes when >= 0."""
    requests: Json = {}
    if cpu >= 0:
        requests["cpu"] = f"{cpu}m"
    if memory >= 0:
        requests["memory"] = str(memory)
    return {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "", "resources": {"requests": requests, "limits": {}}}], "nodeName": node},
        "status": {},
    }


def container(requests: Json | None = None, limits: Json | None = None, **extra: Any) -> Json:
    return {"name": "c", "resources": {"requests": requests or {}, "limits": limits or {}}, **extra}


def pod_with(containers: list[Json], init: list[Json] | None = None, **spec: Any) -> Json:
    body: Json = {"containers": containers, **spec}
    if init is not None:
        body["initContainers"] = init
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": body}


def sidecar(requests: Json) -> Json:
    return container(requests, restartPolicy="Always")


# --- requests -------------------------------------------------------------------------------------------------------

REQUESTS = [
    ("BuildTestPod requests", build_pod("p", 100, 200), {"cpu": 100, "memory": 200}),
    ("explicit zero requests stay as keys", build_pod("p", 0, 0), {"cpu": 0, "memory": 0}),
    ("no requests", build_pod("p", -1, -1), {}),
    ("no containers at all", {"spec": {}}, {}),
    ("no spec", {}, {}),
    (
        "containers are summed, extended resources included",
        pod_with(
            [
                container({"cpu": "250m", "memory": "64Mi", "example.com/gpu": "1"}),
                container({"cpu": "1", "memory": "1Gi", "example.com/gpu": "2"}),
            ]
        ),
        {"cpu": 1250, "memory": 64 * 2**20 + 2**30, "example.com/gpu": 3},
    ),
    (
        "a large init container wins the max",
        pod_with([container({"cpu": "100m"})], [container({"cpu": "500m", "memory": "10"})]),
        {"cpu": 500, "memory": 10},
    ),
    (
        "sidecars add to the sum and to later init containers",
        # sum = 1 + 1 + 3 = 5 cores; init candidates: 1, 10 + 1 = 11, 1 + 3 = 4 -> max(5, 11)
        pod_with(
            [container({"cpu": "1"})],
            [sidecar({"cpu": "1"}), container({"cpu": "10"}), sidecar({"cpu": "3"})],
        ),
        {"cpu": 11000},
    ),
    (
        "a sidecar after an init container does not count for it",
        # sum = 60 + 50; candidates: 100 (no sidecar yet), 50 -> max(110, 100)
        pod_with([container({"memory": "60"})], [container({"memory": "100"}), sidecar({"memory": "50"})]),
        {"memory": 110},
    ),
    (
        "sidecar total keeps growing",
        # sum = 1 + 2 + 4 = 7; candidates: 2, 2+4 = 6, 6 + 8 = 14
        pod_with(
            [container({"memory": "1"})],
            [sidecar({"memory": "2"}), sidecar({"memory": "4"}), container({"memory": "8"})],
        ),
        {"memory": 14},
    ),
    (
        "native sidecar with too much cpu (node_test.go TestNodeFit)",
        pod_with(
            [container({"cpu": "1m", "memory": "100"})],
            [sidecar({"cpu": "100000m", "memory": "100000000", "ephemeral-storage": "0"})],
        ),
        {"cpu": 100001, "memory": 100000100, "ephemeral-storage": 0},
    ),
    (
        "resource named only by an init container",
        pod_with([], [container({"example.com/x": "2"})]),
        {"example.com/x": 2},
    ),
    (
        "pod-level requests replace cpu, memory and hugepages",
        pod_with(
            [container({"cpu": "500m", "memory": "100", "hugepages-2Mi": "2Mi", "example.com/x": "1"})],
            resources={"requests": {"cpu": "2", "hugepages-2Mi": "4Mi", "example.com/x": "9"}},
        ),
        {"cpu": 2000, "memory": 100, "hugepages-2Mi": 4 * 2**20, "example.com/x": 1},
    ),
    (
        "pod-level requests without a supported resource are ignored",
        pod_with([container({"cpu": "500m"})], resources={"requests": {"example.com/x": "9"}}),
        {"cpu": 500},
    ),
    (
        "pod-level limits alone change nothing",
        pod_with([container({"cpu": "500m"})], resources={"limits": {"cpu": "4"}}),
        {"cpu": 500},
    ),
    (
        "pod-level requests may name a resource no container asks for",
        pod_with([container({"cpu": "500m"})], resources={"requests": {"memory": "1Gi"}}),
        {"cpu": 500, "memory": 2**30},
    ),
    (
        "overhead is added, also for new keys",
        pod_with([container({"cpu": "500m"})], overhead={"cpu": "100m", "memory": "10"}),
        {"cpu": 600, "memory": 10},
    ),
    (
        "overhead is added after the pod-level override",
        pod_with([container({"cpu": "500m"})], resources={"requests": {"cpu": "1"}}, overhead={"cpu": "250m"}),
        {"cpu": 1250},
    ),
    (
        "sums are exact and rounded once",
        pod_with([container({"memory": "0.5", "cpu": "0.3m"}) for _ in range(3)]),
        {"memory": 2, "cpu": 1},  # 1.5 bytes -> 2, 0.9m -> 1 (not 3 and 3)
    ),
    ("a null quantity reads as zero", pod_with([container({"cpu": None})]), {"cpu": 0}),
]


@pytest.mark.parametrize(("pod", "expected"), [case[1:] for case in REQUESTS], ids=[case[0] for case in REQUESTS])
def test_pod_requests(pod, expected):
    before = copy.deepcopy(pod)
    assert pod_requests(pod) == expected
    assert pod == before  # the pod is not modified


def test_pod_requests_rejects_a_malformed_quantity():
    with pytest.raises(ValueError):
        pod_requests(pod_with([container({"cpu": "lots"})]))


# --- QoS ------------------------------------------------------------------------------------------------------------


def resources(cpu: str = "", memory: str = "", **extra: str) -> Json:
    out: Json = dict(extra)
    if cpu:
        out["cpu"] = cpu
    if memory:
        out["memory"] = memory
    return out


QOS = [
    # TestComputePodQOS (qos_test.go)
    (
        "Single Guaranteed Container",
        [container(resources("100m", "100Mi"), resources("100m", "100Mi"))],
        None,
        "Guaranteed",
    ),
    (
        "Two Guaranteed Containers",
        [container(resources("100m", "100Mi"), resources("100m", "100Mi"))] * 2,
        None,
        "Guaranteed",
    ),
    ("Two BestEffort Containers", [container(), container()], None, "BestEffort"),
    ("Single BestEffort Container", [container()], None, "BestEffort"),
    (
        "BestEffort and Burstable Containers",
        [container(), container(resources("1"), resources("2"))],
        None,
        "Burstable",
    ),
    (
        "BestEffort and Guaranteed Containers",
        [container(), container(resources("10m", "100Mi"), resources("10m", "100Mi"))],
        None,
        "Burstable",
    ),
    (
        "Burstable CPU, Guaranteed Memory",
        [container(resources(memory="100Mi"), resources(memory="100Mi"))],
        None,
        "Burstable",
    ),
    ("Burstable Without Limits", [container(resources("100m", "100Mi"))], None, "Burstable"),
    (
        "Burstable and Guaranteed Containers",
        [
            container(resources("1", "100Mi"), resources("2", "100Mi")),
            container(resources("100m", "100Mi"), resources("100m", "100Mi")),
        ],
        None,
        "Burstable",
    ),
    (
        "Burstable Containers With Unbounded But Requests Match Limits",
        [container(resources("100m", "100Mi"), resources("200m", "200Mi")), container(resources("100m", "100Mi"))],
        None,
        "Burstable",
    ),
    ("Burstable Container 1", [container(resources("10m", "100Mi"), resources("100m", "200Mi"))], None, "Burstable"),
    ("Burstable Container 2", [container(resources("0", "0"), resources("100m", "200Mi"))], None, "Burstable"),
    (
        "BestEffort Container With HugePages",
        [container(resources("0", "0", **{"hugepages-2Mi": "1Gi"}), resources("0", "0", **{"hugepages-2Mi": "1Gi"}))],
        None,
        "BestEffort",
    ),
    (
        "Init Container with BestEffort Main and Burstable Init",
        [container()],
        [container(resources("10m", "100Mi"), resources("100m", "200Mi"))],
        "Burstable",
    ),
    # docs/executor-semantics.md#72-qos-class
    ("cpu 400m with memory 0 is Burstable", [container({"cpu": "400m", "memory": "0"})], None, "Burstable"),
    (
        "requests summed across containers equal limits",
        [
            container(resources("1", "1Gi"), resources("1", "1Gi")),
            container(resources("500m", "1Gi"), resources("500m", "1Gi")),
        ],
        None,
        "Guaranteed",
    ),
    (
        "equal values written differently",
        [container(resources("1", "1Gi"), resources("1000m", "1024Mi"))],
        None,
        "Guaranteed",
    ),
    (
        "an init container without limits breaks Guaranteed",
        [container(resources("1", "1Gi"), resources("1", "1Gi"))],
        [container(resources("1"))],
        "Burstable",
    ),
    (
        "a Guaranteed init container adds to the sums",
        [container(resources("1", "1Gi"), resources("1", "1Gi"))],
        [container(resources("1", "1Gi"), resources("1", "1Gi"))],
        "Guaranteed",
    ),
    (
        "limits without requests: request and limit counts differ",
        [container(None, resources("1", "1Gi"))],
        None,
        "Burstable",
    ),
    ("a request above the limit", [container(resources("2", "1Gi"), resources("1", "1Gi"))], None, "Burstable"),
]


@pytest.mark.parametrize(("containers", "init", "expected"), [case[1:] for case in QOS], ids=[case[0] for case in QOS])
def test_qos_class(containers, init, expected):
    assert qos_class(pod_with(containers, init)) == expected


def test_status_qos_class_wins():
    pod = pod_with([container()])
    pod["status"] = {"qosClass": "Guaranteed"}
    assert qos_class(pod) == "Guaranteed"
    pod["status"] = {"qosClass": ""}
    assert qos_class(pod) == "BestEffort"


# --- predicates -----------------------------------------------------------------------------------------------------


def test_pod_types():
    """TestPodTypes (evictions_test.go): a DaemonSet pod, a local-storage pod, a mirror pod and a normal pod."""
    p1 = build_pod("p1", 400, 0, "node1")
    p1["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "replicaset-1", "uid": "rs"}]
    p2 = build_pod("p2", 400, 0, "node1")
    p2["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "name": "", "uid": ""}]
    p3 = build_pod("p3", 400, 0, "node1")
    p3["metadata"]["ownerReferences"] = [{"kind": "Pod", "name": "", "uid": ""}]
    p3["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]
    p4 = build_pod("p4", 400, 0, "node1")
    p4["metadata"]["annotations"] = {
        "kubernetes.io/config.mirror": "mirror",
        "kubernetes.io/config.source": "api",
        "kubernetes.io/created-by": "{}",
    }
    assert is_mirror_pod(p4)
    assert not is_static_pod(p4)  # source "api"
    assert has_local_storage(p3)
    assert is_daemonset_pod(p2)
    assert not (
        is_daemonset_pod(p1) or has_local_storage(p1) or is_critical_pod(p1) or is_mirror_pod(p1) or is_static_pod(p1)
    )
    assert owner_refs(p1) == [{"kind": "ReplicaSet", "name": "replicaset-1", "uid": "rs"}]
    assert owner_refs(p4) == []


@pytest.mark.parametrize(
    ("annotations", "mirror", "static"),
    [
        (None, False, False),
        ({"kubernetes.io/config.mirror": ""}, True, False),
        ({"kubernetes.io/config.source": "file"}, False, True),
        ({"kubernetes.io/config.source": "http"}, False, True),
        ({"kubernetes.io/config.source": ""}, False, True),  # present and not "api"
        ({"kubernetes.io/config.source": "api"}, False, False),
    ],
)
def test_mirror_and_static(annotations, mirror, static):
    pod = build_pod("p")
    if annotations is not None:
        pod["metadata"]["annotations"] = annotations
    assert is_mirror_pod(pod) is mirror
    assert is_static_pod(pod) is static


@pytest.mark.parametrize(
    ("value", "expected_priority", "critical"),
    [
        (None, None, False),
        (0, 0, False),
        (-5, -5, False),
        (1999999999, 1999999999, False),
        (2000000000, 2000000000, True),
        (2000001000, 2000001000, True),
    ],
)
def test_priority_and_critical(value, expected_priority, critical):
    pod = build_pod("p")
    if value is not None:
        pod["spec"]["priority"] = value
    pod["spec"]["priorityClassName"] = "system-node-critical"  # never read
    assert priority(pod) == expected_priority
    assert is_critical_pod(pod) is critical


@pytest.mark.parametrize(
    ("volumes", "local", "pvc"),
    [
        (None, False, False),
        ([{"name": "a", "emptyDir": {}}], True, False),
        ([{"name": "a", "emptyDir": {"medium": "Memory"}}], True, False),
        ([{"name": "a", "hostPath": {"path": "/x"}}], True, False),
        ([{"name": "a", "emptyDir": None}], False, False),
        ([{"name": "a", "configMap": {"name": "c"}}], False, False),
        ([{"name": "a", "ephemeral": {"volumeClaimTemplate": {}}}], False, False),
        ([{"name": "a", "persistentVolumeClaim": {"claimName": "c"}}], False, True),
        ([{"name": "a", "configMap": {}}, {"name": "b", "persistentVolumeClaim": {"claimName": "c"}}], False, True),
    ],
)
def test_volumes(volumes, local, pvc):
    pod = build_pod("p")
    if volumes is not None:
        pod["spec"]["volumes"] = volumes
    assert has_local_storage(pod) is local
    assert has_pvc(pod) is pvc


@pytest.mark.parametrize(
    ("owners", "daemonset"),
    [
        ([], False),
        ([{"kind": "ReplicaSet"}], False),
        ([{"kind": "ReplicaSet"}, {"kind": "DaemonSet", "apiVersion": "example.com/v1"}], True),
        ([{"kind": "daemonset"}], False),
    ],
)
def test_daemonset_pod(owners, daemonset):
    pod = build_pod("p")
    pod["metadata"]["ownerReferences"] = owners
    assert is_daemonset_pod(pod) is daemonset


def test_resource_claims():
    pod = build_pod("p")
    assert not has_resource_claims(pod)
    pod["spec"]["resourceClaims"] = []
    assert not has_resource_claims(pod)
    pod["spec"]["resourceClaims"] = [{"name": "gpu"}]
    assert has_resource_claims(pod)


@pytest.mark.parametrize(
    ("phase", "terminal"),
    [
        (None, False),
        ("", False),
        ("Pending", False),
        ("Running", False),
        ("Unknown", False),
        ("Succeeded", True),
        ("Failed", True),
    ],
)
def test_is_terminal(phase, terminal):
    pod = build_pod("p")
    if phase is not None:
        pod["status"]["phase"] = phase
    assert is_terminal(pod) is terminal


def test_is_terminating():
    pod = build_pod("p")
    assert not is_terminating(pod)
    pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    assert is_terminating(pod)


def test_annotation_constants():
    assert PREFER_NO_EVICTION == "descheduler.alpha.kubernetes.io/prefer-no-eviction"
    assert EVICT_ANNOTATION == "descheduler.alpha.kubernetes.io/evict"


# --- timestamps -----------------------------------------------------------------------------------------------------


def test_creation_and_start_time():
    pod = build_pod("p")
    assert creation_time(pod) == ZERO_TIME == datetime(1, 1, 1, tzinfo=timezone.utc)
    assert start_time(pod) is None
    pod["metadata"]["creationTimestamp"] = "2024-05-06T07:08:09Z"
    pod["status"]["startTime"] = "2024-05-06T07:08:10.5+02:00"
    assert creation_time(pod) == datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    assert start_time(pod) == datetime(2024, 5, 6, 5, 8, 10, 500000, tzinfo=timezone.utc)
    pod["metadata"]["creationTimestamp"] = None
    assert creation_time(pod) == ZERO_TIME
    pod["metadata"]["creationTimestamp"] = "yesterday"
    with pytest.raises(ValueError):
        creation_time(pod)


# --- sorts ----------------------------------------------------------------------------------------------------------

LOW_PRIORITY = 0
HIGH_PRIORITY = 10000


def make_best_effort(pod: Json) -> Json:
    pod["spec"]["containers"][0]["resources"] = {"requests": None, "limits": None}
    return pod


def make_burstable(pod: Json) -> Json:
    pod["spec"]["containers"][0]["resources"]["limits"] = None
    return pod


def make_guaranteed(pod: Json) -> Json:
    resources_ = pod["spec"]["containers"][0]["resources"]
    resources_["limits"] = {"cpu": resources_["requests"]["cpu"], "memory": resources_["requests"]["memory"]}
    return pod


def with_priority(pod: Json, value: int | None) -> Json:
    pod["spec"]["priority"] = value
    return pod


def prefer_no_eviction(pod: Json) -> Json:
    pod["metadata"]["annotations"] = {PREFER_NO_EVICTION: ""}
    return pod


def names(pods: list[Json]) -> list[str]:
    return [pod["metadata"]["name"] for pod in pods]


def priority_and_qos_pods(build: Callable[[str, int, int, str], Json] = build_pod) -> list[Json]:
    """The six pods of TestSortPodsBasedOnPriorityLowToHigh (pods_test.go) without the prefer-no-eviction
    annotation, p1 to p6 (its whole table at v0.33.0), each made by ``build(name, cpu, memory, node)``."""
    return [
        with_priority(build("p1", 400, 0, "n1"), LOW_PRIORITY),
        make_best_effort(with_priority(build("p2", 400, 0, "n1"), HIGH_PRIORITY)),
        make_burstable(with_priority(build("p3", 400, 0, "n1"), HIGH_PRIORITY)),
        make_guaranteed(with_priority(build("p4", 400, 100, "n1"), HIGH_PRIORITY)),
        make_best_effort(build("p5", 400, 100, "n1")),
        make_guaranteed(build("p6", 400, 100, "n1")),
    ]


def test_sort_pods_based_on_priority_low_to_high():
    """TestSortPodsBasedOnPriorityLowToHigh (pods_test.go)."""
    p1, p2, p3, p4, p5, p6 = priority_and_qos_pods()
    p7 = prefer_no_eviction(with_priority(build_pod("p7", 400, 0, "n1"), LOW_PRIORITY))
    p8 = prefer_no_eviction(make_best_effort(with_priority(build_pod("p8", 400, 0, "n1"), HIGH_PRIORITY)))
    p9 = prefer_no_eviction(make_burstable(with_priority(build_pod("p9", 400, 0, "n1"), HIGH_PRIORITY)))
    p10 = prefer_no_eviction(make_guaranteed(with_priority(build_pod("p10", 400, 100, "n1"), HIGH_PRIORITY)))
    p11 = make_burstable(build_pod("p11", 400, 0, "n1"))
    p12 = prefer_no_eviction(make_burstable(build_pod("p12", 400, 0, "n1")))
    pods = [p1, p8, p9, p10, p2, p3, p4, p5, p6, p7, p11, p12]
    expected = [p5, p11, p12, p6, p1, p7, p2, p8, p3, p9, p4, p10]
    result = sort_by_priority_low_to_high(pods)
    assert names(result) == names(expected)
    assert names(pods) == ["p1", "p8", "p9", "p10", "p2", "p3", "p4", "p5", "p6", "p7", "p11", "p12"]  # untouched
    assert names(sort_by_priority_low_to_high(reversed(pods))) == names(expected)


def test_priority_sort_orders_numerically_and_keeps_ties_stable():
    pods = [with_priority(build_pod(f"q{i}"), value) for i, value in enumerate([10, -3, None, 10, 2000000000, 9])]
    assert names(sort_by_priority_low_to_high(pods)) == ["q2", "q1", "q5", "q0", "q3", "q4"]
    # Unknown QoS classes from status sort after Guaranteed.
    odd = with_priority(build_pod("odd"), 1)
    odd["status"]["qosClass"] = "Platinum"
    guaranteed = with_priority(make_guaranteed(build_pod("g", 1, 1)), 1)
    assert names(sort_by_priority_low_to_high([odd, guaranteed])) == ["g", "odd"]


def test_sort_pods_based_on_age():
    """TestSortPodsBasedOnAge (pods_test.go): nine pods created i minutes ago come out oldest first."""
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    pods = []
    for i in range(9):
        pod = build_pod(f"p{i}", 1, 32, "n1")
        stamp = now - timedelta(minutes=i)
        pod["metadata"]["creationTimestamp"] = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
        pods.append(pod)
    result = sort_slice(pods, created_before)
    assert names(result) == [f"p{i}" for i in range(8, -1, -1)]
    for older, newer in itertools.pairwise(result):
        assert creation_time(older) <= creation_time(newer)


def test_created_before_puts_unset_first_and_ties_stay_as_gos_sort_leaves_them():
    a = build_pod("a")
    a["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    b = build_pod("b")
    b["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    c = build_pod("c")  # unset: Go's zero time, the oldest
    d = build_pod("d")
    d["metadata"]["creationTimestamp"] = "2023-12-31T23:00:00-02:00"  # 2024-01-01T01:00Z
    assert names(sort_slice([a, b, c, d], created_before)) == ["c", "a", "b", "d"]  # up to 12: insertion sort
    assert names(sort_slice([b, a, c, d], created_before)) == ["c", "b", "a", "d"]


def test_module_exports_exist():
    for name in podutil.__all__:
        assert hasattr(podutil, name), name
