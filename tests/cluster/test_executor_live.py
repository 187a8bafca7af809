"""``desched run`` against the real API server: the same evictions as ``simulate``, a dry run that mutates nothing,
PDB refusals handled per pod, and deploy/'s RBAC sufficient and no broader."""

from __future__ import annotations

import json
import re
import secrets
import signal
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from tests.kcp.api import Api, ApiError, Json
from tests.kcp.controlplane import ControlPlane, free_ports
from tests.kcp.kubelet import FakeKubelet
from tests.kcp.objects import wait_for
from tests.kcp.snapshot import isolate, load

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
RBAC = ROOT / "deploy" / "executor" / "base" / "rbac.yaml"
RUN_LABEL = "desched.test/run"


def _snapshot(run: str) -> list[Json]:
    """Three nodes (one tainted), duplicates, an untolerated-taint pod, a failed pod and a crash-looping pod."""

    def node(name: str, taints: list[Json] | None = None) -> Json:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {RUN_LABEL: run, "kubernetes.io/hostname": name}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}},
        }

    def pod(name: str, node_name: str, owner: str | None = "web", **status: Any) -> Json:
        metadata: Json = {"name": name, "namespace": "apps", "labels": {"app": owner or name}}
        if owner:
            metadata["ownerReferences"] = [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": owner,
                    "uid": f"uid-{owner}",
                    "controller": True,
                }
            ]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {
                "nodeName": node_name,
                "containers": [
                    {"name": "c", "image": f"{owner or name}:1", "resources": {"requests": {"cpu": "100m"}}}
                ],
            },
            "status": status or None,
        }

    restarting = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [
            {"name": "c", "ready": True, "restartCount": 9, "image": "crash:1", "imageID": "", "state": {"running": {}}}
        ],
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}},
        node("a"),
        node("b"),
        node("c", [{"key": "maintenance", "value": "yes", "effect": "NoSchedule"}]),
        pod("web-1", "a"),
        pod("web-2", "a"),
        pod("web-3", "a"),
        pod("web-4", "b"),
        pod("tainted-1", "c", owner="tainted"),
        pod("crash-1", "b", owner="crash", **restarting),
        pod("failed-1", "b", owner="batch", phase="Failed", reason="Error"),
    ]


def _policy(namespace: str, run: str, extra: str = "") -> str:
    return f"""apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: "{RUN_LABEL}={run}"
{extra}profiles:
- name: live
  pluginConfig:
  - name: DefaultEvictor
  - name: RemoveDuplicates
    args: {{namespaces: {{include: [{namespace}]}}}}
  - name: RemovePodsViolatingNodeTaints
    args: {{namespaces: {{include: [{namespace}]}}}}
  - name: RemovePodsHavingTooManyRestarts
    args: {{podRestartThreshold: 5, namespaces: {{include: [{namespace}]}}}}
  - name: RemoveFailedPods
    args: {{minPodLifetimeSeconds: 0, namespaces: {{include: [{namespace}]}}}}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints, RemovePodsHavingTooManyRestarts, RemoveFailedPods]
    balance:
      enabled: [RemoveDuplicates]
"""


@pytest.fixture
def loaded(kube: Api, kubelet: FakeKubelet) -> Iterator[tuple[str, str]]:
    """The snapshot loaded with unique names: (namespace, run label value)."""
    run = secrets.token_hex(3)
    objects = isolate(_snapshot(run), f"-{run}")
    for obj in objects:
        if obj["kind"] == "Node":
            obj["metadata"]["labels"][RUN_LABEL] = run
    load(kube, kubelet, objects)
    namespace = f"apps-{run}"
    yield namespace, run
    kube.delete("v1", "Namespace", namespace)
    kubelet.remove_nodes(obj["metadata"]["name"] for obj in objects if obj["kind"] == "Node")


