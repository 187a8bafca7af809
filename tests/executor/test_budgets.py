"""The Eviction API's PDB check as simulate applies it (desched.executor.budgets), table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from desched.executor.budgets import BudgetCheck
from desched.executor.cluster import Cluster
from desched.executor.evictions import Failure, Limits, Outcome, PodEvictor


def _pod(name: str, app: str = "web", ready: bool = True, phase: str = "Running", **metadata: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": name, "labels": {"app": app}, **metadata},
        "spec": {"nodeName": "n1"},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _pdb(name: str = "web", app: str = "web", status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    pdb: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {**spec, "selector": {"matchLabels": {"app": app}}},
    }
    if status is not None:
        pdb["status"] = status
    return pdb


def evict_all(objects: list[dict[str, Any]], names: list[str], refresh: bool = False) -> list[str]:
    """Evict ``names`` in turn, budgets refreshed after every eviction or never: ``ok`` or the failure kind for
    each."""
    cluster = Cluster.from_objects(objects)
    evictor = PodEvictor(cluster, Limits(None, None, None), BudgetCheck(cluster, refresh=refresh))
    outcomes = []
    for name in names:
        pod = next(p for p in cluster.pods.values() if p["metadata"]["name"] == name)
        outcome = evictor.evict(pod, "p", "x")
        outcomes.append("ok" if outcome is Outcome.SUCCESS else evictor.failures[-1].outcome)
    return outcomes


FOUR = [_pod(f"w{i}") for i in range(4)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"minAvailable": 2}, ["ok", "ok", "refused", "refused"]),
        ({"minAvailable": "50%"}, ["ok", "ok", "refused", "refused"]),
        ({"minAvailable": "51%"}, ["ok", "refused", "refused", "refused"]),  # ceil(0.51 * 4) = 3
        ({"maxUnavailable": 1}, ["ok", "refused", "refused", "refused"]),
        ({"maxUnavailable": "25%"}, ["ok", "refused", "refused", "refused"]),
        ({"maxUnavailable": "26%"}, ["ok", "ok", "refused", "refused"]),  # ceil(0.26 * 4) = 2
        ({"maxUnavailable": 0}, ["refused"] * 4),
        ({"minAvailable": 0}, ["ok"] * 4),
        ({"minAvailable": 5}, ["refused"] * 4),
    ],
)
def test_the_budget_is_computed_and_spent_eviction_by_eviction(spec, expected):
    assert evict_all([*FOUR, _pdb(**spec)], ["w0", "w1", "w2", "w3"]) == expected


def test_the_snapshots_status_is_the_budget_when_it_has_one():
    status = {"disruptionsAllowed": 1, "currentHealthy": 4, "desiredHealthy": 3, "observedGeneration": 1}
    assert evict_all([*FOUR, _pdb(status=status, minAvailable=0)], ["w0", "w1"]) == ["ok", "refused"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [(None, ["ok", "refused"]), ("AlwaysAllow", ["ok", "ok"]), ("IfHealthyBudget", ["ok", "refused"])],
)
def test_an_unready_pod_is_evicted_while_the_budget_is_healthy(policy, expected):
    pods = [*FOUR[:3], _pod("sick", ready=False)]
    spec: dict[str, Any] = {"minAvailable": 2}
    if policy:
        spec["unhealthyPodEvictionPolicy"] = policy
    # 3 healthy, 2 wanted: the unready pod goes without spending; then w0 spends the one disruption
    assert evict_all([*pods, _pdb(**spec)], ["sick", "w0"]) == ["ok", "ok"]
    # with fewer healthy pods than wanted, the unready pod depends on the policy
    assert evict_all([*pods, _pdb(**{**spec, "minAvailable": 4})], ["w0", "sick"]) == ["refused", expected[1]]


@pytest.mark.parametrize("phase", ["Succeeded", "Failed", "Pending"])
def test_pods_the_api_evicts_without_looking_at_budgets(phase):
    assert evict_all([_pod("done", phase=phase), _pdb(maxUnavailable=0)], ["done"]) == ["ok"]
    terminating = _pod("going", deletionTimestamp="2026-11-22T00:00:00Z")
    assert evict_all([terminating, _pdb(maxUnavailable=0)], ["going"]) == ["ok"]


def test_a_pod_with_two_budgets_is_an_error_and_other_namespaces_do_not_count():
    both = [*FOUR, _pdb("a", minAvailable=0), _pdb("b", minAvailable=0)]
    assert evict_all(both, ["w0"]) == [Failure.ERROR.value]
    elsewhere = {**_pdb(maxUnavailable=0), "metadata": {"name": "x", "namespace": "other"}}
    assert evict_all([*FOUR, elsewhere], ["w0"]) == ["ok"]


def test_a_refusal_names_the_budget_and_the_pod_stays():
    cluster = Cluster.from_objects([*FOUR, _pdb(maxUnavailable=0)])
    evictor = PodEvictor(cluster, Limits(None, None, None), BudgetCheck(cluster))
    pod = cluster.pods["w0"]
    assert evictor.evict(pod, "p", "x") is Outcome.FAILED
    (failure,) = evictor.failures
    assert failure.status == 429 and "disruption budget ns/web" in failure.message
    assert cluster.present(pod)


def _evict_on(server: tuple[int, int, int] | None, objects: list[dict[str, Any]], names: list[str]) -> list[str]:
    """:func:`_evict_all` against an API server of release ``server`` (``None``: unknown, the newest assumed)."""
    version = [{"serverVersion": {"gitVersion": "v" + ".".join(map(str, server))}}] if server else []
    return evict_all([*version, *objects], names)


TWO_READY_FIVE_NOT = [_pod(f"r{i}") for i in range(2)] + [_pod(f"u{i}", ready=False) for i in range(5)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # desiredHealthy 0: a not-Ready pod spends the budget like any other (eviction.go: DesiredHealthy > 0)
        ({"minAvailable": 0}, ["ok", "ok", "refused", "refused", "refused"]),
        ({"maxUnavailable": "100%"}, ["ok", "ok", "refused", "refused", "refused"]),
        # desiredHealthy 1 and 2 healthy: not-Ready pods go free, the budget stays for the Ready ones
        ({"minAvailable": 1}, ["ok"] * 5),
    ],
)
def test_not_ready_pods_use_the_budget_unless_it_protects_some_healthy_pods(spec, expected):
    names = [f"u{i}" for i in range(5)]
    assert _evict_on((1, 20, 2), [*TWO_READY_FIVE_NOT, _pdb(**spec)], names) == expected


@pytest.mark.parametrize(
    ("server", "expected"),
    [((1, 26, 9), ["ok", "ok", "refused"]), ((1, 27, 0), ["ok"] * 3), (None, ["ok"] * 3)],
)
def test_always_allow_lets_not_ready_pods_go_from_1_27(server, expected):
    pdb = _pdb(minAvailable=0, unhealthyPodEvictionPolicy="AlwaysAllow")
    objects = [*TWO_READY_FIVE_NOT, pdb]
    assert _evict_on(server, objects, ["u0", "u1", "u2"]) == expected


def test_a_pdb_the_controller_has_not_caught_up_with_refuses_every_pod():
    pdb = _pdb(minAvailable=0, status={"disruptionsAllowed": 4, "observedGeneration": 1})
    pdb["metadata"]["generation"] = 2
    assert evict_all([*FOUR, pdb], ["w0", "w1"]) == ["refused", "refused"]
    pdb["status"]["observedGeneration"] = 2
    assert evict_all([*FOUR, pdb], ["w0", "w1"]) == ["ok", "ok"]


def test_a_negative_disruptions_allowed_is_an_error_not_a_refusal():
    pdb = _pdb(minAvailable=0, status={"disruptionsAllowed": -1})
    assert evict_all([*FOUR, pdb], ["w0"]) == ["error"]


@pytest.mark.parametrize(
    ("server", "matches"),
    [
        ((1, 20, 2), False),
        ((1, 26, 15), False),
        ((1, 27, 6), False),
        ((1, 27, 7), True),
        ((1, 28, 2), False),
        ((1, 28, 3), True),
        ((1, 29, 0), True),
        ((1, 33, 1), True),
        (None, True),
    ],
)
def test_an_empty_selector_matches_every_pod_only_where_the_eviction_api_does(server, matches):
    pdb = _pdb(maxUnavailable=0)
    pdb["spec"]["selector"] = {}
    assert _evict_on(server, [*FOUR, pdb], ["w0"]) == (["refused"] if matches else ["ok"])


@pytest.mark.parametrize(("server", "matches"), [((1, 20, 2), False), ((1, 21, 0), True)])
def test_before_1_21_a_pod_without_labels_has_no_pdb(server, matches):
    bare = _pod("bare")
    bare["metadata"]["labels"] = {}
    pdb = _pdb(maxUnavailable=0)
    pdb["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}
    assert _evict_on(server, [bare, pdb], ["bare"]) == (["refused"] if matches else ["ok"])


def test_a_server_version_in_the_snapshot_is_read():
    cluster = Cluster.from_objects([{"serverVersion": {"gitVersion": "v1.27.7-eks-4f4795d", "major": "1"}}])
    assert cluster.server == (1, 27, 7) and cluster.skipped == {}
