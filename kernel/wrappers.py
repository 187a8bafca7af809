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

import os
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from desched.chart import CHART_NAMES
from desched.tree import Path, mapping_or_empty

__all__ = [
    "CHART_NAME",
    "ChartValues",
    "Install",
    "ValuesSource",
    "chart_values",
    "installs",
    "is_descheduler_chart",
    "is_values_text",
    "object_label",
]


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


class ValuesSource(NamedTuple):
    """One values source of an :class:`Install`, in the order its tool hands them to Helm (later wins).

    ``kind`` is ``inline`` (a mapping in the wrapper: ``where`` is its path), ``text`` (values as YAML text in the
    wrapper: ``where`` is the path of the mapping and the key holding it), ``configmap`` (``where`` is
    ``(namespace, name, key)``) or ``file`` (``where`` is ``(path,)``, normalised, relative to the working
    directory). ``merge`` says how it meets the sources before it: ``over`` (Helm's merge, it wins), ``under``
    (kustomize ``valuesMerge: merge``: the earlier source wins) or ``replace`` (it replaces them)."""

    kind: str
    where: tuple[Any, ...]
    merge: str = "over"


class Install(NamedTuple):
    """One installation of the descheduler chart by a wrapper: its name for messages, the chart version it pins
    (and the path of that version in the document), its values sources in order, and sources it names that never
    reach the chart (``ignored``, with the reason)."""

    wrapper: str
    version: str | None
    version_path: Path | None
    sources: tuple[ValuesSource, ...]
    ignored: tuple[tuple[ValuesSource, str], ...] = ()


def chart_values(doc: dict[str, Any]) -> Iterator[ChartValues]:
    """The descheduler chart's values inside the wrapper ``doc`` (nothing for any other document)."""
    for install in installs(doc):
        for source in install.sources:
            if source.kind == "inline":
                yield ChartValues(source.where, install.wrapper, install.version, None, install.version_path)
            elif source.kind == "text":
                path, key = source.where
                yield ChartValues(path, install.wrapper, install.version, key, install.version_path)


def installs(doc: dict[str, Any], file: str = "") -> Iterator[Install]:
    """The descheduler chart installs of the wrapper ``doc`` (found in ``file``, which relative values files are
    read from), with their values sources in their tool's order (docs/helm-chart.md#5-values-sources)."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    if kind == "HelmRelease" and api_version.startswith(_FLUX_GROUP):
        yield from _flux(doc)
    elif kind in ("Application", "ApplicationSet") and api_version.startswith(_ARGO_GROUP):
        yield from _argo(doc, kind)
    elif isinstance(doc.get("helmCharts"), list) and kind in (None, "Kustomization"):
        yield from _kustomize(doc, file)


def _flux(doc: dict[str, Any]) -> Iterator[Install]:
    """Flux helm-controller: ``valuesFrom`` in order, then ``spec.values`` over them."""
    spec = mapping_or_empty(doc.get("spec"))
    chart = mapping_or_empty(mapping_or_empty(spec.get("chart")).get("spec"))
    reference = mapping_or_empty(spec.get("chartRef"))
    if not is_descheduler_chart(chart.get("chart")) and not is_descheduler_chart(reference.get("name")):
        return
    namespace = _text(mapping_or_empty(doc.get("metadata")).get("namespace"))
    sources: list[ValuesSource] = []
    ignored: list[tuple[ValuesSource, str]] = []
    for entry in map(mapping_or_empty, _list(spec.get("valuesFrom"))):
        name = _text(entry.get("name"))
        if name is None:
            continue
        source = ValuesSource("configmap", (namespace, name, _text(entry.get("valuesKey")) or "values.yaml"))
        if entry.get("kind") != "ConfigMap":
            ignored.append((source, f"{entry.get('kind')} {name} is not in the repository as text desched reads"))
        elif entry.get("targetPath"):
            ignored.append((source, f"ConfigMap {name} sets the single value {entry.get('targetPath')}"))
        else:
            sources.append(source)
    if isinstance(spec.get("values"), dict):
        sources.append(ValuesSource("inline", ("spec", "values")))
    version = _text(chart.get("version"))
    pin: Path | None = ("spec", "chart", "spec", "version") if version else None
    yield Install(object_label(doc, "HelmRelease"), version, pin, tuple(sources), tuple(ignored))


def _argo(doc: dict[str, Any], kind: str) -> Iterator[Install]:
    """Argo CD: ``valueFiles`` (inside the chart or another source: not read), then ``valuesObject`` when set,
    which replaces ``values`` whole (argo-cd ApplicationSourceHelm.ValuesYAML), else ``values``."""
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
        text = ValuesSource("text", ((*path, "helm"), "values"))
        found: list[ValuesSource] = []
        ignored: list[tuple[ValuesSource, str]] = []
        if isinstance(helm.get("valuesObject"), dict):
            found.append(ValuesSource("inline", (*path, "helm", "valuesObject")))
            if is_values_text(helm.get("values")):
                ignored.append((text, "valuesObject is set, and Argo CD then ignores values whole"))
        elif is_values_text(helm.get("values")):
            found.append(text)
        yield Install(label, version, pin, tuple(found), tuple(ignored))


def _kustomize(doc: dict[str, Any], file: str) -> Iterator[Install]:
    """kustomize helmCharts: ``valuesFile`` and ``valuesInline`` as ``valuesMerge`` says (``override``, the
    default: inline wins; ``merge``: the file wins; ``replace``: inline alone), then ``additionalValuesFiles``."""
    base = os.path.dirname(file)
    for index, chart in enumerate(doc["helmCharts"]):
        chart = mapping_or_empty(chart)
        if not is_descheduler_chart(chart.get("name"), chart.get("repo")):
            continue
        sources: list[ValuesSource] = []
        values_file = _text(chart.get("valuesFile"))
        if values_file is not None:
            sources.append(ValuesSource("file", (os.path.normpath(os.path.join(base, values_file)),)))
        if isinstance(chart.get("valuesInline"), dict):
            how = {"merge": "under", "replace": "replace"}.get(str(chart.get("valuesMerge")), "over")
            sources.append(ValuesSource("inline", ("helmCharts", index, "valuesInline"), how))
        for extra in _list(chart.get("additionalValuesFiles")):
            if isinstance(extra, str) and extra:
                sources.append(ValuesSource("file", (os.path.normpath(os.path.join(base, extra)),)))
        version = _text(chart.get("version"))
        pin: Path | None = ("helmCharts", index, "version") if version else None
        yield Install(f"kustomization helmCharts[{index}]", version, pin, tuple(sources))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
