"""What the pinned chart version makes of its values, at the boundaries that change it (docs/helm-chart.md): charts
before 0.27 hard-code the v1alpha1 apiVersion; from 0.30 the default is v1alpha2 and a default profile is merged in,
so v1alpha1 strategies are ignored and that profile runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from desched.linter.finding import Finding
from tests.conftest import lint as lint_all


def lint(text: str, target: str | None = None) -> list[Finding]:
    """The findings on the rendered policy of ``text`` (the chart's workload has its own tests:
    test_chart_deployment.py)."""
    return [f for f in lint_all(text, target) if not f.rule.startswith("DS6")]


POLICIES = {
    "strategies": "    deschedulerPolicy:\n      strategies:\n        RemoveDuplicates: {enabled: true}\n",
    "profiles": (
        "    deschedulerPolicy:\n      profiles:\n      - name: p\n        pluginConfig:\n"
        "        - name: RemoveDuplicates\n        plugins:\n          balance: {enabled: [RemoveDuplicates]}\n"
    ),
}


def flux(version: str, policy: str, api_version: str | None = None) -> str:
    key = f"    deschedulerPolicyAPIVersion: {api_version}\n" if api_version else ""
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: descheduler, namespace: kube-system}\n"
        f"spec:\n  chart:\n    spec: {{chart: descheduler, version: {version}}}\n  values:\n{key}{POLICIES[policy]}"
    )


def messages(text: str, rule: str) -> list[str]:
    return [f.message for f in lint(text) if f.rule == rule and f.suppressed is None]


@pytest.mark.parametrize("version", ["0.30.1", "0.31.0", "0.36.0"])
def test_from_chart_0_30_strategies_are_ignored_and_the_default_profile_runs(version: str):
    text = flux(version, "strategies")
    assert messages(text, "DS101") == []  # the chart renders v1alpha2: nothing fails to decode
    (message,) = messages(text, "DS102")
    assert f"chart {version} renders descheduler/v1alpha2 (its deschedulerPolicyAPIVersion default)" in message
    assert "the chart's default profile runs instead: RemoveDuplicates, " in message
    assert "desched migrate" in message


def test_up_to_chart_0_29_strategies_are_v1alpha1_as_the_chart_renders_them():
    (message,) = messages(flux("0.29.0", "strategies"), "DS101")
    assert "deprecated" in message and "default profile" not in message


def test_an_explicit_v1alpha2_with_strategies_on_a_v1alpha2_chart_names_the_default_profile_too():
    (message,) = messages(flux("0.31.0", "strategies", "descheduler/v1alpha2"), "DS102")
    assert "chart 0.31.0 renders descheduler/v1alpha2 (the values set deschedulerPolicyAPIVersion)" in message


def test_an_explicit_v1alpha2_on_a_chart_without_a_default_profile_runs_nothing():
    (message,) = messages(flux("0.28.0", "strategies", "descheduler/v1alpha2"), "DS102")
    assert "none of these strategies runs" in message


@pytest.mark.parametrize(("version", "dropped"), [("0.26.1", True), ("0.27.0", False)])
def test_before_chart_0_27_the_apiversion_is_hard_coded(version: str, dropped: bool):
    text = flux(version, "profiles", "descheduler/v1alpha2")
    found = messages(text, "DS102")
    assert bool(found) is dropped
    if dropped:
        assert '"profiles" is a descheduler/v1alpha2 field in a v1alpha1 policy' in found[0]


# -- the chart's defaults are merged under the values (desched.deployment.chartrender)
# -------------------------------------------


def _values(version: str, body: str) -> str:
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: descheduler, namespace: kube-system}\n"
        f"spec:\n  chart:\n    spec:\n      chart: descheduler\n      version: {version}\n  values:\n{body}"
    )


def test_thresholds_the_chart_defaults_supply_are_not_missing():
    text = _values("0.26.0", "    deschedulerPolicy:\n      strategies:\n        LowNodeUtilization: {enabled: true}\n")
    assert [f.rule for f in lint(text) if f.rule.startswith("DS3")] == []
    # the same values unpinned are judged as the chart of the release assumed renders them (the newest: v1alpha2)
    unpinned = "deschedulerPolicy:\n  strategies:\n    LowNodeUtilization: {enabled: true}\n"
    (finding,) = lint(unpinned)
    assert finding.rule == "DS102" and "chart 0.36.0, the chart of release v0.36 (the newest" in finding.message
    pinned_by_image = "image: {tag: v0.26.0}\n" + unpinned
    assert [f.rule for f in lint(pinned_by_image)] == ["DS101"]  # chart 0.26.0: its thresholds, v1alpha1


def test_a_finding_a_chart_default_causes_points_at_the_pin_and_names_the_chart_version():
    text = _values("0.30.0", "    deschedulerPolicy:\n      maxNoOfPodsToEvictPerNode: 5\n")
    found = [f for f in lint(text) if f.severity == "error"]
    assert found and {(f.line, f.column) for f in found} == {(8, 16)}  # the version the wrapper pins
    assert all("a default of chart 0.30.0, pinned by HelmRelease kube-system/descheduler" in f.message for f in found)


def test_a_finding_on_a_value_the_user_set_stays_on_its_line():
    text = _values("0.31.0", "    deschedulerPolicy:\n      maxNoOfPodsToEvictPerNode: -1\n")
    (finding,) = [f for f in lint(text) if f.rule == "DS004"]
    assert (finding.line, "a default of chart" in finding.message) == (11, False)


def test_a_null_deletes_a_default_strategy():
    body = "    deschedulerPolicy:\n      strategies:\n        LowNodeUtilization: null\n"
    texts = [_values("0.26.0", body), _values("0.26.0", "    deschedulerPolicy: {}\n")]
    (deleted, kept) = [{f.path for f in lint(text) if f.rule == "DS101"} for text in texts]
    assert deleted == kept  # both are the default v1alpha1 policy, judged alike
    from desched.linter.engine import Settings, lint_text

    ((doc, _, _),) = lint_text("x.yaml", texts[0], Settings()).checked
    assert "LowNodeUtilization" not in doc.root["strategies"]
    assert "RemoveDuplicates" in doc.root["strategies"]


def test_default_strategies_under_values_that_run_profiles_are_ignored_without_a_word():
    body = "    deschedulerPolicyAPIVersion: descheduler/v1alpha2\n" + POLICIES["profiles"]
    assert [f for f in lint(_values("0.28.1", body)) if f.severity != "info"] == []


# -- several values sources of one install are one policy ----------------------------------------------------------

FLUX_WITH_VALUES_FROM = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: descheduler, namespace: kube-system}
spec:
  chart:
    spec: {chart: descheduler, version: "0.31.0"}
  valuesFrom:
    - kind: ConfigMap
      name: descheduler-values
  values:
    deschedulerPolicy:
      profiles:
      - name: default
        pluginConfig:
        - name: LowNodeUtilization
          args:
            thresholds: {cpu: 70}
        plugins:
          balance: {enabled: [LowNodeUtilization]}
"""
VALUES_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: descheduler-values, namespace: kube-system}
data:
  values.yaml: |
    deschedulerPolicy:
      maxNoOfPodsToEvictPerNode: -3
      profiles:
      - name: base
