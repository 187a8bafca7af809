"""DefaultEvictor: upstream's ``defaultevictor_test.go`` tables, plus the rules of
docs/executor-semantics.md#3-defaultevictor and docs/executor-semantics.md#10-pitfalls items 3-6.

Ported functions (cases): TestDefaultEvictorPreEvictionFilter (10), TestDefaultEvictorFilter (46), TestReinitialization
(1: building a second evictor from the same args and cluster), TestGetEffectivePodProtections_TableDriven (8),
Test_protectedPVCStorageClasses (3), TestMultipleProfilesWithDifferentNamespaceLabelSelectors (6 checks),
TestNamespaceLabelSelectorAllOperations (5). Nothing skipped.

Translation of upstream's ``testCase`` into args: each legacy boolean is set only when true, ``priorityThreshold`` only
when the case sets one (upstream's ``{value: nil}`` adds no threshold constraint; ours resolves to the system-critical
value, which the SystemCriticalPods check already enforces), ``minPodAge`` 50m as ``"50m"``. Upstream's ``time.Now()``
is the fixed ``NOW``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, NamedTuple

import pytest

from desched.executor.cluster import Cluster
from tests.executor.builders import (
    NOW,
    build_node,
    build_pod,
    evictor_from,
    set_normal_owner,
    set_rs_owner,
    set_ss_owner,
)

Json = dict[str, Any]
Edit = Callable[[Json], Any]
SYSTEM_CRITICAL = 2000000000
EVICT = "descheduler.alpha.kubernetes.io/evict"
PREFER_NO_EVICTION = "descheduler.alpha.kubernetes.io/prefer-no-eviction"


def stamp(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def edited(obj: Json, *edits: Edit) -> Json:
    for edit in edits:
        edit(obj)
    return obj


def pod(name: str, *edits: Edit, cpu: int = 400, memory: int = 0, on: str = "node1") -> Json:
    """``buildTestPod`` (400m, memory 0, on node1) or ``test.BuildTestPod`` with other requests."""
    return edited(build_pod(name, cpu, memory, on), *edits)


def node(name: str, *edits: Edit, cpu: int = 1000, memory: int = 2000, pods: int = 13) -> Json:
    return edited(build_node(name, cpu, memory, pods), *edits)


def namespace(name: str, labels: dict[str, str] | None = None) -> Json:
    """``BuildTestNamespace``: labelled ``kubernetes.io/metadata.name``; ``labels`` replaces that when given."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name} if labels is None else labels},
    }


def pdb(name: str, app: str) -> Json:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1},
    }


def pvc(name: str, storage_class: str) -> Json:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


# -- edits ---------------------------------------------------------------------------------------------------------


def annotate(**annotations: str) -> Edit:
    return lambda obj: obj["metadata"].setdefault("annotations", {}).update(annotations)


evict_annotation = annotate(**{EVICT: "true"})


def mirror(obj: Json) -> None:
    """``SetMirrorPodAnnotation``: replaces the annotations."""
    obj["metadata"]["annotations"] = {
        "kubernetes.io/config.mirror": "mirror",
        "kubernetes.io/config.source": "api",
        "kubernetes.io/created-by": "{}",
    }


def priority(value: int) -> Edit:
    return lambda obj: obj["spec"].update(priority=value)


def phase(value: str) -> Edit:
    return lambda obj: obj["status"].update(phase=value)


def labels(**values: str) -> Edit:
    return lambda obj: obj["metadata"].update(labels=values)


def owners(*refs: Json) -> Edit:
    return lambda obj: obj["metadata"].update(ownerReferences=[dict(ref) for ref in refs])


NORMAL_OWNER = {"kind": "Pod", "apiVersion": "v1"}  # GetNormalPodOwnerRefList: no name, no UID
DS_OWNER = {"kind": "DaemonSet", "apiVersion": "v1"}


def owner_uid(uid: str) -> Edit:
    return lambda obj: obj["metadata"]["ownerReferences"][0].update(uid=uid)


