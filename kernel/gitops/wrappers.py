"""GitOps wrappers around the descheduler Helm chart's values (docs/helm-chart.md#5-values-sources).

A wrapper is a resource that installs a Helm chart. :func:`installs` reads each install of the descheduler chart a
document makes (:class:`Install`): the chart version it pins and its values sources in the order its tool hands
them to Helm (:class:`ValuesSource`); :func:`chart_values` lists the sources written inside the document, which the
policy locator (:func:`desched.gitops.documents.locate_policies`) reads as chart values. Only the descheduler chart
counts, recognised by any name it has had, its repository URL, an ``oci://`` reference ending in it, or a Flux source
object serving it (:func:`flux_sources`), so the values of other charts are never read as a policy. A chart name that
is none of the chart's names but says ``descheduler`` (``descheduler-charts``) is the chart meant, under a name its
repository cannot serve: such an install keeps its pin, and says why it cannot be fetched (``Install.unserved``).

Wrappers and the order of their sources (later wins):

* Flux ``HelmRelease`` (``helm.toolkit.fluxcd.io`` v2, v2beta2, v2beta1): each ``spec.valuesFrom`` ConfigMap key, then
  ``spec.values``. The chart is ``spec.chart.spec.chart``, the ``sourceRef`` HelmRepository of the chart's
  repository, or ``spec.chartRef`` (an OCIRepository or HelmChart of it, whose tag or version it then pins). Secret
  sources and ``targetPath`` values are not read (``Install.ignored``).
* Argo CD ``Application`` (``spec.source``, ``spec.sources[]``) and ``ApplicationSet`` (the same under
  ``spec.template``): ``helm.valuesObject`` when set, which replaces ``helm.values`` (YAML text) whole, else
  ``helm.values``; the chart is ``chart`` or the ``repoURL``, ``targetRevision`` its version. ``valueFiles`` live in
  the chart or another source and are not read.
* kustomize ``helmCharts[]`` (a ``Kustomization`` or a kustomization file without ``kind``): ``valuesFile`` and
  ``valuesInline`` as ``valuesMerge`` combines them, then ``additionalValuesFiles`` in order; the chart is ``name``
  or ``repo`` (with ``version``).
"""

import os
import re
from collections.abc import Collection, Iterator
from typing import Any, NamedTuple

from desched.patterns import lazy
from desched.tree import Path, list_or_empty, mapping_or_empty, text_or_none

__all__ = [
    "CHART_NAME",
    "FLUX_SOURCE_KINDS",
    "ChartValues",
    "FluxSource",
    "Install",
    "ValuesSource",
    "chart_values",
    "flux_sources",
    "install_values",
    "installs",
    "is_descheduler_chart",
    "is_flux_source_kind",
    "is_values_text",
    "object_label",
    "renders_defaults_only",
    "served_charts",
]


#: The chart's name in its repository (https://kubernetes-sigs.github.io/descheduler/) today.
CHART_NAME = "descheduler"
_CHART_URL = lazy(r"kubernetes-sigs\.github\.io/descheduler|github\.com/kubernetes-sigs/descheduler", re.I)
_VALUES_TEXT = lazy(r"^deschedulerPolicy\s*:", re.M)
_FLUX_GROUP = "helm.toolkit.fluxcd.io/"
_ARGO_VALUES_IGNORED = (
    "helm.values never reaches the chart: helm.valuesObject is set too, and Argo CD then renders with valuesObject "
    "alone (argo-cd ApplicationSourceHelm.ValuesYAML); move these values into valuesObject"
)
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
    unreached: str | None = None  #: why these values never reach the chart (the tool drops them)


def is_descheduler_chart(name: Any = None, repository: Any = None) -> bool:
    """Whether a chart reference names the descheduler chart: by any name it has had
    (:func:`desched.chart.record.chart_names`: ``descheduler``, ``descheduler-helm-chart`` of the first ones), also as
    ``<repo>/<name>`` and an ``oci://`` reference ending in it (a ``:tag`` or ``@digest`` aside), or by its repository
    URL."""
    from desched.chart.record import chart_names  # imported only where a chart is named, never for a bare policy

    if isinstance(name, str) and _last_segment(name) in chart_names():
        return True
    return isinstance(repository, str) and _CHART_URL().search(repository) is not None


