"""desched.executor.nodeutil: readiness, taints/tolerations, node affinity and NodeFit
(docs/executor-semantics.md#12-one-cycle, docs/executor-semantics.md#4-node-fit,
docs/executor-semantics.md#74-taints-tolerations-and-selectors).

Ported from upstream ``pkg/descheduler/node/node_test.go``: TestReadyNodes, TestReadyNodesFromInterfaces (the node
cases), TestIsNodeUnschedulable, TestPodFitsCurrentNode, TestPodFitsAnyOtherNode (all 15 cases), TestNodeFit (all 12
cases with their error texts) and TestBestPodNodeAffinityWeight; from ``pkg/utils/predicates_test.go``:
TestPodNodeAffinityWeight. The remaining cases check the documented edge rules.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from desched.executor import nodeutil
from desched.executor.nodeutil import (
    best_preferred_weight,
    is_ready,
    is_unschedulable,
    node_allocatable,
    node_fit_failure,
    node_requested,
    node_selector_terms_match,
    pod_fits_any_node,
    pod_fits_any_other_node,
    pod_matches_node,
    pod_tolerates_taints,
    preferred_weight,
    tolerates,
    tolerates_no_schedule_or_execute,
    tolerations_tolerate_taints,
)

Json = dict[str, Any]
GB = 1000 * 1000 * 1000


def build_pod(name: str, cpu: int = 0, memory: int = 0, node: str = "", namespace: str = "default") -> Json:
    """``test.BuildTestPod``."""
    requests: Json = {}
    if cpu >= 0:
        requests["cpu"] = f"{cpu}m"
    if memory >= 0:
        requests["memory"] = str(memory)
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
        "spec": {"containers": [{"name": "", "resources": {"requests": requests, "limits": {}}}], "nodeName": node},
        "status": {},
    }


def build_node(name: str, cpu: int = 0, memory: int = 0, pods: int = 0, **labels: str) -> Json:
    """``test.BuildTestNode`` (plus labels)."""
    resources = {"cpu": f"{cpu}m", "memory": str(memory), "pods": str(pods)}
    return {
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def resource_list(cpu: int, memory: int, ephemeral: int) -> Json:
    """``createResourceList`` of node_test.go."""
    return {"cpu": f"{cpu}m", "memory": str(memory), "ephemeral-storage": str(ephemeral)}


def lister(*pods: Json) -> Callable[[str], list[Json]]:
    """An informer-like ``pods_by_node``: every listed pod bound to the node."""
    return lambda name: [pod for pod in pods if pod["spec"].get("nodeName") == name]


def names(*items: Json) -> list[str]:
    return [item["metadata"]["name"] for item in items]


# --- node state -----------------------------------------------------------------------------------------------------


def test_ready_nodes():
    """TestReadyNodes: only a Ready condition that is not True makes a node unready; cordoning does not."""
    node1 = build_node("node2", 1000, 2000, 9)
    node2 = build_node("node3", 1000, 2000, 9)
    node2["status"]["conditions"] = [{"type": "MemoryPressure", "status": "True"}]
    node3 = build_node("node4", 1000, 2000, 9)
    node3["status"]["conditions"] = [{"type": "NetworkUnavailable", "status": "True"}]
    node4 = build_node("node5", 1000, 2000, 9)
    node4["spec"]["unschedulable"] = True
    node5 = build_node("node6", 1000, 2000, 9)
    node5["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert is_ready(node1)
    assert is_ready(node2)
    assert is_ready(node3)
    assert is_ready(node4)
    assert not is_ready(node5)


@pytest.mark.parametrize(
    ("conditions", "ready"),
    [
        (None, True),
        ([], True),
        ([{"type": "Ready", "status": "True"}], True),
        ([{"type": "Ready", "status": "Unknown"}], False),
        ([{"type": "Ready"}], False),
        ([{"type": "DiskPressure", "status": "True"}, {"type": "Ready", "status": "True"}], True),
        ([{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}], True),
        ([{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}], False),
    ],
)
def test_is_ready_conditions(conditions, ready):
    node = build_node("n")
    node["status"]["conditions"] = conditions
    assert is_ready(node) is ready


@pytest.mark.parametrize(
    ("listed", "expected"),
    [
        ("all nodes are ready", ["node1", "node3"]),
        ("one node is not ready", ["node1", "node3"]),
        ("empty list", []),
    ],
)
def test_ready_nodes_from_list(listed, expected):
    """TestReadyNodesFromInterfaces (the node cases): unready nodes are dropped, order is kept."""
    node1 = build_node("node1", 1000, 2000, 9)
    node2 = build_node("node2", 1000, 2000, 9)
    node2["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    node3 = build_node("node3", 1000, 2000, 9)
    nodes = {"all nodes are ready": [node1, node3], "one node is not ready": [node1, node2, node3], "empty list": []}
    assert [node["metadata"]["name"] for node in nodes[listed] if is_ready(node)] == expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [({"unschedulable": False}, False), ({"unschedulable": True}, True), ({}, False), (None, False)],
)
def test_is_node_unschedulable(spec, expected):
    """TestIsNodeUnschedulable."""
    assert is_unschedulable({"spec": spec}) is expected


def test_node_allocatable_falls_back_to_capacity():
    node = build_node("n", 1500, 2 * GB, 9)
    node["status"]["allocatable"]["nvidia.com/gpu"] = "2"
    assert node_allocatable(node) == {"cpu": 1500, "memory": 2 * GB, "pods": 9, "nvidia.com/gpu": 2}
    node["status"]["allocatable"] = {}
    node["status"]["capacity"] = {"cpu": "4", "memory": "1Gi", "pods": "110"}
    assert node_allocatable(node) == {"cpu": 4000, "memory": 2**30, "pods": 110}
    del node["status"]["allocatable"]
    assert node_allocatable(node) == {"cpu": 4000, "memory": 2**30, "pods": 110}
    assert node_allocatable({"status": {}}) == {}


def test_node_requested_counts_non_terminal_pods():
    running = build_pod("a", 100, 10, "n")
    pending = build_pod("b", 200, 20, "n")
    pending["status"]["phase"] = "Pending"
    done = build_pod("c", 5000, 5000, "n")
    done["status"]["phase"] = "Succeeded"
    failed = build_pod("d", 5000, 5000, "n")
    failed["status"]["phase"] = "Failed"
    assert node_requested([running, pending, done, failed]) == {"cpu": 300, "memory": 30, "pods": 2}
    assert node_requested([]) == {"pods": 0}


# --- taints and tolerations -----------------------------------------------------------------------------------------

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}

TOLERATES = [
    ("Exists with no key tolerates everything", {"operator": "Exists"}, TAINT, True),
    ("key and value equal", {"key": "dedicated", "operator": "Equal", "value": "gpu"}, TAINT, True),
    ("empty operator means Equal", {"key": "dedicated", "value": "gpu"}, TAINT, True),
    ("value differs", {"key": "dedicated", "operator": "Equal", "value": "cpu"}, TAINT, False),
    ("key differs", {"key": "other", "operator": "Exists"}, TAINT, False),
    ("effect equal", {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}, TAINT, True),
    ("effect differs", {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}, TAINT, False),
    ("empty effect matches any effect", {"operator": "Exists"}, {**TAINT, "effect": "NoExecute"}, True),
    ("empty key with Equal compares values only", {"operator": "Equal", "value": "gpu"}, TAINT, True),
    ("empty key with Equal and another value", {"operator": "Equal", "value": "x"}, TAINT, False),
    ("Equal with empty value tolerates an empty taint value", {"key": "k"}, {"key": "k", "effect": "NoSchedule"}, True),
    ("unknown operator", {"key": "dedicated", "operator": "In", "value": "gpu"}, TAINT, False),
    ("Lt: taint value below", {"key": "n", "operator": "Lt", "value": "10"}, {"key": "n", "value": "5"}, True),
    ("Lt: equal is not below", {"key": "n", "operator": "Lt", "value": "10"}, {"key": "n", "value": "10"}, False),
    ("Gt: taint value above", {"key": "n", "operator": "Gt", "value": "10"}, {"key": "n", "value": "15"}, True),
    ("Gt: taint value below", {"key": "n", "operator": "Gt", "value": "10"}, {"key": "n", "value": "5"}, False),
    ("Gt: negative values", {"key": "n", "operator": "Gt", "value": "-10"}, {"key": "n", "value": "-5"}, True),
    ("Gt: int64 compare, not string", {"key": "n", "operator": "Gt", "value": "9"}, {"key": "n", "value": "10"}, True),
    (
        "Lt: leading zero is not canonical",
        {"key": "n", "operator": "Lt", "value": "010"},
        {"key": "n", "value": "5"},
        False,
    ),
    (
        "Lt: plus sign is not canonical",
        {"key": "n", "operator": "Lt", "value": "10"},
        {"key": "n", "value": "+5"},
        False,
    ),
    ("Lt: not a number", {"key": "n", "operator": "Lt", "value": "10"}, {"key": "n", "value": "five"}, False),
    (
        "Gt: beyond int64",
        {"key": "n", "operator": "Gt", "value": "1"},
        {"key": "n", "value": "9223372036854775808"},
        False,
    ),
    ("Gt: empty taint value", {"key": "n", "operator": "Gt", "value": "1"}, {"key": "n"}, False),
]


@pytest.mark.parametrize(("toleration", "taint", "expected"), [c[1:] for c in TOLERATES], ids=[c[0] for c in TOLERATES])
def test_tolerates(toleration, taint, expected):
    assert tolerates(toleration, taint) is expected


def test_tolerations_tolerate_taints_with_filter():
    taints = [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "PreferNoSchedule"}]
    tolerations = [{"key": "a", "operator": "Exists"}]
    assert not tolerations_tolerate_taints(tolerations, taints)
    assert tolerations_tolerate_taints(tolerations, taints, lambda taint: taint["effect"] == "NoSchedule")
    assert tolerations_tolerate_taints(None, None)
    assert tolerations_tolerate_taints([], [])
    assert not tolerations_tolerate_taints([], taints)


def taint_node(node: Json, *taints: Json) -> Json:
    node["spec"]["taints"] = list(taints)
    return node


def tolerate(pod: Json, *tolerations: Json) -> Json:
    pod["spec"]["tolerations"] = list(tolerations)
    return pod


def test_tolerates_no_schedule_or_execute_ignores_prefer_no_schedule():
    node = taint_node(build_node("n"), {"key": "soft", "effect": "PreferNoSchedule"})
    assert tolerates_no_schedule_or_execute(build_pod("p"), node)
    taint_node(node, {"key": "soft", "effect": "PreferNoSchedule"}, {"key": "hard", "effect": "NoExecute"})
    assert not tolerates_no_schedule_or_execute(build_pod("p"), node)
    assert tolerates_no_schedule_or_execute(tolerate(build_pod("p"), {"key": "hard", "operator": "Exists"}), node)


def test_pod_tolerates_taints():
    wildcard = tolerate(build_pod("p"), {"operator": "Exists"})
    two = [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}]
    assert not pod_tolerates_taints(wildcard, {})  # no destination nodes
    assert pod_tolerates_taints(build_pod("p"), {"n1": []})  # an untainted node
    assert pod_tolerates_taints(build_pod("p"), {"n1": None})
    # quirk: more taints than tolerations rejects the node unexamined, even with a wildcard toleration
    assert not pod_tolerates_taints(wildcard, {"n1": two})
    assert pod_tolerates_taints(tolerate(build_pod("p"), {"operator": "Exists"}, {"operator": "Exists"}), {"n1": two})
    # every effect counts here, PreferNoSchedule included
    soft = [{"key": "soft", "effect": "PreferNoSchedule"}]
    assert not pod_tolerates_taints(tolerate(build_pod("p"), {"key": "x", "operator": "Exists"}), {"n1": soft})
    # some node suffices
    assert pod_tolerates_taints(wildcard, {"n1": two, "n2": soft})


# --- node selectors and affinity ------------------------------------------------------------------------------------


def expr(key: str, operator: str, *values: str) -> Json:
    out: Json = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def term(*expressions: Json, fields: list[Json] | None = None) -> Json:
    out: Json = {}
    if expressions:
        out["matchExpressions"] = list(expressions)
    if fields is not None:
        out["matchFields"] = fields
    return out


LABELED = build_node("worker-1", zone="a", size="10", empty="")

TERMS = [
    ("In", [term(expr("zone", "In", "a", "b"))], True),
    ("In, other value", [term(expr("zone", "In", "b"))], False),
    ("In, missing key", [term(expr("region", "In", "a"))], False),
    ("NotIn", [term(expr("zone", "NotIn", "b"))], True),
    ("NotIn, listed value", [term(expr("zone", "NotIn", "a"))], False),
    ("NotIn, missing key", [term(expr("region", "NotIn", "a"))], True),
    ("Exists", [term(expr("zone", "Exists"))], True),
    ("Exists, empty value", [term(expr("empty", "Exists"))], True),
    ("Exists, missing", [term(expr("region", "Exists"))], False),
    ("DoesNotExist", [term(expr("region", "DoesNotExist"))], True),
    ("DoesNotExist, present", [term(expr("zone", "DoesNotExist"))], False),
    ("Gt", [term(expr("size", "Gt", "9"))], True),
    ("Gt, equal", [term(expr("size", "Gt", "10"))], False),
    ("Lt", [term(expr("size", "Lt", "11"))], True),
    ("Lt, numeric not lexical", [term(expr("size", "Lt", "9"))], False),
    ("Gt, a signed bound is not a label value: parse error", [term(expr("size", "Gt", "+9"))], False),
    ("Gt, a negative bound is not a label value: parse error", [term(expr("size", "Gt", "-1"))], False),
    ("Gt, label not an integer", [term(expr("zone", "Gt", "1"))], False),
    ("Gt, missing label", [term(expr("region", "Gt", "1"))], False),
    ("expressions are ANDed", [term(expr("zone", "In", "a"), expr("size", "Lt", "5"))], False),
    ("terms are ORed", [term(expr("zone", "In", "b")), term(expr("size", "Gt", "5"))], True),
    ("no terms match nothing", [], False),
    ("an empty term matches nothing", [{}], False),
    ("empty lists make an empty term", [{"matchExpressions": [], "matchFields": []}], False),
    ("an empty term is skipped", [{}, term(expr("zone", "Exists"))], True),
    ("matchFields In on metadata.name", [term(fields=[expr("metadata.name", "In", "worker-1")])], True),
    ("matchFields In, other name", [term(fields=[expr("metadata.name", "In", "worker-2")])], False),
    ("matchFields NotIn", [term(fields=[expr("metadata.name", "NotIn", "worker-2")])], True),
    ("matchFields other key reads empty", [term(fields=[expr("metadata.uid", "NotIn", "x")])], True),
    (
        "matchFields ANDed with expressions",
        [term(expr("zone", "In", "a"), fields=[expr("metadata.name", "In", "worker-2")])],
        False,
    ),
    ("matchFields needs exactly one value", [term(fields=[expr("metadata.name", "In", "worker-1", "x")])], False),
    ("matchFields Exists is unsupported", [term(fields=[expr("metadata.name", "Exists")])], False),
    ("unknown operator: parse error", [term(expr("zone", "Equals", "a"))], False),
    ("In without values: parse error", [term(expr("zone", "In"))], False),
    ("NotIn without values: parse error", [term(expr("region", "NotIn"))], False),
    ("Exists with values: parse error", [term(expr("zone", "Exists", "a"))], False),
    ("Gt with two values: parse error", [term(expr("size", "Gt", "1", "2"))], False),
    ("Gt with a non-integer: parse error", [term(expr("size", "Gt", "1.5"))], False),
    ("invalid key: parse error", [term(expr("bad key", "DoesNotExist"))], False),
    ("invalid value: parse error", [term(expr("zone", "NotIn", "not valid!"))], False),
    (
        "a parse error in one term does not stop another",
        [term(expr("zone", "In")), term(expr("zone", "In", "a"))],
        True,
    ),
    ("a parse error spoils its whole term", [term(expr("zone", "In", "a"), expr("x", "Bogus"))], False),
]


@pytest.mark.parametrize(("terms", "expected"), [c[1:] for c in TERMS], ids=[c[0] for c in TERMS])
def test_node_selector_terms_match(terms, expected):
    assert node_selector_terms_match(terms, LABELED) is expected


def test_match_fields_are_ignored_for_a_nameless_node():
    nameless = {"metadata": {"labels": {}}}
    assert node_selector_terms_match([term(fields=[expr("metadata.name", "In", "worker-1")])], nameless)


def with_required(pod: Json, *terms_: Json) -> Json:
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms_)}}
    }
    return pod


def test_pod_matches_node():
    node = build_node("n1", zone="a", empty="")
    pod = build_pod("p")
    assert pod_matches_node(pod, node)
    pod["spec"]["nodeSelector"] = {"zone": "a"}
    assert pod_matches_node(pod, node)
    pod["spec"]["nodeSelector"] = {"zone": "a", "disk": "ssd"}
    assert not pod_matches_node(pod, node)
    pod["spec"]["nodeSelector"] = {"empty": ""}
    assert pod_matches_node(pod, node)
    pod["spec"]["nodeSelector"] = {"missing": ""}
    assert not pod_matches_node(pod, node)
    pod["spec"]["nodeSelector"] = {"zone": "a"}
    assert not pod_matches_node(with_required(copy.deepcopy(pod), term(expr("zone", "In", "b"))), node)
    assert pod_matches_node(with_required(copy.deepcopy(pod), term(expr("zone", "In", "a"))), node)
    # a required node affinity without terms matches nothing; a nil one is no constraint
    no_terms = copy.deepcopy(pod)
    no_terms["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}
    assert not pod_matches_node(no_terms, node)
    nil = copy.deepcopy(pod)
    nil["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}
    assert pod_matches_node(nil, node)
    # preferred terms are not part of the match
    preferred = copy.deepcopy(pod)
    preferred["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "preference": term(expr("zone", "In", "b"))}
            ]
        }
    }
    assert pod_matches_node(preferred, node)


def preferred(*weighted: tuple[int, Json]) -> Json:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": weight, "preference": preference} for weight, preference in weighted
            ]
        }
    }


def selector_term(key: str, value: str) -> Json:
    """``createNodeSelectorTerm`` of predicates_test.go."""
    return term(expr(key, "In", value))


@pytest.mark.parametrize(
    ("affinity", "expected"),
    [
        (None, 0),
        ({}, 0),
        (
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [selector_term("key1", "value1")]
                    }
                }
            },
            0,
        ),
        (preferred((10, selector_term("key1", "value1")), (5, selector_term("key1", "valueX"))), 10),
        (preferred((10, selector_term("key1", "value1")), (5, selector_term("key2", "value2"))), 15),
        # beyond upstream's table: empty and invalid preferences add nothing
        (preferred((10, {}), (5, selector_term("key2", "value2"))), 5),
        (preferred((10, term(expr("key1", "In"))), (7, selector_term("key3", "value3"))), 7),
    ],
)
def test_pod_node_affinity_weight(affinity, expected):
    """TestPodNodeAffinityWeight (predicates_test.go)."""
    node = {"metadata": {"labels": {"key1": "value1", "key2": "value2", "key3": "value3"}}}
    pod: Json = {"spec": {}}
    if affinity is not None:
        pod["spec"]["affinity"] = affinity
    assert preferred_weight(pod, node) == expected


@pytest.mark.parametrize(
    ("node_labels", "expected"),
    [([{"key2": "value2"}, {"key3": "value3"}], 0), ([{"key1": "value1"}, {"key2": "value2"}], 10), ([], 0)],
)
def test_best_pod_node_affinity_weight(node_labels, expected):
    """TestBestPodNodeAffinityWeight (node_test.go)."""
    pod = build_pod("p1", 0, 0, "node1")
    pod["spec"]["affinity"] = preferred((10, selector_term("key1", "value1")))
    nodes = [build_node(f"node{i + 2}", 64000, 128 * GB, 200, **labels) for i, labels in enumerate(node_labels)]
    assert best_preferred_weight(pod, nodes) == expected


# --- NodeFit: TestPodFitsCurrentNode ---------------------------------------------------------------------------------

DESIRED = "kubernetes.io/desiredNode"


@pytest.mark.parametrize(("value", "fits"), [("yes", True), ("no", False)])
def test_pod_fits_current_node(value, fits):
    """TestPodFitsCurrentNode: a pod with required node affinity against a node with or without the label."""
    pod = with_required({"metadata": {"name": "p"}, "spec": {}}, term(expr(DESIRED, "In", "yes")))
    node = build_node("node1", 64000, 128 * GB, 200, **{DESIRED: value})
    node["status"]["allocatable"]["ephemeral-storage"] = str(1000 * GB)
    assert (node_fit_failure(pod, node, []) is None) is fits


# --- NodeFit: TestPodFitsAnyOtherNode --------------------------------------------------------------------------------

NODE_NAMES = ["node1", "node2", "stagingNode", "node4"]


def fit_node(
    index: int,
    cpu: int,
    memory: int,
    pods: int,
    label: str | None = None,
    ephemeral: int | None = None,
    tainted: bool = False,
    unschedulable: bool = False,
    custom: int | None = None,
) -> Json:
    node = build_node(NODE_NAMES[index], cpu, memory, pods, **({DESIRED: label} if label is not None else {}))
    if ephemeral is not None:
        node["status"]["allocatable"]["ephemeral-storage"] = str(ephemeral)
    if tainted:
        taint_node(node, {"key": "hardware", "value": "gpu", "effect": "NoSchedule"})
    if unschedulable:
        node["spec"]["unschedulable"] = True
    if custom is not None:
        node["status"]["allocatable"]["example.com/custom-resource"] = str(custom)
    return node


def candidate(
    cpu: int = 0, memory: int = 0, node: int = 2, ephemeral: int | None = None, custom: int | None = None
) -> Json:
    pod = build_pod("p1", cpu, memory, NODE_NAMES[node])
    pod["spec"]["nodeSelector"] = {DESIRED: "yes"}
    requests = pod["spec"]["containers"][0]["resources"]["requests"]
    if ephemeral is not None:
        requests["ephemeral-storage"] = str(ephemeral)
    if custom is not None:
        requests["example.com/custom-resource"] = str(custom)
    return pod


def resident(
    name: str,
    cpu: int,
    memory: int,
    ephemeral: int | None = None,
    custom: int | None = None,
    overhead: Json | None = None,
) -> Json:
    """A pod already on node2; upstream replaces its ObjectMeta, so it has no name."""
    pod = build_pod(name, cpu, memory, NODE_NAMES[1])
    pod["metadata"] = {"namespace": "test", "labels": {"test": "true"}}
    requests = pod["spec"]["containers"][0]["resources"]["requests"]
    if ephemeral is not None:
        requests["ephemeral-storage"] = str(ephemeral)
    if custom is not None:
        requests["example.com/custom-resource"] = str(custom)
    if overhead is not None:
        pod["spec"]["overhead"] = overhead
    return pod


def big(index: int, label: str | None = "yes", **kwargs: Any) -> Json:
    return fit_node(index, 64000, 128 * GB, 200, label, 1000 * GB, **kwargs)


STAGING = fit_node(2, 0, 0, 0)

ANY_OTHER = [
    ("Pod fits another node matching node affinity", candidate(), [big(0), big(1, "no"), STAGING], [], True),
    ("Pod expected to fit one of the nodes", candidate(), [big(0, "no"), big(1), STAGING], [], True),
    ("Pod expected to fit none of the nodes", candidate(), [big(0, "unfit1"), big(1, "unfit2"), STAGING], [], False),
    (
        "Nodes are unschedulable but labels match, should fail",
        candidate(),
        [big(0, unschedulable=True), big(1, "no"), STAGING],
        [],
        False,
    ),
    (
        "Both nodes are tained, should fail",
        candidate(2000, 2 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), big(1, tainted=True), STAGING],
        [],
        False,
    ),
    (
        "Two nodes matches node selector, one of them is tained, there is a pod on the available "
        "node, and requests are "
        "low, should pass",
        candidate(2000, 2 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), big(1), STAGING],
        [resident("test-pod", 12 * 1000, 20 * GB, 40 * GB)],
        True,
    ),
    (
        "Two nodes matches node selector, one of them is tained, but CPU requests are too big, should fail",
        candidate(2000, 2 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), fit_node(1, 4000, 8 * GB, 12, "yes", 200 * GB), STAGING],
        [resident("3-core-pod", 3000, 4 * GB, 10 * GB)],
        False,
    ),
    (
        "Two nodes matches node selector, one of them is tained, but memory requests are too big, should fail",
        candidate(2000, 5 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), fit_node(1, 10 * 1000, 8 * GB, 12, "yes", 200 * GB), STAGING],
        [resident("4GB-mem-pod", 2000, 4 * GB, 10 * GB)],
        False,
    ),
    (
        "Two nodes matches node selector, one of them is tained, but ephemeral storage requests "
        "are too big, should fail",
        candidate(2000, 4 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), fit_node(1, 10 * 1000, 8 * GB, 12, "yes", 20 * GB), STAGING],
        [resident("11GB-storage-pod", 2000, 4 * GB, 11 * GB)],
        False,
    ),
    (
        "Two nodes matches node selector, one of them is tained, but custom resource requests are too big, should fail",
        candidate(2000, 2 * GB, ephemeral=10 * GB, custom=10),
        [big(0, tainted=True, custom=15), fit_node(1, 10 * 1000, 8 * GB, 12, "yes", 200 * GB, custom=15), STAGING],
        [resident("10-custom-resource-pod", 0, 0, custom=10)],
        False,
    ),
    (
        "Two nodes matches node selector, one of them is tained, CPU requests will fit, "
        "and pod Overhead is low enough, should pass",
        candidate(1000, 2 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), fit_node(1, 5000, 8 * GB, 12, "yes", 200 * GB), STAGING],
        [resident("3-core-pod", 2000, 4 * GB, 10 * GB, overhead=resource_list(1000, GB, GB))],
        True,
    ),
    (
        "Two nodes matches node selector, one of them is tained, CPU requests will fit, but pod Overhead is too high, "
        "should fail",
        candidate(2000, 2 * GB, ephemeral=10 * GB),
        [big(0, tainted=True), fit_node(1, 5000, 8 * GB, 12, "yes", 200 * GB), STAGING],
        [resident("3-core-pod", 2000, 4 * GB, 10 * GB, overhead=resource_list(2000, GB, GB))],
        False,
    ),
    (
        "There are four nodes. One node has a taint, and the other three nodes do not meet the resource requirements, "
        "should fail",
        candidate(1000, 2 * GB, ephemeral=10 * GB),
        [
            big(0, tainted=True),
            fit_node(1, 3000, 8 * GB, 12, "yes", 200 * GB),
            fit_node(2, 3000, 8 * GB, 12),
            fit_node(3, 0, 0, 0),
        ],
        [resident("3-core-pod", 2000, 4 * GB, 10 * GB, overhead=resource_list(1000, GB, GB))],
        False,
    ),
    (
        "There are four nodes. First node has a taint, second node has no label, third node do not meet the resource "
        "requirements, just fourth node meets the requirements, should success",
        candidate(1000, 2 * GB, ephemeral=10 * GB),
        [
            big(0, tainted=True),
            fit_node(1, 8000, 8 * GB, 12, None, 200 * GB),
            fit_node(2, 1000, 8 * GB, 12),
            fit_node(3, 8000, 8 * GB, 12, "yes", 1000 * GB),
        ],
        [resident("3-core-pod", 2000, 4 * GB, 10 * GB, overhead=resource_list(1000, GB, GB))],
        True,
    ),
    (
        "There are four nodes. First node has a taint, second node has no label, third node do not meet the resource "
        "requirements, fourth node is the one where the pod is located, should fail",
        candidate(1000, 2 * GB, node=3, ephemeral=10 * GB),
        [
            big(0, tainted=True),
            fit_node(1, 8000, 8 * GB, 12, None, 200 * GB),
            fit_node(2, 1000, 8 * GB, 12),
            fit_node(3, 8000, 8 * GB, 12, "yes", 1000 * GB),
        ],
        [resident("3-core-pod", 2000, 4 * GB, 10 * GB, overhead=resource_list(1000, GB, GB))],
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "pods_on_nodes", "success"), [c[1:] for c in ANY_OTHER], ids=[c[0][:60] for c in ANY_OTHER]
)
def test_pod_fits_any_other_node(pod, nodes, pods_on_nodes, success):
    """TestPodFitsAnyOtherNode (node_test.go): all 15 cases."""
    pods_by_node = lister(*pods_on_nodes, pod)
    before = copy.deepcopy((pod, nodes, pods_on_nodes))
    assert pod_fits_any_other_node(pod, nodes, pods_by_node) is success
    # the same answer with precomputed usage
    requested = {node["metadata"]["name"]: node_requested(pods_by_node(node["metadata"]["name"])) for node in nodes}
    assert pod_fits_any_other_node(pod, nodes, pods_by_node, requested_by_node=requested.__getitem__) is success
    assert (pod, nodes, pods_on_nodes) == before


# --- NodeFit: TestNodeFit --------------------------------------------------------------------------------------------

NODE = build_node("node", 64000, 128 * GB, 2, region="main-region")
NODE_NO_LABEL = build_node("node", 64000, 128 * GB, 2)


def with_anti_affinity(pod: Json, key: str, value: str) -> Json:
    """``test.PodWithPodAntiAffinity``: a required anti-affinity term on ``key In [value]``, topology ``region``."""
    pod["spec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]},
                    "topologyKey": "region",
                }
            ]
        }
    }
    pod["metadata"]["labels"] = {key: value}
    return pod


def with_sidecar(pod: Json, requests: Json) -> Json:
    pod["spec"]["initContainers"] = [{"name": "", "restartPolicy": "Always", "resources": {"requests": requests}}]
    return pod


def with_overhead(pod: Json, overhead: Json) -> Json:
    pod["spec"]["overhead"] = overhead
    return pod


def in_namespace(pod: Json, namespace: str) -> Json:
    pod["metadata"]["namespace"] = namespace
    return pod


NODE_FIT = [
    (
        "Insufficient cpu",
        build_pod("p1", 10000, 2 * GB),
        NODE,
        [build_pod("p2", 60000, 60 * GB, "node")],
        "insufficient cpu",
    ),
    (
        "Insufficient pod num",
        build_pod("p1", 1000, 2 * GB),
        NODE,
        [build_pod("p2", 1000, 2 * GB, "node"), build_pod("p3", 1000, 2 * GB, "node")],
        "insufficient pods",
    ),
    (
        "Pod matches inter-pod anti-affinity rule of other pod on node",
        with_anti_affinity(build_pod("p1", 1000, 1000, "node"), "foo", "bar"),
        NODE,
        [with_anti_affinity(build_pod("p2", 1000, 1000, "node"), "foo", "bar")],
        "pod matches inter-pod anti-affinity rule of other pod on node",
    ),
    (
        "Pod doesn't match inter-pod anti-affinity rule of other pod on node, because pod and other pod is not same "
        "namespace",
        with_anti_affinity(build_pod("p1", 1000, 1000, "node"), "foo", "bar"),
        NODE,
        [with_anti_affinity(in_namespace(build_pod("p2", 1000, 1000, "node"), "test"), "foo", "bar")],
        None,
    ),
    (
        "Pod doesn't match inter-pod anti-affinity rule of other pod on node, because other pod "
        "not match labels of pod",
        with_anti_affinity(build_pod("p1", 1000, 1000, "node"), "foo", "bar"),
        NODE,
        [with_anti_affinity(build_pod("p2", 1000, 1000, "node"), "foo1", "bar1")],
        None,
    ),
    (
        "Pod doesn't match inter-pod anti-affinity rule of other pod on node, because node have no topologyKey",
        with_anti_affinity(build_pod("p1", 1000, 1000, "node1"), "foo", "bar"),
        NODE_NO_LABEL,
        [with_anti_affinity(build_pod("p2", 1000, 1000, "node"), "foo", "bar")],
        None,
    ),
    ("Pod fits on node", build_pod("p1", 1000, 1000), NODE, [], None),
    (
        "Pod with native sidecars with too much cpu does not fit on node",
        with_sidecar(build_pod("p1", 1, 100), resource_list(100000, 100 * 1000 * 1000, 0)),
        NODE,
        [],
        "insufficient cpu",
    ),
    (
        "Pod with native sidecars with too much memory does not fit on node",
        with_sidecar(build_pod("p1", 1, 100), resource_list(100, 1000 * GB, 0)),
        NODE,
        [],
        "insufficient memory",
    ),
    (
        "Pod with small native sidecars fits on node",
        with_sidecar(build_pod("p1", 1, 100), resource_list(100, 100 * 1000 * 1000, 0)),
        NODE,
        [],
        None,
    ),
    (
        "Pod with large overhead does not fit on node",
        with_overhead(build_pod("p1", 1, 100), resource_list(100000, 100 * 1000 * 1000, 0)),
        NODE,
        [],
        "insufficient cpu",
    ),
    (
        "Pod with small overhead fits on node",
        with_overhead(build_pod("p1", 1, 100), resource_list(1, 1000 * 1000, 0)),
        NODE,
        [],
        None,
    ),
]


@pytest.mark.parametrize(
    ("pod", "node", "pods_on_node", "error"), [c[1:] for c in NODE_FIT], ids=[c[0][:70] for c in NODE_FIT]
)
def test_node_fit(pod, node, pods_on_node, error):
    """TestNodeFit (node_test.go): all 12 cases, with upstream's error texts."""
    # the informer of the upstream test also holds the candidate itself
    on_node = [p for p in [pod, *pods_on_node] if p["spec"]["nodeName"] == node["metadata"]["name"]]
    assert node_fit_failure(pod, node, on_node) == error
    assert node_fit_failure(pod, node, on_node, requested=node_requested(on_node)) == error