"""


def test_values_from_and_spec_values_merge_and_each_source_reports_what_it_set(tmp_path):
    from desched.linter.lint import lint_paths

    (tmp_path / "hr.yaml").write_text(FLUX_WITH_VALUES_FROM)
    (tmp_path / "cm.yaml").write_text(VALUES_CONFIGMAP)
    found = {(Path(f.file).name, f.rule, f.line) for f in lint_paths([str(tmp_path)]).findings if f.rule < "DS6"}
    # spec.values' profiles list replaces the ConfigMap's (profile "base" never runs, so nothing is said of it);
    # the ConfigMap's negative limit is its own; the missing targetThresholds are spec.values'
    assert found == {("cm.yaml", "DS004", 7), ("hr.yaml", "DS304", 17)}


def test_the_source_that_wins_alone_stands_for_the_install_in_the_repository_rules(tmp_path):
    from desched.deployment.releases import Deployments
    from desched.linter.engine import Settings, check, read_file

    (tmp_path / "hr.yaml").write_text(FLUX_WITH_VALUES_FROM)
    (tmp_path / "cm.yaml").write_text(VALUES_CONFIGMAP)
    results = [read_file(str(tmp_path / name), Settings()) for name in ("hr.yaml", "cm.yaml")]
    documents = [(r.file, doc) for r in results for doc in r.others + r.wrappers]
    deployments = Deployments(documents, [doc for r in results for doc in r.policies])
    runs = [run for r in results for run in check(r, Settings(), deployments).runs()]
    ((doc, _, effective),) = runs
    assert Path(doc.file).name == "hr.yaml"
    assert [profile.name for profile in effective.policy.profiles] == ["default"]


KUSTOMIZATION = """\
helmCharts:
- name: descheduler
  repo: https://kubernetes-sigs.github.io/descheduler/
  version: 0.31.0
  valuesFile: values.yaml
{merge}  valuesInline:
    deschedulerPolicy:
      maxNoOfPodsToEvictPerNode: {inline}