def local_storage(obj: Json) -> None:
    obj["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]


def claims(*names: str) -> Edit:
    return lambda obj: obj["spec"].update(
        volumes=[{"name": f"{name}-pvc", "persistentVolumeClaim": {"claimName": name}} for name in names]
    )


def started(seconds_ago: int) -> Edit:
    return lambda obj: obj["status"].update(startTime=stamp(seconds_ago))


def taint_gpu(obj: Json) -> None:
    obj["spec"]["taints"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def datacenter(value: str) -> Edit:
    return lambda obj: obj["spec"].update(nodeSelector={"datacenter": value})


def east(obj: Json) -> None:
    obj["metadata"]["labels"] = {"datacenter": "east"}


def tolerate_gpu(obj: Json) -> None:
    obj["spec"]["tolerations"] = [{"key": "hardware", "value": "gpu", "effect": "NoSchedule"}]


def in_namespace(name: str) -> Edit:
    return lambda obj: obj["metadata"].update(namespace=name)


# -- cases ---------------------------------------------------------------------------------------------------------


class Case(NamedTuple):
    description: str
    pods: list[Json]  # the first one is the pod under test
    args: Json
    result: bool
    objects: Sequence[Json] = ()  # nodes, namespaces, PDBs, PVCs


def check(case: Case, method: str) -> bool:
    evictor = evictor_from(case.args, Cluster.from_objects([*case.objects, *case.pods]), NOW)
    return bool(getattr(evictor, method)(case.pods[0]))


NAMESPACE_SELECTOR = {"matchLabels": {"kubernetes.io/metadata.name": "test"}}
FIT = {"nodeFit": True}
LABELLED_NODES = [node("node2", east), node("node3", east)]

PRE_EVICTION_CASES = [
    Case(
        "Pod with no tolerations running on normal node, all other nodes tainted",
        [pod("p1", set_normal_owner)],
        FIT,
        False,
        [node("node2", taint_gpu), node("node3", taint_gpu)],
    ),
    Case(
        "Pod with correct tolerations running on normal node, all other nodes tainted",
        [pod("p1", set_normal_owner, tolerate_gpu)],
        FIT,
        True,
        [node("node2", taint_gpu), node("node3", taint_gpu)],
    ),
    Case(
        "Pod with incorrect node selector",
        [pod("p1", set_normal_owner, datacenter("fail"))],
        FIT,
        False,
        LABELLED_NODES,
    ),
    Case(
        "Pod with correct node selector", [pod("p1", set_normal_owner, datacenter("east"))], FIT, True, LABELLED_NODES
    ),
    Case(
        "Pod with correct node selector, but only available node doesn't have enough CPU",
        [pod("p1", set_normal_owner, datacenter("east"), cpu=12, memory=8)],
        FIT,
        False,
        [node("node2-TEST", east, cpu=10, memory=16, pods=10), node("node3-TEST", east, cpu=10, memory=16, pods=10)],
    ),
    Case(
        "Pod with correct node selector, and one node has enough memory",
        [
            pod("p1", set_normal_owner, datacenter("east"), cpu=12, memory=8),
            pod("node2-pod-10GB-mem", labels(test="true"), cpu=20, memory=10, on="node2"),
            pod("node3-pod-10GB-mem", labels(test="true"), cpu=20, memory=10, on="node3"),
        ],
        FIT,
        True,
        [node("node2", east, cpu=100, memory=16, pods=10), node("node3", east, cpu=100, memory=20, pods=10)],
    ),
    Case(
        "Pod with correct node selector, but both nodes don't have enough memory",
        [
            pod("p1", set_normal_owner, datacenter("east"), cpu=12, memory=8),
            pod("node2-pod-10GB-mem", labels(test="true"), cpu=10, memory=10, on="node2"),
            pod("node3-pod-10GB-mem", labels(test="true"), cpu=10, memory=10, on="node3"),
        ],
        FIT,
        False,
        [node("node2", east, cpu=100, memory=16, pods=10), node("node3", east, cpu=100, memory=16, pods=10)],
    ),
    Case(
        "Pod with incorrect node selector, but nodefit false, should still be evicted",
        [pod("p1", set_normal_owner, datacenter("fail"))],
        {},
        True,
        LABELLED_NODES,
    ),
    Case(
        "Pod with namespace matched namespace selector, should be evicted",
        [pod("p1", in_namespace("test"), owners(NORMAL_OWNER), datacenter("east"))],
        {**FIT, "namespaceLabelSelector": NAMESPACE_SELECTOR},
        True,
        [*LABELLED_NODES, namespace("default"), namespace("test")],
    ),
    Case(
        "Pod with namespace does not matched namespace selector, should not be evicted",
        [pod("p1", owners(NORMAL_OWNER), datacenter("fail"))],
        {**FIT, "namespaceLabelSelector": NAMESPACE_SELECTOR},
        False,
        [*LABELLED_NODES, namespace("default"), namespace("test")],
    ),
]


@pytest.mark.parametrize("case", PRE_EVICTION_CASES, ids=lambda case: case.description)
def test_pre_eviction_filter(case: Case) -> None:
    assert check(case, "pre_eviction_filter") is case.result


LOW, HIGH = 800, 900
OWNER_UID = "3f1c7a52-owner"
BOTH_OWNERS_TWO_REPLICAS = [
    pod("p1", set_normal_owner, owner_uid(OWNER_UID), cpu=1, memory=1),
    pod("p2", set_normal_owner, owner_uid(OWNER_UID), cpu=1, memory=1),
]
MULTIPLE_OWNERS = [
    pod("p1", owners(NORMAL_OWNER, NORMAL_OWNER), owner_uid(OWNER_UID), cpu=1, memory=1),
    pod("p2", set_normal_owner, cpu=1, memory=1),
]
LEGACY_CRITICAL = {"evictSystemCriticalPods": True}
PVC_PROTECTION = {"podProtections": {"extraEnabled": ["PodsWithPVC"]}}


def protected_classes(*names: str) -> Json:
    return {
        "podProtections": {
            "extraEnabled": ["PodsWithPVC"],
            "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": name} for name in names]}},
        }
    }