def _listed(kube: Api, namespace: str, run: str) -> list[Json]:
    """The live cluster as ``kubectl get -o json`` would print it, restricted to this test's objects."""

    def typed(api_version: str, kind: str, items: list[Json]) -> list[Json]:
        return [{"apiVersion": api_version, "kind": kind, **item} for item in items]

    nodes = [node for node in kube.list("v1", "Node") if node["metadata"].get("labels", {}).get(RUN_LABEL) == run]
    version = kube.pdb_version()
    return [
        *typed("v1", "Node", nodes),
        *typed("v1", "Namespace", [kube.get("v1", "Namespace", namespace)]),
        *typed("v1", "Pod", kube.list("v1", "Pod", namespace)),
        *typed(version, "PodDisruptionBudget", kube.list(version, "PodDisruptionBudget", namespace)),
    ]


def _desched(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    try:
        document = json.loads(out)
    except ValueError:
        document = out
    return code, document, err


def _evicted(document: Json) -> list[tuple[str, str, str]]:
    return sorted((e["pod"], e["plugin"], e["node"]) for e in document["evictions"])


def test_run_evicts_exactly_what_simulate_predicted(
    control_plane: ControlPlane,
    kube: Api,
    kubelet: FakeKubelet,
    loaded: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace, run = loaded
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run))
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _listed(kube, namespace, run)}))

    code, predicted, err = _desched(
        capsys, "simulate", "--policy", str(policy), "--cluster", str(snapshot), "--format", "json"
    )
    assert code == 0, err
    assert {pod for pod, _, _ in _evicted(predicted)} == {"tainted-1", "crash-1", "failed-1", _duplicate(predicted)}
    code, done, err = _desched(
        capsys, "run", "--policy", str(policy), "--kubeconfig", control_plane.kubeconfig, "--format", "json"
    )
    assert code == 0, err
    assert _evicted(done) == _evicted(predicted)
    assert done["failures"] == []
    assert "cannot record an event" not in err, err
    kubelet.settle()
    remaining = {pod["metadata"]["name"] for pod in kube.list("v1", "Pod", namespace)}
    assert not remaining & {pod for pod, _, _ in _evicted(done)}
    events = kube.list("events.k8s.io/v1", "Event", namespace)
    assert sorted((e["regarding"]["name"], e["reason"], e["action"]) for e in events) == sorted(
        (pod, plugin, "Descheduled") for pod, plugin, _ in _evicted(done)
    )


def _duplicate(document: Json, outcome: str = "evictions") -> str:
    """The one web pod RemoveDuplicates evicts (or, with ``outcome="failures"``, tries to evict) from node a: which
    of the three duplicates is unspecified."""
    web = [str(entry["pod"]) for entry in document[outcome] if entry["pod"].startswith("web-")]
    assert len(web) == 1 and web[0] in ("web-1", "web-2", "web-3"), web
    return web[0]


def _bind(kube: Api, user: str, name: str) -> None:
    """Apply deploy/'s ClusterRole (renamed) and bind it to ``user``."""
    role = next(doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc["kind"] == "ClusterRole")
    role["metadata"]["name"] = name
    kube.create(role)
    kube.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
        }
    )


@pytest.fixture
def executor_role(kube: Api) -> Iterator[str]:
    name = f"desched-executor-{secrets.token_hex(3)}"
    _bind(kube, "executor", name)
    yield name
    kube.delete("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name)
    kube.delete("rbac.authorization.k8s.io/v1", "ClusterRole", name)


def test_dry_run_decides_like_simulate_and_sends_no_mutating_request(
    control_plane: ControlPlane,
    kube: Api,
    loaded: tuple[str, str],
    executor_role: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace, run = loaded
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run))
    before = len(control_plane.audit_events("executor"))
    code, done, err = _desched(
        capsys,
        "run",
        "--dry-run",
        "--policy",
        str(policy),
        "--kubeconfig",
        control_plane.kubeconfig,
        "--context",
        "executor",
        "--format",
        "json",
    )
    assert code == 0, err
    assert done["summary"]["dryRun"] is True
    assert {pod for pod, _, _ in _evicted(done)} >= {"tainted-1", "crash-1", "failed-1"}
    requests = wait_for(lambda: control_plane.audit_events("executor")[before:], what="the audit log")
    assert {event["verb"] for event in requests} <= {"get", "list"}, requests
    assert {pod["metadata"]["name"] for pod in kube.list("v1", "Pod", namespace)} >= {"tainted-1", "crash-1"}


