"""Decisions per release (:mod:`desched.executor.releases`): upstream's test tables at the older tags, each modelled
change's older decision next to its newer one, the v0.30 profile skip (in a cycle, in ``desched simulate``, over
cycles of a real run) and the docs table.

Upstream's tables of ``node_taint_test.go`` and ``toomanyrestarts_test.go`` are the same cases with the same counts at
v0.33.0 and v0.36.0 (only their Go layout changed), so the ported v0.36 tables run again at v0.33. The
TopologySpread case that came with the fit order (``topologyspreadconstraint_test.go``, fbf11df, first in v0.34.0)
is checked at both sides. NodeFit's tables of ``node_test.go`` at v0.29.0 (TestPodFitsAnyOtherNode's 12 cases,
TestNodeFit's 2) run at v0.27 and v0.29, and the anti-affinity cases c80556f added on both sides of v0.30, through
the fit index and the scan oracle; each caller of NodeFit (DefaultEvictor nodeFit, RemovePodsViolatingNodeAffinity,
topologyBalanceNodeFit) shows the difference in a cycle.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from desched.cli import main
from desched.executor import nodefit
from desched.executor.cluster import Cluster
from desched.executor.evictions import Limits, PodEvictor
from desched.executor.framework import prepare_policy, run_cycle
from desched.executor.nodefit import FitIndex, ScanFit, node_set
from desched.executor.nodeutil import node_fit_failure
from desched.executor.releases import CHANGES, EVICTOR_INDEX_CONFLICT, ReleaseDecisions, markdown, skipped_profiles
from desched.policy.model import Policy, decode
from tests.executor import test_nodeaffinity as affinity
from tests.executor import test_nodetaints as taints
from tests.executor import test_nodeutil as nodeutil_cases
from tests.executor import test_toomanyrestarts as restarts
from tests.executor import test_topologyspread as spread
from tests.executor.builders import NOW, build_node, build_pod, run_plugin, set_rs_owner

Json = dict[str, Any]
V30, V31, V33, V34 = ReleaseDecisions(30), ReleaseDecisions(31), ReleaseDecisions(33), ReleaseDecisions(34)
ROOT = Path(__file__).resolve().parents[2]
HOSTNAME = "kubernetes.io/hostname"


@pytest.mark.parametrize("case", taints.UPSTREAM, ids=lambda case: case.description)
def test_node_taints_upstream_table_at_v0_33(case: taints.Case) -> None:
    evicted = run_plugin(
        taints.PLUGIN, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits, release=V33
    )
    assert len(evicted) == case.expected, evicted
    assert set(evicted) <= case.among


@pytest.mark.parametrize(("release", "evicted"), [(V33, ["failed", "succeeded", "running"]), (V34, ["running"])])
def test_node_taints_list_terminal_pods_up_to_v0_33(release: ReleaseDecisions, evicted: list[str]) -> None:
    pods = [taints.pod(name, "n1") for name in ("failed", "succeeded", "running")]
    pods[0]["status"]["phase"] = "Failed"
    pods[1]["status"]["phase"] = "Succeeded"
    nodes = [taints.node("n1", taints.taint(1)), taints.node("n2")]
    assert run_plugin(taints.PLUGIN, {}, nodes, pods, release=release) == evicted


@pytest.mark.parametrize("case", restarts.UPSTREAM_CASES, ids=lambda case: case.description)
def test_too_many_restarts_upstream_table_at_v0_33(case: restarts.Case) -> None:
    evicted = run_plugin(
        restarts.NAME,
        case.args,
        case.nodes,
        case.pods,
        evictor={"nodeFit": case.node_fit},
        limits=case.limits,
        release=V33,
    )
    assert len(evicted) == case.expected, evicted  # upstream asserts counts; which pods depends on the order


@pytest.mark.parametrize(("release", "evicted"), [(V33, ["a-10", "b-40"]), (V34, ["a-30", "b-40"])])
def test_too_many_restarts_sorts_by_restarts_from_v0_34(release: ReleaseDecisions, evicted: list[str]) -> None:
    nodes = [restarts.node("node1"), restarts.node("node2")]
    limits = Limits(per_node=1)
    pods = restarts.two_node_pods()
    assert run_plugin(restarts.NAME, restarts.threshold(1, False), nodes, pods, limits=limits, release=release) == (
        evicted
    )


FIT_ORDER_CASE = next(
    case for case in spread.TOPOLOGY_SPREAD_CONSTRAINT if case.names == ["pod-0"] and "[1, 1, 1]" in case.name
)


@pytest.mark.parametrize("release", [ReleaseDecisions(32), V33], ids=repr)
@pytest.mark.parametrize(
    "case",
    [case for case in spread.TOPOLOGY_SPREAD_CONSTRAINT if case is not FIT_ORDER_CASE],
    ids=lambda case: case.name,
)
def test_topology_spread_upstream_table_at_v0_32_and_v0_33(case: spread.Case, release: ReleaseDecisions) -> None:
    """The v0.33.0 table is the v0.36 one without the fit-order case, which v0.33 answers otherwise (below); v0.32,
    whose domain sort ignores priority (tests/executor/test_release_affinity_spread.py), gives it the same counts."""
    evicted = spread.run(case, release=release)
    assert len(evicted) == case.expected
    assert set(case.names or []) <= set(evicted)


@pytest.mark.parametrize(("release", "evicted"), [(V33, []), (V34, ["pod-0"])])
def test_topology_spread_fit_order_from_v0_34(release: ReleaseDecisions, evicted: list[str]) -> None:
    """Domain A holds pod-0 (fits zoneC) and pod-1 (pinned to zoneA). Up to v0.33 the last pod of the sorted domain,
    pod-1, is taken and then dropped by topologyBalanceNodeFit; from v0.34 the pod that fits is moved last first."""
    case = FIT_ORDER_CASE
    pods = spread.create_pods(case.groups)
    assert run_plugin(
        spread.PLUGIN, {}, case.nodes, pods, extra=[spread.NAMESPACE], defaults=True, release=release
    ) == (evicted)


def profile(name: str, min_replicas: int, namespace: str) -> Json:
    return {
        "name": name,
        "pluginConfig": [
            {"name": "DefaultEvictor", "args": {"minReplicas": min_replicas}},
            {"name": "PodLifeTime", "args": {"maxPodLifeTimeSeconds": 3600, "namespaces": {"include": [namespace]}}},
        ],
        "plugins": {"deschedule": {"enabled": ["PodLifeTime"]}},
    }


def two_profile_policy(*min_replicas: int) -> Json:
    profiles = [profile(name, replicas, name) for name, replicas in zip(("a", "b", "c"), min_replicas, strict=False)]
    return {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy", "profiles": profiles}


def owned_pods(namespace: str, count: int = 3) -> list[Json]:
    """``count`` pods of one ReplicaSet in ``namespace``, two days old, on node n1."""
    pods = []
    for index in range(count):
        pod = set_rs_owner(build_pod(f"{namespace}-{index}", 100, 0, "n1"), f"rs-{namespace}", f"uid-{namespace}")
        pod["metadata"]["namespace"] = namespace
        pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
        pods.append(pod)
    return pods


def cluster_objects(*namespaces: str) -> list[Json]:
    nodes = [build_node("n1", 4000, 8 * 2**30, 110), build_node("n2", 4000, 8 * 2**30, 110)]
    return [*nodes, *(pod for namespace in namespaces for pod in owned_pods(namespace))]


def cycle(policy: Json, release: ReleaseDecisions, indexed: bool = False) -> tuple[set[str], list[str]]:
    """The namespaces a cycle of ``policy`` evicts from, and its errors as written."""
    prepared = prepare_policy(decode(policy))
    cluster = Cluster.from_objects(cluster_objects("a", "b", "c"))
    evictor = PodEvictor(cluster, Limits())
    result = run_cycle(prepared, cluster, NOW, evictor, release=release, indexed=indexed)
    return {eviction.namespace for eviction in evictor.evictions}, [str(error) for error in result.errors]


def test_v0_30_skips_later_profiles_with_min_replicas() -> None:
    policy = two_profile_policy(2, 0, 3)
    evicted, errors = cycle(policy, V30)
    assert evicted == {"a", "b"}
    assert len(errors) == 1 and errors[0].startswith("profile c: plugin DefaultEvictor: indexer conflict")
    assert cycle(policy, V31) == ({"a", "b", "c"}, [])


def test_v0_30_skips_every_min_replicas_profile_once_the_index_exists() -> None:
    evicted, errors = cycle(two_profile_policy(2, 0, 3), V30, indexed=True)
    assert evicted == {"b"}
    assert [error.split(":")[0] for error in errors] == ["profile a", "profile c"]
    assert cycle(two_profile_policy(2, 0, 3), V31, indexed=True)[0] == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("min_replicas", "skipped"), [((2, 2), ["b"]), ((1, 2), []), ((2,), []), ((0, 2, 2), ["c"]), ((2, 1, 5), ["c"])]
)
def test_skipped_profiles(min_replicas: tuple[int, ...], skipped: list[str]) -> None:
    policy: Policy = prepare_policy(decode(two_profile_policy(*min_replicas)))
    assert list(skipped_profiles(policy.profiles, V30, indexed=False)) == skipped
    for release in (ReleaseDecisions(29), V31, ReleaseDecisions()):
        assert skipped_profiles(policy.profiles, release, indexed=True) == {}


def simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Json, str]:
    policy_file, snapshot_file = tmp_path / "policy.json", tmp_path / "snapshot.json"
    policy_file.write_text(json.dumps(two_profile_policy(2, 2)))
    snapshot_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects("a", "b")}))
    arguments = ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot_file), "--format", "json"]
    code = main([*arguments, "--now", NOW.isoformat(), *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


@pytest.mark.parametrize(("target", "namespaces"), [("v0.30", {"a"}), ("v0.31", {"a", "b"}), (None, {"a", "b"})])
def test_simulate_predicts_the_v0_30_profile_skip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str | None, namespaces: set[str]
) -> None:
    code, document, err = simulate(tmp_path, capsys, *(["--target-version", target] if target else []))
    assert code == 0
    assert {eviction["namespace"] for eviction in document["evictions"]} == namespaces
    assert ("indexer conflict" in err) == (target == "v0.30")


def test_simulate_forecast_predicts_the_skip_in_every_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, document, _ = simulate(tmp_path, capsys, "--target-version", "v0.30", "--samples", "4", "--jobs", "1")
    assert code == 0
    assert {eviction["namespace"] for eviction in document["evictions"]} == {"a"}


def test_release_answers_only_modelled_rows_in_their_span() -> None:
    modelled = [change for change in CHANGES if not change.unmodelled]
    assert {change.key for change in modelled} >= {EVICTOR_INDEX_CONFLICT}
    for change in CHANGES:
        for minor in range(27, 37):
            assert ReleaseDecisions(minor).older(change.key) == (
                not change.unmodelled and change.first <= minor <= change.last
            )
    assert all(change.first <= change.last < 36 for change in CHANGES)


def test_docs_hold_the_table() -> None:
    assert markdown() in (ROOT / "docs" / "executor-semantics.md").read_text(encoding="utf-8")


def test_the_lint_rule_names_the_release_of_the_table_row() -> None:
    from desched.linter.rules import ds211_profile_skipped_at_v030 as rule

    row = next(change for change in CHANGES if change.key == EVICTOR_INDEX_CONFLICT)
    assert row.first == row.last == rule.RELEASE


@pytest.mark.parametrize(("target", "findings"), [("v0.30", ["b", "c"]), ("v0.31", []), ("v0.36", [])])
def test_lint_reports_the_v0_30_profile_skip_at_the_profile(tmp_path: Path, target: str, findings: list[str]) -> None:
    from desched.linter.engine import Settings, lint_file

    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(two_profile_policy(2, 3, 4), indent=1))
    result = lint_file(str(policy_file), Settings(target=int(target[3:])))
    hits = [finding for finding in result.findings if finding.rule == "DS211"]
    assert [finding.path for finding in hits] == [f"/profiles/{index}" for index in range(1, 1 + len(findings))]
    assert all(finding.severity == "warning" for finding in hits)
    assert [finding.message.split('"')[1] for finding in hits] == findings


@pytest.mark.parametrize(("target", "panels"), [("v0.30", ["a"]), ("v0.31", ["a", "b"])])
def test_the_page_shows_no_panel_for_a_skipped_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, panels: list[str]
) -> None:
    utilization = {"name": "LowNodeUtilization", "args": {"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}}
    policy = two_profile_policy(2, 2)
    for entry in policy["profiles"]:
        entry["pluginConfig"].append(utilization)
        entry["plugins"]["balance"] = {"enabled": ["LowNodeUtilization"]}
    policy_file, snapshot_file, page = tmp_path / "policy.json", tmp_path / "snapshot.json", tmp_path / "page.html"
    policy_file.write_text(json.dumps(policy))
    snapshot_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects("a", "b")}))
    arguments = ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot_file), "--html", str(page)]
    assert main([*arguments, "--now", NOW.isoformat(), "--target-version", target]) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert [name for name in ("a", "b") if f"{name} / LowNodeUtilization" in text] == panels


# --- nodefit-anti-affinity: NodeFit checks the pod's required pod anti-affinity from v0.30 on ----------------------

FIT_RELEASES = [ReleaseDecisions(27), ReleaseDecisions(29), V30, ReleaseDecisions()]
# TestPodFitsAnyOtherNode at v0.29.0: the first 12 cases of the v0.36 table (the three four-node cases came later)
ANY_OTHER_AT_V0_29 = nodeutil_cases.ANY_OTHER[:12]
# TestNodeFit at v0.29.0: its two resource cases; c80556f (first in v0.30.1) added the anti-affinity cases after them
NODE_FIT_AT_V0_29 = nodeutil_cases.NODE_FIT[:2]
ANTI_AFFINITY_CASES = nodeutil_cases.NODE_FIT[2:6]


def fit_answers(
    monkeypatch: pytest.MonkeyPatch, nodes: list[Json], pods: list[Json], pod_name: str, release: ReleaseDecisions,
    *, skip_own: bool,
) -> tuple[bool, bool]:  # fmt: skip
    """Whether the pod named ``pod_name`` fits some node of ``nodes`` (not its own when ``skip_own``), as
    ``release`` asks the index and the scan oracle; the index answers itself even for these few nodes."""
    monkeypatch.setattr(nodefit, "_SCAN_BELOW", 0)
    objects = [{**node, "kind": "Node"} for node in nodes] + [{**pod, "kind": "Pod"} for pod in pods]
    cluster = Cluster.from_objects(copy.deepcopy(objects))
    pod = next(found for found in cluster.pods.values() if found["metadata"].get("name") == pod_name)
    among = node_set(cluster.nodes)
    index = FitIndex(cluster, release.fit_anti_affinity)
    scan = ScanFit(cluster, release.fit_anti_affinity)
    return index.fits_any(pod, among, skip_own=skip_own), scan.fits_any(pod, among, skip_own=skip_own)


@pytest.mark.parametrize("release", [ReleaseDecisions(27), ReleaseDecisions(29)], ids=repr)
@pytest.mark.parametrize(
    ("pod", "nodes", "pods_on_nodes", "success"),
    [case[1:] for case in ANY_OTHER_AT_V0_29],
    ids=[case[0][:60] for case in ANY_OTHER_AT_V0_29],
)
def test_pod_fits_any_other_node_upstream_table_at_v0_29(
    monkeypatch: pytest.MonkeyPatch, release: ReleaseDecisions, pod: Json, nodes: list[Json], pods_on_nodes: list[Json],
    success: bool,
) -> None:  # fmt: skip
    """TestPodFitsAnyOtherNode (node_test.go at v0.29.0): all 12 cases, through the index and the scan."""
    pods = [*pods_on_nodes, pod]
    assert fit_answers(monkeypatch, nodes, pods, "p1", release, skip_own=True) == (success, success)


@pytest.mark.parametrize("release", FIT_RELEASES, ids=repr)
@pytest.mark.parametrize(
    ("pod", "node", "pods_on_node", "error"),
    [case[1:] for case in NODE_FIT_AT_V0_29 + ANTI_AFFINITY_CASES],
    ids=[case[0][:70] for case in NODE_FIT_AT_V0_29 + ANTI_AFFINITY_CASES],
)
def test_node_fit_checks_anti_affinity_from_v0_30(
    monkeypatch: pytest.MonkeyPatch, release: ReleaseDecisions, pod: Json, node: Json, pods_on_node: list[Json],
    error: str | None,
) -> None:  # fmt: skip
    """TestNodeFit at v0.29.0 (its two cases) and the anti-affinity cases of v0.30.1: up to v0.29 a pod whose
    anti-affinity matches a pod on the node still fits it."""
    if release.minor <= 29 and error is not None and "anti-affinity" in error:
        error = None
    on_node = [p for p in [pod, *pods_on_node] if p["spec"]["nodeName"] == node["metadata"]["name"]]
    anti_affinity = release.fit_anti_affinity
    assert node_fit_failure(pod, node, on_node, anti_affinity=anti_affinity) == error
    name = pod["metadata"]["name"]
    fits = error is None
    assert fit_answers(monkeypatch, [node], [*pods_on_node, pod], name, release, skip_own=False) == (fits, fits)


def anti_web(name: str, node_name: str) -> Json:
    """A pod of app ``web`` whose required anti-affinity keeps it off a host with another ``web`` pod."""
    pod = set_rs_owner(build_pod(name, 100, 0, node_name), "web", "uid-web")
    pod["metadata"]["labels"] = {"app": "web"}
    pod["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOSTNAME}
    pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return pod


def host(name: str, **labels: str) -> Json:
    node = build_node(name, 4000, 8 * 2**30, 110)
    node["metadata"]["labels"] = {HOSTNAME: name, **labels}
    return node


@pytest.mark.parametrize(
    ("release", "evicted"), [(ReleaseDecisions(29), ["mover"]), (V30, []), (ReleaseDecisions(), [])]
)
def test_node_affinity_fit_meets_anti_affinity_from_v0_30(release: ReleaseDecisions, evicted: list[str]) -> None:
    """``mover`` violates its required node affinity on n1; n2, the only node it matches, runs a ``web`` pod its
    anti-affinity refuses: up to v0.29 ``PodFitsAnyNode`` still finds n2."""
    mover = anti_web("mover", "n1")
    mover["spec"]["affinity"]["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a"]}]}]}}  # fmt: skip
    nodes, pods = [host("n1"), host("n2", pool="a")], [mover, anti_web("web-2", "n2")]
    args = {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]}
    assert run_plugin("RemovePodsViolatingNodeAffinity", args, nodes, pods, release=release) == evicted


@pytest.mark.parametrize(("release", "evicted"), [(ReleaseDecisions(29), 1), (V30, 0), (ReleaseDecisions(), 0)])
def test_topology_spread_fit_meets_anti_affinity_from_v0_30(release: ReleaseDecisions, evicted: int) -> None:
    """Zone A holds the three pods of a spread constraint (maxSkew 1), zone B none; B's only host runs a pod their
    anti-affinity refuses, so topologyBalanceNodeFit moves one pod up to v0.29 and none from v0.30."""
    spread_term = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                   "labelSelector": {"matchLabels": {"app": "spread"}}}  # fmt: skip
    anti_term = {"labelSelector": {"matchLabels": {"app": "blocker"}}, "topologyKey": HOSTNAME}
    pods = []
    for index in range(3):
        pod = set_rs_owner(build_pod(f"spread-{index}", 100, 0, "a1"), "spread", "uid-spread")
        pod["metadata"]["labels"] = {"app": "spread"}
        pod["spec"]["topologySpreadConstraints"] = [spread_term]
        pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti_term]}}
        pods.append(pod)
    blocker = build_pod("blocker", 100, 0, "b1")
    blocker["metadata"]["labels"] = {"app": "blocker"}
    nodes = [host("a1", zone="A"), host("b1", zone="B")]
    plugin = "RemovePodsViolatingTopologySpreadConstraint"
    assert len(run_plugin(plugin, {}, nodes, [*pods, blocker], defaults=True, release=release)) == evicted


def web_hosts(count: int) -> list[Json]:
    """``count`` hosts, each running one old ``web`` pod: every pod's anti-affinity refuses every other host."""
    return [*(host(f"n{index}") for index in range(count)), *(anti_web(f"web-{index}", f"n{index}") for index in
                                                              range(count))]  # fmt: skip


