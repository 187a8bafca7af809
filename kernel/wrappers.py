"""GitOps wrappers around the descheduler Helm chart's values (docs/architecture.md#policy-locator).

A wrapper is a resource that installs a Helm chart with values written inside it. The policy locator
(:func:`desched.documents.locate_policies`) asks :func:`chart_values` for the values of every document; only the
descheduler chart counts, recognised by its chart name or its repository URL, so the values of other charts are never
read as a policy. Each :class:`ChartValues` is the values mapping (or the key whose string holds the values as YAML,
as Argo CD's ``helm.values``), with the chart version the wrapper pins, a release hint for the linter.

Wrappers:

* Flux ``HelmRelease`` (``helm.toolkit.fluxcd.io`` v2, v2beta2, v2beta1): ``spec.values``; the chart is
  ``spec.chart.spec.chart`` (its version ``spec.chart.spec.version``) or ``spec.chartRef.name``. Values a HelmRelease
  takes from a ConfigMap (``spec.valuesFrom``) are found in that ConfigMap itself: a data key whose text is chart
  values with ``deschedulerPolicy`` (:func:`is_values_text`).
* Argo CD ``Application`` (``spec.source``, ``spec.sources[]``) and ``ApplicationSet`` (the same under
  ``spec.template``): ``helm.valuesObject``, and ``helm.values`` as a YAML string; the chart is ``chart`` or the
  ``repoURL`` (with ``targetRevision`` as its version).
* kustomize ``helmCharts[]`` (a ``Kustomization`` or a kustomization file without ``kind``): ``valuesInline``; the
  chart is ``name`` or ``repo`` (with ``version``). A ``valuesFile`` is a values file of its own, linted where it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from desched.chart import CHART_NAMES
from desched.tree import Path, mapping_or_empty

__all__ = ["CHART_NAME", "ChartValues", "chart_values", "is_descheduler_chart", "is_values_text", "object_label"]


#: The chart's name in its repository (https://kubernetes-sigs.github.io/descheduler/) today.
CHART_NAME = "descheduler"
_CHART_URL = re.compile(r"kubernetes-sigs\.github\.io/descheduler|github\.com/kubernetes-sigs/descheduler", re.I)
_VALUES_TEXT = re.compile(r"^deschedulerPolicy\s*:", re.M)
_FLUX_GROUP = "helm.toolkit.fluxcd.io/"
_ARGO_GROUP = "argoproj.io/"


class ChartValues(NamedTuple):
    """The descheduler chart's values inside a wrapper.

    ``path`` is the values mapping's path in the document, or, with ``key``, the path of the mapping whose ``key``
    holds the values as YAML text. ``version`` is the chart version the wrapper pins (``None``: not pinned) and
    ``wrapper`` names the wrapper for messages (``HelmRelease flux-system/descheduler``); ``version_path`` is the
    path of the version in the document, where findings on the chart's defaults point.
    """

    path: Path
    wrapper: str
    version: str | None = None
    key: str | None = None
    version_path: Path | None = None


def is_descheduler_chart(name: Any = None, repository: Any = None) -> bool:
    """Whether a chart reference names the descheduler chart: by any name it has had (:data:`desched.chart.CHART_NAMES`:
    ``descheduler``, ``descheduler-helm-chart`` up to 0.19.1), also as ``<repo>/<name>`` and an ``oci://`` reference
    ending in it (a ``:tag`` or ``@digest`` aside), or by its repository URL."""
    if isinstance(name, str) and _last_segment(name) in CHART_NAMES:
        return True
    return isinstance(repository, str) and _CHART_URL.search(repository) is not None


def _last_segment(reference: str) -> str:
    """The chart name a reference ends in: ``oci://ghcr.io/org/descheduler:0.31.0`` reads ``descheduler``."""
    name = reference.rstrip("/").rsplit("/", 1)[-1]
    return name.split("@", 1)[0].split(":", 1)[0]


def is_values_text(value: Any) -> bool:
    """Whether a string is chart values that set ``deschedulerPolicy`` (a ConfigMap key a HelmRelease reads)."""
    # The substring test first: it is C-speed, a multi-line regex tries every line start (ms per 100 KiB).
    return isinstance(value, str) and "deschedulerPolicy" in value and _VALUES_TEXT.search(value) is not None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def object_label(doc: dict[str, Any], kind: str) -> str:
    """How messages name a Kubernetes object: ``<kind> <namespace>/<name>``, ``<kind> <name>``, or the kind alone."""
    metadata = mapping_or_empty(doc.get("metadata"))
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if name is None:
        return kind
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def chart_values(doc: dict[str, Any]) -> Iterator[ChartValues]:
    """The descheduler chart's values inside the wrapper ``doc`` (nothing for any other document)."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    if kind == "HelmRelease" and api_version.startswith(_FLUX_GROUP):
        yield from _flux(doc)
    elif kind in ("Application", "ApplicationSet") and api_version.startswith(_ARGO_GROUP):
        yield from _argo(doc, kind)
    elif isinstance(doc.get("helmCharts"), list) and kind in (None, "Kustomization"):
        yield from _kustomize(doc)


def _flux(doc: dict[str, Any]) -> Iterator[ChartValues]:
    spec = mapping_or_empty(doc.get("spec"))
    chart = mapping_or_empty(mapping_or_empty(spec.get("chart")).get("spec"))
    reference = mapping_or_empty(spec.get("chartRef"))
    if not is_descheduler_chart(chart.get("chart")) and not is_descheduler_chart(reference.get("name")):
        return
    if isinstance(spec.get("values"), dict):
        version = _text(chart.get("version"))
        pin: Path | None = ("spec", "chart", "spec", "version") if version else None
        yield ChartValues(("spec", "values"), object_label(doc, "HelmRelease"), version, version_path=pin)


def _argo(doc: dict[str, Any], kind: str) -> Iterator[ChartValues]:
    spec = mapping_or_empty(doc.get("spec"))
    base: Path = ("spec",)
    if kind == "ApplicationSet":
        spec = mapping_or_empty(mapping_or_empty(spec.get("template")).get("spec"))
        base = ("spec", "template", "spec")
    sources: list[tuple[Path, Any]] = [((*base, "source"), spec.get("source"))]
    listed = spec.get("sources")
    sources += [
        ((*base, "sources", index), item) for index, item in enumerate(listed if isinstance(listed, list) else [])
    ]
    label = object_label(doc, kind)
    for path, source in sources:
        source = mapping_or_empty(source)
        if not is_descheduler_chart(source.get("chart"), source.get("repoURL")):
            continue
        helm = mapping_or_empty(source.get("helm"))
        version = _text(source.get("targetRevision"))
        pin: Path | None = (*path, "targetRevision") if version else None
        if isinstance(helm.get("valuesObject"), dict):
            yield ChartValues((*path, "helm", "valuesObject"), label, version, version_path=pin)
        if is_values_text(helm.get("values")):
            yield ChartValues((*path, "helm"), label, version, "values", pin)


def _kustomize(doc: dict[str, Any]) -> Iterator[ChartValues]:
    for index, chart in enumerate(doc["helmCharts"]):
        chart = mapping_or_empty(chart)
        if is_descheduler_chart(chart.get("name"), chart.get("repo")) and isinstance(chart.get("valuesInline"), dict):
            label = f"kustomization helmCharts[{index}]"
            version = _text(chart.get("version"))
            pin: Path | None = ("helmCharts", index, "version") if version else None
            yield ChartValues(("helmCharts", index, "valuesInline"), label, version, version_path=pin)
