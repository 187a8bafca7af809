"""Reading node-utilization thresholds for the DS30x rules: which plugin args hold which maps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from desched.linter.rules._base import Context, Path

__all__ = ["UtilizationArgs", "collect_utilization_args", "numbers", "reads_metrics_server", "utilization_args"]

UTILIZATION = ("LowNodeUtilization", "HighNodeUtilization")


class UtilizationArgs(NamedTuple):
    plugin: str
    profile: str
    args: dict[str, Any]
    base: Path

    def path(self, *rest: str | int) -> Path:
        return (*self.base, *rest)

    @property
    def deviation(self) -> bool:
        return self.args.get("useDeviationThresholds") is True


def reads_metrics_server(metrics: dict[str, Any]) -> bool:
    """Whether LowNodeUtilization's ``metricsUtilization`` reads metrics-server (``metricsServer: true`` or the
    ``KubernetesMetrics`` source)."""
    return metrics.get("metricsServer") is True or metrics.get("source") == "KubernetesMetrics"


def numbers(value: Any) -> dict[str, float]:
    """The numeric entries of a thresholds map (others are DS004's business)."""
    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items() if isinstance(item, (int, float)) and not isinstance(item, bool)}


def utilization_args(ctx: Context) -> Iterator[UtilizationArgs]:
    """Every Low/HighNodeUtilization pluginConfig entry of the document (computed once per context, as five rules
    read them)."""
    return iter(ctx.utilization_args)


def collect_utilization_args(ctx: Context) -> list[UtilizationArgs]:
    """Every Low/HighNodeUtilization pluginConfig entry of the document (enabled or not: upstream validates all)."""
    found: list[UtilizationArgs] = []
    if ctx.is_v1alpha2:
        for profile in ctx.model.profiles:
            for config in profile.configs:
                if config.name in UTILIZATION:
                    found.append(UtilizationArgs(config.name, profile.name, dict(config.raw_args), config.args_path))
    return found
