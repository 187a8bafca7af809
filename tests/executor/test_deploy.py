"""deploy/executor: every runner builds, runs ``desched run`` on the policy ConfigMap, hardened, least privilege."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "executor"
RUNNERS = {"job": "Job", "cronjob": "CronJob", "deployment": "Deployment", "dry-run": "CronJob"}


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec = workload["spec"]
    template = spec["jobTemplate"]["spec"]["template"] if workload["kind"] == "CronJob" else spec["template"]
    return dict(template["spec"])


def _resources(directory: Path) -> list[dict[str, Any]]:
    """The objects of a kustomization, following ``resources`` (the subset of Kustomize these files use)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    objects: list[dict[str, Any]] = []
    for entry in kustomization.get("resources", []):
        target = directory / entry
        objects += _resources(target) if target.is_dir() else _load(target)
    return objects


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_runner_runs_desched_on_the_policy_hardened(runner: str) -> None:
    objects = _resources(DEPLOY / runner)
    (workload,) = [obj for obj in objects if obj["kind"] in ("Job", "CronJob", "Deployment")]
    assert workload["kind"] == RUNNERS[runner]
    pod = _pod_spec(workload)
    (container,) = pod["containers"]
    assert container["args"][:3] == ["run", "--policy", "/policy/policy.yaml"]
    assert ("--dry-run" in container["args"]) is False  # the overlay adds it as a patch, checked below
    assert pod["serviceAccountName"] == "desched-executor"
    assert pod["securityContext"]["runAsNonRoot"] is True
    security = container["securityContext"]
    assert security == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert pod["volumes"] == [{"name": "policy", "configMap": {"name": "desched-policy"}}]
    if runner == "deployment":
        assert container["args"][3:] == ["--interval", "5m", "--metrics-bind-address", "0.0.0.0:10258"]


def test_the_dry_run_overlay_adds_dry_run() -> None:
    kustomization = yaml.safe_load((DEPLOY / "dry-run" / "kustomization.yaml").read_text())
    (patch,) = kustomization["patches"]
    assert yaml.safe_load(patch["patch"]) == [
        {"op": "add", "path": "/spec/jobTemplate/spec/template/spec/containers/0/args/-", "value": "--dry-run"}
    ]


def test_the_role_reads_what_a_cycle_lists_and_writes_only_evictions_and_events() -> None:
    role = next(obj for obj in _load(DEPLOY / "base" / "rbac.yaml") if obj["kind"] == "ClusterRole")
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    writes = {entry for entry in granted if entry[2] not in ("get", "list", "watch")}
    assert writes == {("", "pods/eviction", "create"), ("", "events", "create"), ("events.k8s.io", "events", "create")}
    reads = {(group, resource) for group, resource, _ in granted - writes}
    assert reads == {
        ("", "nodes"),
        ("", "pods"),
        ("", "namespaces"),
        ("", "persistentvolumeclaims"),
        ("policy", "poddisruptionbudgets"),
        ("scheduling.k8s.io", "priorityclasses"),
    }


def test_the_shipped_policy_lints_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--no-config", str(DEPLOY / "base" / "policy.yaml")]) == 0
    capsys.readouterr()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (for kubectl kustomize) is not installed")
@pytest.mark.parametrize("runner", RUNNERS)
def test_kustomize_builds_each_runner(runner: str) -> None:
    done = subprocess.run(["kubectl", "kustomize", str(DEPLOY / runner)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    built = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    assert {doc["kind"] for doc in built} >= {
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        RUNNERS[runner],
    }
    assert all(doc["metadata"].get("namespace") in (None, "desched-system") for doc in built)
    workload = next(doc for doc in built if doc["kind"] == RUNNERS[runner])
    assert _pod_spec(workload)["containers"][0]["image"] == "ghcr.io/desched/desched:0.1.0"
    assert ("--dry-run" in _pod_spec(workload)["containers"][0]["args"]) is (runner == "dry-run")
