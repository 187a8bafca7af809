"""The descheduler chart per chart version (desched.chart.versions.chart_at): every version from 0.19.0 is described,
the boundaries read off the chart's tags are where the data puts them, and each default policy, rendered as the chart's
ConfigMap renders it, is a policy of its default apiVersion (docs/helm-chart.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from desched import versions
from desched.chart.names import APP_VERSIONS, CHART_NAMES
from desched.chart.versions import FIRST_CHART, HARD_CODED_API_VERSION, ChartRelease, chart_at
from tests.conftest import lint


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


CHARTS = [version for version in APP_VERSIONS if _key(version) >= _key(FIRST_CHART)]
V1ALPHA1, V1ALPHA2 = "descheduler/v1alpha1", "descheduler/v1alpha2"


def _release(version: str) -> ChartRelease:
    release = chart_at(version)
    assert release is not None, version
    return release


def configmap(release: ChartRelease) -> str:
    """The ConfigMap the chart renders with its default values: the header, then ``toYaml`` of the policy (keys
    sorted, as Helm's ``toYaml`` writes them) indented under ``policy.yaml``."""
    policy = f'apiVersion: "{release.default_api_version}"\nkind: "DeschedulerPolicy"\n'
    policy += yaml.safe_dump(release.default_policy, sort_keys=True)
    indented = "".join(f"    {line}\n" for line in policy.splitlines())
    metadata = "metadata:\n  name: descheduler\n  namespace: kube-system\n"
    return f"apiVersion: v1\nkind: ConfigMap\n{metadata}data:\n  policy.yaml: |\n{indented}"


def test_the_chart_versions_covered_run_from_0_19_0_to_the_newest():
    assert CHARTS[0] == "0.19.0" and CHARTS[-1] == max(APP_VERSIONS, key=_key)
    assert len(CHARTS) == 34


@pytest.mark.parametrize("version", CHARTS)
def test_every_field_is_set_for_every_chart_version(version: str):
    release = _release(version)
    assert release.version == version
    assert release.name in CHART_NAMES
    assert release.app_version == APP_VERSIONS[version]
    assert isinstance(release.deprecated, bool)
    assert isinstance(release.skips_empty_policy, bool) and isinstance(release.tpl, bool)
    # the policy part of the defaults: one of the two shapes, never both, never empty
    assert list(release.default_policy) in (["strategies"], ["profiles"])
    assert release.default_policy[next(iter(release.default_policy))]
    # deschedulerPolicyAPIVersion exists from chart 0.27.0; the header is templated exactly when it exists
    assert (release.policy_api_version is None) == (_key(version) < (0, 27, 0))
    assert release.api_version_templated == (release.policy_api_version is not None)
    assert release.default_api_version in (V1ALPHA1, V1ALPHA2)
    # the policy's shape is the one of its default apiVersion
    expected_key = "strategies" if release.default_api_version == V1ALPHA1 else "profiles"
    assert list(release.default_policy) == [expected_key]


def test_every_name_the_chart_has_had_is_listed():
    assert {_release(version).name for version in CHARTS} == set(CHART_NAMES)


@pytest.mark.parametrize(
    ("before", "after", "field", "old", "new"),
    [
        # the rename: 0.19.1 is the last (and deprecated) descheduler-helm-chart; 0.19.2 is already "descheduler"
        ("0.19.1", "0.19.2", "name", "descheduler-helm-chart", "descheduler"),
        ("0.19.1", "0.19.2", "deprecated", True, False),
        # the hard-coded header gives way to deschedulerPolicyAPIVersion
        ("0.26.1", "0.27.0", "api_version_templated", False, True),
        ("0.26.1", "0.27.0", "policy_api_version", None, V1ALPHA1),
        # the default apiVersion moves to v1alpha2, and an empty deschedulerPolicy renders no ConfigMap
        ("0.29.0", "0.30.0", "policy_api_version", V1ALPHA1, V1ALPHA2),
        ("0.29.0", "0.30.0", "skips_empty_policy", False, True),
        # the rendered policy passes through tpl
        ("0.33.0", "0.34.0", "tpl", False, True),
    ],
)
def test_boundaries(before: str, after: str, field: str, old: object, new: object):
    assert getattr(_release(before), field) == old
    assert getattr(_release(after), field) == new


def test_the_header_before_0_27_is_hard_coded_v1alpha1():
    assert HARD_CODED_API_VERSION == V1ALPHA1
    assert {_release(version).default_api_version for version in CHARTS if _key(version) < (0, 27, 0)} == {V1ALPHA1}


def test_distinct_default_blocks_change_where_values_yaml_changed():
    blocks: list[tuple[str, object]] = []
    for version in CHARTS:
        policy = _release(version).default_policy
        if not blocks or blocks[-1][1] != policy:
            blocks.append((version, policy))
    assert [first for first, _ in blocks] == ["0.19.0", "0.25.0", "0.30.0", "0.30.1", "0.34.0"]


def test_spot_checks_against_values_yaml():
    strategies = _release("0.26.0").default_policy["strategies"]
    assert strategies["LowNodeUtilization"]["params"]["nodeResourceUtilizationThresholds"] == {
        "thresholds": {"cpu": 20, "memory": 20, "pods": 20},
        "targetThresholds": {"cpu": 50, "memory": 50, "pods": 50},
    }
    assert strategies["RemovePodsHavingTooManyRestarts"]["params"]["podsHavingTooManyRestarts"] == {
        "podRestartThreshold": 100,
        "includingInitContainers": True,
    }
    assert list(_release("0.19.0").default_policy["strategies"]) == [
        "RemoveDuplicates",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingNodeAffinity",
        "RemovePodsViolatingInterPodAntiAffinity",
        "LowNodeUtilization",
    ]
    # chart 0.30.0 put the node affinity args under RemovePodsViolatingNodeTaints (fixed in 0.30.1)
    config_0_30_0 = _release("0.30.0").default_policy["profiles"][0]["pluginConfig"]
    assert config_0_30_0[3] == {
        "name": "RemovePodsViolatingNodeTaints",
        "args": {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]},
    }
    evictor = {"name": "DefaultEvictor", "args": {"ignorePvcPods": True, "evictLocalStoragePods": True}}
    assert _release("0.33.0").default_policy["profiles"][0]["pluginConfig"][0] == evictor
    profile = _release("0.36.0").default_policy["profiles"][0]
    assert profile["pluginConfig"][0]["args"] == {
        "podProtections": {"defaultDisabled": ["PodsWithLocalStorage"], "extraEnabled": ["PodsWithPVC"]}
    }
    assert profile["plugins"]["balance"]["enabled"] == [
        "RemoveDuplicates",
        "RemovePodsViolatingTopologySpreadConstraint",
        "LowNodeUtilization",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0.26.0", "0.26.0"), ("v0.26.0", "0.26.0"), (" v0.36.0 ", "0.36.0")],
)
def test_a_chart_version_is_found_with_or_without_v(text: str, expected: str):
    assert _release(text).version == expected