@pytest.mark.parametrize("strategy", ["index", "scan"])
@pytest.mark.parametrize(("target", "evicted"), [("v0.29", 17), ("v0.30", 0), ("v0.36", 0)])
def test_simulate_node_fit_meets_anti_affinity_from_v0_30(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, strategy: str, target: str,
    evicted: int,
) -> None:  # fmt: skip
    """PodLifeTime with the DefaultEvictor's nodeFit on 17 hosts (past the index's scan threshold) of one ``web`` pod
    each: v0.29's NodeFit finds room on every other host, v0.30's anti-affinity check none."""
    monkeypatch.setattr(Cluster, "fit_strategy", strategy)
    policy = two_profile_policy(0)
    policy["profiles"][0]["pluginConfig"][0]["args"] = {"nodeFit": True}
    policy["profiles"][0]["pluginConfig"][1]["args"]["namespaces"]["include"] = ["default"]
    policy_file, snapshot_file = tmp_path / "policy.json", tmp_path / "snapshot.json"
    policy_file.write_text(json.dumps(policy))
    snapshot_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": web_hosts(17)}))
    arguments = ["simulate", "--policy", str(policy_file), "--cluster", str(snapshot_file), "--format", "json"]
    assert main([*arguments, "--now", NOW.isoformat(), "--target-version", target]) == 0
    document = json.loads(capsys.readouterr().out)
    assert len(document["evictions"]) == evicted


