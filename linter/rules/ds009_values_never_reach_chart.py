"""DS009: chart values that never reach the descheduler chart."""

from __future__ import annotations

from collections.abc import Iterator

from desched.gitops.documents import CHART_VALUES, HELM_POLICY_KEY
from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS009"
NAME = "values-never-reach-chart"
SEVERITY = "error"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
UNREACHED = True  # it judges chart values no descheduler receives; no other rule does
SUMMARY = "deschedulerPolicy written where the descheduler chart never receives it"
RATIONALE = (
    "Some values never reach the chart they look written for. An umbrella chart that depends on the descheduler "
    "chart hands it only the values under the dependency's name or alias (and `global`): a `deschedulerPolicy` at "
    "the top of the umbrella's values file is the umbrella's own value, and the descheduler runs the chart's "
    "default policy instead. Argo CD renders a source with `helm.valuesObject` alone when it is set, dropping "
    "`helm.values` whole. Helm and Argo CD say nothing either way."
)
REMEDIATION = "Move the values where the chart receives them, as the message says."
EXAMPLES = {
    "pass": [
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: d}\nspec:\n  source:\n"
        "    chart: descheduler\n    repoURL: https://kubernetes-sigs.github.io/descheduler/\n    helm:\n"
        "      valuesObject:\n        deschedulerPolicy: {profiles: []}\n"
    ],
    "fail": [
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: d}\nspec:\n  source:\n"
        "    chart: descheduler\n    repoURL: https://kubernetes-sigs.github.io/descheduler/\n    helm:\n"
        "      valuesObject: {replicas: 1}\n      values: |\n        deschedulerPolicy:\n          profiles: []\n"
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    reason = ctx.doc.unreached
    if reason is not None:
        yield Hit(reason, (CHART_VALUES, HELM_POLICY_KEY), key=True)
