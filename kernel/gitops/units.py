"""The deploy units of a repository: the sets of files the cluster receives together (docs/deploy-units.md).

A unit is what one root of the repository's structure deploys (:mod:`desched.gitops.clusters`: a kustomization's
build, a Flux Kustomization's path, an Argo CD Application's sources), or one cluster of ``clusters:`` in
``.desched.yaml``. The files no root reaches are the loose unit: they are judged together, unless two of them define
the same object (kind, namespace and name), which one cluster cannot receive twice. Then the loose files are split
by folder, from the top, until no folder defines an object twice; files above the split belong to every folder below
it, and desched says once that it could not tell the units apart (:attr:`DeployUnits.ambiguous`).

Same-named objects of different units are different objects; a file in several units (a shared base) is judged in
each.
"""

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from desched.gitops.clusters import clusters, is_kustomization, remote_references
from desched.reading.yamlnodes import Position, YMap, YSeq

__all__ = ["Ambiguity", "DeployUnit", "DeployUnits", "UnitReport", "deploy_units", "object_key"]


class DeployUnit(NamedTuple):
    """A unit: its ``name`` (the root's folder, the configured cluster, or a loose folder) and its ``files``."""

    name: str
    files: frozenset[str]


class Ambiguity(NamedTuple):
    """Loose files split by folder because ``object`` (``Kind namespace/name``) is defined in each of ``files``
    (the first definition of each folder, in path order), first at ``position`` of the first file."""

    object: str
    files: tuple[str, ...]
    position: Position


class DeployUnits(NamedTuple):
    """Every unit of the files given (each file in at least one) and the splits desched had to guess."""

    units: list[DeployUnit]
    ambiguous: list[Ambiguity]


def object_key(doc: Any) -> tuple[str, str, str] | None:
    """``(kind, namespace, name)`` of an object that names itself (``""``: no namespace written), else ``None``."""
    if not isinstance(doc, Mapping):
        return None
    metadata = doc.get("metadata")
    kind = doc.get("kind")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(kind, str) or not isinstance(name, str) or not name:
        return None
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    return kind, namespace if isinstance(namespace, str) else "", name


def deploy_units(
    files: Mapping[str, tuple[str, list[Any]]],
    configured: Mapping[str, list[str]] | None = None,
    base: str | None = None,
) -> DeployUnits:
    """The units of ``files`` (display name -> (text, its documents other than policies)); ``configured``
    (name -> globs, relative to ``base``) replaces the structure, as for :func:`~desched.gitops.clusters.clusters`."""
    structured = [DeployUnit(c.name, c.files) for c in clusters(files, configured, base)]
    assigned = set().union(*(unit.files for unit in structured))
    loose = sorted(file for file in files if file not in assigned)
    ambiguous: list[Ambiguity] = []
    if loose:
        keys = {file: dict(pair for doc in reversed(files[file][1]) for pair in _keys(doc)) for file in loose}
        if not _defined_twice(keys[file].keys() for file in loose):  # the usual case: the loose files are one unit
            top = os.path.commonpath([os.path.dirname(os.path.abspath(loose[0])), os.path.abspath(loose[-1])])
            structured.append(DeployUnit(_folder(top), frozenset(loose)))
            return DeployUnits(structured, ambiguous)
        folders = {file: tuple(os.path.dirname(os.path.abspath(file)).split(os.sep)) for file in loose}
        for folder, members in _split(loose, _Loose(keys, folders), ambiguous):
            structured.append(DeployUnit(folder, frozenset(members)))
    return DeployUnits(structured, ambiguous)


def _keys(doc: Any) -> Iterable[tuple[tuple[str, str, str], Position]]:
    """The object keys of ``doc`` (the items of a ``kind: *List``), each with where its object starts."""
    items = doc.get("items") if isinstance(doc, Mapping) and str(doc.get("kind", "")).endswith("List") else None
    for item in items if isinstance(items, list) else [doc]:
        key = object_key(item)
        if key is not None:
            yield key, (item.line, item.column) if isinstance(item, YMap) else (1, 1)


class _Loose(NamedTuple):
    """The loose files' object keys (with where each object starts) and folders (as path parts)."""

    keys: Mapping[str, dict[tuple[str, str, str], Position]]
    folders: Mapping[str, tuple[str, ...]]


def _split(files: list[str], loose: _Loose, ambiguous: list[Ambiguity]) -> list[tuple[str, list[str]]]:
    """``files`` as one group, or split by folder while two of them define the same object (module docstring)."""
    keys = loose.keys
    first, last = min(loose.folders[file] for file in files), max(loose.folders[file] for file in files)
    depth = next((i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), min(len(first), len(last)))
    top = first[:depth]  # the folders' common prefix: that of the smallest and the largest
    here = [file for file in files if len(loose.folders[file]) == depth]
    below: dict[str, list[str]] = {}
    for file in files:
        if len(loose.folders[file]) > depth:
            below.setdefault(loose.folders[file][depth], []).append(file)
    if not below or not _defined_twice(keys[file].keys() for file in files):
        return [(_folder(os.sep.join(top) or os.sep), files)]  # no duplicate, or a folder defines one twice
    sides = [here, *(below[name] for name in sorted(below))]
    across = _defined_twice(set().union(*(keys[file] for file in side)) for side in sides)
    if across:
        obj = min(across)
        defining = [min(f for f in side if obj in keys[f]) for side in sides if any(obj in keys[f] for f in side)]
        ambiguous.append(Ambiguity(_label(obj), tuple(defining), keys[defining[0]][obj]))
    groups: list[tuple[str, list[str]]] = []
    for name in sorted(below):
        groups.extend((folder, sorted(here + group)) for folder, group in _split(below[name], loose, ambiguous))
    return groups


def _defined_twice(groups: Iterable[Iterable[tuple[str, str, str]]]) -> set[tuple[str, str, str]]:
    """The object keys that two or more of ``groups`` (each a file's, or a folder's) hold."""
    seen: set[tuple[str, str, str]] = set()
    twice: set[tuple[str, str, str]] = set()
    for group in groups:
        for key in group:
            (twice if key in seen else seen).add(key)
    return twice


def _folder(path: str) -> str:
    relative = os.path.relpath(path) if path else "."
    return relative if not relative.startswith("..") else path


def _label(key: tuple[str, str, str]) -> str:
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


class UnitReport(NamedTuple):
    """What the unit rules (DS7xx) read: the run's ``units`` and its ``documents`` (``(file, object)`` pairs)."""

    units: DeployUnits
    documents: list[tuple[str, Any]]

    def remote_bases(self) -> Iterator[tuple[str, Position, str]]:
        """``(file, position, reference)`` of each remote ``resources``, ``bases`` or ``components`` entry of the
        run's kustomizations: what desched does not fetch."""
        for file, doc in self.documents:
            if is_kustomization(file, doc):
                for entries, index, entry in remote_references(doc):
                    yield file, entries.item_pos[index] if isinstance(entries, YSeq) else (1, 1), entry
