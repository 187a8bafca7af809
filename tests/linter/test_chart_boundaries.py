"""Every way of installing the descheduler chart, at every chart version boundary that changes what the chart renders
(docs/helm-chart.md): the chart's name (``descheduler-helm-chart`` up to 0.19.1), the hard-coded v1alpha1
``apiVersion`` (up to 0.26.1), the default apiVersion and default profile (v1alpha2 from 0.30.0), and chart 0.30.0's
broken default profile. Each wrapper kind is written to a directory and linted as a repository, so values kept
outside their wrapper (Flux valuesFrom, kustomize values files, an umbrella chart's values) take part too."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from desched.linter.finding import Finding
from desched.linter.lint import lint_paths

REPO = "https://kubernetes-sigs.github.io/descheduler/"


def _indent(text: str, spaces: int) -> str:
    return textwrap.indent(text, " " * spaces)


def install(kind: str, chart: str, version: str, values: str) -> dict[str, str]:
    """The files of a repository that installs ``chart`` at ``version`` with the chart values ``values`` (YAML
    text) in the way ``kind`` names; the values always sit in the file named ``values.yaml`` or ``wrapper.yaml``."""
    flux_head = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: descheduler, namespace: kube-system}\n"
        f"spec:\n  chart:\n    spec: {{chart: {chart}, version: '{version}'}}\n"
    )
    argo_source = f"chart: {chart}\nrepoURL: {REPO}\ntargetRevision: {version}\nhelm:\n"
    if kind == "flux":
        return {"wrapper.yaml": flux_head + "  values:\n" + _indent(values, 4)}
    if kind == "flux-values-from":
        configmap = (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: descheduler-values, namespace: kube-system}\ndata:\n"
            "  values.yaml: |\n" + _indent(values, 4)
        )
        wrapper = flux_head + "  valuesFrom:\n  - {kind: ConfigMap, name: descheduler-values}\n"
        return {"wrapper.yaml": wrapper, "values.yaml": configmap}
    if kind == "argo-object":
        source = argo_source + "  valuesObject:\n" + _indent(values, 4)
        head = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  source:\n"
        return {"wrapper.yaml": head + _indent(source, 4)}
    if kind == "argo-text":
        source = argo_source + "  values: |\n" + _indent(values, 4)
        head = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  sources:\n"
        return {"wrapper.yaml": head + "  - " + _indent(source, 4).lstrip()}
    if kind == "applicationset":
        source = argo_source + "  valuesObject:\n" + _indent(values, 4)
        head = (
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: descheduler}\nspec:\n"
            "  generators: [{list: {elements: []}}]\n  template:\n    metadata: {name: descheduler}\n    spec:\n"
            "      source:\n"
        )
        return {"wrapper.yaml": head + _indent(source, 8)}
    entry = f"helmCharts:\n- name: {chart}\n  repo: {REPO}\n  version: {version}\n"
    if kind == "kustomize-inline":
        return {"kustomization.yaml": entry + "  valuesInline:\n" + _indent(values, 4)}
    if kind == "kustomize-file":
        return {"kustomization.yaml": entry + "  valuesFile: values.yaml\n", "values.yaml": values}
    if kind == "kustomize-additional":
        files = "  valuesFile: base.yaml\n  additionalValuesFiles: [values.yaml]\n"
        return {"kustomization.yaml": entry + files, "base.yaml": "replicas: 1\n", "values.yaml": values}
    assert kind == "umbrella"
    chart_yaml = (
        f"apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n"
        f"- {{name: {chart}, version: {version}, repository: '{REPO}', alias: evictor}}\n"
    )
    return {"Chart.yaml": chart_yaml, "values.yaml": "evictor:\n" + _indent(values, 2)}


KINDS = [
    "flux",
    "flux-values-from",
    "argo-object",
    "argo-text",
    "applicationset",
    "kustomize-inline",
    "kustomize-file",
    "kustomize-additional",
    "umbrella",
]
STRATEGIES = "deschedulerPolicy:\n  strategies:\n    LowNodeUtilization:\n      enabled: true\n"
PROFILES = (
    "deschedulerPolicyAPIVersion: descheduler/v1alpha2\ndeschedulerPolicy:\n  profiles:\n  - name: p\n"
    "    pluginConfig:\n    - name: RemoveDuplicates\n    plugins:\n      balance:\n"
    "        enabled: [RemoveDuplicates]\n"
)
LIMIT_ONLY = "deschedulerPolicy:\n  maxNoOfPodsToEvictPerNode: 5\n"


def _policy_rule(finding: Finding) -> bool:
    """Whether ``finding`` is about the policy: the chart's workload has its own tests (test_chart_deployment.py)."""
    return not finding.rule.startswith("DS6")


