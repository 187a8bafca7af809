"""``desched scope``: golden reports of a small repository and a cluster snapshot, exit codes, light imports.

The goldens live in ``golden/`` (inputs ``golden/repo/`` and ``golden/cluster/``); each case runs from inside
``golden/`` so that file names are relative. Regenerate after an intended change with
``DESCHED_UPDATE_GOLDENS=1 python -m pytest tests/linter/scope/test_command.py`` and review the diff.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desched.linter.scope import SCOPE, run

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("DESCHED_UPDATE_GOLDENS") == "1"
ROOT = Path(__file__).parents[3]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="desched scope")
    SCOPE.add_arguments(parser)
    return parser.parse_args(argv)


def scope(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run(parse(argv))
    out, err = capsys.readouterr()
    return code, out, err


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{name} is missing: run with DESCHED_UPDATE_GOLDENS=1"
    assert text == path.read_text(encoding="utf-8")


CASES = {
    "repo.txt": ["repo"],
    "repo.json": ["repo", "--format", "json"],
    "repo-all.txt": ["repo", "--all"],
    "cluster.json": ["--cluster", "cluster/snapshot.yaml", "--policy", "cluster/policy.yaml", "--format", "json"],
    "cluster.txt": ["--cluster", "cluster/snapshot.yaml", "--policy", "cluster/policy.yaml"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case, capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    code, out, err = scope(CASES[case], capsys)
    assert (code, err) == (0, "")
    check_golden(case, out)


def repo_report(capsys, monkeypatch, *extra):
    monkeypatch.chdir(GOLDEN)
    code, out, _ = scope(["repo", "--format", "json", *extra], capsys)
    assert code == 0
    return json.loads(out)


def workloads_of(report, obj):
    (policy,) = [p for p in report["policies"] if p["object"] == obj]
    return policy, {f"{w['kind']}/{w['namespace']}/{w['name']}": w for w in policy["workloads"]}


def test_repo_report_content(capsys, monkeypatch):
    report = repo_report(capsys, monkeypatch)
    assert report["summary"] == {"policies": 2, "workloads": 6, "evictable": 3}
    policy, workloads = workloads_of(report, "ConfigMap kube-system/descheduler")
    assert (policy["file"], policy["target"], policy["converted"]) == ("repo/policy-configmap.yaml", "v0.36", False)
    api = workloads["Deployment/shop/api"]
    assert api["replicas"] == 3  # spec.replicas 1, raised by the HPA
    assert api["evictable"] and {"profile": "default", "plugin": "PodLifeTime"} in api["targeted_by"]
    assert [(p["name"], p["allowed_disruptions"]) for p in api["pdbs"]] == [("backend", 1)]
    worker = workloads["Deployment/shop/worker"]
    assert not worker["evictable"] and worker["pdbs"] == []
    no_pdb = "default/PodLifeTime: protected: PodsWithoutPDB (no PodDisruptionBudget selects its pods)"
    assert no_pdb in worker["reasons"]
    agent = workloads["DaemonSet/kube-system/node-agent"]
    assert agent["replicas"] is None
    assert any("namespace kube-system excluded by PodLifeTime" in reason for reason in agent["reasons"])
    assert workloads["StatefulSet/shop/db"]["pdbs"][0]["allowed_disruptions"] == 2
    assert not workloads["Pod/shop/debug"]["evictable"]
    helm, helm_workloads = workloads_of(report, "Helm values deschedulerPolicy")
    assert (helm["target"], helm["converted"], helm["api_version"]) == ("v0.29", True, "descheduler/v1alpha1")
    assert "protected: PodsWithLocalStorage" in " ".join(helm_workloads["Deployment/shop/worker"]["reasons"])
    for policy in report["policies"]:
        keys = [(w["namespace"], w["kind"], w["name"]) for w in policy["workloads"]]
        assert keys == sorted(keys)
        assert all("_compact" not in w and "verdicts" not in w for w in policy["workloads"])


def test_target_version_applies_to_every_policy(capsys, monkeypatch):
    report = repo_report(capsys, monkeypatch, "--target-version", "v0.31")
    assert {p["target"] for p in report["policies"]} == {"v0.31"}


def test_all_adds_verdicts_to_json(capsys, monkeypatch):
    report = repo_report(capsys, monkeypatch, "--all")
    _, workloads = workloads_of(report, "ConfigMap kube-system/descheduler")
    verdicts = workloads["Pod/shop/debug"]["verdicts"]
    assert [(v["profile"], v["plugin"], v["evictable"]) for v in verdicts] == [
        ("default", "PodLifeTime", False),
        ("default", "RemoveDuplicates", False),
    ]


def test_cluster_snapshot(capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    argv = ["--cluster", "cluster/snapshot.yaml", "--policy", "cluster/policy.yaml", "--format", "json"]
    code, out, err = scope(argv, capsys)
    assert (code, err) == (0, "")
    report = json.loads(out)
    (policy,) = report["policies"]
    assert policy["file"] == "cluster/policy.yaml"  # analysed despite its DS003 lint error
    workloads = {w["name"]: w for w in policy["workloads"]}
    assert set(workloads) == {"checkout", "payments", "preview"}  # nothing read from the current directory
    checkout = workloads["checkout"]
    assert checkout["evictable"] and checkout["file"] == "cluster/snapshot.yaml"
    assert checkout["targeted_by"] == [{"profile": "prod", "plugin": "RemovePodsHavingTooManyRestarts"}]
    assert [(p["name"], p["allowed_disruptions"]) for p in checkout["pdbs"]] == [("checkout", 1)]
    payments = workloads["payments"]
    assert payments["reasons"] == [
        "prod/RemovePodsHavingTooManyRestarts: protected: priority 1000000 (class high-priority) >= "
        "priorityThreshold 1000000"
    ]
    assert payments["pdbs"][0]["allowed_disruptions"] == 0
    assert workloads["preview"]["reasons"] == [
        "prod/RemovePodsHavingTooManyRestarts: namespace staging labels do not match DefaultEvictor "
        "namespaceLabelSelector"
    ]
    assert report["summary"] == {"policies": 1, "workloads": 3, "evictable": 1}


def test_cluster_with_repository_and_policy_from_paths(capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    code, out, _ = scope(["repo", "--cluster", "cluster/snapshot.yaml", "--format", "json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["summary"]["policies"] == 2  # from repo/ only: --policy not given
    assert report["summary"]["workloads"] == 9


def test_policy_option_replaces_policies_of_paths(capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    code, out, _ = scope(["repo", "--policy", "cluster/policy.yaml", "--format", "json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert [p["file"] for p in report["policies"]] == ["cluster/policy.yaml"]
    assert report["summary"]["workloads"] == 6


def test_file_named_twice_is_read_once(capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    code, out, _ = scope(["repo", "repo/apps/shop.yaml", "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["summary"]["workloads"] == 6


def test_stdin(capsys, monkeypatch):
    cluster = GOLDEN / "cluster"
    text = (cluster / "policy.yaml").read_text() + "---\n" + (cluster / "snapshot.yaml").read_text()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = scope(["-", "--format", "json"], capsys)
    assert code == 0
    report = json.loads(out)
    assert report["policies"][0]["file"] == "-"
    assert report["summary"]["workloads"] == 3


def test_policy_without_evicting_plugins(tmp_path, capsys, monkeypatch):
    (tmp_path / "p.yaml").write_text(
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n  - name: idle\n    plugins: {}\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = scope([], capsys)
    assert code == 0
    assert "Pod default/p  (./p.yaml:7)  not evictable: no deschedule or balance plugin is enabled" in out
    assert out.endswith("1 policy, 1 workload, 0 evictable by at least one policy\n")


def test_unparseable_file_is_skipped_with_a_warning(tmp_path, capsys, monkeypatch):
    (tmp_path / "bad.yaml").write_text("a: [\n")
    monkeypatch.chdir(GOLDEN)
    code, _, err = scope(["repo", str(tmp_path)], capsys)
    assert code == 0
    assert err.startswith(f"desched: warning: {tmp_path / 'bad.yaml'}:")


# --- exit code 2 ----------------------------------------------------------------------------------------------------


def test_no_policy(tmp_path, capsys):
    (tmp_path / "app.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    code, out, err = scope([str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert err == ("desched: no descheduler policy found in the inputs (give PATH with a policy, or --policy FILE)\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["missing-dir"], "desched: cannot read missing-dir: no such file or directory\n"),
        (["repo", "--cluster", "missing.yaml"], "desched: cannot read missing.yaml: no such file or directory\n"),
        (["repo", "--policy", "missing.yaml"], "desched: cannot read missing.yaml: no such file or directory\n"),
        (["repo", "--target-version", "v0.99"], "desched: unsupported descheduler version 'v0.99'"),
        (["-", "--cluster", "-"], "desched: - (stdin) can be given only once\n"),
    ],
)
def test_usage_errors(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(GOLDEN)
    code, out, err = scope(argv, capsys)
    assert (code, out) == (2, "")
    assert err.startswith(message) and err.count("\n") == 1


def test_unparseable_snapshot(tmp_path, capsys, monkeypatch):
    snapshot = tmp_path / "snap.yaml"
    snapshot.write_text("items: [\n")
    monkeypatch.chdir(GOLDEN)
    code, _, err = scope(["--cluster", str(snapshot), "--policy", "cluster/policy.yaml"], capsys)
    assert code == 2
    assert err.startswith(f"desched: cannot read {snapshot}:") and err.count("\n") == 1


# --- light imports --------------------------------------------------------------------------------------------------


def test_scope_never_imports_heavy_stacks():
    script = (
        "import argparse, contextlib, io, sys\n"
        "from desched.linter.scope import SCOPE, run\n"
        "parser = argparse.ArgumentParser(); SCOPE.add_arguments(parser)\n"
        f"args = parser.parse_args([{str(GOLDEN / 'repo')!r}, '--format', 'json'])\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = run(args)\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'jsonschema', 'fastapi'))\n"
        "print(code, heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "0 []"


def test_scope_judges_a_kubedescheduler_by_the_policy_the_operator_renders(tmp_path, capsys):
    import shutil

    golden = os.path.join(os.path.dirname(__file__), "..", "..", "kernel", "openshift", "golden", "example1.input.yaml")
    shutil.copy(golden, tmp_path / "kubedescheduler.yaml")
    (tmp_path / "app.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: i}]}\n"
    )
    from desched.cli import main

    assert main(["scope", "--format", "json", str(tmp_path)]) == 0
    [policy] = json.loads(capsys.readouterr().out)["policies"]
    assert policy["converted"] is True and policy["object"].startswith("KubeDescheduler")
    [workload] = policy["workloads"]
    assert workload["evictable"] is True
    assert {entry["plugin"] for entry in workload["targeted_by"]} >= {"PodLifeTime", "LowNodeUtilization"}