FILTER_CASES = [
    Case("Failed pod eviction with no ownerRefs", [pod("bare_pod_failed", phase("Failed"))], {}, False),
    Case(
        "Normal pod eviction with no ownerRefs and evictFailedBarePods enabled",
        [pod("bare_pod")],
        {"evictFailedBarePods": True},
        False,
    ),
    Case(
        "Failed pod eviction with no ownerRefs (evictFailedBarePods)",
        [pod("bare_pod_failed_but_can_be_evicted", phase("Failed"))],
        {"evictFailedBarePods": True},
        True,
    ),
    Case("Normal pod eviction with normal ownerRefs", [pod("p1", set_normal_owner)], {}, True),
    Case(
        "Normal pod eviction with normal ownerRefs and evict annotation",
        [pod("p2", evict_annotation, set_normal_owner)],
        {},
        True,
    ),
    Case(
        "Normal pod eviction with normal ownerRefs and prefer-no-eviction annotation (preference)",
        [pod("p2", annotate(**{PREFER_NO_EVICTION: ""}), set_normal_owner)],
        {},
        True,
    ),
    Case(
        "Normal pod eviction with normal ownerRefs and prefer-no-eviction annotation (mandatory)",
        [pod("p2", annotate(**{PREFER_NO_EVICTION: ""}), set_normal_owner)],
        {"noEvictionPolicy": "Mandatory"},
        False,
    ),
    Case("Normal pod eviction with replicaSet ownerRefs", [pod("p3", set_normal_owner)], {}, True),
    Case(
        "Normal pod eviction with replicaSet ownerRefs and evict annotation",
        [pod("p4", evict_annotation, set_rs_owner)],
        {},
        True,
    ),
    Case("Normal pod eviction with statefulSet ownerRefs", [pod("p18", set_normal_owner)], {}, True),
    Case(
        "Normal pod eviction with statefulSet ownerRefs and evict annotation",
        [pod("p19", evict_annotation, set_ss_owner)],
        {},
        True,
    ),
    Case(
        "Pod not evicted because it is bound to a PV and evictLocalStoragePods = false",
        [pod("p5", set_normal_owner, local_storage)],
        {},
        False,
    ),
    Case(
        "Pod is evicted because it is bound to a PV and evictLocalStoragePods = true",
        [pod("p6", set_normal_owner, local_storage)],
        {"evictLocalStoragePods": True},
        True,
    ),
    Case(
        "Pod is evicted because it is bound to a PV and evictLocalStoragePods = false, but it has evict annotation",
        [pod("p7", evict_annotation, set_normal_owner, local_storage)],
        {},
        True,
    ),
    Case(
        "Pod not evicted because it is part of a daemonSet", [pod("p8", set_normal_owner, owners(DS_OWNER))], {}, False
    ),
    Case(
        "Pod is evicted because it is part of a daemonSet, but it has evict annotation",
        [pod("p9", evict_annotation, owners(DS_OWNER))],
        {},
        True,
    ),
    Case("Pod not evicted because it is a mirror poddsa", [pod("p10", set_normal_owner, mirror)], {}, False),
    Case(
        "Pod is evicted because it is a mirror pod, but it has evict annotation",
        [pod("p11", set_normal_owner, mirror, evict_annotation)],
        {},
        True,
    ),
    Case(
        "Pod not evicted because it has system critical priority",
        [pod("p12", set_normal_owner, priority(SYSTEM_CRITICAL))],
        {},
        False,
    ),
    Case(
        "Pod is evicted because it has system critical priority, but it has evict annotation",
        [pod("p13", set_normal_owner, priority(SYSTEM_CRITICAL), evict_annotation)],
        {},
        True,
    ),
    Case(
        "Pod not evicted because it has a priority higher than the configured priority threshold",
        [pod("p14", set_normal_owner, priority(HIGH))],
        {"priorityThreshold": {"value": LOW}},
        False,
    ),
    Case(
        "Pod is evicted because it has a priority higher than the configured priority threshold, but it has evict "
        "annotation",
        [pod("p15", set_normal_owner, evict_annotation, priority(HIGH))],
        {"priorityThreshold": {"value": LOW}},
        True,
    ),
    Case(
        "Pod is evicted because it has system critical priority, but evictSystemCriticalPods = true",
        [pod("p16", set_normal_owner, priority(SYSTEM_CRITICAL))],
        LEGACY_CRITICAL,
        True,
    ),
    Case(
        "Pod is evicted because it has system critical priority, but evictSystemCriticalPods = true and it has "
        "evict annotation",
        [pod("p16", set_normal_owner, evict_annotation, priority(SYSTEM_CRITICAL))],
        LEGACY_CRITICAL,
        True,
    ),
    Case(
        "Pod is evicted because it has a priority higher than the configured priority threshold, but "
        "evictSystemCriticalPods = true",
        [pod("p17", set_normal_owner, priority(HIGH))],
        {**LEGACY_CRITICAL, "priorityThreshold": {"value": LOW}},
        True,
    ),
    Case(
        "Pod is evicted because it has a priority higher than the configured priority threshold, but "
        "evictSystemCriticalPods = true and it has evict annotation",
        [pod("p17", set_normal_owner, evict_annotation, priority(HIGH))],
        {**LEGACY_CRITICAL, "priorityThreshold": {"value": LOW}},
        True,
    ),
    Case(
        "Pod with no tolerations running on normal node, all other nodes tainted, no PreEvictionFilter, should "
        "ignore nodeFit",
        [pod("p1", set_normal_owner)],
        FIT,
        True,
        [node("node2", taint_gpu), node("node3", taint_gpu)],
    ),
    Case("minReplicas of 2, owner with 2 replicas, evicts", BOTH_OWNERS_TWO_REPLICAS, {"minReplicas": 2}, True),
    Case("minReplicas of 3, owner with 2 replicas, no eviction", BOTH_OWNERS_TWO_REPLICAS, {"minReplicas": 3}, False),
    Case("minReplicas of 2, multiple owners, no eviction", MULTIPLE_OWNERS, {"minReplicas": 2}, True),
    Case(
        "minPodAge of 50, pod created 10 minutes ago, no eviction",
        [pod("p1", set_normal_owner, started(600), cpu=1, memory=1)],
        {"minPodAge": "50m"},
        False,
    ),
    Case(
        "minPodAge of 50, pod created 60 minutes ago, evicts",
        [pod("p1", set_normal_owner, started(3600), cpu=1, memory=1)],
        {"minPodAge": "50m"},
        True,
    ),
    Case(
        "nil minPodAge, pod created 60 minutes ago, evicts",
        [pod("p1", set_normal_owner, started(3600), cpu=1, memory=1)],
        {},
        True,
    ),
    Case(
        "ignorePodsWithoutPDB, pod with no PDBs, no eviction",
        [pod("p1", set_normal_owner, labels(app="foo"), cpu=1, memory=1)],
        {"ignorePodsWithoutPDB": True},
        False,
    ),
    Case(
        "ignorePodsWithoutPDB, pod with PDBs, evicts",
        [pod("p1", set_normal_owner, labels(app="foo"), cpu=1, memory=1)],
        {"ignorePodsWithoutPDB": True},
        True,
        [pdb("pdb1", "foo")],
    ),
    Case(
        "ignorePvcPods is set, pod with PVC, not evicts",
        [pod("p15", set_normal_owner, claims("foo"))],
        {"ignorePvcPods": True},
        False,
    ),
    Case("ignorePvcPods is not set, pod with PVC, evicts", [pod("p15", set_normal_owner, claims("foo"))], {}, True),
    Case(
        "Pod with local storage is evicted because 'PodsWithLocalStorage' is in DefaultDisabled",
        [
            pod(
                "p18",
                set_normal_owner,
                lambda obj: obj["spec"].update(volumes=[{"name": "local-storage", "emptyDir": {}}]),
            )
        ],
        {"podProtections": {"defaultDisabled": ["PodsWithLocalStorage"]}},
        True,
    ),
    Case(
        "DaemonSet pod is evicted because 'DaemonSetPods' is in DefaultDisabled",
        [pod("p19", owners({"kind": "DaemonSet", "name": "daemonset-test", "uid": "daemonset-uid"}))],
        {"podProtections": {"defaultDisabled": ["DaemonSetPods"]}},
        True,
    ),
    Case(
        "Pod with PVC is not evicted because 'PodsWithPVC' is in ExtraEnabled",
        [pod("p20", set_normal_owner, claims("foo"))],
        PVC_PROTECTION,
        False,
    ),
    Case(
        "Pod without PDB is not evicted because 'PodsWithoutPDB' is in ExtraEnabled",
        [pod("p21", set_normal_owner)],
        {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}},
        False,
    ),
    Case(
        "Pod with ResourceClaims is not evicted because 'PodsWithResourceClaims' is in ExtraEnabled",
        [
            pod(
                "p20",
                set_normal_owner,
                lambda obj: obj["spec"].update(
                    resourceClaims=[{"name": "test-claim", "resourceClaimName": "test-resource-claim"}]
                ),
            )
        ],
        {"podProtections": {"extraEnabled": ["PodsWithResourceClaims"]}},
        False,
    ),
    Case(
        "Pod using StorageClass is not evicted because 'PodsWithPVC' is in ExtraEnabled",
        [pod("p23", set_normal_owner, claims("foo"))],
        protected_classes("standard"),
        False,
        [pvc("foo", "standard")],
    ),
    Case(
        "Pod using unprotected StorageClass is evicted even though 'PodsWithPVC' is in ExtraEnabled",
        [pod("p24", set_normal_owner, claims("foo"))],
        protected_classes("protected"),
        True,
        [pvc("foo", "unprotected")],
    ),
    Case(
        "Pod using unexisting PVC is not evicted because we cannot determine if storage class is protected or not",
        [pod("p25", set_normal_owner, claims("foo"))],
        protected_classes("protected"),
        False,
    ),
    Case(
        "Pod using protected and unprotected StorageClasses is not evicted",
        [pod("p26", set_normal_owner, claims("protected", "unprotected"))],
        protected_classes("protected"),
        False,
        [pvc("protected", "protected"), pvc("unprotected", "unprotected")],
    ),
]


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda case: case.description)
def test_filter(case: Case) -> None:
    assert check(case, "filter") is case.result
    assert (
        evictor_from(case.args, Cluster.from_objects([*case.objects, *case.pods]), NOW).filter_failure(case.pods[0])
        is None
    ) is case.result


