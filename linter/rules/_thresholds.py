"""Reading node-utilization thresholds for the DS30x rules: which plugin args hold which maps."""

from typing import TYPE_CHECKING, Any, NamedTuple

from desched.tree import Path

if TYPE_CHECKING:
    from desched.policy.model import Policy

__all__ = ["UtilizationArgs", "collect_utilization_args", "numbers", "reads_metrics_server"]

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


def collect_utilization_args(model: "Policy") -> list[UtilizationArgs]:
    """Every Low/HighNodeUtilization pluginConfig entry of a v1alpha2 policy's ``model`` (enabled or not: upstream
    validates all). Rules read them computed once per document, as ``Context.utilization_args``."""
    return [
        UtilizationArgs(config.name, profile.name, dict(config.raw_args), config.args_path)
        for profile in model.profiles
        for config in profile.configs
        if config.name in UTILIZATION
    ]