# --- RemovePodsViolatingNodeAffinity at v0.27: `!PodFitsCurrentNode`, no preferred type ----------------------------

V27, V28 = ReleaseDecisions(27), ReleaseDecisions(28)


@pytest.mark.parametrize(
    "case",
    [case for case in affinity.UPSTREAM if affinity.PREFERRED not in case.types],
    ids=lambda case: case.description,
)
def test_node_affinity_upstream_required_cases_at_v0_27(case: affinity.Case) -> None:
    """v0.27.0's table holds only the required cases; every one decides the same at v0.27."""
    evicted = run_plugin(
        affinity.PLUGIN, {"nodeAffinityType": case.types}, case.nodes, case.pods, case.evictor, case.limits, release=V27
    )
    assert len(evicted) == case.expected, evicted


def _misplaced(where: str) -> list[Json]:
    """A pod whose required affinity its node matches, on a node it does not fit otherwise (``where``)."""
    current = affinity.labelled("current")
    if where == "cordoned":
        current["spec"]["unschedulable"] = True
    elif where == "tainted":
        current["spec"]["taints"] = [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]
    elif where == "prefer-no-schedule":
        current["spec"]["taints"] = [{"key": "maintenance", "value": "yes", "effect": "PreferNoSchedule"}]
    return [current, affinity.labelled("other")]


