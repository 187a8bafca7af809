"""The ``utilization-quantities`` and ``deviation-zero-offset`` release rows (:mod:`desched.executor.releases`):
LowNodeUtilization and HighNodeUtilization as v0.27-v0.32 classify nodes (``nodeutilization.go`` at v0.32.2: usage
quantities against ``int64(threshold * 0.01 * capacity)``, cpu, memory and pods at 100 % when unset, a deviation
offset of 0 at the whole capacity) next to v0.33's float percentages (87ba84b).

Upstream's tables at v0.32.2 (``lownodeutilization_test.go``: ``TestLowNodeUtilization`` and
``TestLowNodeUtilizationWithTaints``; ``highnodeutilization_test.go``: ``TestHighNodeUtilization`` and
``TestHighNodeUtilizationWithTaints``) are the v0.36 ones without the cases added later: they are run here at v0.32
from the v0.36 ports, with the same counts. Left out, as not in the v0.32.2 tables: "with extended resource in some of
nodes with deviation" (v0.32 averages a NaN there: row ``deviation-average-all-nodes``, not modelled), "deviation
thresholds and overevicting memory", "without priorities with node eviction limit" (``evictionLimits`` is v0.33's)
and HighNodeUtilization's "with extended resource threshold and no extended resource pods" (``evictionModes`` is
v0.33's). The cases after them are desched's: each gives one answer at v0.32 and another at v0.33.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desched.cli import main
from desched.executor.plugins import highnodeutilization, lownodeutilization
from desched.executor.releases import DEVIATION_ZERO_OFFSET, UTILIZATION_QUANTITIES, ReleaseDecisions
from tests.executor import test_highnodeutilization as high
from tests.executor import test_lownodeutilization as low
from tests.executor.builders import NOW, build_node, build_pod, one_plugin_policy, run_plugin, set_rs_owner
from tests.executor.test_html import rows

Json = dict[str, Any]
V32, V33 = ReleaseDecisions(32), ReleaseDecisions(33)
MEMORY = 8 * 2**30

LOW_AT_V0_32 = {
    "no evictable pods",
    "without priorities",
    "without priorities, but excluding namespaces",
    "without priorities, but include only default namespace",
    "without priorities stop when cpu capacity is depleted",
    "with priorities",
    "without priorities evicting best-effort pods only",
    "with extended resource",
    "with extended resource in some of nodes",
    "without priorities, but only other node is unschedulable",
    "without priorities, but only other node doesn't match pod node selector for p4 and p5",
    "without priorities, but only other node doesn't match pod node affinity for p4 and p5",
    "deviation thresholds",
    "without priorities different evictions for requested and actual resources",
    "No taints",
    "No pod tolerates node taint",
    "Pod which tolerates node taint",
    "Pod which tolerates node taint, set maxPodsToEvictTotal(0), should not be expelled",
}
HIGH_AT_V0_32 = {
    "no node below threshold usage",
    "no evictable pods",
    "no node to schedule evicted pods",
    "without priorities",
    "without priorities stop when resource capacity is depleted",
    "with priorities",
    "without priorities evicting best-effort pods only",
    "with extended resource",
    "with extended resource in some of nodes",
    "Other node match pod node selector",
    "Other node does not match pod node selector",
    "Other node does not have enough Memory",
    "No taints",
    "No pod tolerates node taint",
    "Pod which tolerates node taint",
}
LOW_CASES = [case for case in [*low.UPSTREAM_CASES, *low.TAINT_CASES] if case.name in LOW_AT_V0_32]
HIGH_CASES = [case for case in [*high.UPSTREAM_CASES, *high.TAINT_CASES] if case.name in HIGH_AT_V0_32]


def test_every_v0_32_case_is_ported() -> None:
    assert {case.name for case in LOW_CASES} == LOW_AT_V0_32
    assert {case.name for case in HIGH_CASES} == HIGH_AT_V0_32


@pytest.mark.parametrize("case", LOW_CASES, ids=lambda case: case.name)
def test_low_node_utilization_upstream_table_at_v0_32(case: low.Case) -> None:
    evicted = run_plugin(
        lownodeutilization.NAME, case.args, case.nodes, case.pods, evictor=case.evictor, limits=case.limits, release=V32
    )
    assert len(evicted) == case.expected, evicted
    if case.among is not None:
        assert set(evicted) <= set(case.among), evicted


@pytest.mark.parametrize("case", HIGH_CASES, ids=lambda case: case.name)
def test_high_node_utilization_upstream_table_at_v0_32(case: low.Case) -> None:
    evicted = run_plugin(
        highnodeutilization.NAME,
        case.args,
        case.nodes,
        case.pods,
        evictor=case.evictor,
        limits=case.limits,
        release=V32,
    )
    assert len(evicted) == case.expected, evicted
    if case.among is not None:
        assert set(evicted) <= set(case.among), evicted


def test_the_rows_span_v0_27_to_v0_32() -> None:
    for key in (UTILIZATION_QUANTITIES, DEVIATION_ZERO_OFFSET):
        assert [minor for minor in range(27, 37) if ReleaseDecisions(minor).older(key)] == list(range(27, 33))


def node(name: str, cpu: int = 4000, pods: int = 110) -> Json:
    return build_node(name, cpu, MEMORY, pods)


def replicas(node_name: str, count: int, cpu: int, prefix: str = "") -> list[Json]:
    """``count`` ReplicaSet pods of ``cpu`` millicores on ``node_name``, named ``<prefix or node>-<index>``."""
    return [set_rs_owner(build_pod(f"{prefix or node_name}-{index}", cpu, 0, node_name)) for index in range(count)]


AT_SEVEN_PERCENT = {"thresholds": {"cpu": 7}, "targetThresholds": {"cpu": 50}}


def low_run(args: Json, nodes: list[Json], pods: list[Json], release: ReleaseDecisions) -> list[str]:
    return run_plugin(lownodeutilization.NAME, args, nodes, pods, release=release)


@pytest.mark.parametrize(("release", "evicted"), [(V32, ["n2-0", "n2-1", "n2-2"]), (V33, [])])
def test_a_node_exactly_at_its_threshold_is_underutilized_up_to_v0_32(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """n1 runs 280m of 4000m at ``thresholds.cpu`` 7: v0.32 compares 280 with int64(7 * 0.01 * 4000) = 280 (under);
    v0.33 compares 7.000000000000001 % with 7 (not under), so nothing moves off the overutilized n2."""
    pods = [*replicas("n1", 1, 280), *replicas("n2", 8, 400)]
    assert low_run(AT_SEVEN_PERCENT, [node("n1"), node("n2")], pods, release) == evicted


@pytest.mark.parametrize(("target", "role"), [("v0.32", "underutilized"), ("v0.33", "appropriately utilized")])
def test_the_page_classifies_the_nodes_as_the_target_release_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, role: str
) -> None:
    """``simulate --html`` at ``--target-version``: the same boundary as above, n1 under its threshold at v0.32 only."""
    policy, snapshot, page = tmp_path / "policy.json", tmp_path / "snapshot.json", tmp_path / "page.html"
    policy.write_text(json.dumps(one_plugin_policy(lownodeutilization.NAME, "balance", AT_SEVEN_PERCENT)))
    items = [node("n1"), node("n2"), *replicas("n1", 1, 280), *replicas("n2", 8, 400)]
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, default=str))
    arguments = ["--policy", str(policy), "--cluster", str(snapshot), "--target-version", target, "--html", str(page)]
    assert main(["simulate", "--now", NOW.isoformat(), *arguments]) == 0, capsys.readouterr().err
    assert rows(page.read_text(encoding="utf-8"))["utilization"]["n1"][1] == role


@pytest.mark.parametrize(("release", "evicted"), [(V32, ["n1-0"]), (V33, [])])
def test_a_node_exactly_at_its_target_is_overutilized_up_to_v0_32(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """n1 runs 29 of its 100 pods at ``targetThresholds.pods`` 29: v0.32 compares 29 with int64(29 * 0.01 * 100) = 28
    (over, and one pod leaves); v0.33 compares 28.999999999999996 % with 29 (not over)."""
    args = {"thresholds": {"pods": 10}, "targetThresholds": {"pods": 29}}
    pods = [*replicas("n1", 29, 10), *replicas("n2", 1, 10)]
    assert low_run(args, [node("n1", pods=100), node("n2", pods=100)], pods, release) == evicted


def overcommitted() -> tuple[list[Json], list[Json]]:
    """n1 runs 3 pods where it allows 2 (7.5 % of its cpu), n2 runs 80 % of its cpu, n3 is empty."""
    nodes = [node("n1", pods=2), node("n2"), node("n3")]
    return nodes, [*replicas("n1", 3, 100), *replicas("n2", 8, 400)]


@pytest.mark.parametrize(
    ("release", "evicted"), [(V32, ["n2-0", "n2-1", "n2-2", "n1-0"]), (V33, ["n2-0", "n2-1", "n2-2"])]
)
def test_low_node_utilization_compares_unset_resources_with_the_capacity_up_to_v0_32(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """With thresholds for cpu only, v0.32 still compares pods with 100 % of the capacity: n1 is over, not under, and
    loses a pod after n2; v0.33 compares cpu only and counts n1 as a destination."""
    nodes, pods = overcommitted()
    assert low_run({"thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 50}}, nodes, pods, release) == evicted


@pytest.mark.parametrize(("release", "evicted"), [(V32, []), (V33, ["n1-0", "n1-1", "n1-2"])])
def test_high_node_utilization_compares_unset_resources_with_the_capacity_up_to_v0_32(
    release: ReleaseDecisions, evicted: list[str]
) -> None:
    """n1 (3 pods where it allows 2) is underutilized for cpu; v0.32 also compares its pods with the capacity and
    leaves it alone."""
    nodes, pods = overcommitted()
    assert run_plugin(highnodeutilization.NAME, {"thresholds": {"cpu": 20}}, nodes, pods, release=release) == evicted


@pytest.mark.parametrize(("release", "evicted"), [(V32, ["n2-0"]), (V33, [])])
def test_high_node_utilization_at_the_threshold_up_to_v0_32(release: ReleaseDecisions, evicted: list[str]) -> None:
    """n2 runs 280m of 4000m at ``thresholds.cpu`` 7: underutilized at v0.32 (280 <= 280) and emptied into n1, not
    at v0.33 (7.000000000000001 % > 7)."""
    pods = [*replicas("n1", 5, 400), *replicas("n2", 1, 280)]
    nodes = [node("n1"), node("n2")]
    assert run_plugin(highnodeutilization.NAME, {"thresholds": {"cpu": 7}}, nodes, pods, release=release) == evicted


DEVIATION_ZERO = {"thresholds": {"cpu": 0}, "targetThresholds": {"cpu": 10}, "useDeviationThresholds": True}


@pytest.mark.parametrize(("release", "evicted"), [(V32, []), (V33, ["n1-0", "n1-1", "n1-2", "n1-3"])])
def test_a_zero_deviation_offset_means_the_capacity_up_to_v0_32(release: ReleaseDecisions, evicted: list[str]) -> None:
    """Average cpu 33.3 %: v0.33 puts n2 and n3 (10 %) under it and n1 (80 %) over 43.3 %, and moves 4 pods; v0.32
    gives cpu the capacity on both sides, every node is underutilized and nothing moves."""
    pods = [*replicas("n1", 8, 400), *replicas("n2", 1, 400), *replicas("n3", 1, 400)]
    assert low_run(DEVIATION_ZERO, [node("n1"), node("n2"), node("n3")], pods, release) == evicted
