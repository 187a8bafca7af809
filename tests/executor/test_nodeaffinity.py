"""RemovePodsViolatingNodeAffinity: upstream's ``TestRemovePodsViolatingNodeAffinity`` (all 22 cases) as data, plus
the behaviour of docs/executor-semantics.md#84-removepodsviolatingnodeaffinity that upstream's table does not reach.

Upstream asserts counts only; every upstream case that evicts evicts ``podWithNodeAffinity`` (the other two pods have
no affinity), which ``among`` checks too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from desched.executor.evictions import Limits, Outcome, SameCycle
from desched.plugins import REGISTRY
from tests.executor.builders import build_node, build_pod, run_plugin, set_normal_owner

Json = dict[str, Any]
PLUGIN = "RemovePodsViolatingNodeAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
INVALID = "requiredDuringSchedulingRequiredDuringExecution"
LABEL_KEY, LABEL_VALUE = "kubernetes.io/desiredNode", "yes"
WITH_LABELS, WITHOUT_LABELS, UNSCHEDULABLE = "nodeWithLabels", "nodeWithoutLabels", "unschedulableNodeWithLabels"
DESIRED = {"matchExpressions": [{"key": LABEL_KEY, "operator": "In", "values": [LABEL_VALUE]}]}


def node(name: str, labels: dict[str, str] | None = None, unschedulable: bool = False) -> Json:
    built = build_node(name, 2000, 3000, 10)
    built["metadata"]["labels"] = dict(labels or {})
    if unschedulable:
        built["spec"]["unschedulable"] = True
    return built


def labelled(name: str = WITH_LABELS) -> Json:
    return node(name, {LABEL_KEY: LABEL_VALUE})


def unschedulable_labelled() -> Json:
    return node(UNSCHEDULABLE, {LABEL_KEY: LABEL_VALUE}, unschedulable=True)


def affinity(kind: str, term: Json = DESIRED, weight: int = 10) -> Json:
    if kind == REQUIRED:
        return {REQUIRED: {"nodeSelectorTerms": [term]}}
    if kind == PREFERRED:
        return {PREFERRED: [{"weight": weight, "preference": term}]}
    return {}


def pod(
    name: str,
    node_name: str,
    node_affinity: Json | None = None,
    terminating: bool = False,
    node_selector: dict[str, str] | None = None,
    owned: bool = True,
) -> Json:
    built = build_pod(name, 100, 0, node_name)
    if owned:
        set_normal_owner(built)
    if node_selector is not None:
        built["spec"]["nodeSelector"] = dict(node_selector)
    if node_affinity is not None:
        built["spec"]["affinity"] = {"nodeAffinity": node_affinity}
    if terminating:
        built["metadata"]["deletionTimestamp"] = "1970-01-01T00:00:00Z"
    return built


def pods_on(node_name: str, kind: str, terminating: bool = False) -> list[Json]:
    """Upstream's ``addPodsToNode``: one pod with node affinity of ``kind``, two without."""
    return [
        pod("podWithNodeAffinity", node_name, affinity(kind), terminating),
        pod("pod1", node_name, terminating=terminating),
        pod("pod2", node_name, terminating=terminating),
    ]


@dataclass
class Case:
    description: str
    types: list[str]
    nodes: list[Json]
    pods: list[Json]
    expected: int
    limits: Limits = field(default_factory=Limits)
    evictor: Json = field(default_factory=dict)
    among: set[str] = field(default_factory=lambda: {"podWithNodeAffinity"})


def both(
    description: str,
    expected: int,
    nodes: list[Json],
    on: str = WITHOUT_LABELS,
    terminating: bool = False,
    **options: Any,
) -> list[Case]:
    """Upstream writes most cases twice, once per affinity type."""
    return [
        Case(f"{description} [{label}]", [kind], nodes, pods_on(on, kind, terminating), expected, **options)
        for label, kind in (("required affinity", REQUIRED), ("preferred affinity", PREFERRED))
    ]


def two_nodes() -> list[Json]:
    return [node(WITHOUT_LABELS), labelled()]