def lint_install(tmp_path: Path, kind: str, chart: str, version: str, values: str) -> list[tuple[str, str, str]]:
    """(file, rule, message) of each finding linting the repository ``install`` writes."""
    for name, text in install(kind, chart, version, values).items():
        (tmp_path / name).write_text(text)
    return [(Path(f.file).name, f.rule, f.message) for f in lint_paths([str(tmp_path)]).findings if _policy_rule(f)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("chart", "version"), [("descheduler-helm-chart", "0.19.1"), ("descheduler", "0.19.2")])
def test_both_chart_names_are_linted_with_the_chart_defaults_merged(tmp_path, kind, chart, version):
    found = lint_install(tmp_path, kind, chart, version, STRATEGIES)
    # the chart's default thresholds complete LowNodeUtilization: no threshold finding, and the policy is linted
    assert not [rule for _, rule, _ in found if rule.startswith("DS30")], found
    assert [rule for _, rule, _ in found if rule == "DS101"], found


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("version", "dropped"), [("0.26.1", True), ("0.27.0", False)])
def test_profiles_run_only_from_chart_0_27(tmp_path, kind, version, dropped):
    found = lint_install(tmp_path, kind, "descheduler", version, PROFILES)
    ds102 = [message for _, rule, message in found if rule == "DS102"]
    assert bool(ds102) is dropped, found
    if dropped:
        (message,) = ds102
        assert f"chart {version} renders descheduler/v1alpha1 (hard-coded in its ConfigMap template)" in message
        assert "the chart's default strategies run instead: RemoveDuplicates," in message
        assert "upgrade the chart to 0.27 or later" in message


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", ["0.29.0", "0.30.1"])
def test_strategies_run_up_to_chart_0_29_and_the_default_profile_from_0_30(tmp_path, kind, version):
    found = lint_install(tmp_path, kind, "descheduler", version, STRATEGIES)
    rules = {rule: message for _, rule, message in found}
    if version == "0.29.0":
        assert "DS102" not in rules and "deprecated" in rules["DS101"], found
    else:
        assert "DS101" not in rules, found
        assert "chart 0.30.1 renders descheduler/v1alpha2 (its deschedulerPolicyAPIVersion default)" in rules["DS102"]
        assert (
            "default profile runs instead: RemoveDuplicates, RemovePodsViolatingTopologySpreadConstraint"
            in (rules["DS102"])
        )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("version", "broken"), [("0.30.0", True), ("0.30.1", False)])
def test_chart_0_30_0s_default_profile_fails_and_the_finding_names_it(tmp_path, kind, version, broken):
    found = lint_install(tmp_path, kind, "descheduler", version, LIMIT_ONLY)
    errors = [(file, message) for file, rule, message in found if rule in ("DS003", "DS202", "DS203")]
    assert bool(errors) is broken, found
    assert all(f"a default of chart {version}" in message for _, message in errors)


def test_umbrella_values_at_the_top_never_reach_the_chart(tmp_path):
    (tmp_path / "Chart.yaml").write_text(install("umbrella", "descheduler", "0.31.0", "")["Chart.yaml"])
    (tmp_path / "values.yaml").write_text(LIMIT_ONLY + "evictor:\n  enabled: true\n")
    ((file, rule, message),) = lint_install_files(tmp_path)
    assert (file, rule) == ("values.yaml", "DS009")
    assert "Helm hands the descheduler chart only the values under evictor:" in message


def test_an_umbrella_condition_set_false_turns_the_chart_off(tmp_path):
    chart = install("umbrella", "descheduler", "0.30.0", "")["Chart.yaml"].replace(
        "alias: evictor", "alias: evictor, condition: evictor.enabled"
    )
    (tmp_path / "Chart.yaml").write_text(chart)
    (tmp_path / "values.yaml").write_text("evictor:\n  enabled: false\n" + _indent(LIMIT_ONLY, 2))
    assert lint_install_files(tmp_path) == []
    (tmp_path / "values.yaml").write_text("evictor:\n  enabled: true\n" + _indent(LIMIT_ONLY, 2))
    assert lint_install_files(tmp_path)  # chart 0.30.0's broken default profile


def lint_install_files(tmp_path: Path) -> list[tuple[str, str, str]]:
    return [(Path(f.file).name, f.rule, f.message) for f in lint_paths([str(tmp_path)]).findings if _policy_rule(f)]


