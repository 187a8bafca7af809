"""deploy/executor: every runner builds, runs ``desched run`` on the policy ConfigMap, hardened, least privilege."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from desched.cli import main
from desched.deployment import access
from desched.deployment.rbac import Grants
from desched.deployment.runs import descheduler_runs
from tests.chart.kustomize import CLUSTER_KINDS, build_python

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "executor"
RUNNERS = {"job": "Job", "cronjob": "CronJob", "deployment": "Deployment", "dry-run": "CronJob"}
NAMESPACE = "desched-system"


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec = workload["spec"]
    template = spec["jobTemplate"]["spec"]["template"] if workload["kind"] == "CronJob" else spec["template"]
    return dict(template["spec"])


def _workload(runner: str) -> dict[str, Any]:
    (workload,) = [obj for obj in build_python(DEPLOY / runner) if obj["kind"] in ("Job", "CronJob", "Deployment")]
    return workload


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_runner_runs_desched_on_the_policy_hardened(runner: str) -> None:
    objects = build_python(DEPLOY / runner)
    (workload,) = [obj for obj in objects if obj["kind"] in ("Job", "CronJob", "Deployment")]
    assert workload["kind"] == RUNNERS[runner]
    pod = _pod_spec(workload)
    (container,) = pod["containers"]
    assert container["args"][:3] == ["run", "--policy", "/policy/policy.yaml"]
    assert ("--dry-run" in container["args"]) is (runner == "dry-run")  # the overlay's patch adds it
    assert pod["serviceAccountName"] == "desched-executor"
    assert pod["securityContext"]["runAsNonRoot"] is True
    security = container["securityContext"]
    assert security == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert pod["volumes"][0] == {"name": "policy", "configMap": {"name": "desched-policy"}}
    assert pod["priorityClassName"] == "system-cluster-critical"  # as upstream's chart and manifests
    if runner == "deployment":
        assert container["args"][3:7] == ["--interval", "5m", "--metrics-bind-address", "0.0.0.0:10258"]


@pytest.mark.parametrize("runner", RUNNERS)
def test_each_runner_puts_every_object_in_one_namespace(runner: str) -> None:
    objects = build_python(DEPLOY / runner)
    assert {obj["kind"] for obj in objects} >= {"Namespace", "ServiceAccount", "ConfigMap", RUNNERS[runner]}
    for obj in objects:
        expected = None if obj["kind"] in CLUSTER_KINDS else NAMESPACE
        assert obj["metadata"].get("namespace") == expected, (obj["kind"], obj["metadata"]["name"])
    (namespace,) = [obj for obj in objects if obj["kind"] == "Namespace"]
    assert namespace["metadata"]["name"] == NAMESPACE


def test_the_deployment_probes_the_health_endpoint_the_executor_serves() -> None:
    pod = _pod_spec(_workload("deployment"))
    (container,) = pod["containers"]
    port = int(container["args"][container["args"].index("--metrics-bind-address") + 1].rpartition(":")[2])
    assert container["ports"] == [{"name": "metrics", "containerPort": port}]
    for probe in ("livenessProbe", "readinessProbe"):
        # HTTPS on the metrics port, as upstream; the executor answers /healthz (tests/executor/test_metrics.py)
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "metrics", "scheme": "HTTPS"}, probe
    # The self-signed certificate is written to a private temporary directory to be loaded: /tmp must be writable.
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}} in pod["volumes"]


def test_the_job_has_a_deadline() -> None:
    job = _workload("job")
    assert 0 < job["spec"]["activeDeadlineSeconds"] <= 3600


@pytest.mark.parametrize("runner", ["cronjob", "dry-run"])
def test_the_cronjob_never_overlaps_and_ends_before_the_next_run(runner: str) -> None:
    cronjob = _workload(runner)["spec"]
    assert cronjob["concurrencyPolicy"] == "Forbid"
    minute, *rest = cronjob["schedule"].split()
    assert minute.startswith("*/") and rest == ["*"] * 4  # every N minutes
    interval = int(minute[2:]) * 60
    assert 0 < cronjob["jobTemplate"]["spec"]["activeDeadlineSeconds"] < interval


def test_the_dry_run_overlay_adds_dry_run() -> None:
    kustomization = yaml.safe_load((DEPLOY / "dry-run" / "kustomization.yaml").read_text())
    (patch,) = kustomization["patches"]
    assert yaml.safe_load(patch["patch"]) == [
        {"op": "add", "path": "/spec/jobTemplate/spec/template/spec/containers/0/args/-", "value": "--dry-run"}
    ]


def _rules(objects: list[dict[str, Any]]) -> set[tuple[str, str, str, tuple[str, ...]]]:
    """(group, resource, verb, resourceNames) of every rule of the (Cluster)Roles among ``objects``."""
    return {
        (group, resource, verb, tuple(rule.get("resourceNames", ())))
        for role in objects
        if role["kind"] in ("ClusterRole", "Role")
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


@pytest.mark.parametrize("runner", RUNNERS)
def test_the_rbac_grants_what_desched_run_declares_and_nothing_more(runner: str) -> None:
    """deploy/'s RBAC read against ``desched run``'s declaration (desched.deployment.access.DESCHED_RUN): the service
    account may do all the runner needs (``--dry-run`` in the dry-run overlay, ``--leader-elect`` in the Deployment),
    Events included, and no rule grants a verb no need asks (no ``get`` or ``watch`` of what a cycle LISTs, no core v1
    Events: the executor writes events.k8s.io/v1 ones, as ``tests/executor/test_live_units.py`` pins)."""
    objects = build_python(DEPLOY / runner)
    (run,) = descheduler_runs([(runner, _workload(runner))])
    setting = access.setting(run)  # --dry-run in the dry-run overlay, from its patch
    assert setting.dry_run is (runner == "dry-run")
    grants = Grants([(runner, obj) for obj in objects])
    needed = access.permissions(setting, access.needs(setting, "desched"))
    assert [str(wanted) for wanted in needed if not grants.allows(NAMESPACE, "desched-executor", wanted)] == []
    declared = {(need.group, need.resource, verb) for need in access.DESCHED_RUN for verb in need.verbs}
    assert {rule[:3] for rule in _rules(objects)} <= declared


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
    for doc in built:
        expected = None if doc["kind"] in CLUSTER_KINDS else NAMESPACE
        assert doc["metadata"].get("namespace") == expected, (doc["kind"], doc["metadata"]["name"])
    workload = next(doc for doc in built if doc["kind"] == RUNNERS[runner])
    assert _pod_spec(workload)["containers"][0]["image"] == "ghcr.io/desched/desched:0.1.0"
    assert ("--dry-run" in _pod_spec(workload)["containers"][0]["args"]) is (runner == "dry-run")


def test_the_deployment_runs_two_replicas_with_leader_election_on_a_lease_it_may_keep() -> None:
    deployment = _workload("deployment")
    assert deployment["spec"]["replicas"] == 2
    (container,) = _pod_spec(deployment)["containers"]
    args = container["args"]
    assert "--leader-elect" in args
    assert args[args.index("--leader-elect-resource-namespace") + 1] == "$(POD_NAMESPACE)"
    assert {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in container["env"]
    rbac = _load(DEPLOY / "deployment" / "leader-election.yaml")
    assert not any(obj["kind"] in ("Role", "RoleBinding") for obj in _load(DEPLOY / "base" / "rbac.yaml"))
    role = next(obj for obj in rbac if obj["kind"] == "Role")
    # only the Lease it keeps may be read and written (what it may do is the declaration's, checked above)
    assert {names for _, _, verb, names in _rules([role]) if verb != "create"} == {("descheduler",)}
    binding = next(obj for obj in rbac if obj["kind"] == "RoleBinding")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "desched-executor", "namespace": NAMESPACE}]


def _comments(path: Path) -> str:
    """The comment lines of a YAML file, as one line of text."""
    return " ".join(line.strip().removeprefix("#").strip() for line in path.read_text().splitlines() if "#" in line)


def test_the_supported_kubernetes_range_is_stated_in_deploy_and_the_readme() -> None:
    """batch/v1 CronJob is served from Kubernetes 1.21: deploy/ and the README say which releases the manifests need."""
    assert {_workload(runner)["apiVersion"] for runner in RUNNERS if RUNNERS[runner] == "CronJob"} == {"batch/v1"}
    assert "Supported Kubernetes: 1.21 and later." in _comments(DEPLOY / "base" / "kustomization.yaml")
    assert "Kubernetes 1.21 or later" in _comments(DEPLOY / "cronjob" / "cronjob.yaml")
    assert "Kubernetes 1.21 or later" in _comments(DEPLOY / "dry-run" / "kustomization.yaml")
    readme = " ".join((DEPLOY.parents[1] / "README.md").read_text().split())
    assert "They support Kubernetes 1.21 and later: the CronJob and dry-run overlays use `batch/v1` CronJob" in readme


# The top-level fields of a Kustomization (kubernetes-sigs/kustomize, api/types/kustomization.go: the json tags plus
# TypeMeta's apiVersion and kind) in kustomize v4.0.5 (api v0.8.5), which kubectl 1.21 embeds, and v4.1.0 (api v0.8.6),
# the first with `labels` (commit 5ed2067be; kubectl 1.22 embeds v4.2.0). Both decode a kustomization with
# DisallowUnknownFields, so a field the release does not know fails the build.
KUSTOMIZE_4_0_FIELDS = {
    *("apiVersion", "kind", "metadata", "openapi", "namePrefix", "nameSuffix", "namespace", "commonLabels"),
    *("commonAnnotations", "patchesStrategicMerge", "patchesJson", "patches", "images", "replicas", "vars"),
    *("resources", "components", "crds", "bases", "configMapGenerator", "secretGenerator"),
    *("helmChartInflationGenerator", "generatorOptions", "configurations", "generators", "transformers"),
    *("validators", "inventory"),
}
KUSTOMIZE_4_1_FIELDS = KUSTOMIZE_4_0_FIELDS | {"labels", "helmGlobals", "helmCharts"}
KUSTOMIZE_4_1_LABEL_FIELDS = {"pairs", "includeSelectors", "fields"}  # includeTemplates came later


def test_every_kustomization_builds_with_the_kubectl_the_docs_name() -> None:
    """Every kustomization of deploy/ uses only what kustomize v4.1.0 knows, and `labels` is what kustomize v4.0.5
    (kubectl 1.21) does not: so the stated minimum is kubectl 1.22 (kustomize v4.1.0 standalone), in deploy/ and in
    docs/desched-chart.md."""
    kustomizations = [yaml.safe_load(path.read_text()) for path in sorted(DEPLOY.parent.rglob("kustomization.yaml"))]
    used = {field for kustomization in kustomizations for field in kustomization}
    assert used <= KUSTOMIZE_4_1_FIELDS, used - KUSTOMIZE_4_1_FIELDS
    assert used - KUSTOMIZE_4_0_FIELDS == {"labels"}
    labels = {field for kustomization in kustomizations for label in kustomization.get("labels", []) for field in label}
    assert labels <= KUSTOMIZE_4_1_LABEL_FIELDS
    for base in (DEPLOY / "base", DEPLOY.parent / "webhook" / "base"):
        assert "kubectl 1.22 or later (kustomize v4.1.0 or later" in _comments(base / "kustomization.yaml"), base
    docs = (DEPLOY.parents[1] / "docs" / "desched-chart.md").read_text()
    assert "| kubectl (`kubectl apply -k deploy/...`) | 1.22 and later |" in docs
    assert "| kustomize (standalone) | v4.1.0 and later |" in docs
