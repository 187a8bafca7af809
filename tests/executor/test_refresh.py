"""Budgets refreshed by the disruption controller during the cycle (desched.executor.budgets' refresh model and
desched.executor.refresh; docs/executor-semantics.md#53-budgets-refreshed-during-the-cycle), table-driven: the same
evictions in the same order meet a budget that is never refreshed and one refreshed after every eviction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from desched.executor.budgets import BudgetCheck
from desched.executor.cluster import Cluster
from desched.executor.forecast import Forecast
from desched.executor.refresh import refresh_range
from tests.executor.test_budgets import _pdb, _pod, evict_all
from tests.executor.test_forecast import forecast, simulate
from tests.executor.test_same_cycle import node, policy

Json = dict[str, Any]
#: a budget whose desiredHealthy is 0, as the issue saw it
ZERO = {"minAvailable": 0}


def _stale(pdb: Json) -> Json:
    pdb["metadata"]["generation"] = 2
    pdb["status"] = {"observedGeneration": 1, "disruptionsAllowed": 5, "currentHealthy": 2, "desiredHealthy": 0}
    return pdb


UNREADY_FIRST = [_pod("u0", ready=False), _pod("u1", ready=False), _pod("r0")]
ONE_UNREADY = [_pod("u0", ready=False), _pod("r0"), _pod("r1")]
CASES = [
    # (pods, pdb, order, never refreshed, refreshed after every eviction)
    (ONE_UNREADY, _pdb(**ZERO), ["u0", "r0", "r1"], ["ok", "ok", "refused"], ["ok", "ok", "ok"]),
    (UNREADY_FIRST, _pdb(maxUnavailable="100%"), ["u0", "u1", "r0"], ["ok", "refused", "refused"], ["ok"] * 3),
    # the ready pod first: the refresh finds no healthy pod left, the same as the decrement
    (UNREADY_FIRST, _pdb(**ZERO), ["r0", "u0", "u1"], ["ok", "refused", "refused"], ["ok", "refused", "refused"]),
    # desiredHealthy above 0: an unready pod does not use the budget, and evictions never take healthy below desired
    (
        [_pod("u0", ready=False), *(_pod(f"r{i}") for i in range(3))],
        _pdb(minAvailable=1),
        ["u0", "r0", "r1", "r2"],
        ["ok", "ok", "ok", "refused"],
        ["ok", "ok", "ok", "refused"],
    ),
    # a stale budget refuses until an eviction (here of a Pending pod, which needs no budget) makes it refresh
    (
        [_pod("p0", phase="Pending"), _pod("r0"), _pod("r1")],
        _stale(_pdb(maxUnavailable=10)),
        ["r0", "p0", "r1"],
        ["refused", "ok", "refused"],
        ["refused", "ok", "ok"],
    ),
    # a status behind the pods (two became Ready since): the refresh counts them
    (
        [_pod(f"r{i}") for i in range(3)],
        _pdb(status={"disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0}, **ZERO),
        ["r0", "r1", "r2"],
        ["ok", "refused", "refused"],
        ["ok", "ok", "ok"],
    ),
    # the IfHealthyBudget decision flips: the status claims 3 healthy pods, the refresh finds 1 after an eviction
    (
        [_pod("r0"), _pod("r1"), _pod("u0", ready=False)],
        _pdb(status={"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2}, minAvailable=2),
        ["r0", "u0"],
        ["ok", "ok"],
        ["ok", "refused"],
    ),
]


@pytest.mark.parametrize(("pods", "pdb", "order", "never", "refreshed"), CASES)
def test_a_refresh_after_every_eviction_recomputes_the_budget_from_the_pods(
    pods: list[Json], pdb: Json, order: list[str], never: list[str], refreshed: list[str]
) -> None:
    assert evict_all([*pods, pdb], order, refresh=False) == never
    assert evict_all([*pods, pdb], order, refresh=True) == refreshed


@pytest.mark.parametrize(
    ("objects", "may"),
    [
        ([*ONE_UNREADY, _pdb(**ZERO)], True),
        ([*ONE_UNREADY, _pdb(maxUnavailable="100%")], True),
        ([*ONE_UNREADY, _pdb(minAvailable=1)], False),  # desired above 0
        ([_pod("r0"), _pod("r1"), _pdb(**ZERO)], False),  # every pod healthy
        ([_pod("p0", ready=False, phase="Pending"), _pod("r0"), _pdb(**ZERO)], False),  # the API ignores Pending
        ([*ONE_UNREADY, _pdb(unhealthyPodEvictionPolicy="AlwaysAllow", **ZERO)], False),  # unready pods spend nothing
        ([*ONE_UNREADY], False),  # no budget
        ([_pod("r0"), _pod("r1"), _stale(_pdb(maxUnavailable=10))], True),
        (
            [_pod("r0"), _pod("r1"), _pdb(status={"disruptionsAllowed": 2, "currentHealthy": 2, "desiredHealthy": 0})],
            False,  # the status is what the controller computes from the pods
        ),
        (
            [_pod("r0"), _pod("r1"), _pdb(status={"disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0})],
            True,
        ),
    ],
)
def test_may_refresh_says_where_a_refresh_can_change_an_answer(objects: list[Json], may: bool) -> None:
    assert BudgetCheck(Cluster.from_objects(objects)).may_refresh() is may


def test_the_refresh_range_spans_both_forecasts_per_plugin_and_in_total() -> None:
    never = Forecast(2, 7, [3, 2], {"A": [2, 2], "B": [1, 0]}, {})
    refreshed = Forecast(2, 7, [6, 4], {"A": [4, 4], "C": [2, 0]}, {})
    ranged = refresh_range(never, refreshed)
    assert ranged.document() == {
        "samples": 2,
        "seed": 7,
        "refreshes": "never to after every eviction",
        "evicted": {"min": 2, "max": 6},
        "byPlugin": {"A": {"min": 2, "max": 4}, "B": {"min": 0, "max": 1}, "C": {"min": 0, "max": 2}},
    }
    with pytest.raises(ValueError):
        refresh_range(never, refreshed._replace(seed=8))


def _tainted_cluster(unready: int, ready: int, pdb: Json) -> list[Json]:
    """Nodes ``a`` and tainted ``b``; on ``b`` one ReplicaSet's pods (``unready`` of them not Ready) and ``pdb``."""
    pods = [_pod(f"u{i}", ready=False) for i in range(unready)] + [_pod(f"r{i}") for i in range(ready)]
    for built in pods:
        built["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web", "controller": True}
        ]
        built["spec"].update({"nodeName": "b", "containers": [{"name": "c", "image": "web:1"}]})
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
    return [node("a"), node("b", tainted=True), namespace, *pods, pdb]


