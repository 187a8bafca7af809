"""The structure of a repository: which files each root deploys, the deploy units of :mod:`desched.gitops.units`
(docs/gitops-inputs.md#clusters; docs/deploy-units.md).

Units come from the repository's structure, with no configuration. Files point at other files:

* a kustomization (``kustomization.yaml``, ``kustomization.yml``, ``Kustomization``) at its ``resources``,
  ``bases``, ``components``, patch files, ``configMapGenerator`` files and ``helmCharts`` ``valuesFile`` and
  ``additionalValuesFiles``; a directory stands for its kustomization, else for the YAML files in it;
* a Flux ``Kustomization`` (``kustomize.toolkit.fluxcd.io``) at its ``spec.path``, and an Argo CD ``Application``
  or ``ApplicationSet`` at each source's ``path``, relative to the repository's root: the directory's
  kustomization, else every YAML file under it.

A root is a file (or a cycle of files, as Flux's own ``flux-system`` makes) that nothing points at; its cluster is
everything reachable from it. A file can be in several clusters (a shared base); the files outside every cluster are
the loose files :mod:`desched.gitops.units` groups. A repository without such structure has no cluster, ``[]`` here.
``clusters:`` in ``.desched.yaml`` (cluster name -> path globs) replaces the structure.
"""

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from desched.reading.sources import git_root, is_ignored
from desched.reading.yamlsrc import YamlError, load_all
from desched.tree import at_path, list_or_empty, mapping_or_empty

__all__ = [
    "KUSTOMIZATION_NAMES",
    "KUSTOMIZATION_REFERENCES",
    "PATCH_KEYS",
    "DeployedFolder",
    "RepositoryCluster",
    "clusters",
    "deployed_folders",
    "is_kustomization",
    "local_reference",
    "patch_path",
    "remote_references",
]

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: The keys of a kustomization that list what it builds (files, or directories holding a kustomization).
KUSTOMIZATION_REFERENCES = ("resources", "bases", "components")
_FLUX_GROUP = "kustomize.toolkit.fluxcd.io/"
_ARGO_GROUP = "argoproj.io/"
_YAML = (".yaml", ".yml")


class RepositoryCluster(NamedTuple):
    """A cluster: its name (the root's path, or the configured name) and the files deployed to it."""

    name: str
    files: frozenset[str]


def is_kustomization(file: str, doc: Any) -> bool:
    """Whether ``doc`` of ``file`` is a kustomization: a mapping in a file kustomize reads as one, or a
    ``Kustomization`` or ``Component`` of ``kustomize.config.k8s.io``."""
    if not isinstance(doc, Mapping):
        return False
    kind, api_version = doc.get("kind"), str(doc.get("apiVersion", ""))
    return os.path.basename(file) in KUSTOMIZATION_NAMES or (
        kind in ("Kustomization", "Component") and api_version.startswith("kustomize.config.k8s.io/")
    )


def remote_references(doc: Mapping[str, Any]) -> Iterator[tuple[list[Any], int, str]]:
    """The remote entries (a URL, ``github.com/...``, ``git@...``) of kustomization ``doc``'s ``resources``,
    ``bases`` and ``components``: what desched does not fetch, as ``(entries, index, entry)``."""
    for key in KUSTOMIZATION_REFERENCES:
        entries = list_or_empty(doc.get(key))
        for index, entry in enumerate(entries):
            if isinstance(entry, str) and local_reference(".", entry) is None:
                yield entries, index, entry


def local_reference(base: str, entry: Any) -> str | None:
    """The path ``entry`` (of a kustomization or deployer in directory ``base``) names, normalised; ``None`` for a
    remote one (a URL, ``github.com/...``, ``git@...``) or no string."""
    if not isinstance(entry, str) or "://" in entry or entry.startswith(("github.com/", "git@")):
        return None
    return os.path.normpath(os.path.join(base, entry))


def clusters(
    files: Mapping[str, tuple[str, list[Any]]],
    configured: Mapping[str, list[str]] | None = None,
    base: str | None = None,
) -> list[RepositoryCluster]:
    """The clusters of ``files`` (display name -> (text, its documents other than policies)); ``configured``
    (name -> globs, relative to ``base``, default the current directory) replaces the structure."""
    if configured:
        return _configured(files, configured, base or os.getcwd())
    graph = _Graph(files)
    return graph.clusters()


def _configured(files: Iterable[str], configured: Mapping[str, list[str]], base: str) -> list[RepositoryCluster]:
    found = []
    for name, globs in configured.items():
        members = frozenset(file for file in files if is_ignored(_relative(file, base), globs))
        found.append(RepositoryCluster(name, members))
    return found


def _relative(file: str, base: str) -> str:
    path = os.path.relpath(os.path.abspath(file), base)
    return path if not path.startswith("..") else os.path.abspath(file)


