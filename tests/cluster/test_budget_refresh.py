"""Budgets refreshed during the cycle, on the real control plane (issue 41, item 2;
docs/executor-semantics.md#53-budgets-refreshed-during-the-cycle): ``desched run`` is paced so that the disruption
controller of kube-controller-manager 1.20 refreshes every budget between two evictions of the cycle, and what it
evicts lies outside ``desched simulate``'s never-refreshed range and inside its ``budgetRefresh`` range."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from desched.executor.cluster import Json
from desched.executor.evictions import BackendError
from desched.executor.live import Evictions
from tests.cluster.test_eviction_corners import (
    Loader,
    _budget,
    _desched,
    _load,
    _outcomes,
    _pod,
    _policy,
    _settled,
    _snapshot,
)
from tests.kcp.api import Api
from tests.kcp.controlplane import ControlPlane
from tests.kcp.objects import wait_for

pytestmark = pytest.mark.cluster
PLUGIN = "RemovePodsViolatingNodeTaints"


def _paced(kube: Api, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every eviction of ``desched run`` wait, once it succeeded, until the disruption controller has
    refreshed the budgets of ``namespace``: the pod has left every PDB's ``status.disruptedPods``, where the API put
    it and only the controller's recomputed status takes it out."""
    evict = Evictions.evict

    def refreshed(name: str) -> bool:
        pdbs = kube.list(kube.pdb_version(), "PodDisruptionBudget", namespace)
        return all(name not in ((pdb.get("status") or {}).get("disruptedPods") or {}) for pdb in pdbs)

    def paced(self: Evictions, pod: Json, profile: str, plugin: str) -> BackendError | None:
        error = evict(self, pod, profile, plugin)
        if error is None:
            name = pod["metadata"]["name"]
            wait_for(lambda: refreshed(name), what=f"the disruption controller to refresh the budget of {name}")
        return error

    monkeypatch.setattr(Evictions, "evict", paced)


def test_a_run_the_controller_refreshes_between_evictions_lies_in_the_refresh_range_only(
    control_plane: ControlPlane,
    kube: Api,
    load_snapshot: Loader,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = secrets.token_hex(3)
    # as the issue saw it: budgets whose desiredHealthy is 0, three pods each, one or two of them not Ready
    pods = [_pod("a0-unready", {"app": "a"}, ready=False), *(_pod(f"a{i}-ready", {"app": "a"}) for i in (1, 2))]
    pods += [*(_pod(f"b{i}-unready", {"app": "b"}, ready=False) for i in (0, 1)), _pod("b2-ready", {"app": "b"})]
    namespace = _load(load_snapshot, pods, run)
    _budget(kube, namespace, "a", {"matchLabels": {"app": "a"}}, minAvailable=0)
    # (maxUnavailable: 100% would need the pods' ReplicaSet for its expected count: a unit test covers it)
    _budget(kube, namespace, "b", {"matchLabels": {"app": "b"}}, minAvailable=0)
    _settled(kube, namespace, "a", "b")
    policy = _policy(tmp_path, namespace, run)
    snapshot = _snapshot(kube, tmp_path, namespace, run)
    predicted = _desched(capsys, "simulate", "--policy", policy, "--cluster", snapshot, "--samples", "40")
    _paced(kube, namespace, monkeypatch)
    done = _desched(capsys, "run", "--policy", policy, "--kubeconfig", control_plane.kubeconfig)
    evicted, failed = _outcomes(done)
    # listed by name, each budget meets its not-Ready pods first: refreshed after every eviction, none is refused
    assert (len(evicted), failed) == (6, [])
    never, refresh = predicted["forecast"]["byPlugin"][PLUGIN], predicted["budgetRefresh"]["byPlugin"][PLUGIN]
    assert (never["min"], never["max"]) == (3, 3)  # a minAvailable 0 budget spends one disruption per pod
    assert not never["min"] <= len(evicted) <= never["max"]
    assert refresh["min"] <= len(evicted) <= refresh["max"]
    assert predicted["budgetRefresh"]["evicted"] == refresh