TAINTS = policy(("deschedule", "RemovePodsViolatingNodeTaints", {}))


def test_simulate_reports_the_refresh_range_apart_from_the_listing_orders(tmp_path: Path) -> None:
    document = forecast(tmp_path, TAINTS, _tainted_cluster(2, 1, _pdb(**ZERO)), "--samples", "30")
    plugin = "RemovePodsViolatingNodeTaints"
    assert document["forecast"]["byPlugin"][plugin] | {"median": 1} == {"min": 1, "median": 1, "max": 1}
    refresh = document["budgetRefresh"]
    assert (refresh["samples"], refresh["seed"]) == (30, 0)
    assert refresh["evicted"] == refresh["byPlugin"][plugin] == {"min": 1, "max": 3}  # a ready pod first, or last
    code, out, err = simulate(tmp_path, TAINTS, _tainted_cluster(2, 1, _pdb(**ZERO)), "--samples", "30", "--jobs", "1")
    assert code == 0, err
    assert "with budgets refreshed never to after every eviction" in out
    assert f"  {plugin}" in out and "widen the listing orders' range" in out
    page = tmp_path / "page.html"
    cluster = _tainted_cluster(2, 1, _pdb(**ZERO))
    code, _, err = simulate(tmp_path, TAINTS, cluster, "--samples", "30", "--jobs", "1", "--html", str(page))
    assert code == 0, err
    section = page.read_text(encoding="utf-8").split('<section id="budget-refresh">')[1].split("</section>")[0]
    assert f"<tr><td>{plugin}</td><td>1 / 3</td></tr>" in section and "over the same 30" in section.lower()


@pytest.mark.parametrize(
    ("unready", "pdb", "evicted"),
    [
        (1, _pdb(minAvailable=1), 2),  # desired above 0: the unready pod needs no budget, one ready pod may go
        (0, _pdb(**ZERO), 2),  # every pod healthy
    ],
)
def test_no_refresh_member_where_no_budget_can_refresh(tmp_path: Path, unready: int, pdb: Json, evicted: int) -> None:
    document = forecast(tmp_path, TAINTS, _tainted_cluster(unready, 2, pdb), "--samples", "5")
    assert "budgetRefresh" not in document
    code, out, err = simulate(tmp_path, TAINTS, _tainted_cluster(unready, 2, pdb), "--samples", "5", "--jobs", "1")
    assert code == 0 and "budgets refreshed" not in out, err
    assert document["forecast"]["evicted"] == {"min": evicted, "median": evicted, "max": evicted}
