"""Keys that belong to the other policy version: reported as mixed shapes (DS102), not as unknown keys (DS003)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desched.api.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2
from desched.gitops.documents import HELM_VERSION_KEY, Shape
from desched.linter.rules._base import Context, Path
from desched.tree import list_or_empty

if TYPE_CHECKING:
    from desched.chart.record import ChartRelease

__all__ = ["EVICTOR_FLAGS", "chart_default_runs", "chart_of", "foreign_key", "lost_key"]

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


def chart_default_runs(ctx: Context, key: str) -> str | None:
    """For the policy a chart renders (:mod:`desched.deployment.chartrender`) whose ``key`` (``strategies`` or
    ``profiles``), written by the values, is the shape its ``apiVersion`` ignores while the other shape came from the
    chart's defaults (docs/helm-chart.md#4-user-values-over-the-defaults): what the descheduler runs instead, said as a
    finding's reason. ``None`` otherwise."""
    if key not in ("strategies", "profiles"):
        return None
    other = "profiles" if key == "strategies" else "strategies"
    doc = ctx.doc
    if key not in ctx.policy or doc.chart_default((key,)) is not None or doc.chart_default((other,)) is None:
        return None
    chart = chart_of(ctx)
    if chart is None:
        return None
    if not chart.api_version_templated:
        why = "hard-coded in its ConfigMap template"
    elif HELM_VERSION_KEY in doc.envelope:
        why = f"the values set {HELM_VERSION_KEY}"
    else:
        why = f"its {HELM_VERSION_KEY} default"
    runs = ", ".join(_enabled(ctx.policy[other]))
    what = "profile runs" if other == "profiles" else "strategies run"
    from desched.deployment.chartrender import ChartDoc  # loaded: chart_of found one

    assumed = f", {doc.pinned}," if isinstance(doc, ChartDoc) and doc.assumed else ""
    return (
        f"chart {chart.version}{assumed} renders {doc.api_version} ({why}), so these {key} are ignored and the "
        f"chart's default {what} instead: {runs}"
    )


def chart_of(ctx: Context) -> ChartRelease | None:
    """The chart version whose rendering the policy is (:class:`desched.deployment.chartrender.ChartDoc`), if it is
    one."""
    if ctx.doc.shape != Shape.HELM:
        return None
    from desched.deployment.chartrender import (
        ChartDoc,  # chart values only: they are rendered, so this is loaded already
    )

    return ctx.doc.chart if isinstance(ctx.doc, ChartDoc) else None


def _enabled(shape: object) -> list[str]:
    """The plugins a default ``profiles`` list enables, or the strategies a default ``strategies`` map enables."""
    names: dict[str, None] = {}
    if isinstance(shape, dict):
        names.update((name, None) for name, item in shape.items() if isinstance(item, dict) and item.get("enabled"))
    for profile in list_or_empty(shape):
        for point in profile.get("plugins", {}).values() if isinstance(profile, dict) else []:
            enabled = point.get("enabled", []) if isinstance(point, dict) else []
            names.update((name, None) for name in enabled if name != "DefaultEvictor")
    return list(names)
