"""A file named on the command line in which desched finds nothing it judges is reported as unchecked (a note on
stderr, ``summary.unchecked`` in JSON); exit codes do not change and directory walks stay quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desched.cli import main

UNRELATED = "name: ci\non: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n"
    "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
    "    spec: {containers: [{name: web, image: nginx}]}\n"
)
PDB = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {maxUnavailable: 1}\n"
RELEASE_WITHOUT_POLICY = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler}\nspec:\n  chart:\n"
    "    spec: {chart: descheduler, version: 0.31.0}\n  values:\n    kind: Deployment\n"
)
RELEASE_VALUES_FROM = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler}\nspec:\n  chart:\n"
    "    spec: {chart: descheduler, version: 0.31.0}\n  valuesFrom: [{kind: ConfigMap, name: values}]\n"
)
POLICY = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n"
NOTE = "desched: note: {}: no descheduler policy found"


def _lint(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", "--no-config", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_named_file_without_anything_to_judge_gets_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    unrelated = tmp_path / "ci.yaml"
    unrelated.write_text(UNRELATED)
    code, out, err = _lint(capsys, str(unrelated))
    assert code == 0
    assert NOTE.format(unrelated) in err.splitlines()
    code, out, err = _lint(capsys, "--format", "json", str(unrelated))
    assert code == 0
    summary = json.loads(out)["summary"]
    assert summary["unchecked"] == [str(unrelated)] and summary["files"] == 1


@pytest.mark.parametrize(
    "text",
    [POLICY, DEPLOYMENT, PDB, RELEASE_WITHOUT_POLICY, RELEASE_VALUES_FROM, "a: [unclosed\n"],
    ids=["policy", "deployment", "pdb", "chart-wrapper", "chart-wrapper-values-from", "invalid-yaml"],
)
def test_files_with_something_desched_judges_get_no_note(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    named = tmp_path / "x.yaml"
    named.write_text(text)
    _, out, err = _lint(capsys, "--format", "json", str(named))
    assert "no descheduler policy found" not in err
    assert "unchecked" not in json.loads(out)["summary"]


def test_a_directory_walk_stays_quiet_about_unrelated_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "ci.yaml").write_text(UNRELATED)
    (tmp_path / "policy.yaml").write_text(POLICY)
    code, out, err = _lint(capsys, "--format", "json", str(tmp_path))
    assert code == 0 and "no descheduler policy found" not in err
    assert "unchecked" not in json.loads(out)["summary"]


def test_the_exit_code_follows_the_findings_of_the_other_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    unrelated, broken = tmp_path / "ci.yaml", tmp_path / "broken.yaml"
    unrelated.write_text(UNRELATED)
    broken.write_text("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [{name: a, bogus: 1}]\n")
    code, _, err = _lint(capsys, str(unrelated), str(broken))
    assert code == 1
    assert NOTE.format(unrelated) in err.splitlines() and NOTE.format(broken) not in err.splitlines()
