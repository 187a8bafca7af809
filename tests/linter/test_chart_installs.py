"""Installs of the descheduler chart as repositories write them (issue 37): each observed case is a fixture
repository under tests/linter/installs/, linted whole as ``desched lint`` lints it."""

from __future__ import annotations

import os
import shutil
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


def test_a_chart_name_the_repository_cannot_serve_is_reported_and_the_pin_kept():
    """observed 6: a HelmRelease of chart ``descheduler-charts`` 0.25.2 (its HelmRepository not in the repository)
    with v1alpha1 values from a generated ConfigMap: the chart name is reported where it is written, with the
    charts the repository serves, and the values are judged as chart 0.25.2 (its strategies are right there), not
    as an unpinned chart's."""
    found = _findings("flux-misnamed-chart")
    (unserved,) = [finding for finding in found if finding[3] == "DS010"]
    assert unserved[:4] == ("helmrelease.yaml", 10, 14, "DS010")
    assert "serves no chart descheduler-charts: it serves descheduler (0.18.2, 0.19.2 to 0.36.0)" in unserved[4]
    assert not [finding for finding in found if "no chart version is pinned" in finding[4]]
    assert {rule for _, _, _, rule, _ in found} == {"DS010", "DS101"}  # no DS102: chart 0.25.2 renders v1alpha1


def test_a_chart_version_the_repository_serves_under_another_name_is_reported():
    """A chart version named as the repository named other versions (``descheduler-helm-chart`` 0.30.1, served as
    ``descheduler``), through a HelmRepository of the chart's repository in another file."""
    (unserved,) = [finding for finding in _findings("flux-misnamed-chart-source") if finding[3] == "DS010"]
    assert unserved[:4] == ("helmrelease.yaml", 10, 14, "DS010")
    assert "serves chart version 0.30.1 as descheduler, not descheduler-helm-chart" in unserved[4]


def test_an_unpinned_install_says_once_which_chart_version_desched_assumed():
    """observed 6: an unpinned HelmRelease without values, and one whose values come from two sources, each get
    one finding at the chart reference naming the chart version assumed."""
    assumed = [finding for finding in _findings("flux-unpinned") if finding[3] == "DS011"]
    assert [finding[:4] for finding in assumed] == [
        ("helmrelease-values.yaml", 10, 14, "DS011"),
        ("helmrelease.yaml", 10, 14, "DS011"),
    ]
    assert all("desched judges this install as chart 0.36.0, the chart of release v0.36" in f[4] for f in assumed)


def test_a_policy_listed_among_a_kustomizations_resources_is_reported_at_the_entry():
    """observed 9: a DeschedulerPolicy in ``resources:`` is built as an object no API serves."""
    (applied,) = [finding for finding in _findings("kustomize-policy-resource") if finding[3] == "DS012"]
    assert applied[:4] == ("kustomization.yaml", 6, 5, "DS012")
    assert "configMapGenerator" in applied[4]


@pytest.mark.parametrize("case", ["flux-folder", "argo-folder"])
def test_a_policy_in_a_folder_applied_as_manifests_is_reported_at_its_kind(tmp_path, case):
    """observed 9: a folder a Flux Kustomization's ``spec.path`` or an Argo CD Application's source ``path`` names
    (from the repository's root), with no kustomization in it, is applied manifest by manifest, the policy too; with
    a kustomization that generates a ConfigMap from it instead, nothing is reported."""
    repository = tmp_path / case
    shutil.copytree(ROOT / INSTALLS / case, repository)
    (repository / ".git").mkdir()
    found = [(Path(f.file).name, f.line, f.column, f.rule) for f in lint_paths([str(repository)]).findings]
    assert ("policy.yaml", 2, 7, "DS012") in found
    (repository / "apps" / "descheduler" / "kustomization.yaml").write_text(
        "configMapGenerator:\n- name: descheduler-policy\n  files: [policy.yaml]\n"
    )
    assert "DS012" not in {f.rule for f in lint_paths([str(repository)]).findings}