def test_upstream_filter_case_count() -> None:
    assert len(FILTER_CASES) == 46


def test_reinitialization() -> None:
    """TestReinitialization: a second evictor built from the same args and cluster decides the same."""
    cluster = Cluster.from_objects(MULTIPLE_OWNERS)
    args = {"minReplicas": 2}
    assert evictor_from(args, cluster, NOW).filter(MULTIPLE_OWNERS[0])
    assert evictor_from(args, cluster, NOW).filter(MULTIPLE_OWNERS[0])


DEFAULT_SET = {"PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods", "FailedBarePods"}


@pytest.mark.parametrize(
    ("disabled", "extra", "expected"),
    [
        ([], [], DEFAULT_SET),
        (["PodsWithLocalStorage"], [], {"DaemonSetPods", "SystemCriticalPods", "FailedBarePods"}),
        (["DaemonSetPods", "SystemCriticalPods"], [], {"PodsWithLocalStorage", "FailedBarePods"}),
        ([], ["PodsWithPVC"], DEFAULT_SET | {"PodsWithPVC"}),
        ([], ["PodsWithPVC", "PodsWithoutPDB"], DEFAULT_SET | {"PodsWithPVC", "PodsWithoutPDB"}),
        (
            ["FailedBarePods", "DaemonSetPods"],
            ["PodsWithPVC"],
            {"PodsWithLocalStorage", "SystemCriticalPods", "PodsWithPVC"},
        ),
        ([], ["PodsWithResourceClaims"], DEFAULT_SET | {"PodsWithResourceClaims"}),
        (
            ["FailedBarePods", "DaemonSetPods"],
            ["PodsWithPVC", "PodsWithResourceClaims"],
            {"PodsWithLocalStorage", "SystemCriticalPods", "PodsWithPVC", "PodsWithResourceClaims"},
        ),
    ],
)
def test_effective_pod_protections(disabled: list[str], extra: list[str], expected: set[str]) -> None:
    """TestGetEffectivePodProtections_TableDriven."""
    args = {"podProtections": {"defaultDisabled": disabled, "extraEnabled": extra}}
    assert evictor_from(args, Cluster(), NOW).protections == expected