@pytest.mark.parametrize("text", ["0.18.2", "0.18.999", "0.26", "0.37.0", "0.26.0-rc1", "", "vv0.26.0"])
def test_other_versions_have_no_chart_release(text: str):
    assert chart_at(text) is None


def test_a_fresh_policy_is_the_callers_copy():
    fresh = _release("0.36.0").fresh_policy()
    fresh["profiles"][0]["pluginConfig"].clear()
    assert _release("0.36.0").default_policy["profiles"][0]["pluginConfig"]
    assert _release("0.35.0").default_policy == _release("0.36.0").default_policy


def test_importing_the_chart_data_parses_no_yaml():
    code = "import sys, desched.chart.versions; print('yaml' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


# What desched finds in each chart's default policy, rendered as the chart renders it and linted for the release the
# chart deploys (releases before v0.27, which desched does not check against, as v0.27: the oldest it does).
# - Charts 0.19.0 to 0.29.0 default to v1alpha1 strategies: the only finding is DS101's warning that v1alpha1 goes away
#   in v0.31 (an error from v0.31, not reached by these charts' releases).
# - Chart 0.30.0's default is broken upstream: it fails to start the descheduler v0.30.0 it deploys, as desched says
#   (node affinity args under RemovePodsViolatingNodeTaints, includeSoftConstraints removed in v0.28,
#   RemovePodsViolatingNodeAffinity enabled at balance and without pluginConfig). Chart 0.30.1 fixed it ("fix helm's
#   default deschedulerPolicy").
# - From chart 0.30.1 the default has no finding at all.
CHART_0_30_0_FINDINGS = [("DS003", "error"), ("DS006", "error"), ("DS202", "error"), ("DS203", "error")]


@pytest.mark.parametrize("version", CHARTS)
def test_each_default_policy_decodes_as_its_default_api_version(version: str):
    release = _release(version)
    minor = max(_key(release.app_version)[1], versions.OLDEST)
    findings = lint(configmap(release), target=versions.render(minor), file="configmap.yaml")
    found = sorted({(finding.rule, finding.severity) for finding in findings})
    if version == "0.30.0":
        assert found == CHART_0_30_0_FINDINGS
    elif release.default_api_version == V1ALPHA1:
        assert found == [("DS101", "warning")]
    else:
        assert found == []


def test_the_chart_model_loads_only_where_chart_values_are(tmp_path):
    raw = tmp_path / "policy.yaml"
    raw.write_text("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n")
    pinned = tmp_path / "release.yaml"
    pinned.write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: d}\nspec:\n"
        "  chart:\n    spec: {chart: descheduler, version: 0.31.0}\n  values:\n    deschedulerPolicy: {profiles: []}\n"
    )
    code = (
        "import sys\nfrom desched.cli import main\nmain(['lint', '--no-config', sys.argv[1]])\n"
        "print('desched.chart.versions' in sys.modules, file=sys.stderr)"
    )
    for path, loaded in ((raw, "False"), (pinned, "True")):
        done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
        assert done.stderr.strip().splitlines()[-1] == loaded, done.stderr
