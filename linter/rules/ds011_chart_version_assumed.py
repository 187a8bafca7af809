"""DS011: a chart install pins no chart version."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from desched.linter.rules._base import DocumentKind, RepoHit

if TYPE_CHECKING:
    from desched.deployment.delivery import Delivery

ID = "DS011"
NAME = "chart-version-assumed"
SEVERITY = "info"
SCOPE = "repository"
RUNS_ON = frozenset({DocumentKind.DELIVERY})
SUMMARY = "Chart install pins no chart version: desched assumes one"
RATIONALE = (
    "Every chart version renders its own default policy, workload and RBAC. An install that pins no version gets "
    "whatever the repository serves as newest when the tool next reconciles, and desched judges its values as the "
    "chart of the release it assumes (the image.tag of the install's values, the configured target, else the newest "
    "it knows). One finding per install says which chart version that is, so the other findings on the install can "
    "be read against it."
)
REMEDIATION = "Pin the chart version you run (a HelmRelease's `spec.chart.spec.version`, Argo CD's `targetRevision`)."
_HEAD = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: d, namespace: kube-system}\n"
EXAMPLES = {
    "pass": [_HEAD + "spec:\n  chart:\n    spec: {chart: descheduler, version: 0.36.0}\n"],
    "fail": [_HEAD + "spec:\n  chart:\n    spec: {chart: descheduler}\n"],
}


def check(delivery: Delivery) -> Iterator[RepoHit]:
    for site in delivery.installs:
        found = delivery.assumed(site)
        if found is None:
            continue
        chart, release = found
        yield RepoHit(
            *site.where(site.install.chart_path),
            f"no chart version is pinned: desched judges this install as chart {chart.version}, the chart of "
            f"release {release.version} ({release.reason}); pin the chart version you run",
            site.install.wrapper,
        )
