"""DS105 (metricsCollector deprecated from v0.33) and DS102's severity following the consequence."""

from __future__ import annotations

import pytest

from tests.conftest import lint

POLICY = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"
LOW = (
    "- name: {name}\n  pluginConfig:\n  - name: LowNodeUtilization\n    args:\n      thresholds: {{cpu: 20}}\n"
    "      targetThresholds: {{cpu: 50}}\n      metricsUtilization: {metrics}\n"
    "  plugins:\n    balance:\n      enabled: [LowNodeUtilization]\n"
)


def _ds105(text: str, target: str) -> list[str]:
    return [f.message for f in lint(text, target) if f.rule == "DS105"]


@pytest.mark.parametrize("metrics", ["{source: KubernetesMetrics}", "{metricsServer: true}"])
def test_metrics_collector_names_the_plugin_that_reads_it(metrics: str):
    text = POLICY + "metricsCollector: {enabled: true}\nprofiles:\n" + LOW.format(name="p", metrics=metrics)
    (message,) = _ds105(text, "v0.33")
    assert "deprecated since v0.33 in favour of metricsProviders" in message
    assert "p/LowNodeUtilization reads metrics-server" in message and "{source: KubernetesMetrics}" in message


def test_metrics_collector_no_plugin_reads_is_to_be_deleted():
    text = (
        POLICY + "metricsCollector: {enabled: true}\nprofiles:\n" + LOW.format(name="p", metrics="{source: Prometheus}")
    )
    (message,) = _ds105(text, "v0.36")
    assert "no plugin reads metrics" in message and "delete it" in message


def test_metrics_collector_is_current_before_v0_33():
    text = POLICY + "metricsCollector: {enabled: true}\nprofiles: []\n"
    assert _ds105(text, "v0.32") == []
    assert len(_ds105(text, "v0.33")) == 1


EVICTOR = "  - name: DefaultEvictor\n    args: {{evictLocalStoragePods: {value}}}\n"


def _ds102(top: str, values: list[str]) -> list[str]:
    profiles = "".join(f"- name: p{i}\n  pluginConfig:\n" + EVICTOR.format(value=v) for i, v in enumerate(values))
    text = POLICY + f"evictLocalStoragePods: {top}\nprofiles:\n" + profiles
    return [f.severity for f in lint(text, "v0.36") if f.rule == "DS102"]


def test_a_flag_every_profile_already_sets_is_a_warning():
    assert _ds102("true", ["true", "true"]) == ["warning"]


@pytest.mark.parametrize("values", [["false"], ["true", "false"]])
def test_a_flag_a_profile_does_not_set_alike_is_an_error(values: list[str]):
    assert _ds102("true", values) == ["error"]


def test_a_flag_without_profiles_is_an_error():
    text = POLICY + "evictLocalStoragePods: true\nprofiles: []\n"
    assert [f.severity for f in lint(text, "v0.36") if f.rule == "DS102"] == ["error"]