AVAILABLE = "Pod is scheduled on node without matching labels, another schedulable node available"
UPSTREAM = [
    Case(
        "Invalid Affinity type, should not evict any pods", [INVALID], two_nodes(), pods_on(WITHOUT_LABELS, INVALID), 0
    ),
    *both("Pod is correctly scheduled on node, no eviction expected", 0, [labelled()], on=WITH_LABELS),
    Case(f"{AVAILABLE}, should be evicted", [REQUIRED], two_nodes(), pods_on(WITHOUT_LABELS, REQUIRED), 1),
    Case(
        f"{AVAILABLE} with better fit, should be evicted",
        [PREFERRED],
        two_nodes(),
        pods_on(WITHOUT_LABELS, PREFERRED),
        1,
    ),
    *both(f"{AVAILABLE}, maxPodsToEvictPerNode set to 1, should be evicted", 1, two_nodes(), limits=Limits(per_node=1)),
    *both(
        f"{AVAILABLE}, maxPodsToEvictPerNode set to 0, should be not evicted", 0, two_nodes(), limits=Limits(per_node=0)
    ),
    *both(
        f"{AVAILABLE}, maxPodsToEvictPerNode set to 1, no pod evicted since pod terminating",
        0,
        two_nodes(),
        terminating=True,
        limits=Limits(per_node=1),
    ),
    Case(
        f"{AVAILABLE}, maxNoOfPodsToEvictPerNamespace set to 1, should be evicted [required affinity]",
        [REQUIRED],
        two_nodes(),
        pods_on(WITHOUT_LABELS, REQUIRED),
        1,
        limits=Limits(per_namespace=1),
    ),
    Case(
        f"{AVAILABLE}, maxNoOfPodsToEvictTotal set to 0, should not be evicted [required affinity]",
        [REQUIRED],
        two_nodes(),
        pods_on(WITHOUT_LABELS, REQUIRED),
        0,
        limits=Limits(per_namespace=1, total=0),
    ),
    Case(
        f"{AVAILABLE}, maxNoOfPodsToEvictPerNamespace set to 1, should be evicted [preferred affinity]",
        [PREFERRED],
        two_nodes(),
        pods_on(WITHOUT_LABELS, PREFERRED),
        1,
        limits=Limits(per_namespace=1),
    ),
    *both(
        f"{AVAILABLE}, maxNoOfPodsToEvictPerNamespace set to 0, should not be evicted",
        0,
        two_nodes(),
        limits=Limits(per_namespace=0),
    ),
    *both(
        f"{AVAILABLE}, maxNoOfPodsToEvictPerNamespace set to 1, no pod evicted since pod terminting",
        0,
        two_nodes(),
        terminating=True,
        limits=Limits(per_namespace=1),
    ),
    # the preferred variant holds only through the DefaultEvictor's nodeFit
    # (docs/executor-semantics.md#84-removepodsviolatingnodeaffinity)
    *both(
        "Pod is scheduled on node without matching labels, but no node where pod fits is available, should not evict",
        0,
        [node(WITHOUT_LABELS), unschedulable_labelled()],
        evictor={"nodeFit": True},
    ),
    # the pods sit on a node that is not in the cycle's node list, so they are never listed
    *both(
        "Pod is scheduled on node without matching labels, and unschedulable node where pod could fit is "
        "available, should not evict",
        0,
        [labelled(), unschedulable_labelled()],
        limits=Limits(per_node=1),
        evictor={"nodeFit": True},
    ),
]

ZONE_A = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
ZONE_B = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}

