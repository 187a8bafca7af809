"""The descheduler the chart deploys from a user's values (desched.deployment.chartruns), judged by the deployment rules
(DS6xx): what each chart version's templates make of the values, as its record holds them (cmdOptions, command, leader
election, replicas, ports, probe, priority class, RBAC), and where the findings land (the value that rendered the
field, else the chart pin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.chart.record import chart_at, charts
from desched.deployment.chartruns import chart_documents
from desched.deployment.runs import descheduler_runs
from desched.linter.finding import Finding
from desched.linter.lint import lint_paths

CHARTS = list(charts())


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
        # 0.28.0 to 0.30.0: --key=value when truthy, else a bare --key: dry-run: false switches dry run on
        ("0.29.0", {"dry-run": False, "v": None}, ["--dry-run"]),  # a user null deletes the default --v
        ("0.30.0", {"dry-run": False, "v": None}, ["--dry-run"]),
        # from 0.30.1: --key=<toString value>, a bare --key for null
        ("0.30.1", {"dry-run": False, "skip-headers": None, "v": None}, ["--dry-run=false", "--skip-headers"]),
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


@pytest.mark.parametrize(("version", "dry_run"), [("0.30.0", True), ("0.30.1", False), ("0.30.2", False)])
def test_dry_run_false_turns_dry_run_on_only_where_the_chart_writes_a_bare_flag(tmp_path: Path, version, dry_run):
    # upstream "allow 'falsey' value in cmdOption" (6a930de27) is in chart 0.30.1: --dry-run=false from there on
    found = _deployment_findings(tmp_path, _release(version, "cmdOptions:\n  dry-run: false"))
    assert any(f.rule == "DS611" for f in found) == dry_run


@pytest.mark.parametrize(("version", "written"), [("0.27.1", False), ("0.28.0", True)])
def test_a_users_command_is_rendered_from_chart_0_28_0(tmp_path: Path, version: str, written: bool):
    text = _release(version, "command: [/bin/descheduler, --dry-run]")
    found = [f for f in _deployment_findings(tmp_path, text) if f.rule == "DS611"]
    assert bool(found) == written
    assert all(text.splitlines()[f.line - 1].strip().startswith("command:") for f in found)


def _container(version: str, values: dict[str, object]) -> dict[str, object]:
    chart = chart_at(version)
    assert chart is not None
    workload = chart_documents(values, chart, {}).workload
    assert workload is not None
    spec = workload["spec"]
    pod = spec["template"] if workload["kind"] == "Deployment" else spec["jobTemplate"]["spec"]["template"]
    return pod["spec"]["containers"][0]


USER_PORTS = [{"name": "https", "containerPort": 10258}]


@pytest.mark.parametrize(
    ("version", "kind", "ports"),
    [
        ("0.31.0", "CronJob", None),  # the CronJob has no ports before 0.32.0
        ("0.31.0", "Deployment", [{"containerPort": 10258, "protocol": "TCP"}]),  # written by the template
        ("0.32.0", "CronJob", USER_PORTS),  # .Values.ports from 0.32.0
        ("0.32.0", "Deployment", USER_PORTS),
    ],
)
def test_a_users_ports_are_rendered_from_chart_0_32_0(version: str, kind: str, ports):
    assert _container(version, {"kind": kind, "ports": USER_PORTS}).get("ports") == ports


@pytest.mark.parametrize(("version", "warned"), [("0.22.1", False), ("0.23.0", True)])
def test_a_users_liveness_probe_is_rendered_from_chart_0_23_0(tmp_path: Path, version: str, warned: bool):
    values = "kind: Deployment\nlivenessProbe:\n  httpGet: {path: /healthz, port: 8080, scheme: HTTPS}"
    found = _deployment_findings(tmp_path, _release(version, values))
    assert any(f.rule == "DS612" for f in found) == warned


@pytest.mark.parametrize(
    ("version", "replicas", "rendered"),
    [
        ("0.23.2", 3, 1),  # replicas: 1, written by the template
        ("0.36.0", 0, 1),  # {{- if gt (.Values.replicas | int) 1 }} ... {{- else }} replicas: 1
        ("0.36.0", 1, 1),
        ("0.36.0", 3, 3),
        ("0.24.0", 0, 1),  # {{- if gt .Values.replicas 1.0}}
    ],
)
def test_replicas_not_above_one_render_one(version: str, replicas: int, rendered: int):
    chart = chart_at(version)
    assert chart is not None
    values = {"kind": "Deployment", "replicas": replicas, "leaderElection": {"enabled": True}}
    workload = chart_documents(values, chart, {}).workload
    assert workload is not None and workload["spec"]["replicas"] == rendered


def test_the_workload_is_named_and_pulled_as_each_chart_writes_it():
    container = _container("0.19.0", {})
    assert container["name"] == "descheduler-helm-chart"  # {{ .Chart.Name }}, the chart's name up to 0.19.1
    assert container["image"] == "k8s.gcr.io/descheduler/descheduler:v0.19.0"  # values.yaml's image.repository
    assert _container("0.36.0", {})["image"] == "registry.k8s.io/descheduler/descheduler:v0.36.0"
    chart = chart_at("0.20.0")
    assert chart is not None
    workload = chart_documents({}, chart, {}).workload
    assert workload is not None and workload["apiVersion"] == "batch/v1beta1"  # hard-coded up to 0.20.0
    chart = chart_at("0.36.0")
    assert chart is not None
    workload = chart_documents({"cronJobApiVersion": "batch/v1beta1"}, chart, {}).workload
    assert workload is not None and workload["apiVersion"] == "batch/v1beta1"  # the value, default batch/v1


def test_a_null_kind_renders_no_workload():
    chart = chart_at("0.36.0")
    assert chart is not None
    assert chart_documents({"kind": None}, chart, {}).workload is None  # neither template's eq .Values.kind holds


@pytest.mark.parametrize(("version", "granted"), [("0.24.1", True), ("0.25.0", False)])
def test_the_cluster_role_holds_every_rule_of_the_chart(version: str, granted: bool):
    chart = chart_at(version)
    assert chart is not None
    role = chart_documents({}, chart, {}).rbac[0]
    resources = [resource for rule in role["rules"] for resource in rule["resources"]]
    assert "events" in resources
    assert ("podsecuritypolicies" in resources) == granted  # podSecurityPolicy.create defaults to true to 0.24.1


def test_a_chart_0_18_pin_renders_that_chart(tmp_path: Path):
    found = _deployment_findings(tmp_path, _release("0.18.2", "cmdOptions:\n  dry-run: true"))
    assert [f.object for f in found if f.rule == "DS611"] == [
        "the CronJob of chart 0.18.2, pinned by HelmRelease kube-system/descheduler"
    ]


def test_the_rendered_workload_holds_copies_of_the_charts_shared_defaults():
    chart = chart_at("0.36.0")
    assert chart is not None
    workload = chart_documents({"kind": "Deployment", "deschedulingInterval": "5m"}, chart, {}).workload
    assert workload is not None
    container = workload["spec"]["template"]["spec"]["containers"][0]
    assert container["livenessProbe"] == chart.values_defaults["livenessProbe"]
    assert container["livenessProbe"] is not chart.values_defaults["livenessProbe"]