def test_a_pdb_refusal_is_handled_per_pod_and_the_cycle_goes_on(
    control_plane: ControlPlane,
    kube: Api,
    loaded: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace, run = loaded
    kube.create(
        {
            "apiVersion": kube.pdb_version(),
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "tainted", "namespace": namespace},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "tainted"}}},
        }
    )

    def settled() -> bool:
        status = kube.get(kube.pdb_version(), "PodDisruptionBudget", "tainted", namespace).get("status") or {}
        return bool(status.get("observedGeneration")) and status.get("disruptionsAllowed") == 0

    wait_for(settled, what="the disruption controller")
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run))
    code, done, err = _desched(
        capsys, "run", "--policy", str(policy), "--kubeconfig", control_plane.kubeconfig, "--format", "json"
    )
    assert code == 0, err
    assert [(f["pod"], f["status"]) for f in done["failures"]] == [("tainted-1", 429)]
    assert "disruption budget" in done["failures"][0]["message"] and "(ignoring)" in done["failures"][0]["message"]
    assert {"crash-1", "failed-1"} <= {pod for pod, _, _ in _evicted(done)}  # the cycle went on after the 429


def test_the_deploy_role_is_sufficient_and_no_broader(
    control_plane: ControlPlane,
    kube: Api,
    loaded: tuple[str, str],
    executor_role: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace, run = loaded
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run))
    code, done, err = _desched(
        capsys,
        "run",
        "--policy",
        str(policy),
        "--kubeconfig",
        control_plane.kubeconfig,
        "--context",
        "executor",
        "--format",
        "json",
    )
    assert code == 0, err
    assert done["failures"] == [] and len(done["evictions"]) == 4
    assert "cannot record an event" not in err
    with control_plane.api("executor") as executor:
        wait_for(lambda: _allowed(executor, lambda: executor.list("v1", "Pod", namespace)), what="RBAC")
        forbidden: list[Callable[[], Any]] = [
            lambda: executor.delete("v1", "Pod", "web-4", namespace),
            lambda: executor.create(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "x", "namespace": namespace},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                }
            ),
            lambda: executor.list("v1", "Secret", namespace),
            lambda: executor.list("v1", "ConfigMap", namespace),
            lambda: executor.patch("v1", "Node", next(iter(_nodes(kube, run))), {"spec": {"unschedulable": True}}),
            lambda: executor.list("apps/v1", "Deployment", namespace),
            # what a cycle never does: watch (it lists), and write core v1 Events (it writes events.k8s.io/v1 ones)
            lambda: executor.list("v1", "Pod", namespace, watch="true", timeoutSeconds=1),
            lambda: executor.create(
                {
                    "apiVersion": "v1",
                    "kind": "Event",
                    "metadata": {"name": "x", "namespace": namespace},
                    "involvedObject": {"kind": "Pod", "name": "web-4", "namespace": namespace},
                    "reason": "Test",
                    "message": "not the executor's",
                }
            ),
        ]
        for attempt in forbidden:
            with pytest.raises(ApiError) as denied:
                attempt()
            assert denied.value.status == 403


def _nodes(kube: Api, run: str) -> list[str]:
    return [n["metadata"]["name"] for n in kube.list("v1", "Node") if n["metadata"]["labels"].get(RUN_LABEL) == run]


def _allowed(api: Api, call: Any) -> bool:
    try:
        call()
    except ApiError:
        return False
    return True


