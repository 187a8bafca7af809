"""The descheduler release that runs a policy, and why desched believes so (docs/architecture.md, Release inference).

A policy is checked against one release. In order of precedence it is: ``--target-version`` or the configuration;
the release of the descheduler that reads the policy's ConfigMap key through ``--policy-config-file`` (a container of
any workload kind, as the deployment model :mod:`desched.deployment.runs` reads it: its image tag, or the
``--target-version`` of a ``desched run`` container); for the chart's values, their ``image.tag``, else the chart
version a wrapper pins (its ``appVersion``: :func:`desched.chart.record.charts`), else the ``appVersion`` of a
``Chart.yaml`` beside them; else the newest release desched knows. :class:`Release` carries the answer with its reason,
which every release-dependent finding repeats.

A release outside the supported range keeps its real minor (``minor``): a v0.21 deployment is a v0.21 deployment,
whatever desched can check. :attr:`Release.target` is the supported release checks run against.
"""

import os
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, cast

from desched.gitops.documents import PolicyDoc, Shape
from desched.gitops.wrappers import FluxSource, Install, ValuesSource, flux_sources, installs
from desched.tree import list_or_empty, mapping_or_empty, same_namespace, text_or_none
from desched.versions import NEWEST, OLDEST, release_version, render

if TYPE_CHECKING:
    from desched.deployment.runs import DeschedulerRun

__all__ = [
    "Deployments",
    "Release",
    "chart_app_version",
    "chart_release",
    "chart_yaml_app_version",
    "configured",
    "generated_configmap_keys",
    "newest",
    "release_of",
]


_T = TypeVar("_T")
_WRAPPER_KINDS = ("HelmRelease", "Application", "ApplicationSet")  # and kustomizations (kind Kustomization or none)


class Release(NamedTuple):
    """A release as deployed (``minor``, may lie outside the supported range; ``version`` as written) and why."""

    minor: int
    version: str
    reason: str
    guessed: bool = False  # nothing named it: the newest release, assumed
    program: str = "descheduler"  # what runs the policy: upstream's binary, or ``desched`` (``desched run``)

    @property
    def target(self) -> int:
        """The supported release checks run against: ``minor`` brought into desched's range."""
        return min(max(self.minor, OLDEST), NEWEST)

    def note(self) -> str:
        """``release v0.28.1 assumed: <reason>``, and the release checked when desched does not know this one."""
        text = f"release {self.version} assumed: {self.reason}"
        if self.minor != self.target:
            edge = "oldest" if self.minor < self.target else "newest"
            text += f"; desched checks it as {render(self.target)}, the {edge} release it knows"
        return text


def newest() -> Release:
    """The release assumed when nothing says which one runs a policy."""
    return Release(
        NEWEST,
        render(NEWEST),
        "the newest desched knows, since nothing deployed with this policy names a release; "
        "set --target-version to choose",
        guessed=True,
    )


def configured(minor: int, source: str) -> Release:
    """The release ``--target-version`` or the configuration (``source`` says which) sets."""
    return Release(minor, render(minor), f"set by {source}")


def chart_app_version(chart_version: Any) -> tuple[int, str] | None:
    """The release a descheduler chart version deploys: its ``appVersion`` (:func:`desched.chart.record.charts`),
    else (a chart newer than the records) the chart version itself, which has matched the release for years."""
    if not isinstance(chart_version, str):
        return None
    from desched.chart.record import chart_version as chart_version_of
    from desched.chart.record import charts  # imported only where a chart version is pinned

    text = chart_version_of(chart_version)
    entry = charts().get(text)
    return release_version(entry["app_version"] if entry is not None else text)


def chart_yaml_app_version(file: str) -> str | None:
    """``appVersion`` of the descheduler chart's ``Chart.yaml`` beside ``file`` (``None`` for stdin, ``-``, and for
    the ``Chart.yaml`` of another chart or of one with dependencies, an umbrella chart's: its appVersion is not the
    descheduler's). A ``Chart.yaml`` is read once while unchanged (a lint run asks for it for the release and again
    for the chart that renders the values)."""
    if file == "-":
        return None
    chart_yaml = os.path.join(os.path.dirname(os.path.abspath(file)), "Chart.yaml")
    try:
        status = os.stat(chart_yaml)
    except OSError:
        return None
    return _chart_yaml_app_version(chart_yaml, status.st_mtime_ns, status.st_size)