# --- NodeFit: edge rules --------------------------------------------------------------------------------------------


def test_node_fit_order_of_checks():
    node = taint_node(build_node("n", 1000, 1000, 10, zone="a"), {"key": "k", "effect": "NoSchedule"})
    node["spec"]["unschedulable"] = True
    pod = build_pod("p", 5000, 5000)
    pod["spec"]["nodeSelector"] = {"zone": "b"}
    assert node_fit_failure(pod, node, []) == "node is not schedulable"
    node["spec"]["unschedulable"] = False
    assert node_fit_failure(pod, node, []) == "pod node selector does not match the node label"
    pod["spec"]["nodeSelector"] = {"zone": "a"}
    assert node_fit_failure(pod, node, []) == "pod does not tolerate taints on the node"
    tolerate(pod, {"key": "k", "operator": "Exists", "effect": "NoSchedule"})
    assert node_fit_failure(pod, node, []) == "insufficient cpu"
    pod["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1", "memory": "1000"}
    assert node_fit_failure(pod, node, []) is None


def test_node_fit_taint_effects():
    pod = build_pod("p", 0, 0)
    node = build_node("n", 1000, 1000, 10)
    soft = taint_node(copy.deepcopy(node), {"key": "k", "effect": "PreferNoSchedule"})
    assert node_fit_failure(pod, soft, []) is None
    no_execute = taint_node(copy.deepcopy(node), {"key": "k", "value": "v", "effect": "NoExecute"})
    assert node_fit_failure(pod, no_execute, []) == "pod does not tolerate taints on the node"
    tolerate(pod, {"key": "k", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30})
    assert node_fit_failure(pod, no_execute, []) is None