def test_interval_mode_repeats_cycles_serves_metrics_and_stops_on_sigterm(
    control_plane: ControlPlane, loaded: tuple[str, str], tmp_path: Path
) -> None:
    namespace, run = loaded
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run))
    (port,) = free_ports(1)
    command = [
        sys.executable,
        "-m",
        "desched",
        "run",
        "--policy",
        str(policy),
        "--kubeconfig",
        control_plane.kubeconfig,
        "--interval",
        "1s",
        "--dry-run",
        "--format",
        "json",
        "--metrics-bind-address",
        f"127.0.0.1:{port}",
    ]
    runner = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:

        def scraped() -> str | None:
            try:
                # HTTPS with the self-signed certificate made at start, unverified as a kubelet probe does
                unverified = ssl.create_default_context()
                unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
                url = f"https://127.0.0.1:{port}/metrics"
                with urllib.request.urlopen(url, timeout=2, context=unverified) as answer:
                    text = answer.read().decode()
            except OSError:
                return None
            return text if "descheduler_loop_duration_seconds_count 2" in text else None

        metrics = wait_for(scraped, timeout=60, what="two cycles in the metrics")
        runner.send_signal(signal.SIGTERM)
        out, err = runner.communicate(timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 0, err
    assert out.count('"evictions"') >= 2
    assert re.search(
        r'descheduler_pods_evicted_total\{result="success",strategy="RemovePodsViolatingNodeTaints",'
        rf'profile="live",namespace="{namespace}",node="c-{run}"\}} [1-9]',
        metrics,
    ), metrics
    assert 'descheduler_strategy_duration_seconds_count{strategy="RemoveDuplicates",profile="live"}' in metrics


@pytest.mark.parametrize(
    ("enabled", "runs"),
    [("[DefaultEvictor]", True), ("[DefaultEvictor, RemoveDuplicates]", False)],
    ids=["only-default-evictor-warns-and-runs", "another-plugin-is-refused"],
)
def test_a_camel_case_pre_eviction_filter_runs_only_when_upstream_would_run_it_identically(
    control_plane: ControlPlane,
    loaded: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    enabled: str,
    runs: bool,
) -> None:
    namespace, run = loaded
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run) + f"    preEvictionFilter:\n      enabled: {enabled}\n")
    plain = tmp_path / "plain.yaml"
    plain.write_text(_policy(namespace, run))
    args = ("run", "--dry-run", "--kubeconfig", control_plane.kubeconfig, "--format", "json")
    code, done, err = _desched(capsys, *args, "--policy", str(policy))
    if not runs:
        assert code == 2 and "DS003" in err and "lint errors" in err
        return
    assert code == 0, err
    assert 'unknown field "preEvictionFilter"' in err and "(DS003)" in err
    _, expected, _ = _desched(capsys, *args, "--policy", str(plain))
    assert sorted(_evicted(done)) == sorted(_evicted(expected))


def test_with_pdbs_run_evicts_and_is_refused_exactly_as_simulate_predicted(
    control_plane: ControlPlane,
    kube: Api,
    loaded: tuple[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace, run = loaded
    version = kube.pdb_version()
    budgets = {"web": {"minAvailable": 4}, "crash": {"maxUnavailable": 1}, "tainted": {"maxUnavailable": "0%"}}
    for app, spec in budgets.items():
        kube.create(
            {
                "apiVersion": version,
                "kind": "PodDisruptionBudget",
                "metadata": {"name": app, "namespace": namespace},
                "spec": {**spec, "selector": {"matchLabels": {"app": app}}},
            }
        )

    def observed() -> bool:
        listed = kube.list(version, "PodDisruptionBudget", namespace)
        return len(listed) == 3 and all((pdb.get("status") or {}).get("observedGeneration") for pdb in listed)

    wait_for(observed, what="the disruption controller's PDB status")
    policy = tmp_path / "policy.yaml"
    policy.write_text(_policy(namespace, run))
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": _listed(kube, namespace, run)}))

    def refused(document: Json) -> list[tuple[str, str]]:
        return sorted((f["pod"], f["outcome"]) for f in document["failures"])

    args = ("--policy", str(policy), "--format", "json")
    code, predicted, err = _desched(capsys, "simulate", "--cluster", str(snapshot), *args)
    assert code == 0, err
    assert {pod for pod, _, _ in _evicted(predicted)} == {"crash-1", "failed-1"}
    assert refused(predicted) == sorted([(_duplicate(predicted, "failures"), "refused"), ("tainted-1", "refused")])
    assert any(
        "disruption budget" in f["message"] and f"{namespace}/tainted" in f["message"] for f in predicted["failures"]
    )
    code, ignoring, _ = _desched(capsys, "simulate", "--ignore-pdbs", "--cluster", str(snapshot), *args)
    assert {pod for pod, _, _ in _evicted(ignoring)} >= {"tainted-1", "crash-1", "failed-1"}
    code, done, err = _desched(capsys, "run", "--kubeconfig", control_plane.kubeconfig, *args)
    assert code == 0, err  # refusals by a PDB are what run expects
    assert _evicted(done) == _evicted(predicted)
    assert refused(done) == refused(predicted)