@pytest.mark.parametrize(
    ("protections", "expected"),
    [
        (None, None),
        ({"config": {}}, None),
        ({"config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "sc1"}, {"name": "sc2"}]}}}, {"sc1", "sc2"}),
    ],
)
def test_protected_pvc_storage_classes(protections: Json | None, expected: set[str] | None) -> None:
    """Test_protectedPVCStorageClasses (None: no class is listed, so every PVC protects its pod)."""
    args = {} if protections is None else {"podProtections": protections}
    assert evictor_from(args, Cluster(), NOW).protected_classes == expected


def profile_pod(name: str, namespace_name: str) -> Json:
    return pod(name, in_namespace(namespace_name), set_normal_owner, cpu=100, memory=100)


PROFILE_PODS = {
    "prod": profile_pod("pod-in-prod", "ns-prod"),
    "test": profile_pod("pod-in-test", "ns-test"),
    "backend": profile_pod("pod-in-backend", "ns-backend"),
}
PROFILE_OBJECTS = [
    node("node1", cpu=1000, memory=2000, pods=10),
    namespace("ns-prod", {"kubernetes.io/metadata.name": "ns-prod", "env": "prod"}),
    namespace("ns-backend", {"kubernetes.io/metadata.name": "ns-backend", "team": "backend"}),
    namespace("ns-test", {"kubernetes.io/metadata.name": "ns-test", "env": "test"}),
    *PROFILE_PODS.values(),
]
PROFILE_SELECTORS = {"profile1": {"matchLabels": {"env": "prod"}}, "profile2": {"matchLabels": {"team": "backend"}}}


@pytest.mark.parametrize(
    ("profile", "pod_key", "passes"),
    [
        ("profile1", "backend", False),
        ("profile1", "test", False),
        ("profile1", "prod", True),
        ("profile2", "prod", False),
        ("profile2", "test", False),
        ("profile2", "backend", True),
    ],
)
def test_profiles_with_different_namespace_label_selectors(profile: str, pod_key: str, passes: bool) -> None:
    """TestMultipleProfilesWithDifferentNamespaceLabelSelectors: two evictors over one cluster."""
    cluster = Cluster.from_objects(PROFILE_OBJECTS)
    evictors = {
        name: evictor_from({"namespaceLabelSelector": selector}, cluster, NOW)
        for name, selector in PROFILE_SELECTORS.items()
    }
    assert evictors[profile].pre_eviction_filter(PROFILE_PODS[pod_key]) is passes


OPERATION_PODS = {
    "prod": profile_pod("pod-in-prod", "ns-prod"),
    "staging": profile_pod("pod-in-staging", "ns-staging"),
    "test": profile_pod("pod-in-test", "ns-test"),
    "nolabels": profile_pod("pod-in-nolabels", "ns-nolabels"),
}
OPERATION_OBJECTS = [
    node("node1", cpu=1000, memory=2000, pods=10),
    namespace("ns-prod", {"env": "prod", "tier": "frontend"}),
    namespace("ns-staging", {"env": "staging", "tier": "backend"}),
    namespace("ns-test", {"env": "test"}),
    namespace("ns-nolabels", {}),
    *OPERATION_PODS.values(),
]


#: TestNamespaceLabelSelectorAllOperations's cases: (selector, pods passing, pods failing) at v0.36
NAMESPACE_OPERATIONS = [
    pytest.param(
        {
            "matchLabels": {"tier": "frontend"},
            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "staging"]}],
        },
        ["prod"],
        ["staging", "test"],
        id="MatchLabels and MatchExpressions In",
    ),
    pytest.param(
        {"matchLabels": {"tier": "backend"}, "matchExpressions": [{"key": "env", "operator": "Exists"}]},
        ["staging"],
        ["prod", "test"],
        id="MatchLabels and MatchExpressions Exists",
    ),
    pytest.param(
        {
            "matchExpressions": [
                {"key": "tier", "operator": "Exists"},
                {"key": "env", "operator": "In", "values": ["staging"]},
            ]
        },
        ["staging"],
        ["prod", "test"],
        id="Exists and In",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
        ["test", "nolabels"],
        ["prod", "staging"],
        id="DoesNotExist",
    ),
    pytest.param(
        {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod", "test"]}]},
        ["staging"],
        ["prod", "test"],
        id="NotIn",
    ),
]


