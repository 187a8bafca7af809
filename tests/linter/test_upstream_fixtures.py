"""Upstream's shipped policies (docs/policy-api.md#83-shipped-defaults, written from its description) lint without
errors."""

from __future__ import annotations

import os

import pytest

from desched.linter.engine import Settings, lint_file

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "upstream")


@pytest.mark.parametrize(
    ("name", "target"),
    [("chart-values.yaml", None), ("chart-values.yaml", 36), ("chart-values.yaml", 34)]
    + [("base-configmap.yaml", target) for target in (None, 27, 30, 33, 36)],
)
def test_shipped_policy_has_no_error(name, target):
    result = lint_file(os.path.join(FIXTURES, name), Settings(target=target))
    assert len(result.policies) == 1
    assert [f for f in result.findings if f.severity == "error"] == []


def test_chart_values_are_recognised_as_helm():
    result = lint_file(os.path.join(FIXTURES, "chart-values.yaml"), Settings())
    assert result.policies[0].shape == "helm"