@lru_cache(maxsize=256)
def _chart_yaml_app_version(chart_yaml: str, _mtime: int, _size: int) -> str | None:
    """The descheduler chart's appVersion in ``chart_yaml`` as it is at that modification time and size."""
    found: dict[str, str] = {}
    try:
        with open(chart_yaml, encoding="utf-8") as handle:
            for line in handle:
                key, colon, value = line.partition(":")
                if colon and key in ("name", "appVersion", "dependencies"):
                    found.setdefault(key, value.split("#", 1)[0].strip().strip("\"'"))
    except (OSError, UnicodeDecodeError):
        return None
    from desched.chart.record import chart_names

    if "dependencies" in found or ("name" in found and found["name"] not in chart_names()):
        return None  # an umbrella chart (desched.gitops.umbrella), whatever its name, or another chart
    return found.get("appVersion") or None


def chart_release(image_tag: Any, chart_version: Any, wrapper: str, app_version: str | None) -> Release | None:
    """The release the descheduler chart's values run on: their ``image.tag``, else the chart version ``wrapper``
    pins, else the ``appVersion`` of the chart beside them; ``None`` when none names a release."""
    parsed = release_version(image_tag)
    if parsed is not None:
        return Release(*parsed, f"image.tag {image_tag} in the chart's values")
    parsed = chart_app_version(chart_version)
    if parsed is not None:
        from desched.chart.record import chart_version as chart_version_of

        return Release(*parsed, f"descheduler chart {chart_version_of(chart_version)}, pinned by {wrapper}")
    parsed = release_version(app_version)
    if parsed is not None:
        return Release(*parsed, f"appVersion {app_version} of the Chart.yaml beside the values")
    return None


class _Reader(NamedTuple):
    """A descheduler container that reads its policy from ConfigMap key ``key`` of ``configmap``."""

    namespace: str | None
    configmap: str
    key: str
    release: Release


