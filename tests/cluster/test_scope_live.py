"""``desched scope --kubeconfig`` reads the live cluster read-only and judges it as it judges a snapshot."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from tests.kcp.api import Api, Json
from tests.kcp.controlplane import ControlPlane, free_ports
from tests.kcp.snapshot import LoadReport, isolate, read

SMALL = Path(__file__).parent.parent / "fixtures" / "snapshots" / "small.yaml"
POLICY = """\
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: default
  pluginConfig:
  - name: DefaultEvictor
    args: {podProtections: {extraEnabled: [PodsWithoutPDB]}}
  - name: RemoveDuplicates
  - name: RemoveFailedPods
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 86400}
  plugins:
    balance: {enabled: [RemoveDuplicates]}
    deschedule: {enabled: [RemoveFailedPods, PodLifeTime]}
"""
Loader = Callable[[list[Json]], tuple[str, LoadReport]]


def _scope(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(["scope", "--format", "json", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code == 0 else None, err


def _in(report: Any, namespace: str) -> list[Json]:
    return [
        {key: workload[key] for key in ("kind", "name", "evictable", "reasons", "targeted_by", "replicas")}
        | {"pdbs": [pdb["name"] for pdb in workload["pdbs"]]}
        for workload in report["policies"][0]["workloads"]
        if workload["namespace"] == namespace
    ]


@pytest.mark.cluster
def test_the_live_cluster_is_judged_like_the_same_objects_in_a_snapshot(
    control_plane: ControlPlane, kube: Api, load_snapshot: Loader, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix, _ = load_snapshot(read([SMALL]))
    namespace = "shop" + suffix
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code, live, err = _scope(capsys, "--policy", str(policy), "--kubeconfig", control_plane.kubeconfig)
    assert code == 0, err
    assert err == ""

    # The same objects offline: the snapshot as loaded, plus the ReplicaSet the loader synthesized on the server.
    offline_objects = [*isolate(read([SMALL]), suffix), kube.get("apps/v1", "ReplicaSet", "web-7d9f", namespace)]
    offline_objects[-1] |= {"apiVersion": "apps/v1", "kind": "ReplicaSet"}
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": offline_objects}))
    code, offline, err = _scope(capsys, "--policy", str(policy), "--cluster", str(snapshot))
    assert code == 0, err

    judged = _in(live, namespace)
    assert judged == _in(offline, namespace)
    by_name = {(item["kind"], item["name"]): item for item in judged}
    assert by_name[("ReplicaSet", "web-7d9f")]["evictable"] is True
    assert by_name[("ReplicaSet", "web-7d9f")]["pdbs"] == ["web"]
    assert live["policies"][0]["workloads"][0]["file"] == "cluster:admin"


@pytest.mark.cluster
def test_kinds_the_credentials_may_not_list_are_skipped_with_a_warning(
    control_plane: ControlPlane, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code, report, err = _scope(
        capsys, "--policy", str(policy), "--kubeconfig", control_plane.kubeconfig, "--context", "unprivileged"
    )
    assert code == 0, err
    assert report["summary"]["workloads"] == 0
    lines = err.splitlines()
    assert len(lines) == 14
    assert (
        'desched: warning: cannot list Pod (v1): GET /api/v1/pods: 403 pods is forbidden: User "unprivileged" cannot '
        'list resource "pods" in API group "" at the cluster scope; workloads are judged without them'
    ) in lines
    assert any(line.startswith("desched: warning: cannot list PodDisruptionBudget (policy/v1beta1)") for line in lines)


def test_an_unreachable_cluster_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "kubeconfig"
    server = f"https://127.0.0.1:{free_ports(1)[0]}"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "k", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            }
        )
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code, _, err = _scope(capsys, "--policy", str(policy), "--kubeconfig", str(config))
    assert code == 2
    assert err.startswith(f"desched: cannot reach {server}: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "context", "message"),
    [
        ("not: [a kubeconfig", None, "desched: cannot load {config}: "),
        (
            '{"apiVersion": "v1", "kind": "Config", "contexts": [], "clusters": [], "users": []}',
            "nope",
            "desched: cannot load {config}: ",
        ),
    ],
    ids=["broken-yaml", "unknown-context"],
)
def test_an_unusable_kubeconfig_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, context: str | None, message: str
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(content)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    extra = ["--context", context] if context else []
    code, _, err = _scope(capsys, "--policy", str(policy), "--kubeconfig", str(config), *extra)
    assert code == 2
    assert err.startswith(message.format(config=config)) and err.count("\n") == 1


def test_context_without_kubeconfig_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code, _, err = _scope(capsys, "--policy", str(policy), "--context", "x")
    assert (code, err) == (2, "desched: --context needs --kubeconfig\n")