def test_argo_values_beside_values_object_never_reach_the_chart():
    from tests.conftest import lint

    text = install("argo-object", "descheduler", "0.31.0", "replicas: 1\n")["wrapper.yaml"]
    text += "      values: |\n" + _indent(LIMIT_ONLY, 8)
    (finding,) = lint(text)
    assert finding.rule == "DS009" and "Argo CD then renders with valuesObject alone" in finding.message


@pytest.mark.parametrize("kind", ["OCIRepository", "HelmRepository", "HelmChart"])
def test_a_helmrelease_names_the_chart_through_a_flux_source_in_another_file(tmp_path, kind):
    spec = {
        "OCIRepository": "url: oci://ghcr.io/mirror/charts/descheduler\n  ref: {tag: 0.26.0}",
        "HelmRepository": f"url: {REPO}",
        "HelmChart": "chart: descheduler\n  version: 0.26.0",
    }[kind]
    (tmp_path / "source.yaml").write_text(
        f"apiVersion: source.toolkit.fluxcd.io/v1\nkind: {kind}\nmetadata: {{name: mirror, namespace: flux-system}}\n"
        f"spec:\n  {spec}\n"
    )
    reference = (
        "  chart:\n    spec: {chart: renamed, version: 0.26.0, sourceRef: {kind: HelmRepository, name: mirror}}\n"
        if kind == "HelmRepository"
        else f"  chartRef: {{kind: {kind}, name: mirror}}\n"
    )
    (tmp_path / "release.yaml").write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: d, namespace: flux-system}\n"
        f"spec:\n{reference}  values:\n" + _indent(STRATEGIES, 4)
    )
    found = lint_install_files(tmp_path)
    # the chart's repository serves no chart "renamed" (DS010), and the values are still judged as the pinned chart's
    unserved = [("release.yaml", "DS010")] if kind == "HelmRepository" else []
    assert [(file, rule) for file, rule, _ in found] == [*unserved, ("release.yaml", "DS101")]
    assert "descheduler chart 0.26.0" in found[-1][2]


@pytest.mark.parametrize("revision", ["descheduler-helm-chart-0.26.0", "v0.26.0"])
def test_an_argo_git_source_of_the_chart_pins_the_chart_by_its_release_tag(revision):
    from tests.conftest import lint

    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  source:\n"
        "    repoURL: https://github.com/kubernetes-sigs/descheduler.git\n    path: charts/descheduler\n"
        f"    targetRevision: {revision}\n    helm:\n      valuesObject:\n" + _indent(STRATEGIES, 8)
    )
    (finding,) = filter(_policy_rule, lint(text))
    assert finding.rule == "DS101" and "descheduler chart 0.26.0" in finding.message  # defaults merged: no DS304


def test_an_argo_multi_source_value_file_takes_the_chart_pin(tmp_path):
    """``$values/path`` names a file from the root of another source's repository: the file of the linted tree
    whose path ends so is that source, pinned by the chart source's targetRevision."""
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "descheduler.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: descheduler}\nspec:\n  sources:\n"
        f"  - chart: descheduler\n    repoURL: {REPO}\n    targetRevision: 0.26.0\n"
        "    helm:\n      valueFiles: [$values/values/descheduler.yaml]\n"
        "  - repoURL: https://github.com/example/infra.git\n    targetRevision: HEAD\n    ref: values\n"
    )
    (tmp_path / "values").mkdir()
    (tmp_path / "values" / "descheduler.yaml").write_text(STRATEGIES)
    ((file, rule, message),) = lint_install_files(tmp_path)
    assert (file, rule) == ("descheduler.yaml", "DS101")  # chart 0.26.0: v1alpha1, its thresholds merged in
    assert "descheduler chart 0.26.0, pinned by Application descheduler" in message


def test_a_values_file_kustomize_generates_the_values_from_configmap_of_takes_the_chart_pin(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: kube-system\n"
        "resources: [release.yaml]\nconfigMapGenerator:\n- name: descheduler-values\n  files: [values.yaml]\n"
    )
    (tmp_path / "release.yaml").write_text(install("flux-values-from", "descheduler", "0.26.0", "")["wrapper.yaml"])
    (tmp_path / "values.yaml").write_text(STRATEGIES)
    ((file, rule, message),) = lint_install_files(tmp_path)
    assert (file, rule) == ("values.yaml", "DS101")
    assert "descheduler chart 0.26.0, pinned by HelmRelease kube-system/descheduler" in message
