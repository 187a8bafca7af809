"""How a run's files reach a cluster, as the delivery rules see it (docs/helm-chart.md#7-what-desched-does-with-it).

:func:`delivery` reads every document of a run once for two things no single policy shows: each install of the
descheduler chart its wrappers make (:class:`ChartInstall`: the chart it names, the version it pins or the one
desched assumes), and each raw ``DeschedulerPolicy`` applied as a Kubernetes object although no API serves that kind
(:class:`Applied`): one a kustomization lists among its ``resources``, or one in a folder a Flux ``Kustomization``
(``spec.path``, every manifest below it) or an Argo CD ``Application`` source (``path``, the manifests in it; below
it with ``directory.recurse``) applies as manifests, a folder without a kustomization or a chart. Those paths start at
the repository's root (the directory holding ``.git``, else the current directory).
"""

import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from desched.chart.record import ChartRelease, chart_deploying
from desched.deployment.releases import Release, chart_release
from desched.gitops.clusters import KUSTOMIZATION_NAMES, deployed_folders, is_kustomization, local_reference
from desched.gitops.documents import PolicyDoc, Shape
from desched.gitops.wrappers import Install, flux_sources, installs, object_label
from desched.reading.sources import git_root
from desched.reading.yamlsrc import locate
from desched.tree import Path, at_path, list_or_empty, mapping_or_empty

__all__ = ["Applied", "ChartInstall", "Delivery", "delivery"]

_NOT_MANIFESTS = (*KUSTOMIZATION_NAMES, "Chart.yaml")  # a folder holding one is built or rendered, not applied


class ChartInstall(NamedTuple):
    """One install of the descheduler chart: the wrapper document ``doc`` of ``file`` and what it installs."""

    file: str
    doc: Mapping[str, Any]
    install: Install

    def where(self, path: Path | None) -> tuple[str, int, int]:
        """``(file, line, column)`` of ``path`` in the wrapper (its nearest ancestor; the document without one)."""
        found = locate(self.doc, path or ())
        line, column = found or (getattr(self.doc, "line", 1), getattr(self.doc, "column", 1))
        return self.file, line, column

    def unreadable_values_files(self) -> Iterator[tuple[Path, str]]:
        """Each ``valuesFile`` or ``additionalValuesFiles`` entry of this install, when a kustomize ``helmCharts``
        entry, that names no regular file kustomize can read (missing, a directory, a device): its path in the
        kustomization and why. A remote values file (a URL) is not checked."""
        path = self.install.chart_path
        if path is None or path[0] != "helmCharts" or not isinstance(path[1], int):
            return
        index = path[1]
        chart = mapping_or_empty(list_or_empty(self.doc.get("helmCharts"))[index])
        entries: list[tuple[Path, Any]] = [(("helmCharts", index, "valuesFile"), chart.get("valuesFile"))]
        extra = enumerate(list_or_empty(chart.get("additionalValuesFiles")))
        entries += [(("helmCharts", index, "additionalValuesFiles", at), entry) for at, entry in extra]
        base = os.path.dirname(self.file)
        for where, entry in entries:
            if isinstance(entry, str) and entry and "://" not in entry:
                reason = _unreadable(os.path.join(base, entry))
                if reason is not None:
                    yield where, f"values file {entry} {reason}"


def _unreadable(path: str) -> str | None:
    """Why kustomize cannot read the values file at ``path`` (``None``: a regular file it can)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        return "does not exist" if isinstance(error, FileNotFoundError) else f"cannot be read ({error.strerror})"
    if stat.S_ISDIR(mode):
        return "is a directory"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, a pipe or a socket)"
    return None if os.access(path, os.R_OK) else "cannot be read (permission denied)"


class Applied(NamedTuple):
    """A raw ``policy`` applied as a resource: ``file``, ``line`` and ``column`` are where that is written (the
    kustomization's ``resources`` entry, else the policy's ``kind``), ``how`` says it for messages."""

    file: str
    line: int
    column: int
    how: str
    policy: PolicyDoc


class Delivery(NamedTuple):
    """The installs of the chart and the policies applied as resources of a run; ``release`` is the release
    desched assumes where nothing names one (configured, else the newest)."""

    installs: list[ChartInstall]
    applied: list[Applied]
    release: Release

    def assumed(self, site: ChartInstall) -> tuple[ChartRelease, Release] | None:
        """For an install that pins no chart version: the chart desched judges it as, and the release it deploys,
        named by the ``image.tag`` its own values set, else :attr:`release`; ``None`` for a pinned install, and when
        no chart deploys that release."""
        if site.install.version is not None:
            return None
        inline = (source.where for source in site.install.sources if source.kind == "inline")
        tags = (at_path(site.doc, (*path, "image", "tag")) for path in inline)
        tag = next((found for found in tags if found is not None), None)
        release = chart_release(tag, None, site.install.wrapper, None) or self.release
        chart = chart_deploying(release.minor, release.version)
        return None if chart is None else (chart, release)


def delivery(documents: Iterable[tuple[str, Any]], policies: Iterable[PolicyDoc], release: Release) -> Delivery:
    """What the ``(file, document)`` pairs of a run deliver, with its ``policies`` (a raw one a kustomization lists is
    applied); ``release`` as :attr:`Delivery.release`."""
    documents = [(file, doc) for file, doc in documents if isinstance(doc, dict)]
    flux = [source for _, doc in documents for source in flux_sources(doc)]
    found = [ChartInstall(file, doc, install) for file, doc in documents for install in installs(doc, file, flux)]
    raw = {os.path.normpath(doc.file): doc for doc in policies if doc.shape == Shape.POLICY}
    applied = [entry for file, doc in documents for entry in _applied(file, doc, raw)] if raw else []
    if raw:
        applied += [entry for file, doc in documents for entry in _in_folders(file, doc, raw.values())]
    return Delivery(found, applied, release)


def _applied(file: str, doc: Mapping[str, Any], raw: Mapping[str, PolicyDoc]) -> Iterable[Applied]:
    """The ``resources`` entries of ``doc`` that name a file of ``raw``, when ``doc`` is a kustomization: the
    document of a kustomization file, or one that declares itself a ``kustomize.config.k8s.io`` Kustomization."""
    if not is_kustomization(file, doc):
        return
    base = os.path.dirname(file)
    for index, entry in enumerate(list_or_empty(doc.get("resources"))):
        target = local_reference(base, entry)
        policy = raw.get(target) if target is not None else None
        if policy is not None:
            line, column = locate(doc, ("resources", index)) or (1, 1)
            yield Applied(file, line, column, f"kustomization {file} lists {entry} among its resources", policy)


def _in_folders(file: str, doc: dict[str, Any], raw: Iterable[PolicyDoc]) -> Iterable[Applied]:
    """The policies of ``raw`` in a folder the deployer ``doc`` (of ``file``) applies as manifests, at their
    ``kind``."""
    for path, recursive, manifests in deployed_folders(doc):
        if not manifests:
            continue  # a chart is rendered, not applied
        folder = os.path.normpath(os.path.join(git_root(file), path.lstrip("/")))
        if not os.path.isdir(folder) or any(os.path.exists(os.path.join(folder, name)) for name in _NOT_MANIFESTS):
            continue  # a kustomization decides by its resources, a chart is rendered
        for policy in raw:
            inside = os.path.relpath(os.path.abspath(policy.file), folder)
            if not inside.startswith(os.pardir) and (recursive or os.sep not in inside):
                line, column = policy.position(("kind",))
                how = f"{object_label(doc, str(doc.get('kind')))} ({file}) applies the manifests of {path}"
                yield Applied(policy.file, line, column, how, policy)