"""
VALUES_FILE = "deschedulerPolicy:\n  maxNoOfPodsToEvictPerNode: -1\n  maxNoOfPodsToEvictPerNamespace: -2\n"


@pytest.mark.parametrize(
    ("merge", "inline", "expected"),
    [
        # override (the default): inline wins, the file's other keys stay
        ("", "5", {("values.yaml", "maxNoOfPodsToEvictPerNamespace")}),
        ("  valuesMerge: override\n", "5", {("values.yaml", "maxNoOfPodsToEvictPerNamespace")}),
        # merge: the file wins; inline only adds what the file lacks
        (
            "  valuesMerge: merge\n",
            "5",
            {("values.yaml", "maxNoOfPodsToEvictPerNode"), ("values.yaml", "maxNoOfPodsToEvictPerNamespace")},
        ),
        # replace: the file never reaches the chart
        ("  valuesMerge: replace\n", "5", {("values.yaml", "DS009")}),
        # a null in valuesInline clears the file's key (kyaml merge2), and the chart default stands
        ("", "null", {("values.yaml", "maxNoOfPodsToEvictPerNamespace")}),
    ],
)
def test_kustomize_values_merge_modes(tmp_path, merge, inline, expected):
    from desched.linter.lint import lint_paths

    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION.format(merge=merge, inline=inline))
    (tmp_path / "values.yaml").write_text(VALUES_FILE)
    found = set()
    for finding in lint_paths([str(tmp_path)]).findings:
        name = Path(finding.file).name
        if finding.rule == "DS009":
            found.add((name, "DS009"))
        elif finding.rule == "DS004":
            found.add((name, finding.message.split('"')[1]))
    assert found == expected


NO_POLICY = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
    "metadata: {{name: descheduler, namespace: kube-system}}\n"
    "spec:\n  chart:\n    spec: {{chart: descheduler, version: {version}}}\n{rest}"
)


@pytest.mark.parametrize(
    ("version", "rest", "expected"),
    [
        ("0.30.0", "  values:\n    kind: Deployment\n", {"DS003", "DS006", "DS202", "DS203"}),  # the broken default
        ("0.30.0", "", {"DS003", "DS006", "DS202", "DS203"}),  # no values at all: the same default runs
        ("0.31.0", "  values:\n    kind: Deployment\n", set()),
        ("0.25.2", "", {"DS101"}),  # the default v1alpha1 strategies, deprecated
        # values kept elsewhere may set the policy: nothing is assumed
        ("0.30.0", "  valuesFrom: [{kind: ConfigMap, name: values}]\n", set()),
    ],
)
def test_an_install_that_sets_no_policy_runs_the_chart_default_and_is_judged(version, rest, expected):
    found = lint(NO_POLICY.format(version=version, rest=rest))
    assert {f.rule for f in found} == expected
    assert all((f.line, "a default of chart" in f.message or f.rule == "DS101") == (6, True) for f in found)
