"""DS008: a top-level value of the descheduler chart that the chart does not read but looks like policy."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from desched.api.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2, STRATEGY_PARAMS
from desched.gitops.documents import CHART_VALUES, HELM_POLICY_KEY, Shape
from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._shapes import chart_of
from desched.plugins import REGISTRY

ID = "DS008"
NAME = "chart-value-ignored"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
RELEASE_DEPENDENT = True
SUMMARY = "Policy setting written beside deschedulerPolicy, where the chart ignores it"
RATIONALE = (
    "The descheduler chart builds the policy from `deschedulerPolicy` alone. A policy or evictor setting written "
    "at the top level of the values (`evictLocalStoragePods`, `namespaces`, `priorityThreshold`, a plugin's "
    "name, ...) is a value no template reads: Helm renders the chart without it and without a word, and the "
    "descheduler runs as if it were not there. Which values a chart reads depends on its release (the chart's "
    "own `nodeSelector`, for instance, places the descheduler's pod and is not this)."
)
REMEDIATION = "Move the setting under `deschedulerPolicy`, where the message says it belongs."
EXAMPLES = {
    "pass": [
        "deschedulerPolicy:\n  profiles:\n  - name: default\n    pluginConfig:\n    - name: DefaultEvictor\n"
        "      args: {evictLocalStoragePods: true}\n    plugins:\n      filter: {enabled: [DefaultEvictor]}\n"
        "nodeSelector: {kubernetes.io/os: linux}\n"
    ],
    "fail": [
        "evictLocalStoragePods: true\npriorityThreshold: {value: 10000}\ndeschedulerPolicy:\n  profiles: []\n",
    ],
}


@cache
def _homes() -> dict[str, str]:
    """Each key a policy can hold, and where in ``deschedulerPolicy`` it belongs."""
    homes: dict[str, str] = {}
    for plugin in REGISTRY.values():
        homes.setdefault(plugin.name, f"{HELM_POLICY_KEY}.profiles[].plugins and pluginConfig")
        for field in plugin.args.fields:
            owners = [name for name, other in REGISTRY.items() if field in other.args.fields]
            where = owners[0] if len(owners) == 1 else " or ".join(owners[:3]) + (", ..." if len(owners) > 3 else "")
            homes.setdefault(field, f"{HELM_POLICY_KEY}.profiles[].pluginConfig[].args of {where}")
    for field in STRATEGY_PARAMS.fields:
        homes.setdefault(field, f"{HELM_POLICY_KEY}.strategies.<strategy>.params (v1alpha1)")
    for spec in (POLICY_V1ALPHA2, POLICY_V1ALPHA1):
        for field in spec.fields:
            homes[field] = f"{HELM_POLICY_KEY}.{field}"
    evictor = homes["nodeFit"]  # a DefaultEvictor argument
    for flag in ("evictLocalStoragePods", "evictSystemCriticalPods", "ignorePvcPods", "evictFailedBarePods"):
        homes[flag] = f"{evictor} (in v1alpha1: {HELM_POLICY_KEY}.{flag})"
    homes.pop("apiVersion", None)
    homes.pop("kind", None)
    return homes


def check(ctx: Context) -> Iterator[Hit]:
    if ctx.doc.shape != Shape.HELM:
        return
    from desched.chart.record import values_read  # only chart values pay for the chart's records

    chart = chart_of(ctx)  # the chart version that renders the values, else the charts of their release
    read = chart.values_read if chart is not None else values_read(ctx.release.minor)
    homes = _homes()
    for key in ctx.doc.envelope:
        if key in read or key not in homes:
            continue
        yield Hit(
            f"the descheduler chart does not read the value {key}: it is ignored, and the policy runs without it; "
            f"it belongs in {homes[key]}",
            (CHART_VALUES, key),
            key=True,
        )
