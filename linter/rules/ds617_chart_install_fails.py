"""DS617: values the pinned chart renders into a workload the API server rejects."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

ID = "DS617"
NAME = "chart-install-fails"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DEPLOYMENT})
SUMMARY = "The chart renders a workload whose install fails"
RATIONALE = (
    "Some chart versions write a value into the workload in a form the cluster refuses. Chart 0.24.0 writes the "
    "leader election flag's value as a list item of its own, unquoted (`- true`): YAML reads it as a boolean, the "
    "API server rejects a container whose `args` are not strings, and the install fails, so that chart cannot "
    "install with leader election at all (chart 0.24.1 writes `--leader-elect=true`). Nothing runs, and Helm's "
    "own render (`helm template`) shows no error. A chart that refuses to render its workload is reported by the "
    "rule about the value it refuses (DS601 for replicas without leader election)."
)
REMEDIATION = "Use a chart version that writes the value as a string (for leader election, 0.24.1 or later)."
_RELEASE = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler, namespace: kube-system}\n"
    "spec:\n  chart:\n    spec: {chart: descheduler, version: VERSION}\n  values:\n    kind: Deployment\n"
    "    leaderElection: {enabled: true}\n    deschedulerPolicy:\n      strategies:\n"
    "        RemoveDuplicates: {enabled: true}\n"
)  # charts before 0.27 hard-code v1alpha1: their policy is written so
EXAMPLES = {
    "pass": [_RELEASE.replace("VERSION", "0.24.1")],
    "fail": [_RELEASE.replace("VERSION", "0.24.0")],
}


def check(runs: Sequence[DeschedulerRun]) -> Iterator[RepoHit]:
    for run in runs:
        for path, reason in run.refused:
            if path == ("spec", "replicas"):
                continue  # DS601's, which says the chart refuses it
            yield RepoHit(*run.where(path), reason, run.label)
