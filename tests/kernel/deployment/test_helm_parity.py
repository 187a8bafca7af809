"""Where desched's chart model once differed from what Helm renders (issue 37, item 7), each case written from the
chart's templates at the tags named (charts/descheduler of kubernetes-sigs/descheduler) and checked against the Helm
engine while it was written; the suite itself never runs Helm."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.chart.record import chart_at, charts
from desched.deployment.chartrender import ChartDoc
from desched.deployment.chartruns import chart_documents
from desched.linter.engine import Settings, lint_text
from desched.linter.finding import Finding
from desched.linter.lint import lint_paths


def _release(version: str, values: str, head: str = "") -> str:
    """A Flux HelmRelease of chart ``version`` with ``values`` (YAML, unindented)."""
    block = "".join(f"    {line}\n" for line in values.splitlines())
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        f"metadata: {{name: descheduler, namespace: kube-system}}\nspec:\n{head}  chart:\n    spec:\n"
        f"      chart: descheduler\n      version: {version}\n"
        "      sourceRef: {kind: HelmRepository, name: descheduler}\n  values:\n" + block
    )


def _findings(tmp_path: Path, text: str) -> list[Finding]:
    (tmp_path / "release.yaml").write_text(text)
    return lint_paths([str(tmp_path)]).findings


def _line(text: str, finding: Finding) -> str:
    return text.splitlines()[finding.line - 1].strip()


# -- deschedulerPolicy: null ---------------------------------------------------------------------------------------
# templates/configmap.yaml: from 0.30.0 `{{- if .Values.deschedulerPolicy }}` around the ConfigMap; before, the
# ConfigMap always, with `{{ toYaml .Values.deschedulerPolicy | trim | indent 4 }}` after the header: `null`.


@pytest.mark.parametrize("version", ["0.30.0", "0.31.0", "0.34.0", "0.36.0"])
def test_a_null_policy_renders_no_configmap_and_the_default_policy_is_not_judged(tmp_path: Path, version: str):
    text = _release(version, "deschedulerPolicy: null")
    found = [f for f in _findings(tmp_path, text) if not f.rule.startswith("DS6")]
    (finding,) = found  # 0.30.0's default profile gave DS003, DS006, DS202 and DS203 errors
    assert (finding.rule, finding.severity, _line(text, finding)) == ("DS013", "info", "deschedulerPolicy: null")
    assert "renders no policy ConfigMap" in finding.message
    assert "key policy.yaml of ConfigMap descheduler" in finding.message


@pytest.mark.parametrize("version", ["0.22.0", "0.27.0", "0.29.0"])
def test_before_chart_0_30_0_a_null_policy_is_written_as_an_unreadable_policy(tmp_path: Path, version: str):
    text = _release(version, "deschedulerPolicy: null")
    found = [f for f in _findings(tmp_path, text) if not f.rule.startswith("DS6")]
    (finding,) = found  # no DS101 on the default v1alpha1 strategies: they are not in the file
    assert (finding.rule, finding.severity, _line(text, finding)) == ("DS013", "error", "deschedulerPolicy: null")
    assert "followed by null, which is not YAML the descheduler can read" in finding.message
    assert "bring your own ConfigMap with chart 0.30.0 or later" in finding.message


def test_the_workload_of_a_null_policy_reads_no_policy_of_the_chart(tmp_path: Path):
    # the chart's workload is still judged, but against no policy: 0.30.0's default would need no metrics RBAC
    # either way; what matters is that no rule reads the deleted default as the policy that runs
    text = _release("0.30.0", "deschedulerPolicy: null\nkind: Deployment")
    settings = Settings()
    result = lint_text("release.yaml", text, settings)
    (checked,) = result.checked
    assert isinstance(checked.doc, ChartDoc) and checked.doc.no_policy
    assert dict(checked.doc.root) == {}


_OWN_CONFIGMAP = """---
apiVersion: v1
kind: ConfigMap
metadata: {name: descheduler, namespace: kube-system}
data:
  policy.yaml: |
    apiVersion: descheduler/v1alpha2
    kind: DeschedulerPolicy
    metricsProviders:
    - source: KubernetesMetrics
    profiles:
    - name: p
      pluginConfig:
      - name: LowNodeUtilization
        args:
          thresholds: {cpu: 20}
          targetThresholds: {cpu: 50}
          metricsUtilization: {source: KubernetesMetrics}
      plugins:
        balance: {enabled: [LowNodeUtilization]}