BEHAVIOUR = [
    Case(
        "preferred mode evicts even when the better node is cordoned (no nodeFit)",
        [PREFERRED],
        [node(WITHOUT_LABELS), unschedulable_labelled()],
        pods_on(WITHOUT_LABELS, PREFERRED),
        1,
    ),
    Case(
        "required mode does not evict when no node of the cycle fits the pod",
        [REQUIRED],
        [node(WITHOUT_LABELS), unschedulable_labelled()],
        pods_on(WITHOUT_LABELS, REQUIRED),
        0,
    ),
    Case(
        "a nodeSelector alone does not make a required candidate",
        [REQUIRED],
        two_nodes(),
        [pod("p", WITHOUT_LABELS, node_selector={LABEL_KEY: LABEL_VALUE})],
        0,
        among=set(),
    ),
    Case(
        "a pod matching its required affinity but not its nodeSelector violates it",
        [REQUIRED],
        [labelled(), node("c", {LABEL_KEY: LABEL_VALUE, "other": "x"})],
        [pod("p", WITH_LABELS, affinity(REQUIRED), node_selector={"other": "x"})],
        1,
        among={"p"},
    ),
    Case(
        "no eviction when the only node matching nodeSelector and affinity is missing",
        [REQUIRED],
        two_nodes(),
        [pod("p", WITH_LABELS, affinity(REQUIRED), node_selector={"other": "x"})],
        0,
        among=set(),
    ),
    # upstream's fake client keeps evicted pods, so its harness would count 2 here; in dry run the pod is gone
    Case(
        "both types listed: an evicted pod is gone for the second pass",
        [REQUIRED, PREFERRED],
        two_nodes(),
        [pod("both", WITHOUT_LABELS, {**affinity(REQUIRED), **affinity(PREFERRED)})],
        1,
        among={"both"},
    ),
    Case(
        "preferred: equal best weight elsewhere does not evict",
        [PREFERRED],
        [node("a", {"zone": "a"}), node("b", {"zone": "b"})],
        [pod("p", "a", {PREFERRED: [{"weight": 5, "preference": ZONE_A}, {"weight": 5, "preference": ZONE_B}]})],
        0,
        among=set(),
    ),
    Case(
        "preferred: weights of matching terms add up",
        [PREFERRED],
        [node("a", {"zone": "a"}), node("ab", {"zone": "b", "disk": "ssd"})],
        [
            pod(
                "p",
                "a",
                {
                    PREFERRED: [
                        {"weight": 5, "preference": ZONE_A},
                        {"weight": 3, "preference": ZONE_B},
                        {"weight": 3, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
                    ]
                },
            )
        ],
        1,
        among={"p"},
    ),
    Case(
        "a node limit moves on to the next node",
        [REQUIRED],
        [node("n1"), node("n2"), labelled()],
        [pod("a1", "n1", affinity(REQUIRED)), pod("a2", "n1", affinity(REQUIRED)), pod("b1", "n2", affinity(REQUIRED))],
        2,
        limits=Limits(per_node=1),
        among={"a1", "b1"},
    ),
    Case(
        "a total limit stops every type",
        [REQUIRED, PREFERRED],
        [node("n1"), labelled()],
        [pod("a1", "n1", affinity(REQUIRED)), pod("a2", "n1", affinity(PREFERRED))],
        1,
        limits=Limits(total=1),
        among={"a1"},
    ),
    Case(
        "pods failing Filter (bare pods) are not evicted",
        [REQUIRED],
        two_nodes(),
        [pod("bare", WITHOUT_LABELS, affinity(REQUIRED), owned=False)],
        0,
        among=set(),
    ),
    Case(
        "terminal pods are not listed",
        [REQUIRED],
        two_nodes(),
        [pod("done", WITHOUT_LABELS, affinity(REQUIRED)) | {"status": {"phase": "Succeeded"}}],
        0,
        among=set(),
    ),
]


@pytest.mark.parametrize("case", UPSTREAM + BEHAVIOUR, ids=lambda case: case.description)
def test_remove_pods_violating_node_affinity(case: Case) -> None:
    evicted = run_plugin(
        PLUGIN, {"nodeAffinityType": case.types}, case.nodes, case.pods, evictor=case.evictor, limits=case.limits
    )
    assert len(evicted) == case.expected, evicted
    assert set(evicted) <= case.among


S, NODE, TOTAL = Outcome.SUCCESS, Outcome.NODE_LIMIT, Outcome.TOTAL_LIMIT


@pytest.mark.parametrize(
    ("limits", "outcomes"), [(Limits(per_node=1), [S, NODE, S, NODE]), (Limits(total=1), [S, TOTAL, TOTAL])]
)
def test_limits_end_the_node_or_the_type(limits: Limits, outcomes: list[Outcome]) -> None:
    """A node limit ends the node; a total limit ends the current type only, so the next type tries once more."""
    recorded: list[Outcome] = []
    pods = [
        pod("a1", "n1", affinity(REQUIRED)),
        pod("a2", "n1", affinity(REQUIRED)),
        pod("a3", "n1", affinity(PREFERRED)),
        pod("a4", "n1", affinity(REQUIRED)),
        pod("b1", "n2", affinity(REQUIRED)),
    ]
    run_plugin(
        PLUGIN,
        {"nodeAffinityType": [REQUIRED, PREFERRED]},
        [node("n1"), node("n2"), labelled()],
        pods,
        limits=limits,
        outcomes=recorded,
    )
    assert recorded == outcomes


@pytest.mark.parametrize(("view", "evicted"), [(SameCycle.DRY_RUN, ["x1", "y"]), (SameCycle.REAL, ["x1"])])
def test_an_eviction_frees_room_for_later_nodes_in_a_dry_run_only(view: SameCycle, evicted: list[str]) -> None:
    """Dry run: once x1 has left the full node n1, y (on a later node) fits there; w, checked before, did not. In a
    real run x1 is still terminating on n1 and takes its room (upstream's NodeFit lists with no filter)."""
    full = labelled("n1")
    full["status"]["allocatable"]["pods"] = "2"
    zone = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]}
    pods = [
        pod("w", "n0", affinity(REQUIRED)),
        pod("x1", "n1", affinity(REQUIRED, zone)),
        pod("x2", "n1"),
        pod("y", "n2", affinity(REQUIRED)),
    ]
    nodes = [node("n0"), full, node("n2"), node("n3", {"zone": "z"})]
    assert run_plugin(PLUGIN, {"nodeAffinityType": [REQUIRED]}, nodes, pods, view=view) == evicted


def test_namespace_and_label_filters() -> None:
    pods = pods_on(WITHOUT_LABELS, REQUIRED)
    assert (
        run_plugin(PLUGIN, {"nodeAffinityType": [REQUIRED], "namespaces": {"exclude": ["default"]}}, two_nodes(), pods)
        == []
    )
    selector = {"matchLabels": {"app": "x"}}
    assert run_plugin(PLUGIN, {"nodeAffinityType": [REQUIRED], "labelSelector": selector}, two_nodes(), pods) == []
    pods[0]["metadata"]["labels"] = {"app": "x"}
    assert run_plugin(PLUGIN, {"nodeAffinityType": [REQUIRED], "labelSelector": selector}, two_nodes(), pods) == [
        "podWithNodeAffinity"
    ]


def test_defaults_change_nothing_and_copy() -> None:
    args = {"nodeAffinityType": [REQUIRED]}
    plugin = REGISTRY["RemovePodsViolatingNodeAffinity"]
    assert plugin.defaults(plugin.decode(args)) == plugin.decode(args)