class Deployments:
    """The descheduler containers of a set of documents, and the ConfigMaps kustomize generates from policy files:
    what ties a policy to the release that reads it."""

    def __init__(self, documents: Iterable[tuple[str, Any]] = (), values: Iterable[PolicyDoc] = ()) -> None:
        self._readers: list[_Reader] = []
        self._generated: dict[str, tuple[str | None, str, str]] = {}  # policy file -> (namespace, ConfigMap, key)
        self._installs: list[tuple[str, Install]] = []  # each install of the chart, with the wrapper's file
        self._flux: list[FluxSource] = []  # the Flux sources of the chart, which HelmReleases may name it by
        self._values = [doc for doc in values if doc.shape == Shape.HELM and doc.unreached is None]  # sources
        self._by_source: _Index[PolicyDoc] | None = None  # the values documents, by the sources they are
        self._by_install: _Index[tuple[str, Install]] | None = None  # the installs, by their sources
        self._memo: dict[Hashable, Any] = {}  # what readers compute once from these deployments (memo)
        self._add(documents)

    def extended(self, documents: Iterable[tuple[str, Any]]) -> "Deployments":
        """These deployments and those of ``documents``."""
        both = Deployments(values=self._values)
        both._readers, both._generated = list(self._readers), dict(self._generated)
        both._installs, both._flux = list(self._installs), list(self._flux)
        both._add(documents)
        return both

    def _add(self, documents: Iterable[tuple[str, Any]]) -> None:
        documents = list(documents)
        if not documents:
            return
        self._by_source = self._by_install = None  # the installs and generated keys change
        self._memo = {}
        # the deployment and workload models only when there are documents to read
        from desched.deployment.runs import descheduler_runs
        from desched.workloads.model import objects

        listed = list(objects(documents))
        self._flux.extend(source for _, doc in listed for source in flux_sources(doc))
        self._readers.extend(_readers(descheduler_runs(listed)))
        for file, doc in listed:
            kind = doc.get("kind")
            if kind in _WRAPPER_KINDS:
                self._installs.extend((file, install) for install in installs(doc, file, self._flux))
            if kind in (None, "Kustomization"):
                self._generated.update(generated_configmap_keys(file, doc))
                self._installs.extend((file, install) for install in installs(doc, file))

    def __bool__(self) -> bool:
        return bool(self._readers)

    def reader_of(self, doc: PolicyDoc) -> Release | None:
        """The release of the descheduler that reads ``doc`` (a ConfigMap key, or a file kustomize turns into
        one); ``None`` when no container in these documents does."""
        identity = doc.extra.get("configmap")
        if identity is not None:
            return self.reader(*identity)
        return self.reader_of_file(doc.file) if doc.shape == Shape.POLICY else None

    def reader_of_file(self, file: str) -> Release | None:
        """The release of the descheduler that reads the ConfigMap kustomize generates from ``file``."""
        identity = self._generated.get(os.path.normpath(file))
        return self.reader(*identity) if identity is not None else None

    def install_of(self, doc: PolicyDoc) -> tuple[str, Install] | None:
        """The install of the chart whose values ``doc`` is one source of (its wrapper's values in the same file, a
        ConfigMap key a HelmRelease's ``valuesFrom`` names, or a values file of a kustomize ``helmCharts`` entry),
        with the file of its wrapper: the first such install of these documents."""
        if self._by_install is None:
            self._by_install = _Index()
            for file, install in self._installs:
                for source in install.sources:
                    self._by_install.add(_source_key(source, file, install), (file, install))
        return self._by_install.first(_doc_keys(doc, self._generated))

    def sources(self, install: Install, file: str) -> list[tuple[ValuesSource, PolicyDoc]]:
        """The sources of ``install`` (whose wrapper is in ``file``) found among these documents' chart values, in
        order (the first document of each; a source the repository does not hold, or that sets no
        ``deschedulerPolicy``, is left out). The values are indexed once, so that each call costs the install's
        sources, not the sources times the documents."""
        if self._by_source is None:
            self._by_source = _Index()
            for values in self._values:
                for key in _doc_keys(values, self._generated):
                    self._by_source.add(key, values)
        found = []
        for source in install.sources:
            doc = self._by_source.first([_source_key(source, file, install)])
            if doc is not None:
                found.append((source, doc))
        return found

    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, computed once for ``key`` while these deployments are unchanged (what a reader derives
        from them and needs for many documents: an install's merged values for each of its sources)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(_T, self._memo[key])

    def reader(self, namespace: str | None, name: str, key: str) -> Release | None:
        """The release of the descheduler that reads key ``key`` of ConfigMap ``namespace/name``."""
        for reader in self._readers:
            if reader.configmap == name and reader.key == key and same_namespace(namespace, reader.namespace):
                return reader.release
        return None


def _readers(runs: "Iterable[DeschedulerRun]") -> Iterator[_Reader]:
    """A reader for each ConfigMap key that a descheduler container whose release is named, or a ``desched run``
    container (without ``--target-version``: the newest release's decisions), reads its policy from."""
    for run in runs:
        named = run.release
        if named is not None:
            file, line, _ = run.where(named.path)
            reason = f"{named.source} of {run.label} ({file}:{line}), which reads this policy"
            release = Release(named.minor, named.version, reason, program=run.program)
        elif run.program == "desched":
            file, line, _ = run.where(run.container)
            reason = f"desched run of {run.label} ({file}:{line}), which reads this policy, without --target-version"
            release = Release(NEWEST, render(NEWEST), reason, program=run.program)
        else:
            continue
        for configmap, key in run.policy_keys:
            yield _Reader(run.namespace, configmap, key, release)


def generated_configmap_keys(
    file: str, kustomization: Mapping[str, Any]
) -> Iterator[tuple[str, tuple[str | None, str, str]]]:
    """Each file a ``configMapGenerator`` of the kustomization in ``file`` turns into a ConfigMap key: (its path,
    (namespace, name, key))."""
    generators = list_or_empty(kustomization.get("configMapGenerator"))
    if not generators:
        return
    base = os.path.dirname(file)
    namespace = text_or_none(kustomization.get("namespace"))
    for generator in map(mapping_or_empty, generators):
        name = text_or_none(generator.get("name"))
        if name is None:
            continue
        for entry in list_or_empty(generator.get("files")):
            if not isinstance(entry, str):
                continue
            key, _, source = entry.partition("=") if "=" in entry else (os.path.basename(entry), "", entry)
            target = os.path.normpath(os.path.join(base, source))
            yield target, (text_or_none(generator.get("namespace")) or namespace, name, key)


def install_label(install: Install, file: str, doc: PolicyDoc) -> str:
    """How messages on ``doc`` name ``install``: its wrapper, and the wrapper's file when it is another."""
    return install.wrapper if file == doc.file else f"{install.wrapper} ({file})"


#: What a values source is, as a values document and a source of an install both say it: ``("own", file, (wrapper,
#: where))`` for values in the wrapper itself, ``("configmap", name, key)`` for a ConfigMap key, ``("file", path)``
#: for a values file, ``("repofile", path)`` for a path from a repository's root; with the ConfigMap's namespace
#: (``None``: any, :func:`desched.tree.same_namespace`), which is compared apart.
_Key = tuple[tuple[Any, ...], str | None]


class _Index(Generic[_T]):
    """Items by the values sources they are, each key's items in the order added."""

    def __init__(self) -> None:
        self._items: dict[tuple[Any, ...], list[tuple[str | None, int, _T]]] = {}
        self._count = 0

    def add(self, key: _Key, item: _T) -> None:
        """Add ``item`` under ``key``: after every item added before it."""
        name, namespace = key
        self._items.setdefault(name, []).append((namespace, self._count, item))
        self._count += 1

    def first(self, keys: Iterable[_Key]) -> _T | None:
        """The item added first under any of ``keys`` (in a namespace that may be the key's); ``None`` when none
        is."""
        best: tuple[int, _T] | None = None
        for name, namespace in keys:
            for held, order, item in self._items.get(name, ()):
                if same_namespace(held, namespace):
                    best = (order, item) if best is None or order < best[0] else best
                    break  # the key's later items were added after this one
        return None if best is None else best[1]


def _source_key(source: ValuesSource, file: str, install: Install) -> _Key:
    """The key of ``source`` of ``install``, whose wrapper is in ``file``."""
    if source.kind in ("inline", "text"):
        return ("own", file, (install.wrapper, source.where)), None
    if source.kind == "configmap":
        namespace, name, key = source.where
        return ("configmap", name, key), namespace
    return (source.kind, str(source.where[0])), None


def _doc_keys(doc: PolicyDoc, generated: Mapping[str, tuple[str | None, str, str]]) -> list[_Key]:
    """The keys of the sources the chart values ``doc`` may be: its wrapper's own values; a ConfigMap key (a
    HelmRelease's ``valuesFrom``, or a values file a kustomize ``configMapGenerator``, which ``generated`` maps
    to its key, makes into one); a values file, by its path and, as a path from a repository's root, by each
    ending of it after a separator."""
    extra = doc.extra
    keys: list[_Key] = []
    if extra.get("install") is not None:
        keys.append((("own", doc.file, extra["install"]), None))
    found = extra.get("values_from")
    if found is None and not extra.get("wrapper"):
        found = generated.get(os.path.normpath(doc.file))
    if found is not None:
        keys.append((("configmap", found[1], found[2]), found[0]))
    if not extra.get("wrapper") and not extra.get("values_from"):
        path = os.path.normpath(doc.file)
        parts = path.split(os.sep)
        keys.append((("file", path), None))
        keys.extend((("repofile", os.sep.join(parts[start:])), None) for start in range(len(parts)))
    return keys


def release_of(doc: PolicyDoc, deployments: Deployments) -> Release:
    """The release that runs ``doc``, when nothing is configured: see the module's docstring for the order."""
    found = deployments.reader_of(doc)
    if found is None and doc.shape == Shape.HELM:
        extra = doc.extra
        chart_version, wrapper = extra.get("chart_version"), extra.get("wrapper", "")
        found_install = deployments.install_of(doc) if chart_version is None else None
        if found_install is not None:
            file, install = found_install
            chart_version, wrapper = install.version, install_label(install, file, doc)
        found = chart_release(extra.get("image_tag"), chart_version, wrapper, chart_yaml_app_version(doc.file))
    return found if found is not None else newest()
