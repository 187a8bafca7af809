"""The policy the descheduler chart renders from a user's values, for a pinned chart version (docs/helm-chart.md#3).

Helm coalesces the user's values over the chart's ``values.yaml`` of that version (:mod:`desched.helmvalues`), and
the chart's ConfigMap template writes ``deschedulerPolicy`` under an ``apiVersion`` header: hard-coded
``descheduler/v1alpha1`` before chart 0.27, ``deschedulerPolicyAPIVersion`` (the user's, else the chart's default)
from 0.27 on (:mod:`desched.chartversions`). :func:`rendered` turns the chart values of a :class:`PolicyDoc` into
that policy, a :class:`ChartDoc` every reader then judges (lint, ``desched scope``, the webhook and the executor
read the engine's documents): a value the user wrote keeps its line; a value a chart default supplied points at the
chart pin (the wrapper's version), or at ``deschedulerPolicy`` when the pin is in another file, and says which
chart version's default it is.

Values whose chart version is not known (a values file no wrapper in the repository pins) are judged as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from desched.chartversions import ChartRelease, chart_at
from desched.documents import HELM_VERSION_KEY, PolicyDoc, Shape
from desched.helmvalues import coalesce
from desched.yamlsrc import Position, YMap

if TYPE_CHECKING:
    from desched.releases import Deployments

__all__ = ["ChartDoc", "rendered"]


class ChartDoc(PolicyDoc):
    """The policy ``chart`` renders from the chart values of ``source``: ``root`` is the coalesced
    ``deschedulerPolicy``, ``api_version`` the header the template writes; ``defaults`` are the paths whose values
    the chart's defaults supplied; ``written`` is the user's own ``deschedulerPolicy``."""

    __slots__ = ("chart", "defaults", "pin", "pinned_by", "written")

    def __init__(self, source: PolicyDoc, chart: ChartRelease, pinned_by: str, pin: Position | None) -> None:
        at = source.root.line, source.root.column
        values = coalesce(source.root, chart.default_policy, at)
        super().__init__(
            source.file, cast(YMap, values.values), _api_version(source, chart), source.kind, Shape.HELM, source.object,
            source.envelope, extra=source.extra,
        )  # fmt: skip
        self.line_offset, self.column_offset, self.fixed = source.line_offset, source.column_offset, source.fixed
        self.prefix = source.prefix
        self.chart = chart
        self.defaults = values.defaults
        self.written = source.root
        self.pinned_by = pinned_by
        self.pin = pin

    def supplied(self, path: Sequence[str | int]) -> bool:
        """Whether the value at ``path`` (or an ancestor of it) came from the chart's defaults."""
        return any(tuple(path[:end]) in self.defaults for end in range(1, len(path) + 1))

    def position(self, path: Sequence[str | int], *, key: bool = False) -> Position:
        if self.pin is not None and self.supplied(path):
            return self.pin
        return super().position(path, key=key)

    def chart_default(self, path: Sequence[str | int]) -> str | None:
        if not self.supplied(path):
            return None
        return f"a default of chart {self.chart.version}, pinned by {self.pinned_by}, not a value these values set"


def _api_version(source: PolicyDoc, chart: ChartRelease) -> Any:
    """The ``apiVersion`` header the chart's ConfigMap template writes for these values."""
    if not chart.api_version_templated:
        return chart.default_api_version
    if HELM_VERSION_KEY not in source.envelope:
        return chart.default_api_version
    value = source.envelope[HELM_VERSION_KEY]
    return "" if value is None else value  # a null deletes the default: the template writes an empty apiVersion


def rendered(doc: PolicyDoc, deployments: Deployments | None = None) -> PolicyDoc:
    """``doc`` as the chart renders it, when ``doc`` is chart values whose chart version is known (the wrapper's,
    or the one ``deployments`` say pins values kept outside their wrapper); ``doc`` itself otherwise."""
    if doc.shape != Shape.HELM or isinstance(doc, ChartDoc):
        return doc
    version, pinned_by = doc.extra.get("chart_version"), doc.extra.get("wrapper") or "the wrapper"
    pin: Position | None = doc.extra.get("pin")
    if version is None and deployments is not None:
        version, pinned_by = deployments.pinned(doc) or (None, pinned_by)
        pin = None
    chart = chart_at(version) if isinstance(version, str) else None
    if chart is None:
        return doc
    return ChartDoc(doc, chart, pinned_by, pin)