@pytest.mark.parametrize(("selector", "passing", "failing"), NAMESPACE_OPERATIONS)
def test_namespace_label_selector_operations(selector: Json, passing: list[str], failing: list[str]) -> None:
    """TestNamespaceLabelSelectorAllOperations."""
    evictor = evictor_from({"namespaceLabelSelector": selector}, Cluster.from_objects(OPERATION_OBJECTS), NOW)
    assert [evictor.pre_eviction_filter(OPERATION_PODS[key]) for key in passing] == [True] * len(passing)
    assert [evictor.pre_eviction_filter(OPERATION_PODS[key]) for key in failing] == [False] * len(failing)


# -- beyond upstream's tables: docs/executor-semantics.md#3-defaultevictor and docs/executor-semantics.md#10-pitfalls


def filter_of(args: Json, target: Json, *others: Json) -> bool:
    return evictor_from(args, Cluster.from_objects([target, *others]), NOW).filter(target)


def test_evict_annotation_overrides_terminating_and_static() -> None:
    terminating = pod("t", set_normal_owner, lambda obj: obj["metadata"].update(deletionTimestamp=stamp(0)))
    static = pod("s", set_normal_owner, annotate(**{"kubernetes.io/config.source": "file"}))
    assert not filter_of({}, terminating) and not filter_of({}, static)
    assert filter_of({}, edited(terminating, evict_annotation)) and filter_of({}, edited(static, evict_annotation))


