"""DS014 (issue 38, item 9): a kustomize values file that is missing, a directory or a device fails kustomize's
build; desched says so at the entry that names it, and is silent on a values file it can read and on a remote one."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from desched.linter.lint import lint_paths

_KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
helmCharts:
- name: descheduler
  repo: https://kubernetes-sigs.github.io/descheduler/
  version: 0.36.0
  valuesFile: bad.yaml
  additionalValuesFiles:
  - ok.yaml
  - bad.yaml
  - https://example.com/values.yaml
"""


def _ds014(root: Path) -> list[tuple[int, int, str]]:
    (root / "ok.yaml").write_text("replicas: 1\n")
    (root / "kustomization.yaml").write_text(_KUSTOMIZATION)
    run = lint_paths([str(root)])
    return [(found.line, found.column, found.message) for found in run.findings if found.rule == "DS014"]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda path: None, "does not exist"),
        (os.mkdir, "is a directory"),
        (lambda path: os.symlink("/dev/zero", path), "is not a regular file"),
    ],
    ids=["missing", "directory", "device"],
)
def test_unreadable_values_file_is_reported_at_its_entry(
    tmp_path: Path, make: Callable[[str], object], reason: str
) -> None:
    make(str(tmp_path / "bad.yaml"))
    found = _ds014(tmp_path)
    # at valuesFile and additionalValuesFiles[1]; not at the readable ok.yaml, nor at the remote file
    assert [(line, column) for line, column, _ in found] == [(7, 15), (10, 5)]
    for _, _, message in found:
        assert f"values file bad.yaml {reason}" in message
        assert "kustomize fails the build" in message