"""


def test_the_workload_of_a_null_policy_runs_the_configmap_the_user_brings(tmp_path: Path):
    # the chart grants metrics.k8s.io only for the metricsProviders of its own deschedulerPolicy (none here), while
    # the ConfigMap the descheduler reads asks for them
    text = _release("0.36.0", "deschedulerPolicy: null") + _OWN_CONFIGMAP
    (rbac,) = [f for f in _findings(tmp_path, text) if f.rule == "DS609"]
    assert "may not get nodes.metrics.k8s.io" in rbac.message and "chart 0.36.0" in rbac.object


# -- cmdOptions (charts 0.30.1 and 0.30.2 write `--key=<toString value>`) --------------------------------------------


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.27.1", ["--dry-run"]),  # `- "--dry-run"`, the value as its own item only when truthy
        ("0.30.0", ["--dry-run"]),  # `--dry-run{{ if $value }}=...{{ end }}`: false is a bare flag
        ("0.30.1", ["--dry-run=false"]),  # `printf "--%s=%s" $key (toString $value)`
        ("0.30.2", ["--dry-run=false"]),
    ],
)
def test_a_false_cmd_option_is_written_as_each_chart_writes_it(version: str, expected: list[str]):
    chart = chart_at(version)
    assert chart is not None
    workload = chart_documents({"cmdOptions": {"dry-run": False, "v": None}}, chart, {}).workload
    assert workload is not None
    args = workload["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[-len(expected) :] == expected


# -- tpl (from chart 0.34.0: `{{ tpl (toYaml .Values.deschedulerPolicy) . | trim | indent 4 }}`) -----------------

_SELECTOR = "deschedulerPolicy:\n  nodeSelector: SELECTOR\n  profiles: []\n"


def _policy_findings(tmp_path: Path, text: str) -> list[Finding]:
    """The findings on the policy but DS207's (a policy of no profiles never evicts)."""
    return [f for f in _findings(tmp_path, text) if not f.rule.startswith("DS6") and f.rule != "DS207"]


def test_from_chart_0_34_0_the_release_namespace_is_substituted(tmp_path: Path):
    values = _SELECTOR.replace("SELECTOR", '"kubernetes.io/metadata.name={{ .Release.Namespace }}"')
    text = _release("0.34.0", values)
    assert _policy_findings(tmp_path, text) == []  # was DS301: `{{` is no label value
    (checked,) = lint_text("release.yaml", text, Settings()).checked
    assert checked.doc.root["nodeSelector"] == "kubernetes.io/metadata.name=kube-system"


def test_before_chart_0_34_0_the_template_reaches_the_descheduler_as_written(tmp_path: Path):
    values = _SELECTOR.replace("SELECTOR", '"kubernetes.io/metadata.name={{ .Release.Namespace }}"')
    assert [f.rule for f in _policy_findings(tmp_path, _release("0.33.0", values))] == ["DS301"]


def test_tpl_reads_the_release_the_wrapper_names_and_the_values(tmp_path: Path):
    values = _SELECTOR.replace("SELECTOR", '"{{ .Values.zone }}={{ .Release.Name }}-{{ .Chart.Version }}"')
    text = _release("0.36.0", "zone: topology.kubernetes.io/zone\n" + values, head="  targetNamespace: ops\n")
    (checked,) = lint_text("release.yaml", text, Settings()).checked
    # Flux names the release <targetNamespace>-<name> when it sets a targetNamespace
    assert checked.doc.root["nodeSelector"] == "topology.kubernetes.io/zone=ops-descheduler-0.36.0"


