"""DS101-DS104 and how they share keys with DS003."""

from __future__ import annotations

from tests.conftest import lint

V1 = "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\n"
V2 = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"


def rules(text, target=None):
    return sorted((f.rule, f.severity, f.line) for f in lint(text, target))


def test_v1alpha1_is_an_error_from_v0_31_and_a_warning_before():
    text = V1 + "strategies:\n  RemoveDuplicates:\n    enabled: true\n"
    assert ("DS101", "error", 1) in rules(text, "v0.31")
    assert ("DS101", "warning", 1) in rules(text, "v0.30")


def test_strategies_in_v1alpha2_are_mixed_shapes_not_unknown_keys():
    found = rules(V2 + "strategies:\n  RemoveDuplicates:\n    enabled: true\nevictLocalStoragePods: true\n")
    assert [r for r in found if r[0] in ("DS003", "DS102")] == [("DS102", "error", 3), ("DS102", "error", 6)]


def test_profiles_in_v1alpha1_are_mixed_shapes():
    found = rules(V1 + "profiles: []\n", "v0.30")
    assert ("DS102", "error", 3) in found and not [r for r in found if r[0] == "DS003"]


def test_deprecated_flags_from_v0_34_only():
    text = V2 + "profiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n    args: {ignorePvcPods: true}\n"
    [finding] = [f for f in lint(text, "v0.34") if f.rule == "DS103"]
    assert "podProtections.extraEnabled: [PodsWithPVC]" in finding.message
    assert not [f for f in lint(text, "v0.33") if f.rule == "DS103"]


def test_lost_content_and_unknown_strategy():
    text = V1 + (
        "maxNoOfPodsToEvictTotal: 5\nstrategies:\n  RemoveDuplicates:\n    enabled: true\n    weight: 3\n"
        "    params:\n      labelSelector: {matchLabels: {a: b}}\n  Bogus:\n    enabled: false\n"
    )
    found = [(f.rule, f.line) for f in lint(text, "v0.30") if f.rule in ("DS003", "DS104")]
    assert found == [("DS104", 3), ("DS104", 7), ("DS104", 9), ("DS104", 10)]


CONVERTED = (
    V1
    + """\
strategies:
  LowNodeUtilization:
    enabled: true
    params:
      thresholdPriority: 100
      thresholdPriorityClassName: high
      nodeResourceUtilizationThresholds:
        thresholds: {cpu: 60, memory: 20}
        targetThresholds: {cpu: 50, memory: 25}
  HighNodeUtilization:
    enabled: true
    params:
      nodeResourceUtilizationThresholds:
        thresholds: {cpu: 20}
"""
)


def test_v1alpha1_is_linted_as_converted_with_findings_on_source_lines():
    found = {(f.rule, f.line, f.column): f for f in lint(CONVERTED, "v0.30")}
    assert ("DS303", 10, 27) in found  # thresholds.cpu of the v1alpha1 source
    assert ("DS305", 11, 45) in found
    assert ("DS310", 7, 7) in found  # thresholdPriority
    assert any(rule == "DS205" for rule, _, _ in found)
    assert found[("DS303", 10, 27)].message.startswith("after conversion to v1alpha2: ")
    assert found[("DS303", 10, 27)].path == (
        "/strategies/LowNodeUtilization/params/nodeResourceUtilizationThresholds/thresholds/cpu"
    )


def test_short_lifetime_warning_skips_negative_values_that_ds004_reports():
    text = V2 + (
        "profiles:\n- name: p\n  pluginConfig:\n  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: -5}\n"
    )
    rules = {f.rule for f in lint(text)}
    assert "DS004" in rules and "DS311" not in rules


def test_the_preferred_node_affinity_type_is_ignored_before_v0_28():
    text = V2 + (
        "profiles:\n- name: p\n  pluginConfig:\n  - name: RemovePodsViolatingNodeAffinity\n"
        "    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution,\n"
        "                              preferredDuringSchedulingIgnoredDuringExecution]}\n"
    )
    [finding] = [f for f in lint(text, "v0.27") if f.rule == "DS307"]
    assert (finding.line, finding.column) == (8, 31) and "arrived in v0.28.0" in finding.message
    assert not [f for f in lint(text, "v0.28") if f.rule == "DS307"]
    typo = text.replace("preferredDuring", "preferedDuring")
    assert [f.line for f in lint(typo, "v0.27") if f.rule == "DS307"] == [8]