def _last_segment(reference: str) -> str:
    """The chart name a reference ends in: ``oci://ghcr.io/org/descheduler:0.31.0`` reads ``descheduler``."""
    name = reference.rstrip("/").rsplit("/", 1)[-1]
    return name.split("@", 1)[0].split(":", 1)[0]


def _misnamed(name: Any, repository: Any = None) -> bool:
    """Whether a chart reference names the descheduler chart by a name it never had (``descheduler-charts``): one
    that says ``descheduler``, is not an ``oci://`` reference (a registry's names are its own) and comes from no
    ``repository`` but the chart's, when one is written."""
    if not isinstance(name, str) or name.startswith("oci://"):
        return False
    if isinstance(repository, str) and _CHART_URL().search(repository) is None:
        return False
    from desched.chart.record import chart_names

    last = _last_segment(name)
    return "descheduler" in last.lower() and last not in chart_names()


def served_charts() -> str:
    """The charts the descheduler chart repository serves, each with its versions oldest first, runs of consecutive
    versions written as ranges: ``descheduler (0.18.2, 0.19.2 to 0.36.0) and descheduler-helm-chart (...)``."""
    from desched.chart.record import charts

    runs: list[tuple[str, list[str]]] = []
    for version, entry in charts().items():
        if runs and runs[-1][0] == entry["name"]:
            runs[-1][1].append(version)
        else:
            runs.append((entry["name"], [version]))
    spans: dict[str, list[str]] = {}
    for name, versions in runs:
        spans.setdefault(name, []).append(versions[0] if len(versions) == 1 else f"{versions[0]} to {versions[-1]}")
    return " and ".join(f"{name} ({', '.join(found)})" for name, found in sorted(spans.items()))


def _unserved(name: Any, version: str | None) -> str | None:
    """Why the descheduler chart repository cannot serve chart ``name`` (a reference of a chart repository, not
    ``oci://``) at ``version``: no chart of that name, or, at a version the repository has, another name; ``None``
    when it can, or when ``name`` is no such reference."""
    if not isinstance(name, str) or name.startswith("oci://"):
        return None
    from desched.chart.record import chart_names, charts

    last = _last_segment(name)
    if last not in chart_names():
        return f"the descheduler chart repository serves no chart {last}: it serves {served_charts()}"
    entry = charts().get(version) if version is not None else None
    if entry is not None and entry["name"] != last:
        return f"the descheduler chart repository serves chart version {version} as {entry['name']}, not {last}"
    return None


def is_values_text(value: Any) -> bool:
    """Whether a string is chart values that set ``deschedulerPolicy`` (a ConfigMap key a HelmRelease reads)."""
    # The substring test first: it is C-speed, a multi-line regex tries every line start (ms per 100 KiB).
    return isinstance(value, str) and "deschedulerPolicy" in value and _VALUES_TEXT().search(value) is not None


def object_label(doc: dict[str, Any], kind: str) -> str:
    """How messages name a Kubernetes object: ``<kind> <namespace>/<name>``, ``<kind> <name>``, or the kind alone."""
    metadata = mapping_or_empty(doc.get("metadata"))
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if name is None:
        return kind
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


class FluxSource(NamedTuple):
    """A Flux source object that serves the descheduler chart: a ``HelmRepository`` of its repository, an
    ``OCIRepository`` whose URL ends in the chart, a ``HelmChart`` of it; ``version`` is the chart version it pins
    (an OCIRepository's tag, a HelmChart's version), if any."""

    kind: str
    namespace: str | None
    name: str
    version: str | None = None


_FLUX_SOURCE_GROUP = "source.toolkit.fluxcd.io/"
#: The kinds of Flux source objects that can serve a chart (a cheap test before :func:`flux_sources`).
FLUX_SOURCE_KINDS = frozenset({"HelmRepository", "OCIRepository", "HelmChart"})


def is_flux_source_kind(kind: Any) -> bool:
    """Whether ``kind`` (any YAML value) is the kind of a Flux source that can serve a chart."""
    return isinstance(kind, str) and kind in FLUX_SOURCE_KINDS


