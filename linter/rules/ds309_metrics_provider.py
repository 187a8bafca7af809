"""DS309: LowNodeUtilization metrics settings that no top-level provider serves, or a bad Prometheus mode."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from desched.linter.rules._base import Context, DocumentKind, Hit
from desched.linter.rules._thresholds import reads_metrics_server
from desched.tree import list_or_empty

ID = "DS309"
NAME = "metrics-provider"
SEVERITY = "error"
SCOPE = "pluginConfig"
RUNS_ON = frozenset({DocumentKind.POLICY, DocumentKind.CONVERTED, DocumentKind.RENDERED})
VALIDATION_CODES = frozenset({"metrics"})  # the upstream validation errors this rule reports
SUMMARY = "Metrics utilisation without a matching provider, or Prometheus mode without MetricResource"
RATIONALE = (
    "LowNodeUtilization can classify nodes by real usage, but only through a client the top level creates: "
    "`metricsCollector.enabled` or a `KubernetesMetrics` provider for metrics-server, a `Prometheus` provider with "
    "a URL for Prometheus. Without it upstream loads the policy and then fails every cycle (`metrics client not "
    "initialized`). In Prometheus mode both threshold maps must hold exactly `MetricResource`, or the plugin "
    "cannot be built at start-up."
)
REMEDIATION = "Add the matching top-level metrics provider, and use only MetricResource in Prometheus mode."
EXAMPLES = {
    "pass": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmetricsProviders:\n- source: KubernetesMetrics\n"
        "profiles:\n- name: p\n  pluginConfig:\n  - name: LowNodeUtilization\n    args:\n"
        "      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n"
        "      metricsUtilization: {source: KubernetesMetrics}\n"
    ],
    "fail": [
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args:\n      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n"
        "      metricsUtilization: {source: KubernetesMetrics}\n",
        "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmetricsProviders:\n- source: Prometheus\n"
        "  prometheus: {url: 'http://prometheus:9090'}\nprofiles:\n- name: p\n  pluginConfig:\n"
        "  - name: LowNodeUtilization\n    args:\n      thresholds: {cpu: 20}\n      targetThresholds: {cpu: 50}\n"
        "      metricsUtilization: {source: Prometheus, prometheus: {query: 'instance:node_cpu:rate'}}\n",
    ],
}


def _providers(policy: dict[str, Any]) -> tuple[bool, bool]:
    """Whether the policy sets up a metrics-server client and a Prometheus client."""
    collector = policy.get("metricsCollector")
    kubernetes = isinstance(collector, dict) and collector.get("enabled") is True
    prometheus = False
    providers = policy.get("metricsProviders")
    for provider in list_or_empty(providers):
        if not isinstance(provider, dict):
            continue
        if provider.get("source") == "KubernetesMetrics":
            kubernetes = True
        settings = provider.get("prometheus")
        if provider.get("source") == "Prometheus" and isinstance(settings, dict) and settings.get("url"):
            prometheus = True
    return kubernetes, prometheus


def check(ctx: Context) -> Iterator[Hit]:
    has_kubernetes, has_prometheus = _providers(ctx.policy)
    for entry in ctx.utilization_args:
        metrics = entry.args.get("metricsUtilization")
        if entry.plugin != "LowNodeUtilization" or not isinstance(metrics, dict):
            continue
        source = metrics.get("source")
        where = entry.path("metricsUtilization")
        if reads_metrics_server(metrics):
            if not has_kubernetes:
                yield Hit(
                    "metricsUtilization uses metrics-server, but the policy has neither a KubernetesMetrics "
                    "metricsProvider nor metricsCollector.enabled: every cycle fails with "
                    '"metrics client not initialized"',
                    where,
                )
        elif source == "Prometheus":
            if not has_prometheus:
                yield Hit(
                    "metricsUtilization uses Prometheus, but no top-level Prometheus metricsProvider with a url "
                    'exists: every cycle fails with "prometheus client not initialized"',
                    where,
                )
        elif source in (None, ""):
            yield Hit('metricsUtilization sets no source: every cycle fails with "metrics source is empty"', where)
    for error in ctx.arg_errors:
        if error.code == "metrics":
            yield Hit(error.message, error.path)
