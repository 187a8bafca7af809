"""DS014: a kustomize helmCharts entry names a values file kustomize cannot read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.deployment.delivery import Delivery

ID = "DS014"
NAME = "values-file-unreadable"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DELIVERY})
SUMMARY = "kustomize helmCharts entry names a values file that cannot be read"
RATIONALE = (
    "kustomize reads the `valuesFile` and every `additionalValuesFiles` entry of a `helmCharts` entry before it "
    "renders the chart. A values file that is missing, a directory or a device fails the whole build: nothing of "
    "the kustomization is applied, and the descheduler is never installed or upgraded. desched judges the values "
    "it can read as if the build ran, so the missing file would otherwise go unnoticed."
)
REMEDIATION = "Add the values file, or correct its path (relative to the kustomization's directory)."
_HEAD = (
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nhelmCharts:\n- name: descheduler\n"
    "  repo: https://kubernetes-sigs.github.io/descheduler/\n  version: 0.36.0\n"
)
EXAMPLES = {
    "pass": [_HEAD + "  valuesInline: {replicas: 1}\n"],
    "fail": [_HEAD + "  valuesFile: values-that-are-not-there.yaml\n"],
}


def check(delivery: Delivery) -> Iterator[RepoHit]:
    for site in delivery.installs:
        for path, reason in site.unreadable_values_files():
            yield RepoHit(
                *site.where(path),
                f"{reason}: kustomize fails the build of this kustomization, so {site.install.wrapper} never "
                "installs or upgrades the descheduler; add the file or correct its path",
                site.install.wrapper,
            )