def flux_sources(doc: Any) -> Iterator[FluxSource]:
    """The Flux source ``doc`` as a source of the descheduler chart (nothing for any other document)."""
    if not isinstance(doc, dict) or not is_flux_source_kind(doc.get("kind")):
        return
    api_version = doc.get("apiVersion")
    if not isinstance(api_version, str) or not api_version.startswith(_FLUX_SOURCE_GROUP):
        return
    kind, spec = doc["kind"], mapping_or_empty(doc.get("spec"))
    metadata = mapping_or_empty(doc.get("metadata"))
    name, namespace = text_or_none(metadata.get("name")), text_or_none(metadata.get("namespace"))
    if name is None:
        return
    url = text_or_none(spec.get("url"))
    if kind == "HelmRepository" and url is not None and _CHART_URL().search(url):
        yield FluxSource(kind, namespace, name)
    elif kind == "OCIRepository" and url is not None and is_descheduler_chart(_last_segment(url)):
        yield FluxSource(kind, namespace, name, text_or_none(mapping_or_empty(spec.get("ref")).get("tag")))
    elif kind == "HelmChart" and is_descheduler_chart(spec.get("chart")):
        yield FluxSource(kind, namespace, name, text_or_none(spec.get("version")))


def _flux_source(reference: dict[str, Any], namespace: str | None, known: Collection[FluxSource]) -> FluxSource | None:
    """The known descheduler source a ``sourceRef``/``chartRef`` names (its namespace defaults to the release's):
    one in that very namespace first, else one without a namespace. Sources of the same name that pin different
    versions (one per cluster, say) leave the version unknown rather than picked at random."""
    kind, name = reference.get("kind"), reference.get("name")
    wanted = text_or_none(reference.get("namespace")) or namespace
    named = [source for source in known if source.kind == kind and source.name == name]
    found = [source for source in named if wanted is not None and source.namespace == wanted]
    found = found or [source for source in named if wanted is None or source.namespace is None]
    if not found:
        return None
    return found[0] if len({source.version for source in found}) == 1 else found[0]._replace(version=None)


class ValuesSource(NamedTuple):
    """One values source of an :class:`Install`, in the order its tool hands them to Helm (later wins).

    ``kind`` is ``inline`` (a mapping in the wrapper: ``where`` is its path), ``text`` (values as YAML text in the
    wrapper: ``where`` is the path of the mapping and the key holding it), ``configmap`` (``where`` is
    ``(namespace, name, key)``; a values file kustomize generates that ConfigMap from counts), ``file`` (``where``
    is ``(path,)``, normalised, relative to the working directory) or ``repofile`` (``(path,)`` from the root of a
    repository: an Argo CD ``$ref/path`` value file, any file whose path ends so). ``merge`` says how it meets the
    sources before it: ``over`` (Helm's merge, it wins), ``clear`` (kustomize ``valuesMerge: override``, the
    default: it wins, and a ``null`` in it clears the key rather than reaching Helm), ``under`` (kustomize
    ``valuesMerge: merge``: the earlier source wins) or ``replace`` (kustomize ``valuesMerge: replace``: it replaces
    them)."""

    kind: str
    where: tuple[Any, ...]
    merge: str = "over"


class Install(NamedTuple):
    """One installation of the descheduler chart by a wrapper: its name for messages, the chart version it pins
    (and the path of that version in the document), its values sources in order, and sources it names that never
    reach the chart (``ignored``, with the reason); ``chart_path`` is the path in the document of what names the
    chart (its name, else its repository or source reference), ``unserved`` why the chart's repository cannot serve
    the chart it names (``None``: it can, or desched cannot tell)."""

    wrapper: str
    version: str | None
    version_path: Path | None
    sources: tuple[ValuesSource, ...]
    ignored: tuple[tuple[ValuesSource, str], ...] = ()
    chart_path: Path | None = None
    unserved: str | None = None
    release: tuple[str | None, str | None] = (None, None)  #: the Helm release's name and namespace, where written


def chart_values(doc: dict[str, Any], flux: Collection[FluxSource] = ()) -> Iterator[ChartValues]:
    """The descheduler chart's values inside the wrapper ``doc`` (nothing for any other document); ``flux`` are the
    Flux sources of the chart known in the repository."""
    for install in installs(doc, flux=flux):
        yield from install_values(install)


