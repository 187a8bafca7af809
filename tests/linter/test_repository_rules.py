"""DS401-DS407 over a repository of manifests: the exact findings, in text and JSON (golden files).

Regenerate with ``DESCHED_UPDATE_GOLDENS=1 pytest tests/linter/test_repository_rules.py`` and review the diff.
"""

from __future__ import annotations

import io
import json
import os
import sys

import pytest

from desched.cli import main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPOSITORY = "tests/linter/golden/repository"
GOLDEN = os.path.join(ROOT, "tests", "linter", "golden")
POLICY = (
    "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
    "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n"
)


def _run(monkeypatch: pytest.MonkeyPatch, fmt: str) -> tuple[int, str]:
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    code = main(["lint", "--no-config", "--color", "never", "--format", fmt, REPOSITORY])
    return code, out.getvalue()


@pytest.mark.parametrize(("fmt", "name"), [("json", "repository.json"), ("text", "repository.txt")])
def test_repository_findings_match_golden(monkeypatch, fmt, name):
    code, output = _run(monkeypatch, fmt)
    assert code == 1  # DS403 is an error
    path = os.path.join(GOLDEN, name)
    if os.environ.get("DESCHED_UPDATE_GOLDENS"):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(output)
    with open(path, encoding="utf-8") as handle:
        assert output == handle.read()


def test_every_workload_rule_fires_once_per_workload(monkeypatch):
    _, output = _run(monkeypatch, "json")
    findings = [f for f in json.loads(output)["findings"] if f["rule"].startswith("DS4")]
    assert {f["rule"] for f in findings} == {"DS401", "DS402", "DS403", "DS404", "DS405", "DS406", "DS407"}
    keys = [(f["rule"], f["object"]) for f in findings]
    assert len(keys) == len(set(keys))
    by_object = {(f["rule"], f["object"]): f for f in findings}
    assert ("DS401", "Deployment payments/fraud-scorer") in by_object
    assert ("DS401", "Deployment shop/web") not in by_object  # covered by a PDB
    assert ("DS402", "PodDisruptionBudget payments/ledger") in by_object
    assert ("DS406", "Deployment kube-system/coredns") in by_object
    assert ("DS406", "DaemonSet kube-system/node-agent") not in by_object  # DaemonSetPods still protects it


def test_suppression_applies_in_the_workload_file(tmp_path, monkeypatch):
    workload = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  # desched: disable=DS404 a cache, fine to restart\n"
        "  name: cache\n  namespace: a\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: cache}}\n"
        "  template:\n    metadata: {labels: {app: cache}}\n    spec: {containers: [{name: c, image: i}]}\n"
    )
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "cache.yaml").write_text(workload)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["lint", "--no-config", "--format", "sarif", "."]) == 0
    [result] = [r for r in json.loads(out.getvalue())["runs"][0]["results"] if r["ruleId"] == "DS404"]
    assert result["suppressions"][0]["justification"] == "a cache, fine to restart"


def test_a_workload_an_hpa_may_scale_to_one_replica_is_a_single_replica_risk(tmp_path, monkeypatch):
    """``replicas: 4`` with an HPA at ``minReplicas: 1`` can run as one pod: DS404, not DS401."""
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 4\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec:\n      containers: [{name: web, image: web:1}]\n"
    )
    hpa = (
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: {minimum}\n"
        "  maxReplicas: 10\n"
    )
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "web.yaml").write_text(deployment)

    def rules(minimum: int) -> list[str]:
        (tmp_path / "hpa.yaml").write_text(hpa.replace("{minimum}", str(minimum)))
        out = io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        main(["lint", "--no-config", "--format", "json", str(tmp_path)])
        return sorted(f["rule"] for f in json.loads(out.getvalue())["findings"] if f["object"] == "Deployment shop/web")

    assert rules(1) == ["DS404"]
    assert rules(3) == ["DS401"]


def test_a_single_replica_finding_names_each_profile_once(tmp_path, monkeypatch):
    """DS404 names each profile that may evict the workload once, with its plugins (issue 37, observed 2), and a
    profile converted from a v1alpha1 strategy, which names its plugin itself, alone."""
    policy = (
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: a\n  pluginConfig:\n"
        "  - name: RemoveDuplicates\n  - name: RemovePodsViolatingNodeTaints\n  plugins:\n"
        "    balance: {enabled: [RemoveDuplicates]}\n    deschedule: {enabled: [RemovePodsViolatingNodeTaints]}\n"
        "- name: strategy-RemoveDuplicates-profile\n  pluginConfig:\n  - name: RemoveDuplicates\n  plugins:\n"
        "    balance: {enabled: [RemoveDuplicates]}\n"
    )
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
        "    spec:\n      containers: [{name: web, image: web:1}]\n"
    )
    (tmp_path / "policy.yaml").write_text(policy)
    (tmp_path / "web.yaml").write_text(deployment)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    main(["lint", "--no-config", "--format", "json", str(tmp_path)])
    (message,) = [f["message"] for f in json.loads(out.getvalue())["findings"] if f["rule"] == "DS404"]
    assert message.startswith(
        "single replica evictable by profile a (RemovePodsViolatingNodeTaints, RemoveDuplicates), "
        "profile strategy-RemoveDuplicates-profile of DeschedulerPolicy"
    )
