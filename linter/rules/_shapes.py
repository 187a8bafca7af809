"""Keys that belong to the other policy version: reported as mixed shapes (DS102), not as unknown keys (DS003)."""

from __future__ import annotations

from desched.documents import HELM_VERSION_KEY, Shape
from desched.linter.rules._base import Context, Path
from desched.policy.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2

__all__ = ["EVICTOR_FLAGS", "chart_default_runs", "foreign_key", "lost_key"]

EVICTOR_FLAGS = ("evictLocalStoragePods", "evictDaemonSetPods", "evictSystemCriticalPods", "ignorePvcPods",
                 "evictFailedBarePods")  # fmt: skip

_ONLY_V1ALPHA1 = frozenset(POLICY_V1ALPHA1.fields) - frozenset(POLICY_V1ALPHA2.fields)
_ONLY_V1ALPHA2 = frozenset(POLICY_V1ALPHA2.fields) - frozenset(POLICY_V1ALPHA1.fields) - {"maxNoOfPodsToEvictTotal"}


def foreign_key(ctx: Context, path: Path) -> bool:
    """True for a top-level key of the other API version (``strategies`` in v1alpha2, ``profiles`` in v1alpha1)."""
    if len(path) != 1 or not isinstance(path[0], str):
        return False
    return path[0] in (_ONLY_V1ALPHA2 if ctx.is_v1alpha1 else _ONLY_V1ALPHA1)


def lost_key(ctx: Context, path: Path) -> bool:
    """True for v1alpha1 content upstream's converter drops that DS104 reports (top-level maxNoOfPodsToEvictTotal)."""
    return ctx.is_v1alpha1 and path == ("maxNoOfPodsToEvictTotal",)


def chart_default_runs(ctx: Context) -> str | None:
    """For chart values with ``strategies`` and no ``profiles``, pinned to a chart whose default policy has profiles
    (0.30 and later; docs/helm-chart.md#4-user-values-over-the-defaults): what the descheduler runs instead, said
    as a finding's reason. Helm merges the default profile in, the chart renders v1alpha2 (its default, or the
    values' own ``deschedulerPolicyAPIVersion``) and the decoder drops the strategies. ``None`` otherwise."""
    doc = ctx.doc
    version = doc.extra.get("chart_version") if doc.shape == Shape.HELM else None
    if not isinstance(version, str) or "strategies" not in ctx.policy or "profiles" in ctx.policy:
        return None
    from desched.chartversions import chart_at  # only pinned chart values pay for it

    chart = chart_at(version)
    if chart is None:
        return None
    defaults = chart.default_policy.get("profiles")
    rendered = doc.envelope.get(HELM_VERSION_KEY, chart.default_api_version)
    if not isinstance(defaults, list) or rendered != "descheduler/v1alpha2":
        return None
    plugins: dict[str, None] = {}
    for profile in defaults:
        for point in profile.get("plugins", {}).values():
            plugins.update(dict.fromkeys(name for name in point.get("enabled", []) if name != "DefaultEvictor"))
    written = "the values set" if HELM_VERSION_KEY in doc.envelope else f"its {HELM_VERSION_KEY} default"
    return (
        f"chart {chart.version} renders {rendered} ({written}), so these strategies are ignored and the chart's "
        f"default profile runs instead: {', '.join(plugins)}"
    )