def install_values(install: Install) -> Iterator[ChartValues]:
    """The sources of ``install`` written in its own document, with those its tool drops (``unreached``)."""
    reasons: dict[ValuesSource, str | None] = dict.fromkeys(install.sources)
    reasons.update(install.ignored)
    for source, unreached in reasons.items():
        if source.kind == "inline":
            yield ChartValues(source.where, install.wrapper, install.version, None, install.version_path, unreached)
        elif source.kind == "text":
            path, key = source.where
            yield ChartValues(path, install.wrapper, install.version, key, install.version_path, unreached)


def renders_defaults_only(install: Install) -> bool:
    """Whether ``install`` pins a chart version and has no values source outside its document: when none of its
    own sources sets ``deschedulerPolicy`` either, the chart runs its default policy, as pinned."""
    return (
        install.version is not None
        and not install.ignored
        and all(source.kind in ("inline", "text") for source in install.sources)
    )


def installs(doc: dict[str, Any], file: str = "", flux: Collection[FluxSource] = ()) -> Iterator[Install]:
    """The descheduler chart installs of the wrapper ``doc`` (found in ``file``, which relative values files are
    read from), with their values sources in their tool's order (docs/helm-chart.md#5-values-sources); a
    HelmRelease may name the chart through one of the Flux sources ``flux``."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    api_version = api_version if isinstance(api_version, str) else ""
    if kind == "HelmRelease" and api_version.startswith(_FLUX_GROUP):
        yield from _flux(doc, flux)
    elif kind in ("Application", "ApplicationSet") and api_version.startswith(_ARGO_GROUP):
        yield from _argo(doc, kind)
    elif isinstance(doc.get("helmCharts"), list) and kind in (None, "Kustomization"):
        yield from _kustomize(doc, file)


def _flux(doc: dict[str, Any], flux: Collection[FluxSource]) -> Iterator[Install]:
    """Flux helm-controller: ``valuesFrom`` in order, then ``spec.values`` over them. The chart is named by
    ``spec.chart.spec.chart``, by its ``sourceRef`` (a HelmRepository of the chart's repository), or by
    ``spec.chartRef`` (an OCIRepository or HelmChart of the chart; by its name when the object is not known)."""
    spec = mapping_or_empty(doc.get("spec"))
    chart = mapping_or_empty(mapping_or_empty(spec.get("chart")).get("spec"))
    reference = mapping_or_empty(spec.get("chartRef"))
    namespace = text_or_none(mapping_or_empty(doc.get("metadata")).get("namespace"))
    served = _flux_source(reference, namespace, flux) or _flux_source(
        mapping_or_empty(chart.get("sourceRef")), namespace, flux
    )
    named = is_descheduler_chart(chart.get("chart")) or is_descheduler_chart(reference.get("name"))
    if served is None and not named and not _misnamed(chart.get("chart")):
        return
    sources: list[ValuesSource] = []
    ignored: list[tuple[ValuesSource, str]] = []
    for entry in map(mapping_or_empty, list_or_empty(spec.get("valuesFrom"))):
        name = text_or_none(entry.get("name"))
        if name is None:
            continue
        source = ValuesSource("configmap", (namespace, name, text_or_none(entry.get("valuesKey")) or "values.yaml"))
        if entry.get("kind") != "ConfigMap":
            ignored.append((source, f"{entry.get('kind')} {name} is not in the repository as text desched reads"))
        elif entry.get("targetPath"):
            ignored.append((source, f"ConfigMap {name} sets the single value {entry.get('targetPath')}"))
        else:
            sources.append(source)
    if isinstance(spec.get("values"), dict):
        sources.append(ValuesSource("inline", ("spec", "values")))
    version = text_or_none(chart.get("version"))
    pin: Path | None = ("spec", "chart", "spec", "version") if version else None
    named_at: Path = ("spec", "chart", "spec", "chart") if chart.get("chart") is not None else ("spec", "chartRef")
    unserved = _unserved(chart.get("chart"), version) if served is None or served.kind == "HelmRepository" else None
    if version is None and served is not None:
        version = served.version  # the chart version the OCIRepository or HelmChart pins
    target = text_or_none(spec.get("targetNamespace"))
    name = text_or_none(mapping_or_empty(doc.get("metadata")).get("name"))
    release = text_or_none(spec.get("releaseName")) or (f"{target}-{name}" if target and name else name)
    label = object_label(doc, "HelmRelease")
    yield Install(
        label, version, pin, tuple(sources), tuple(ignored), named_at, unserved, (release, target or namespace)
    )


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
    sources += [((*base, "sources", index), item) for index, item in enumerate(list_or_empty(listed))]
    label = object_label(doc, kind)
    for path, source in sources:
        source = mapping_or_empty(source)
        chart, repository = source.get("chart"), source.get("repoURL")
        if not is_descheduler_chart(chart, repository) and not _misnamed(chart, repository):
            continue
        helm = mapping_or_empty(source.get("helm"))
        version = text_or_none(source.get("targetRevision"))
        pin: Path | None = (*path, "targetRevision") if version else None
        text = ValuesSource("text", ((*path, "helm"), "values"))
        found = [ValuesSource("repofile", (ref,)) for ref in _ref_files(helm.get("valueFiles"))]
        ignored: list[tuple[ValuesSource, str]] = []
        if isinstance(helm.get("valuesObject"), dict):
            found.append(ValuesSource("inline", (*path, "helm", "valuesObject")))
            if is_values_text(helm.get("values")):
                ignored.append((text, _ARGO_VALUES_IGNORED))
        elif is_values_text(helm.get("values")):
            found.append(text)
        named_at = (*path, "chart" if source.get("chart") is not None else "repoURL")
        unserved = _unserved(source.get("chart"), version)
        named = mapping_or_empty(doc.get("metadata")).get("name") if kind == "Application" else None
        release = text_or_none(helm.get("releaseName")) or text_or_none(named)  # an ApplicationSet's is templated
        target = text_or_none(mapping_or_empty(spec.get("destination")).get("namespace"))
        yield Install(label, version, pin, tuple(found), tuple(ignored), named_at, unserved, (release, target))


def _ref_files(value_files: Any) -> Iterator[str]:
    """The ``valueFiles`` of an Argo CD source that another source of the Application holds (``$ref/path``: a path
    from that repository's root, normalised); the others live in the chart and are not read."""
    for entry in list_or_empty(value_files):
        if isinstance(entry, str) and entry.startswith("$") and "/" in entry:
            relative = os.path.normpath(entry.split("/", 1)[1])
            if not relative.startswith(".."):
                yield relative


def _kustomize(doc: dict[str, Any], file: str) -> Iterator[Install]:
    """kustomize helmCharts: ``valuesFile`` and ``valuesInline`` as ``valuesMerge`` says (``override``, the
    default: inline wins; ``merge``: the file wins; ``replace``: inline alone), then ``additionalValuesFiles``."""
    base = os.path.dirname(file)
    for index, chart in enumerate(doc["helmCharts"]):
        chart = mapping_or_empty(chart)
        if not is_descheduler_chart(chart.get("name"), chart.get("repo")) and not _misnamed(
            chart.get("name"), chart.get("repo")
        ):
            continue
        sources: list[ValuesSource] = []
        values_file = text_or_none(chart.get("valuesFile"))
        if values_file is not None:
            sources.append(ValuesSource("file", (os.path.normpath(os.path.join(base, values_file)),)))
        if isinstance(chart.get("valuesInline"), dict):
            how = {"merge": "under", "replace": "replace"}.get(str(chart.get("valuesMerge")), "clear")
            sources.append(ValuesSource("inline", ("helmCharts", index, "valuesInline"), how))
        for extra in list_or_empty(chart.get("additionalValuesFiles")):
            if isinstance(extra, str) and extra:
                sources.append(ValuesSource("file", (os.path.normpath(os.path.join(base, extra)),)))
        version = text_or_none(chart.get("version"))
        pin: Path | None = ("helmCharts", index, "version") if version else None
        named_at = ("helmCharts", index, "name" if chart.get("name") is not None else "repo")
        unserved = _unserved(chart.get("name"), version)
        release = (text_or_none(chart.get("releaseName")), text_or_none(chart.get("namespace")))
        label = f"kustomization helmCharts[{index}]"
        yield Install(label, version, pin, tuple(sources), (), named_at, unserved, release)