def test_node_fit_invalid_required_affinity_fails():
    pod = with_required(build_pod("p", 0, 0), term(expr("zone", "In")))
    reason = node_fit_failure(pod, build_node("n", 1000, 1000, 10, zone="a"), [])
    assert reason is not None and "invalid" in reason


def test_terminal_pods_take_no_resources_or_slots():
    node = build_node("n", 1000, 1000, 1)
    done = build_pod("done", 1000, 1000, "n")
    done["status"]["phase"] = "Succeeded"
    failed = build_pod("failed", 1000, 1000, "n")
    failed["status"]["phase"] = "Failed"
    assert node_fit_failure(build_pod("p", 1000, 1000), node, [done, failed]) is None
    running = build_pod("running", 0, 0, "n")
    assert node_fit_failure(build_pod("p", 1000, 1000), node, [done, running]) == "insufficient pods"


def test_resource_step_skipped_on_the_pods_own_node():
    node = build_node("n", 100, 100, 1)
    pod = build_pod("p", 5000, 5000, "n")
    other = build_pod("other", 100, 100, "n")
    assert node_fit_failure(pod, node, [pod, other]) is None
    elsewhere = build_pod("p", 5000, 5000, "m")
    assert node_fit_failure(elsewhere, node, [other]) == "insufficient cpu"


