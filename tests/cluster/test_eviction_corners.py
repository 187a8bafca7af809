"""Corners where the Eviction API decides on its own terms, checked on the real API server: ``desched run`` meets
exactly what ``desched simulate`` predicted from a snapshot of the same objects (issue 27, items 1, 2 and 5; the
control plane is Kubernetes 1.20, so the newer releases' rows are unit tests of the decision table:
tests/executor/test_budgets.py)."""

from __future__ import annotations

import json
import os
import secrets
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from tests.cluster.test_run_resilience import RUN_LABEL, Setup
from tests.cluster.test_run_resilience import _policy as taint_policy
from tests.kcp.api import Api, Json
from tests.kcp.controlplane import ControlPlane
from tests.kcp.objects import wait_for
from tests.kcp.snapshot import LoadReport

pytestmark = pytest.mark.cluster
Loader = Callable[[list[Json]], tuple[str, LoadReport]]


def _pod(name: str, labels: dict[str, str], ready: bool = True) -> Json:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "uid-web", "controller": True}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "corner", "labels": labels, "ownerReferences": [owner]},
        "spec": {"nodeName": "b", "containers": [{"name": "c", "image": "web:1"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def _load(load_snapshot: Loader, pods: list[Json], run: str) -> str:
    """Two nodes labelled ``run``, ``b`` tainted, with ``pods`` on ``b`` in namespace ``corner``; its new name."""
    taint = {"key": "maintenance", "value": "yes", "effect": "NoSchedule"}
    nodes = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {RUN_LABEL: run}},
         "spec": {"taints": taints}}
        for name, taints in (("a", []), ("b", [taint]))
    ]  # fmt: skip
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "corner"}}
    suffix, _ = load_snapshot([*nodes, namespace, *pods])
    return "corner" + suffix


def _budget(kube: Api, namespace: str, name: str, selector: Json, **spec: Any) -> None:
    kube.create(
        {
            "apiVersion": kube.pdb_version(),
            "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {**spec, "selector": selector},
        }
    )


def _settled(kube: Api, namespace: str, *names: str) -> None:
    """Wait until the disruption controller has written the status of the PDBs ``names``."""

    def observed() -> bool:
        listed = kube.list(kube.pdb_version(), "PodDisruptionBudget", namespace)
        done = {pdb["metadata"]["name"] for pdb in listed if (pdb.get("status") or {}).get("observedGeneration")}
        return set(names) <= done

    wait_for(observed, what="the disruption controller's PDB status")


def _policy(tmp_path: Path, namespace: str, run: str, limits: str = "") -> str:
    """RemovePodsViolatingNodeTaints over ``namespace`` on the nodes labelled ``run`` (test_run_resilience's)."""
    return taint_policy(tmp_path, Setup(run, [namespace], "b"), namespace, limits)


def _snapshot(kube: Api, tmp_path: Path, namespace: str, run: str) -> str:
    """The live objects as ``kubectl get -o json`` prints them, with ``kubectl version -o json``'s server part."""

    def typed(api_version: str, kind: str, items: list[Json]) -> list[Json]:
        return [{"apiVersion": api_version, "kind": kind, **item} for item in items]

    nodes = [node for node in kube.list("v1", "Node") if node["metadata"].get("labels", {}).get(RUN_LABEL) == run]
    items = [
        *typed("v1", "Node", nodes),
        *typed("v1", "Namespace", [kube.get("v1", "Namespace", namespace)]),
        *typed("v1", "Pod", kube.list("v1", "Pod", namespace)),
        *typed(
            kube.pdb_version(), "PodDisruptionBudget", kube.list(kube.pdb_version(), "PodDisruptionBudget", namespace)
        ),
    ]
    documents: list[Json] = [{"apiVersion": "v1", "kind": "List", "items": items}]
    documents.append({"serverVersion": kube.request("GET", "/version")})
    path = tmp_path / f"snapshot-{secrets.token_hex(2)}.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return str(path)


