"""Advice that works: every finding that tells the user to run ``desched migrate`` is gone once migrate has run."""

from __future__ import annotations

import pytest

from desched.linter import rules
from desched.linter.docs import _examples
from desched.migrate.rewrite import migrate_text
from tests.conftest import lint

# The chart v0.30.0's default values: v1alpha1 strategies under the chart's new default apiVersion, v1alpha2.
CHART_0_30_0 = """\
deschedulerPolicyAPIVersion: "descheduler/v1alpha2"
deschedulerPolicy:
  strategies:
    RemoveDuplicates:
      enabled: true
    RemovePodsHavingTooManyRestarts:
      enabled: true
      params:
        podsHavingTooManyRestarts:
          podRestartThreshold: 100
          includingInitContainers: true
    LowNodeUtilization:
      enabled: true
      params:
        nodeResourceUtilizationThresholds:
          thresholds: {cpu: 20, memory: 20, pods: 20}
          targetThresholds: {cpu: 50, memory: 50, pods: 50}
"""
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: descheduler-policy-configmap, namespace: kube-system}
data:
  policy.yaml: |
    apiVersion: "descheduler/v1alpha2"
    kind: "DeschedulerPolicy"
    strategies:
      "RemovePodsViolatingNodeTaints":
         enabled: true
"""

V1ALPHA1_VALUES = "deschedulerPolicy:\n  strategies:\n    RemoveFailedPods:\n      enabled: true\n"


def _advised(text: str) -> list[tuple[str, int]]:
    return [(f.rule, f.line) for f in lint(text, file="policy.yaml") if "desched migrate --in-place" in f.message]


# every rule example whose findings advise migrate, and realistic files of each kind
CASES = [
    pytest.param(text, id=f"{module.ID}-{index}")
    for module in rules.all_rules()
    if "desched migrate" in module.REMEDIATION
    for index, (text, *_) in enumerate(_examples(module)["fail"])
    if _advised(text)
] + [
    pytest.param(CHART_0_30_0, id="chart-0.30.0-values"),
    pytest.param(CONFIGMAP, id="configmap"),
    pytest.param(V1ALPHA1_VALUES, id="v1alpha1-values"),
]


@pytest.mark.parametrize("text", CASES)
def test_findings_that_advise_migrate_are_gone_after_it(text: str):
    advised = _advised(text)
    assert advised
    result = migrate_text("policy.yaml", text)
    assert not result.errors and result.changed
    after = {rule for rule, _ in advised} & {f.rule for f in lint(result.text, file="policy.yaml")}
    assert not after, result.text


def test_every_rule_that_names_migrate_has_an_example_where_the_advice_applies():
    named = [module for module in rules.all_rules() if "desched migrate" in module.REMEDIATION]
    assert {module.ID for module in named} >= {"DS101", "DS102", "DS104"}
    for module in named:
        assert any(_advised(text) for text, *_ in _examples(module)["fail"]), module.ID


def test_strategies_beside_profiles_get_exact_manual_steps_not_migrate():
    text = (
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\nstrategies:\n"
        "  RemoveDuplicates:\n    enabled: true\n"
    )
    (finding,) = [f for f in lint(text) if f.rule == "DS102"]
    assert "desched migrate --in-place" not in finding.message
    assert "move each strategy into a profile" in finding.message
    assert not migrate_text("policy.yaml", text).changed  # what migrate would not do, DS102 does not promise