@pytest.mark.parametrize("where", ["cordoned", "tainted", "prefer-no-schedule", "fits"])
@pytest.mark.parametrize("release", [V27, V28, ReleaseDecisions()], ids=repr)
def test_node_affinity_evicts_a_pod_that_does_not_fit_its_node_only_at_v0_27(
    release: ReleaseDecisions, where: str
) -> None:
    pods = affinity.pods_on("current", affinity.REQUIRED)
    evicted = run_plugin(
        affinity.PLUGIN, {"nodeAffinityType": [affinity.REQUIRED]}, _misplaced(where), pods, release=release
    )
    moved = release is V27 and where in ("cordoned", "tainted")  # NodeFit's taint check reads NoSchedule/NoExecute
    assert evicted == (["podWithNodeAffinity"] if moved else [])


@pytest.mark.parametrize(("release", "evicted"), [(V27, []), (V28, ["podWithNodeAffinity"])], ids=repr)
def test_node_affinity_acts_on_the_preferred_type_from_v0_28(release: ReleaseDecisions, evicted: list[str]) -> None:
    nodes = [affinity.node(affinity.WITHOUT_LABELS), affinity.labelled()]
    pods = affinity.pods_on(affinity.WITHOUT_LABELS, affinity.PREFERRED)
    args = {"nodeAffinityType": [affinity.PREFERRED]}
    assert run_plugin(affinity.PLUGIN, args, nodes, pods, release=release) == evicted
