"""DS010: a chart install names a chart its repository does not serve."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.deployment.delivery import Delivery

ID = "DS010"
NAME = "chart-not-served"
SEVERITY = "error"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DELIVERY})
SUMMARY = "Chart install names a chart the descheduler chart repository does not serve"
RATIONALE = (
    "The descheduler chart repository (https://kubernetes-sigs.github.io/descheduler/) serves one chart, named "
    "`descheduler-helm-chart` up to 0.19.1 and `descheduler` from 0.19.2. A wrapper that names another chart "
    "(`descheduler-charts`), or a version under the other name, fails to fetch it: Flux, Argo CD or kustomize "
    "reports the chart missing and the descheduler is never installed or upgraded, while the values beside it look "
    "fine. desched still judges those values as the chart version pinned."
)
REMEDIATION = "Name the chart as the repository serves it at the pinned version (`descheduler` from 0.19.2)."
_HEAD = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: d, namespace: kube-system}\n"
EXAMPLES = {
    "pass": [_HEAD + "spec:\n  chart:\n    spec: {chart: descheduler, version: 0.36.0}\n"],
    "fail": [
        _HEAD + "spec:\n  chart:\n    spec: {chart: descheduler-charts, version: 0.36.0}\n",
        _HEAD + "spec:\n  chart:\n    spec: {chart: descheduler-helm-chart, version: 0.36.0}\n",
    ],
}


def check(delivery: Delivery) -> Iterator[RepoHit]:
    for site in delivery.installs:
        reason = site.install.unserved
        if reason is not None:
            yield RepoHit(
                *site.where(site.install.chart_path),
                f"{reason}, so {site.install.wrapper} cannot fetch its chart and never installs or upgrades the "
                "descheduler; name the chart as the repository serves it",
                site.install.wrapper,
            )
