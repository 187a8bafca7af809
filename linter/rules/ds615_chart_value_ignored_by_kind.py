"""DS615: chart values that render only for the other workload kind."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desched.gitops.documents import CHART_VALUES, Shape
from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS615"
NAME = "chart-value-ignored-by-kind"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
SUMMARY = "Chart values that render only for the other workload kind"
RATIONALE = (
    "The chart renders a CronJob unless `kind: Deployment` (its default). Its `replicas` and `leaderElection` "
    "render only for a Deployment (templates/deployment.yaml), and its ServiceMonitor only with `kind: Deployment` "
    "and the chart's Service (`service.enabled`), which it selects by labels (templates/servicemonitor.yaml): set "
    "for the other kind, they are dropped without a word and the descheduler runs without them."
)
REMEDIATION = "Set kind: Deployment (with deschedulingInterval) for these values, or remove them."
_VALUES = "deschedulerPolicy:\n  profiles: []\n"
EXAMPLES = {
    "pass": [
        "kind: Deployment\nreplicas: 2\nleaderElection: {enabled: true}\ndeschedulingInterval: 5m\n" + _VALUES,
        "kind: Deployment\nservice: {enabled: true}\nserviceMonitor: {enabled: true}\ndeschedulingInterval: 5m\n"
        + _VALUES,
    ],
    "fail": [
        "replicas: 2\n" + _VALUES,
        "kind: CronJob\nleaderElection: {enabled: true}\n" + _VALUES,
        "kind: Deployment\ndeschedulingInterval: 5m\nserviceMonitor: {enabled: true}\n" + _VALUES,
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    if ctx.doc.shape != Shape.HELM:
        return
    values = ctx.doc.envelope
    deployment = values.get("kind") == "Deployment"
    if not deployment:
        replicas = values.get("replicas")
        if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas > 1:
            yield _hit("replicas", f"replicas: {replicas} renders only with kind: Deployment; the chart deploys a "
                       "CronJob, which runs one descheduler per schedule tick")  # fmt: skip
        if _enabled(values.get("leaderElection")):
            yield _hit("leaderElection", "leaderElection renders only with kind: Deployment; a CronJob needs none")
    if _enabled(values.get("serviceMonitor")) and not (deployment and _enabled(values.get("service"))):
        why = "the chart deploys a CronJob" if not deployment else "service.enabled is not true"
        yield _hit(
            "serviceMonitor",
            f"serviceMonitor renders only with kind: Deployment and the chart's Service, which it scrapes; {why}, "
            "so no metrics are collected",
        )


def _enabled(value: Any) -> bool:
    return isinstance(value, dict) and value.get("enabled") is True


def _hit(key: str, message: str) -> Hit:
    return Hit(message + " (the chart drops it without a word)", (CHART_VALUES, key), key=True)
