"""DS105: the deprecated ``metricsCollector`` where ``metricsProviders`` is the current form (v0.33 and later)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._thresholds import reads_metrics_server

ID = "DS105"
NAME = "metrics-collector-deprecated"
SEVERITY = "warning"
SCOPE = "policy"
RUNS_ON = frozenset({DocumentKind.POLICY})
RELEASE_DEPENDENT = True
SUMMARY = "Deprecated metricsCollector (use metricsProviders)"
RATIONALE = (
    "`metricsCollector` (v0.32) was deprecated in v0.33 in favour of `metricsProviders`, a list of metrics sources "
    "(`KubernetesMetrics` for metrics-server, `Prometheus`). Releases still read it, but it cannot be combined with "
    "a `KubernetesMetrics` provider, and only metrics-server can be reached through it. Whether a plugin reads the "
    "metrics decides what to do: LowNodeUtilization's `metricsUtilization` needs a provider, nothing else does."
)
REMEDIATION = (
    "Replace `metricsCollector: {enabled: true}` with `metricsProviders: [{source: KubernetesMetrics}]` when a "
    "plugin reads metrics-server; delete it when none does."
)
_POLICY = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"
_LOW = (
    "profiles:\n- name: p\n  pluginConfig:\n  - name: LowNodeUtilization\n    args:\n"
    "      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n"
    "      metricsUtilization: {source: KubernetesMetrics}\n"
    "  plugins:\n    balance:\n      enabled: [LowNodeUtilization]\n"
)
EXAMPLES = {
    "pass": [
        _POLICY + "metricsProviders:\n- source: KubernetesMetrics\n" + _LOW,
        (
            _POLICY
            + "metricsCollector: {enabled: true}\n"
            + _LOW.replace("source: KubernetesMetrics", "metricsServer: true"),
            "v0.32",
        ),
    ],
    "fail": [
        _POLICY + "metricsCollector: {enabled: true}\n" + _LOW,
        _POLICY + "metricsCollector: {enabled: true}\nprofiles: []\n",
    ],
}


def _readers(ctx: Context) -> list[str]:
    """``profile/LowNodeUtilization`` for each profile whose enabled LowNodeUtilization reads metrics-server."""
    found = []
    for profile in ctx.model.profiles:
        for ref, config in profile.evicting():
            metrics: Any = config.raw_args.get("metricsUtilization") if config is not None else None
            if ref.name != "LowNodeUtilization" or not isinstance(metrics, dict):
                continue
            if reads_metrics_server(metrics):
                found.append(f"{profile.name}/LowNodeUtilization")
    return found


def check(ctx: Context) -> Iterator[Hit]:
    if ctx.target < 33 or ctx.is_v1alpha1 or "metricsCollector" not in ctx.policy:
        return
    readers = _readers(ctx)
    if readers:
        advice = (
            f"{', '.join(readers)} reads metrics-server: replace it with "
            "`metricsProviders: [{source: KubernetesMetrics}]`"
        )
    else:
        advice = "no plugin reads metrics (only LowNodeUtilization's metricsUtilization does): delete it"
    yield Hit(
        f"metricsCollector is deprecated since v0.33 in favour of metricsProviders; {advice}",
        ("metricsCollector",),
        key=True,
    )
