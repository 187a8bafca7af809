"""Installs of the descheduler chart as repositories write them (issue 37): each observed case is a fixture
repository under tests/linter/installs/, linted whole as ``desched lint`` lints it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from desched.linter.lint import lint_paths

ROOT = Path(__file__).resolve().parents[2]
INSTALLS = "tests/linter/installs"


@pytest.fixture(autouse=True)
def _from_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # findings name the fixture files as the tests below write them


def _findings(case: str) -> list[tuple[str, int, int, str, str]]:
    """``(file within the case, line, column, rule, message)`` of every finding of the fixture repository ``case``."""
    base = os.path.join(INSTALLS, case)
    found = lint_paths([base]).findings
    return [(os.path.relpath(f.file, base), f.line, f.column, f.rule, f.message) for f in found]


@pytest.mark.parametrize(
    ("case", "file", "rule"),
    [
        ("kustomize-values-file", "values.yaml", "DS606"),
        ("kustomize-additional-values", "values/replicas.yaml", "DS606"),
        ("kustomize-additional-values", "values/replicas.yaml", "DS615"),
    ],
)
def test_a_helmcharts_values_file_is_chart_values_whatever_keys_it_holds(case, file, rule):
    """observed 5: a ``valuesFile`` (or ``additionalValuesFiles`` entry) that sets only ``schedule`` or ``replicas``
    is the chart's values as a HelmRelease's ``values`` are, so the deployment rules judge what the chart renders
    from it."""
    found = [(where, rule_id) for where, _, _, rule_id, _ in _findings(case)]
    assert (file, rule) in found
