"""The namespace kustomize gives the objects of each file (docs/deployment-rules.md#namespaces-after-kustomize).

A kustomization's ``namespace:`` sets the namespace of every namespaced object it builds: those of its ``resources``
(and the older ``bases``), files or directories holding a kustomization, recursively, overriding what the objects
say. An outer kustomization transforms after the inner ones, so along each path from a root kustomization to a file
the outermost ``namespace:`` wins. A file several roots build (a base shared by overlays) may land in several
namespaces. Remote resources (URLs) are not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from desched.gitops.clusters import KUSTOMIZATION_NAMES, KUSTOMIZATION_REFERENCES, local_reference
from desched.tree import list_or_empty

__all__ = ["kustomization_children", "kustomized_namespaces"]


def kustomized_namespaces(documents: Iterable[tuple[str, Any]]) -> dict[str, frozenset[str]]:
    """Each file some kustomization among ``documents`` (``(file, object)`` pairs) builds with a ``namespace:``,
    normalised, to the namespaces its objects get; a file no kustomization gives a namespace is absent."""
    kustomizations: dict[str, Mapping[str, Any]] = {}
    for file, doc in documents:
        if os.path.basename(file) in KUSTOMIZATION_NAMES and isinstance(doc, Mapping):
            kustomizations[os.path.normpath(file)] = doc
    if not any(isinstance(doc.get("namespace"), str) for doc in kustomizations.values()):
        return {}
    by_directory = {os.path.dirname(file): file for file in kustomizations}
    children = {file: list(kustomization_children(file, doc, by_directory)) for file, doc in kustomizations.items()}
    inner = {child for listed in children.values() for child in listed}
    found: dict[str, set[str]] = {}
    for root in sorted(set(kustomizations) - inner) or sorted(kustomizations):  # a cycle has no root: start anywhere
        _descend(root, None, kustomizations, children, found, set())
    return {file: frozenset(namespaces) for file, namespaces in found.items() if namespaces}


def kustomization_children(file: str, doc: Mapping[str, Any], by_directory: Mapping[str, str]) -> Iterable[str]:
    """The files, directories and kustomizations (by ``by_directory``: directory -> its kustomization) that
    kustomization ``doc`` of ``file`` builds, normalised; remote ones left out."""
    base = os.path.dirname(file)
    for key in KUSTOMIZATION_REFERENCES:
        listed = doc.get(key)
        for entry in list_or_empty(listed):
            path = local_reference(base, entry)
            if path is not None:
                yield by_directory.get(path, path)


def _descend(
    file: str,
    inherited: str | None,
    kustomizations: Mapping[str, Mapping[str, Any]],
    children: Mapping[str, list[str]],
    found: dict[str, set[str]],
    seen: set[tuple[str, str | None]],
) -> None:
    if (file, inherited) in seen:
        return
    seen.add((file, inherited))
    own = kustomizations[file].get("namespace")
    namespace = inherited if inherited is not None else own if isinstance(own, str) and own else None
    for child in children[file]:
        if child in kustomizations:
            _descend(child, namespace, kustomizations, children, found, seen)
        elif namespace is not None:
            found.setdefault(child, set()).add(namespace)