def test_missing_allocatable_resources():
    node = build_node("n", 1000, 1000, 10)
    # an extended resource the node lacks: available is 0, so only a zero request fits
    pod = build_pod("p", 0, 0)
    pod["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "0"
    user = build_pod("user", 0, 0, "n")
    user["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "3"
    assert node_fit_failure(pod, node, [user]) is None
    pod["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    assert node_fit_failure(pod, node, [user]) == "insufficient example.com/gpu"
    # cpu missing from allocatable counts as 0 allocatable, so usage makes it negative
    del node["status"]["allocatable"]["cpu"]
    zero_cpu = build_pod("z", 0, 0)
    assert node_fit_failure(zero_cpu, node, []) is None
    assert node_fit_failure(zero_cpu, node, [build_pod("busy", 100, 0, "n")]) == "insufficient cpu"
    # no capacity fallback in NodeFit: without allocatable there is no pod slot
    bare = build_node("n", 1000, 1000, 10)
    del bare["status"]["allocatable"]
    assert node_fit_failure(build_pod("p", 0, 0), bare, []) == "insufficient pods"


def test_requested_overrides_the_listed_pods():
    node = build_node("n", 1000, 1000, 10)
    pod = build_pod("p", 600, 0)
    assert node_fit_failure(pod, node, []) is None
    assert node_fit_failure(pod, node, [], requested={"cpu": 500, "pods": 1}) == "insufficient cpu"
    assert node_fit_failure(pod, node, [build_pod("x", 500, 0, "n")], requested={"pods": 1}) is None


def anti_term(
    selector: Json | None, topology: str = "region", namespaces: list[str] | None = None, **extra: Any
) -> Json:
    out: Json = {"topologyKey": topology, **extra}
    if selector is not None:
        out["labelSelector"] = selector
    if namespaces is not None:
        out["namespaces"] = namespaces
    return out


def with_anti_terms(pod: Json, *terms_: Json, preferred_terms: list[Json] | None = None) -> Json:
    anti: Json = {"requiredDuringSchedulingIgnoredDuringExecution": list(terms_)}
    if preferred_terms is not None:
        anti["preferredDuringSchedulingIgnoredDuringExecution"] = preferred_terms
    pod["spec"]["affinity"] = {"podAntiAffinity": anti}
    return pod


def labeled_pod(name: str, namespace: str = "default", phase: str | None = None, **labels: str) -> Json:
    pod = build_pod(name, 0, 0, "node", namespace)
    pod["metadata"]["labels"] = labels
    if phase:
        pod["status"]["phase"] = phase
    return pod


MATCH_FOO = {"matchLabels": {"app": "foo"}}
CONFLICT = "pod matches inter-pod anti-affinity rule of other pod on node"

ANTI = [
    ("same namespace, matching labels", [anti_term(MATCH_FOO)], [labeled_pod("o", app="foo")], CONFLICT),
    (
        "term namespaces replace the pod's own",
        [anti_term(MATCH_FOO, namespaces=["other"])],
        [labeled_pod("o", app="foo")],
        None,
    ),
    (
        "term namespaces",
        [anti_term(MATCH_FOO, namespaces=["other", "x"])],
        [labeled_pod("o", "other", app="foo")],
        CONFLICT,
    ),
    (
        "namespaceSelector is ignored",
        [anti_term(MATCH_FOO, namespaceSelector={})],
        [labeled_pod("o", "other", app="foo")],
        None,
    ),
    ("terminal pods do not count", [anti_term(MATCH_FOO)], [labeled_pod("o", phase="Failed", app="foo")], None),
    (
        "a pod with the candidate's name is skipped",
        [anti_term(MATCH_FOO)],
        [labeled_pod("p", "other", app="foo")],
        None,
    ),
    ("a nil selector matches nothing", [anti_term(None)], [labeled_pod("o", app="foo")], None),
    ("an empty selector matches every pod", [anti_term({})], [labeled_pod("o")], CONFLICT),
    (
        "the node must carry the topology key",
        [anti_term(MATCH_FOO, topology="zone")],
        [labeled_pod("o", app="foo")],
        None,
    ),
    (
        "any term may conflict",
        [anti_term(MATCH_FOO, topology="zone"), anti_term({"matchLabels": {"app": "bar"}})],
        [labeled_pod("o", app="foo"), labeled_pod("o2", app="bar")],
        CONFLICT,
    ),
    (
        "an invalid selector fails even without pods",
        [anti_term({"matchExpressions": [{"key": "app", "operator": "In"}]})],
        [],
        "pod anti-affinity has an invalid label selector",
    ),
]


@pytest.mark.parametrize(("terms_", "others", "error"), [c[1:] for c in ANTI], ids=[c[0] for c in ANTI])
def test_node_fit_anti_affinity(terms_, others, error):
    node = build_node("node", 64000, 128 * GB, 10, region="main-region")
    pod = with_anti_terms(build_pod("p", 0, 0, "elsewhere"), *terms_)
    assert node_fit_failure(pod, node, others) == error


def test_preferred_anti_affinity_and_other_pods_terms_are_ignored():
    node = build_node("node", 64000, 128 * GB, 10, region="main-region")
    preferred_only = with_anti_terms(
        build_pod("p", 0, 0), preferred_terms=[{"weight": 1, "podAffinityTerm": anti_term({})}]
    )
    assert node_fit_failure(preferred_only, node, [labeled_pod("o", app="foo")]) is None
    # the pod already on the node declares anti-affinity against the candidate: NodeFit does not look at it
    hostile = with_anti_terms(labeled_pod("o"), anti_term({"matchLabels": {"app": "candidate"}}))
    candidate_pod = build_pod("p", 0, 0)
    candidate_pod["metadata"]["labels"] = {"app": "candidate"}
    assert node_fit_failure(candidate_pod, node, [hostile]) is None


def test_pod_fits_any_node_includes_its_own_node():
    full = build_node("full", 100, 100, 1)
    pod = build_pod("p", 5000, 5000, "full")
    pods_by_node = lister(pod)
    assert pod_fits_any_node(pod, [full], pods_by_node)
    assert not pod_fits_any_other_node(pod, [full], pods_by_node)
    roomy = build_node("roomy", 8000, 8000, 10)
    assert pod_fits_any_other_node(pod, [full, roomy], pods_by_node)
    assert not pod_fits_any_node(pod, [], pods_by_node)


def test_pods_are_listed_only_when_needed():
    calls: list[str] = []

    def pods_by_node(name: str) -> list[Json]:
        calls.append(name)
        return []

    own = build_node("own", 100, 100, 10)
    cordoned = build_node("cordoned", 8000, 8000, 10)
    cordoned["spec"]["unschedulable"] = True
    pod = build_pod("p", 0, 0, "own")
    assert pod_fits_any_node(pod, [cordoned, own], pods_by_node)
    assert calls == []  # the cordoned node fails first; the own node skips resources and has no anti-affinity
    other = build_node("other", 8000, 8000, 10)
    assert pod_fits_any_other_node(pod, [own, other], pods_by_node)
    assert calls == ["other"]
    calls.clear()
    assert pod_fits_any_other_node(pod, [other], pods_by_node, requested_by_node=lambda name: {"pods": 0})
    assert calls == []


def test_module_exports_exist():
    for name in nodeutil.__all__:
        assert hasattr(nodeutil, name), name