def test_evict_annotation_does_not_bypass_pre_eviction_filter() -> None:
    target = pod("p", set_normal_owner, evict_annotation)
    evictor = evictor_from(FIT, Cluster.from_objects([target, node("node2", taint_gpu)]), NOW)
    assert evictor.filter(target) and not evictor.pre_eviction_filter(target)


def test_static_pod_with_api_source_is_not_static() -> None:
    assert filter_of({}, pod("p", set_normal_owner, annotate(**{"kubernetes.io/config.source": "api"})))


@pytest.mark.parametrize("pod_phase", ["", "Running", "Succeeded", "Failed"])
def test_bare_pods_are_never_evictable_by_default(pod_phase: str) -> None:
    assert not filter_of({}, pod("bare", phase(pod_phase)))
    assert filter_of({"evictFailedBarePods": True}, pod("bare", phase(pod_phase))) is (pod_phase == "Failed")


def test_priority_threshold_means_strictly_lower() -> None:
    args = {"priorityThreshold": {"value": 900}}
    assert filter_of(args, pod("p", set_normal_owner, priority(899)))
    assert not filter_of(args, pod("p", set_normal_owner, priority(900)))
    assert filter_of(args, pod("p", set_normal_owner))  # nil priority always passes


def test_priority_threshold_by_class_name() -> None:
    klass = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    args = {"priorityThreshold": {"name": "high"}}
    assert filter_of(args, pod("p", set_normal_owner, priority(999)), klass)
    assert not filter_of(args, pod("p", set_normal_owner, priority(1000)), klass)