class _Graph:
    """Files and what they point at (see the module's docstring)."""

    def __init__(self, files: Mapping[str, tuple[str, list[Any]]]) -> None:
        self.by_path = {os.path.abspath(file): file for file in files if file != "-"}
        self.edges: dict[str, set[str]] = {}
        for file, (text, others) in files.items():
            if file == "-":
                continue
            targets: set[str] = set()
            if os.path.basename(file) in KUSTOMIZATION_NAMES:
                targets |= self._kustomization(file, text)
            for doc in others:
                targets |= self._deployer(file, doc)
            targets.discard(file)
            if targets:
                self.edges[file] = targets

    def clusters(self) -> list[RepositoryCluster]:
        if not self.edges:
            return []
        into: dict[str, set[str]] = {}
        for source, targets in self.edges.items():
            for target in targets:
                into.setdefault(target, set()).add(source)
        found: dict[frozenset[str], str] = {}
        for file in sorted(self.edges):
            reach = self._reachable(file)
            # a root: whatever points at it is reachable from it (nothing does, or a cycle, as flux-system makes)
            if into.get(file, set()) <= reach:
                found.setdefault(frozenset(reach | {file}), os.path.dirname(file) or ".")
        return [RepositoryCluster(name, members) for members, name in found.items()]

    def _reachable(self, start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for target in self.edges.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return seen

    def _file(self, path: str) -> set[str]:
        found = self.by_path.get(os.path.abspath(path))
        return {found} if found else set()

    def _directory(self, directory: str, recursive: bool) -> set[str]:
        """A directory as a reference: its kustomization, else its YAML files (all below it when ``recursive``)."""
        for name in KUSTOMIZATION_NAMES:
            found = self._file(os.path.join(directory, name))
            if found:
                return found
        prefix = os.path.abspath(directory) + os.sep
        return {
            file
            for path, file in self.by_path.items()
            if path.startswith(prefix) and path.endswith(_YAML) and (recursive or os.sep not in path[len(prefix) :])
        }

    def _reference(self, base: str, entry: Any, recursive: bool = False) -> set[str]:
        path = local_reference(base, entry)
        if path is None:
            return set()
        return self._directory(path, recursive) if os.path.isdir(path) else self._file(path)

    def _kustomization(self, file: str, text: str) -> set[str]:
        try:
            documents = load_all(text)
        except YamlError:
            return set()
        base = os.path.dirname(file)
        targets: set[str] = set()
        for doc in documents:
            if not isinstance(doc, dict):
                continue
            entries = [entry for key in KUSTOMIZATION_REFERENCES for entry in list_or_empty(doc.get(key))]
            for generator in map(mapping_or_empty, list_or_empty(doc.get("configMapGenerator"))):
                entries += [str(entry).rpartition("=")[2] for entry in list_or_empty(generator.get("files"))]
            for chart in map(mapping_or_empty, list_or_empty(doc.get("helmCharts"))):
                entries += [chart.get("valuesFile"), *list_or_empty(chart.get("additionalValuesFiles"))]
            entries += [patch_path(entry) for key in PATCH_KEYS for entry in list_or_empty(doc.get(key))]
            for entry in entries:
                targets |= self._reference(base, entry)
        return targets

    def _deployer(self, file: str, doc: Any) -> set[str]:
        """What a Flux Kustomization or an Argo CD Application in ``file`` deploys."""
        folders = deployed_folders(doc)
        if not folders:
            return set()
        root = git_root(file)
        targets: set[str] = set()
        for folder in folders:
            targets |= self._reference(root, folder.path.lstrip("/"), recursive=True)
        return targets


class DeployedFolder(NamedTuple):
    """A folder a Flux Kustomization or an Argo CD source deploys: its ``path`` from the repository's root, whether
    the files of its subfolders count (``recursive``: always for Flux, ``directory.recurse`` for Argo CD) and
    whether it is deployed as plain manifests (``manifests``: not a Helm chart of an Argo CD source)."""

    path: str
    recursive: bool
    manifests: bool


def deployed_folders(doc: Any) -> list[DeployedFolder]:
    """The folders the Flux ``Kustomization`` or Argo CD ``Application``/``ApplicationSet`` ``doc`` deploys (none for
    any other document)."""
    if not isinstance(doc, Mapping):
        return []
    api_version, kind = str(doc.get("apiVersion", "")), doc.get("kind")
    spec = mapping_or_empty(doc.get("spec"))
    if kind == "Kustomization" and api_version.startswith(_FLUX_GROUP):
        return [DeployedFolder(str(spec.get("path") or "."), True, True)]
    if kind not in ("Application", "ApplicationSet") or not api_version.startswith(_ARGO_GROUP):
        return []
    if kind == "ApplicationSet":
        spec = mapping_or_empty(mapping_or_empty(spec.get("template")).get("spec"))
    found = []
    for source in map(mapping_or_empty, [spec.get("source"), *list_or_empty(spec.get("sources"))]):
        path = source.get("path")
        if path:
            recursive = at_path(source, ("directory", "recurse")) is True
            found.append(DeployedFolder(str(path), recursive, source.get("chart") is None and "helm" not in source))
    return found


#: The keys of a kustomization that list patches (files, or inline patches).
PATCH_KEYS = ("patchesStrategicMerge", "patches", "patchesJson6902")


def patch_path(entry: Any) -> str | None:
    """The file a kustomization's patch entry names; ``None`` for an inline patch."""
    path = entry.get("path") if isinstance(entry, Mapping) else entry
    return path if isinstance(path, str) and path and "\n" not in path else None
