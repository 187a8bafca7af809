"""The node-fit index answers exactly as the plain scan does (desched.executor.nodefit).

Two differential tests: whole ``desched simulate`` cycles on generated clusters of both shapes (packed, and nodes in
pools with selectors, affinity, taints and tolerations) with each strategy, nodeFit on and off, compared byte for
byte; and a property test that asks the index and the scan the same questions on random clusters with pools, taints,
selectors and node affinity while pods leave, as they do during a cycle, and come back, as between forecast samples.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.clusters import generate
from bench.simulate import ALL_BUT_HNU
from desched.cli import main
from desched.executor.cluster import Cluster
from desched.executor.nodefit import FitIndex, ScanFit, node_set

NODE_FIT = ALL_BUT_HNU.replace(
    "args: {evictLocalStoragePods: true}", "args: {evictLocalStoragePods: true, nodeFit: true}"
)
TOPOLOGY_FIT = NODE_FIT.replace(
    "  - name: RemovePodsViolatingTopologySpreadConstraint\n",
    "  - name: RemovePodsViolatingTopologySpreadConstraint\n    args: {topologyBalanceNodeFit: true}\n",
)


def _simulate(policy: Path, snapshot: Path, strategy: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(Cluster, "fit_strategy", strategy)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["simulate", "--policy", str(policy), "--cluster", str(snapshot), "--now", "2026-11-22T00:00:00Z",
                     "--format", "json", "--explain"])  # fmt: skip
    assert code == 0
    return out.getvalue()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("nodes", [40, 90])
@pytest.mark.parametrize("policy", [NODE_FIT, TOPOLOGY_FIT, ALL_BUT_HNU], ids=["nodeFit", "topology-nodeFit", "off"])
@pytest.mark.parametrize("pools", [False, True], ids=["packed", "pools"])
def test_whole_cycles_decide_byte_for_byte_as_the_scan(tmp_path, monkeypatch, seed, nodes, policy, pools):
    snapshot = tmp_path / "cluster.json"
    objects = generate(nodes, 30, seed=seed, pools=pools)
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(policy)
    scanned = _simulate(policy_file, snapshot, "scan", monkeypatch)
    indexed = _simulate(policy_file, snapshot, "index", monkeypatch)
    assert indexed == scanned
    assert json.loads(indexed)["summary"]["evicted"] > 0


# --- random clusters, questions asked of both while pods leave --------------------------------------------------------

ZONES = ("a", "b", "c")
POOLS = ("general", "gpu", "memory")
TOLERATIONS = [
    [{"key": "pool", "operator": "Exists"}],
    [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
    [{"key": "gpu", "operator": "Exists"}, {"key": "pool", "operator": "Equal", "value": "batch"}],
    [{"operator": "Exists"}],
]
CPU = st.sampled_from(["0", "100m", "250m", "1", "2", "4"])
MEMORY = st.sampled_from(["0", "64Mi", "1Gi", "4Gi"])


@st.composite
def _node(draw: st.DrawFn, index: int) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["unschedulable"] = draw(st.booleans())
    if draw(st.integers(0, 4)) == 0:
        spec["taints"] = [
            {"key": "pool", "value": "batch", "effect": draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))}
        ]
    if draw(st.integers(0, 5)) == 0:
        spec.setdefault("taints", []).append(
            {"key": "gpu", "effect": draw(st.sampled_from(["NoSchedule", "NoExecute"]))}
        )
    allocatable = {"cpu": draw(st.sampled_from(["1", "2", "4"])), "memory": draw(st.sampled_from(["2Gi", "8Gi"]))}
    if draw(st.booleans()):
        allocatable["pods"] = draw(st.sampled_from(["1", "3", "110"]))
    return {
        "kind": "Node",
        "metadata": {
            "name": f"n{index}",
            "labels": {
                "zone": draw(st.sampled_from(ZONES)),
                "kubernetes.io/hostname": f"n{index}",
                "node-pool": draw(st.sampled_from(POOLS)),
            },
        },
        "spec": spec,
        "status": {"allocatable": allocatable},
    }


@st.composite
def _pod(draw: st.DrawFn, index: int, nodes: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeName": f"n{draw(st.integers(0, nodes - 1))}",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": draw(CPU), "memory": draw(MEMORY)}}}],
    }
    if draw(st.booleans()):
        spec["nodeSelector"] = {draw(st.sampled_from(["zone", "node-pool"])): draw(st.sampled_from(ZONES + POOLS))}
    if draw(st.booleans()):
        spec["tolerations"] = draw(st.sampled_from(TOLERATIONS))
    if draw(st.integers(0, 2)) == 0:
        expression = {
            "key": draw(st.sampled_from(["node-pool", "zone", "missing"])),
            "operator": draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"])),
        }
        if expression["operator"] in ("In", "NotIn"):
            expression["values"] = draw(st.lists(st.sampled_from(ZONES + POOLS), min_size=1, max_size=2))
        terms = [{"matchExpressions": [expression]}, *draw(st.sampled_from([[], [{"matchExpressions": []}]]))]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": terms}}}  # fmt: skip
    app = f"app{draw(st.integers(0, 3))}"
    if draw(st.integers(0, 3)) == 0:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": draw(st.sampled_from(["kubernetes.io/hostname", "zone"])),
             "labelSelector": {"matchLabels": {"app": app}}}]}}  # fmt: skip
    phase = draw(st.sampled_from(["Running", "Running", "Running", "Succeeded"]))
    return {
        "kind": "Pod",
        "metadata": {"name": f"p{index}", "namespace": "ns", "uid": f"u{index}", "labels": {"app": app}},
        "spec": spec,
        "status": {"phase": phase},
    }


@st.composite
def _cluster(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[int], list[tuple[int, int, bool]]]:
    nodes = draw(st.integers(1, 40))
    pods = draw(st.integers(1, 80))
    objects = [draw(_node(index)) for index in range(nodes)] + [draw(_pod(index, nodes)) for index in range(pods)]
    removals = draw(st.lists(st.integers(0, pods - 1), max_size=pods))
    questions = draw(
        st.lists(
            st.tuples(st.integers(0, pods - 1), st.integers(0, 2**nodes - 1), st.booleans()), min_size=1, max_size=30
        )
    )
    return objects, removals, questions


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_cluster(), st.booleans())
def test_the_index_answers_as_the_scan_while_pods_leave(drawn, anti_affinity):
    """With or without NodeFit's anti-affinity check (releases from v0.30 on, or up to v0.29)."""
    objects, removals, questions = drawn
    cluster = Cluster.from_objects(json.loads(json.dumps(objects)))
    index, scan = FitIndex(cluster, anti_affinity), ScanFit(cluster, anti_affinity)
    pods = list(cluster.pods.values())
    every = node_set(cluster.nodes)
    with cluster.trial():  # pods leave; then they all come back, and the same questions are asked again
        for step, (pod, mask, skip_own) in enumerate(questions):
            among = every if mask % 3 == 0 else node_set(n for i, n in enumerate(cluster.nodes) if mask >> i & 1)
            asked = pods[pod]
            assert index.fits_any(asked, among, skip_own=skip_own) == scan.fits_any(asked, among, skip_own=skip_own)
            if step < len(removals):
                cluster.remove(pods[removals[step]])
    for pod, mask, skip_own in questions:
        among = every if mask % 3 == 0 else node_set(n for i, n in enumerate(cluster.nodes) if mask >> i & 1)
        asked = pods[pod]
        assert index.fits_any(asked, among, skip_own=skip_own) == scan.fits_any(asked, among, skip_own=skip_own)
