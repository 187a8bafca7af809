"""What the pinned chart version makes of its values, at the boundaries that change it (docs/helm-chart.md): charts
before 0.27 hard-code the v1alpha1 apiVersion; from 0.30 the default is v1alpha2 and a default profile is merged in,
so v1alpha1 strategies are ignored and that profile runs."""

from __future__ import annotations

import pytest

from tests.conftest import lint

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
    (message,) = messages(flux(version, "strategies"), "DS101")
    assert f"chart {version} renders descheduler/v1alpha2 (its deschedulerPolicyAPIVersion default)" in message
    assert "the chart's default profile runs instead: RemoveDuplicates, " in message
    assert "fails to decode" not in message


def test_up_to_chart_0_29_strategies_are_v1alpha1_as_the_chart_renders_them():
    (message,) = messages(flux("0.29.0", "strategies"), "DS101")
    assert "deprecated" in message and "default profile" not in message


def test_an_explicit_v1alpha2_with_strategies_on_a_v1alpha2_chart_names_the_default_profile_too():
    (message,) = messages(flux("0.31.0", "strategies", "descheduler/v1alpha2"), "DS102")
    assert "chart 0.31.0 renders descheduler/v1alpha2 (the values set)" in message


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