def _desched(capsys: pytest.CaptureFixture[str], *args: str) -> Json:
    code = main([*args, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    document: Json = json.loads(out)
    return document


def _outcomes(document: Json) -> tuple[list[str], list[tuple[str, str]]]:
    evicted = sorted(e["pod"] for e in document["evictions"])
    failed = sorted((f["pod"], f["outcome"]) for f in document["failures"])
    return evicted, failed


def _predicted_and_done(
    control_plane: ControlPlane, kube: Api, capsys: pytest.CaptureFixture[str], tmp_path: Path, namespace: str,
    run: str, limits: str = "",
) -> tuple[Json, Json]:  # fmt: skip
    policy = _policy(tmp_path, namespace, run, limits)
    predicted = _desched(capsys, "simulate", "--policy", policy, "--cluster", _snapshot(kube, tmp_path, namespace, run))
    done = _desched(capsys, "run", "--policy", policy, "--kubeconfig", control_plane.kubeconfig)
    return predicted, done


def test_not_ready_pods_spend_a_budget_whose_desired_healthy_is_zero(
    control_plane: ControlPlane, kube: Api, load_snapshot: Loader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = secrets.token_hex(3)
    pods = [_pod(f"ready-{i}", {"app": "web"}) for i in range(2)]
    pods += [_pod(f"unready-{i}", {"app": "web"}, ready=False) for i in range(5)]
    namespace = _load(load_snapshot, pods, run)
    _budget(kube, namespace, "web", {"matchLabels": {"app": "web"}}, minAvailable=0)
    _settled(kube, namespace, "web")
    predicted, done = _predicted_and_done(control_plane, kube, capsys, tmp_path, namespace, run)
    evicted, failed = _outcomes(done)
    assert len(evicted) == 2 and [outcome for _, outcome in failed] == ["refused"] * 5  # the API's own count
    assert _outcomes(predicted) == (evicted, failed)


def test_a_pod_under_two_pdbs_is_an_error_that_counts_toward_no_limit(
    control_plane: ControlPlane, kube: Api, load_snapshot: Loader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = secrets.token_hex(3)
    pods = [_pod("dual", {"app": "web", "tier": "edge"}), *(_pod(f"web-{i}", {"app": "web"}) for i in range(3))]
    namespace = _load(load_snapshot, pods, run)
    _budget(kube, namespace, "by-app", {"matchLabels": {"app": "web"}}, maxUnavailable=10)
    _budget(kube, namespace, "by-tier", {"matchLabels": {"tier": "edge"}}, maxUnavailable=10)
    _settled(kube, namespace, "by-app")
    limits = "maxNoOfPodsToEvictTotal: 3\n"
    predicted, done = _predicted_and_done(control_plane, kube, capsys, tmp_path, namespace, run, limits)
    evicted, failed = _outcomes(done)
    assert evicted == ["web-0", "web-1", "web-2"] and failed == [("dual", "error")]
    assert _outcomes(predicted) == (evicted, failed)


def test_an_empty_selector_matches_no_pod_on_this_release_and_simulate_knows_it_from_the_snapshot(
    control_plane: ControlPlane, kube: Api, load_snapshot: Loader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version = kube.request("GET", "/version")
    assert (int(version["major"]), int(version["minor"].rstrip("+"))) < (1, 27), "a control plane newer than assumed"
    run = secrets.token_hex(3)
    namespace = _load(load_snapshot, [_pod(f"web-{i}", {"app": "web"}) for i in range(2)], run)
    _budget(kube, namespace, "everything", {}, maxUnavailable=0)
    predicted, done = _predicted_and_done(control_plane, kube, capsys, tmp_path, namespace, run)
    assert _outcomes(done) == (["web-0", "web-1"], []) == _outcomes(predicted)


def test_a_pdb_the_disruption_controller_has_not_caught_up_with_refuses_every_pod(
    control_plane: ControlPlane, kube: Api, load_snapshot: Loader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = secrets.token_hex(3)
    namespace = _load(load_snapshot, [_pod(f"web-{i}", {"app": "web"}) for i in range(2)], run)
    _budget(kube, namespace, "web", {"matchLabels": {"app": "web"}}, maxUnavailable=10)
    _settled(kube, namespace, "web")
    (manager,) = [process for process in control_plane.processes if process.name == "kube-controller-manager"]
    os.kill(manager.pid, signal.SIGSTOP)  # the controller cannot catch up while the cycle runs
    try:
        kube.patch(kube.pdb_version(), "PodDisruptionBudget", "web", {"spec": {"maxUnavailable": 9}}, namespace)
        stale = kube.get(kube.pdb_version(), "PodDisruptionBudget", "web", namespace)
        assert stale["status"]["observedGeneration"] < stale["metadata"]["generation"]
        predicted, done = _predicted_and_done(control_plane, kube, capsys, tmp_path, namespace, run)
    finally:
        os.kill(manager.pid, signal.SIGCONT)
    assert _outcomes(done) == ([], [("web-0", "refused"), ("web-1", "refused")]) == _outcomes(predicted)
