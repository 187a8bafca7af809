"""The descheduler the chart deploys from a user's values (desched.deployment.chartruns), judged by the deployment rules
(DS6xx): what each chart version's templates make of the values (cmdOptions, leader election, probe, priority class,
RBAC), and where the findings land (the value that rendered the field, else the chart pin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.chart.names import APP_VERSIONS
from desched.chart.versions import chart_at
from desched.deployment.chartruns import chart_documents
from desched.deployment.runs import descheduler_runs
from desched.linter.finding import Finding
from desched.linter.lint import lint_paths

CHARTS = [version for version in APP_VERSIONS if chart_at(version) is not None]


def _release(version: str, values: str = "") -> str:
    values_block = "".join(f"    {line}\n" for line in values.splitlines())
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: descheduler, namespace: kube-system}\nspec:\n  chart:\n    spec:\n"
        f"      chart: descheduler\n      version: {version}\n"
        "      sourceRef: {kind: HelmRepository, name: descheduler}\n"
        + ("  values:\n" + values_block if values else "")
    )


def _deployment_findings(tmp_path: Path, text: str) -> list[Finding]:
    (tmp_path / "release.yaml").write_text(text)
    return [f for f in lint_paths([str(tmp_path)]).findings if f.rule.startswith("DS6")]


def _args(version: str, values: dict[str, object]) -> list[str]:
    chart = chart_at(version)
    assert chart is not None
    rendered = chart_documents(values, chart, {})
    (run,) = descheduler_runs([("values.yaml", rendered.workload)])
    return list(run.container_spec["args"])


#: Chart versions whose ClusterRole lacks a read their own image needs at start (upstream's bugs), and that read.
KNOWN_GAPS = {
    # v0.23.0 watches namespaces; chart 0.23.0 grants get and list ("fix watch namespace issue" in chart 0.23.1)
    "0.23.0": "watch namespaces",
    # v0.32 watches PodDisruptionBudgets on every run (kubernetes-sigs/descheduler #1595; chart 0.32.2 added them)
    "0.32.0": "poddisruptionbudgets.policy",
    "0.32.1": "poddisruptionbudgets.policy",
    # v0.35.0 watches PVCs at start (#1839); chart 0.35.1 added them
    "0.35.0": "persistentvolumeclaims",
}


@pytest.mark.parametrize("version", CHARTS)
@pytest.mark.parametrize("kind", ["CronJob", "Deployment"])
def test_the_charts_defaults_give_no_deployment_error_or_warning(tmp_path: Path, version: str, kind: str):
    found = _deployment_findings(tmp_path, _release(version, f"kind: {kind}"))
    serious = {(f.rule, f.severity) for f in found if f.severity != "info"}
    if version in KNOWN_GAPS:
        assert serious == {("DS609", "error")}
        assert all(KNOWN_GAPS[version] in f.message for f in found if f.rule == "DS609")
    else:
        assert serious == set()


@pytest.mark.parametrize(
    ("version", "options", "expected"),
    [
        # to 0.27.1: "--key", then the value as its own word when truthy
        ("0.27.1", {"dry-run": True, "v": 4}, ["--dry-run", "true", "--v", "4"]),
        # 0.28.0 to 0.30.2: --key=value when truthy, else a bare --key: dry-run: false switches dry run on
        ("0.29.0", {"dry-run": False, "v": None}, ["--dry-run"]),  # a user null deletes the default --v
        # from 0.31.0: --key=<toString value>, a bare --key for null
        ("0.31.0", {"dry-run": False, "skip-headers": None, "v": None}, ["--dry-run=false", "--skip-headers"]),
    ],
)
def test_cmd_options_render_as_each_charts_template_writes_them(version, options, expected):
    args = _args(version, {"kind": "CronJob", "cmdOptions": options})
    assert args[-len(expected) :] == expected


@pytest.mark.parametrize(
    ("version", "election", "flag"),
    [
        ("0.23.2", {"enabled": True}, None),  # no leader election in the chart yet
        ("0.24.0", {"enabled": False, "leaseDuration": "15s"}, "true"),  # --leader-elect then "false": pflag's true
        ("0.24.1", {"enabled": False, "leaseDuration": "15s"}, "false"),
        ("0.32.2", {"enabled": False, "leaseDuration": "15s"}, "false"),
        ("0.33.0", {"enabled": False, "leaseDuration": "15s"}, None),  # rendered only when enabled
        ("0.36.0", {"enabled": True, "resourceNamespace": "ops"}, "true"),
    ],
)
def test_leader_election_flags_per_chart_version(version, election, flag):
    chart = chart_at(version)
    assert chart is not None
    rendered = chart_documents({"kind": "Deployment", "leaderElection": election}, chart, {})
    (run,) = descheduler_runs([("values.yaml", rendered.workload)])
    assert (run.flags["leader-elect"].value if "leader-elect" in run.flags else None) == flag
    if version == "0.36.0":
        assert run.flags["leader-elect-resource-namespace"].value == "ops"


def test_the_0_24_0_trap_turns_election_on_without_the_lease_rbac(tmp_path: Path):
    values = "kind: Deployment\nleaderElection:\n  enabled: false\n  leaseDuration: 15s\n"
    found = _deployment_findings(tmp_path, _release("0.24.0", values))
    (rbac,) = [f for f in found if f.rule == "DS609"]
    assert "leases.coordination.k8s.io in namespace kube-system" in rbac.message


def test_findings_land_on_the_value_that_rendered_the_field(tmp_path: Path):
    values = "kind: Deployment\nreplicas: 2\ncmdOptions:\n  dry-run: true\npriorityClassName: null\n"
    text = _release("0.36.0", values)
    found = {f.rule: f for f in _deployment_findings(tmp_path, text)}
    lines = text.splitlines()
    assert lines[found["DS601"].line - 1].strip() == "replicas: 2"
    assert lines[found["DS611"].line - 1].strip() == "dry-run: true"
    assert lines[found["DS610"].line - 1].strip() == "priorityClassName: null"
    assert "chart 0.36.0, pinned by HelmRelease kube-system/descheduler" in found["DS601"].object


def test_a_chart_default_is_reported_at_the_chart_pin(tmp_path: Path):
    text = _release("0.35.0")
    (rbac,) = [f for f in _deployment_findings(tmp_path, text) if f.rule == "DS609"]
    assert text.splitlines()[rbac.line - 1].strip() == "version: 0.35.0"


@pytest.mark.parametrize(
    ("version", "policy", "missing"),
    [
        # the current chart grants metrics.k8s.io for a KubernetesMetrics provider only, not for metricsCollector
        ("0.36.0", "metricsCollector: {enabled: true}", True),
        ("0.36.0", "metricsProviders: [{source: KubernetesMetrics}]", False),
        ("0.32.2", "metricsCollector: {enabled: true}", False),  # 0.32.2 granted it for the collector
    ],
)
def test_the_charts_metrics_rbac_follows_the_policy_per_chart_version(tmp_path: Path, version, policy, missing):
    values = f"deschedulerPolicy:\n  {policy}\n  profiles: []\n"
    found = [f for f in _deployment_findings(tmp_path, _release(version, values)) if f.rule == "DS609"]
    assert bool(found) == missing
    assert all("metrics.k8s.io" in f.message for f in found)


def test_without_the_charts_rbac_desched_says_once_it_cannot_check(tmp_path: Path):
    found = _deployment_findings(tmp_path, _release("0.36.0", "rbac:\n  create: false"))
    (rbac,) = [f for f in found if f.rule == "DS609"]
    assert rbac.severity == "info"


def test_a_kind_the_chart_does_not_know_renders_no_workload():
    chart = chart_at("0.36.0")
    assert chart is not None
    assert chart_documents({"kind": "DaemonSet"}, chart, {}).workload is None


def test_each_install_is_judged_with_its_own_charts_rbac(tmp_path: Path):
    # both charts name their ClusterRole "descheduler": chart 0.35.0's (no PVC reads) must not stand for 0.36.0's
    (tmp_path / "old.yaml").write_text(_release("0.35.0").replace("name: descheduler,", "name: old,"))
    (tmp_path / "new.yaml").write_text(_release("0.36.0"))
    found = [f for f in lint_paths([str(tmp_path)]).findings if f.rule == "DS609"]
    assert [(Path(f.file).name, "chart 0.35.0" in f.object) for f in found] == [("old.yaml", True)]