def test_min_pod_age_uses_start_time_and_blocks_pods_without_one() -> None:
    args = {"minPodAge": "50m"}
    created_long_ago = lambda obj: obj["metadata"].update(creationTimestamp=stamp(10**6))  # noqa: E731
    assert not filter_of(args, pod("p", set_normal_owner, created_long_ago))
    assert not filter_of(args, pod("p", set_normal_owner, created_long_ago, started(2999)))
    assert filter_of(args, pod("p", set_normal_owner, started(3000)))


def test_min_replicas_counts_every_pod_of_the_owner_whatever_its_phase_or_node() -> None:
    siblings = [
        pod("p2", set_normal_owner, owner_uid(OWNER_UID), phase("Failed"), on="node9"),
        pod("p3", set_normal_owner, owner_uid(OWNER_UID), on=""),
    ]
    target = pod("p1", set_normal_owner, owner_uid(OWNER_UID))
    assert filter_of({"minReplicas": 3}, target, *siblings)
    assert not filter_of({"minReplicas": 4}, target, *siblings)


def test_min_replicas_counts_a_pod_once_even_with_two_references_to_the_owner() -> None:
    twice = pod("p2", owners(NORMAL_OWNER, NORMAL_OWNER))
    target = pod("p1", set_normal_owner)
    # Both pods reference the owner UID "" (p2 twice): upstream's owner-UID index counts 2 pods, below minReplicas 3.
    assert not filter_of({"minReplicas": 3}, target, twice)


def test_label_selector_must_match_and_an_empty_one_is_ignored() -> None:
    target = pod("p", set_normal_owner, labels(app="a"))
    assert filter_of({"labelSelector": {"matchLabels": {"app": "a"}}}, target)
    assert not filter_of({"labelSelector": {"matchLabels": {"app": "b"}}}, target)
    assert filter_of({"labelSelector": {}}, target)


def test_pdb_with_empty_selector_covers_everything_and_nil_selector_nothing() -> None:
    args = {"podProtections": {"extraEnabled": ["PodsWithoutPDB"]}}
    target = pod("p", set_normal_owner)
    empty = {**pdb("all", "x"), "spec": {"selector": {}}}
    nil = {**pdb("none", "x"), "spec": {}}
    assert filter_of(args, target, empty)
    assert not filter_of(args, target, nil)


def test_namespace_label_selector_needs_the_namespace_object() -> None:
    target = pod("p", set_normal_owner)
    evictor = evictor_from(
        {"namespaceLabelSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}},
        Cluster.from_objects([target]),
        NOW,
    )
    assert not evictor.pre_eviction_filter(target)


def test_node_fit_honours_the_evictor_node_selector() -> None:
    target = pod("p", set_normal_owner)
    west = node("node2", lambda obj: obj["metadata"].update(labels={"datacenter": "west"}))
    cluster = Cluster.from_objects([target, west])
    assert evictor_from(FIT, cluster, NOW).pre_eviction_filter(target)
    assert not evictor_from({**FIT, "nodeSelector": "datacenter=east"}, cluster, NOW).pre_eviction_filter(target)


def test_node_fit_ignores_not_ready_nodes() -> None:
    target = pod("p", set_normal_owner)
    not_ready = node("node2", lambda obj: obj["status"].update(conditions=[{"type": "Ready", "status": "False"}]))
    assert not evictor_from(FIT, Cluster.from_objects([target, not_ready]), NOW).pre_eviction_filter(target)