def test_a_substituted_value_is_judged(tmp_path: Path):
    values = "bad: 'a b'\n" + _SELECTOR.replace("SELECTOR", '"{{ .Values.bad }}"')
    found = _policy_findings(tmp_path, _release("0.36.0", values))
    assert [f.rule for f in found] == ["DS301"]


@pytest.mark.parametrize(
    "template",
    [
        '"{{ include \\"descheduler.fullname\\" . }}=x"',  # a function: known once Helm renders it
        '"x={{ .Release.Revision }}"',  # a field desched does not know
        '"x={{ .Values.missing.deeper }}"',  # a field of nil: Helm fails
    ],
)
def test_a_template_desched_cannot_evaluate_is_not_judged(tmp_path: Path, template: str):
    values = _SELECTOR.replace("SELECTOR", template)
    assert _policy_findings(tmp_path, _release("0.36.0", values)) == []


# -- the image's registry (values.yaml's image.repository) -----------------------------------------------------------


@pytest.mark.parametrize("version", [v for v in charts() if tuple(map(int, v.split(".")))[:2] >= (0, 19)])
def test_the_image_comes_from_the_registry_the_charts_values_name(version: str):
    chart = chart_at(version)
    assert chart is not None
    workload = chart_documents({}, chart, {}).workload
    assert workload is not None
    image = workload["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"]
    old = tuple(map(int, version.split("."))) <= (0, 25, 2)  # k8s.gcr.io to 0.25.2, registry.k8s.io from 0.26.0
    registry = "k8s.gcr.io" if old else "registry.k8s.io"
    assert image.startswith(f"{registry}/descheduler/descheduler:v0.")


# -- chart 0.24.0's leader election (`- --leader-elect` then `- {{ default false .Values.leaderElection.enabled }}`) -


def test_chart_0_24_0_cannot_install_with_leader_election(tmp_path: Path):
    text = _release("0.24.0", "kind: Deployment\nleaderElection:\n  enabled: true\n")
    (finding,) = [f for f in _findings(tmp_path, text) if f.rule == "DS617"]
    assert finding.severity == "error" and _line(text, finding) == "enabled: true"
    assert "argument true unquoted, which YAML reads as a boolean" in finding.message


@pytest.mark.parametrize("version", ["0.24.1", "0.36.0"])
def test_later_charts_write_the_leader_election_flag_as_a_string(tmp_path: Path, version: str):
    text = _release(version, "kind: Deployment\nleaderElection:\n  enabled: true\n")
    assert [f for f in _findings(tmp_path, text) if f.rule == "DS617"] == []


# -- replicas above 1 (deployment.yaml from 0.24.0: `{{- fail "You must set leaderElection ..." }}`) --------------


@pytest.mark.parametrize("version", ["0.24.0", "0.30.1", "0.36.0"])
def test_replicas_without_leader_election_is_a_render_the_chart_refuses(tmp_path: Path, version: str):
    text = _release(version, "kind: Deployment\nreplicas: 2\n")
    (finding,) = [f for f in _findings(tmp_path, text) if f.rule == "DS601"]
    assert _line(text, finding) == "replicas: 2"
    assert "the chart refuses to render them" in finding.message
    assert "the install fails before anything runs" in finding.message


def test_a_written_deployment_with_replicas_keeps_its_own_message(tmp_path: Path):
    from desched.linter.rules._deployment_examples import runner

    text = runner("Deployment", "--descheduling-interval=5m", replicas=2)
    (finding,) = [f for f in _findings(tmp_path, text) if f.rule == "DS601"]
    assert "refuses" not in finding.message and "every replica runs its own cycles" in finding.message
