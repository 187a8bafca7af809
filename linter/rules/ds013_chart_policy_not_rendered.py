"""DS013: ``deschedulerPolicy`` emptied, so the chart writes no policy of its own."""

from __future__ import annotations

from collections.abc import Iterator

from desched.gitops.documents import CHART_VALUES, HELM_POLICY_KEY
from desched.linter.rules._base import Context, DocumentKind, Hit

ID = "DS013"
NAME = "chart-policy-not-rendered"
SEVERITY = "info"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
NO_POLICY = True  # it judges chart values the chart writes no policy from; no other policy rule does
SUMMARY = "deschedulerPolicy set to null: the chart writes no policy of its own"
RATIONALE = (
    "A null `deschedulerPolicy` deletes the chart's default policy. From chart 0.30.0 the ConfigMap template then "
    "renders no ConfigMap: the descheduler reads key `policy.yaml` of the ConfigMap named like the release (the "
    "chart's fullname) in the release's namespace, which the user brings; desched judges that policy where the "
    "repository holds it, never the chart's default. Before 0.30.0 the template still writes `policy.yaml`: its "
    "`apiVersion` and `kind` lines followed by `null`, which is not YAML the descheduler can read, so it fails at "
    "start-up."
)
REMEDIATION = (
    "Before chart 0.30.0, write the policy in deschedulerPolicy (or upgrade the chart); from 0.30.0, keep the "
    "ConfigMap the descheduler reads beside the release."
)
_RELEASE = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: descheduler, namespace: kube-system}\n"
    "spec:\n  chart:\n    spec: {chart: descheduler, version: VERSION}\n  values:\n    deschedulerPolicy: POLICY\n"
)
EXAMPLES = {
    "pass": [_RELEASE.replace("VERSION", "0.36.0").replace("POLICY", "{profiles: []}")],
    "fail": [
        _RELEASE.replace("VERSION", "0.36.0").replace("POLICY", "null"),
        _RELEASE.replace("VERSION", "0.29.0").replace("POLICY", "null"),
    ],
}


def check(ctx: Context) -> Iterator[Hit]:
    doc = ctx.doc
    if not getattr(doc, "no_policy", False):
        return
    import json

    from desched.chart.record import first_newer
    from desched.deployment.chartrender import ChartDoc  # only chart values that write no policy reach here
    from desched.deployment.chartruns import fullname

    if not isinstance(doc, ChartDoc) or doc.values_writer((HELM_POLICY_KEY,)) is not doc.source:
        return
    chart, value = doc.chart, doc.values.get(HELM_POLICY_KEY)
    name = fullname(doc.values, chart.name, doc.release[0])
    if chart.renders_no_empty_policy:
        yield Hit(
            f"deschedulerPolicy is {json.dumps(value)}: chart {chart.version} renders no policy ConfigMap, so the "
            f"descheduler reads key policy.yaml of ConfigMap {name} in the release's namespace, a ConfigMap from "
            "outside the chart; the chart's default policy does not run, and desched judges that ConfigMap's policy "
            "where the repository holds it",
            (CHART_VALUES, HELM_POLICY_KEY),
            key=True,
        )
        return
    newer = first_newer(chart, lambda found: found.renders_no_empty_policy)
    own = f"bring your own ConfigMap with chart {newer} or later" if newer else "write your own ConfigMap"
    yield Hit(
        f"deschedulerPolicy is {json.dumps(value)}: chart {chart.version} still writes ConfigMap {name} with a "
        f"policy.yaml of its apiVersion and kind lines followed by {json.dumps(value)}, which is not YAML the "
        f"descheduler can read: it fails at start-up; write the policy in deschedulerPolicy, or {own}",
        (CHART_VALUES, HELM_POLICY_KEY),
        key=True,
        severity="error",
    )
