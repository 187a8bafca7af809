"""Kustomize patches applied to the objects of a deploy unit, as ``kustomize build`` applies them
(docs/deploy-units.md).

A kustomization's ``patchesStrategicMerge`` files, ``patches`` entries (a file or an inline patch, with or without a
``target``) and ``patchesJson6902`` entries change the objects its ``resources``, ``bases`` and ``components`` build
(inner kustomizations first, then the outer ones on what the inner built). A strategic-merge patch merges maps key by
key (``null`` removes a key, ``$patch: replace`` / ``$patch: delete`` replace or remove), merges the lists Kubernetes
merges by key (containers, volumes, env, ports, ...) item by item and replaces every other list; a JSON 6902 patch
applies its ``add``, ``remove``, ``replace``, ``copy`` and ``move`` operations. A patch whose target is not among the
objects the kustomization builds locally (a remote base) changes nothing desched can see.

:func:`apply_patches` returns the unit's objects after every patch, each patched object a new tree whose values
remember the file they come from (:meth:`PatchedObject.where`), and the patch files, which are no objects of their
own.
"""

import copy
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from desched.gitops.clusters import PATCH_KEYS, is_kustomization, patch_path, remote_references
from desched.gitops.documents import block_offsets
from desched.gitops.kustomize import kustomization_children
from desched.reading.yamlnodes import Position, YMap, YSeq
from desched.reading.yamlsrc import YamlError, load_all
from desched.tree import Path, list_or_empty, mapping_or_empty

__all__ = ["PatchedObject", "UnitObjects", "apply_patches", "patch_entries"]

#: The lists a strategic merge merges item by item, by the key that names an item (Kubernetes' patchMergeKey).
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "env": "name",
    "envFrom": None,
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
}
_DIRECTIVE = "$patch"


class PatchedObject(NamedTuple):
    """An object a patch changed: its ``file`` (where the patched resource is written), the ``doc`` after every
    patch and, for each mapping or sequence of ``doc`` that took values from a patch, the file of each such key or
    index (``origins``, by the node's identity)."""

    file: str
    doc: Any
    origins: dict[int, dict[str | int, str]]

    def where(self, path: Path) -> tuple[str, int, int]:
        """``(file, line, column)`` of ``path`` in the patched object: in the patch that set it, else in the
        resource (the nearest existing ancestor)."""
        node, file = self.doc, self.file
        best: Position = (node.line, node.column) if isinstance(node, (YMap, YSeq)) else (1, 1)
        for part in path:
            if isinstance(node, YMap) and isinstance(part, str) and part in node:
                best = node.value_pos.get(part, best)
            elif isinstance(node, YSeq) and isinstance(part, int) and 0 <= part < len(node):
                best = node.item_pos[part] if part < len(node.item_pos) else best
            else:
                break
            file = self.origins.get(id(node), {}).get(part, file)
            node = node[part]
        return file, *best


class UnitObjects(NamedTuple):
    """A unit's documents after its patches: ``documents`` as ``(file, object)`` pairs (patched objects in place of
    the resources they patch), ``patched`` by the identity of each patched object, the ``patch_files``, and the
    strategic-merge patches of kustomizations with a remote base that change no local object (``remote``, as
    ``(file, patch)`` pairs): they patch what the remote base brings, which desched does not see."""

    documents: list[tuple[str, Any]]
    patched: dict[int, PatchedObject]
    patch_files: frozenset[str]
    remote: tuple[tuple[str, Any], ...] = ()


def patch_entries(doc: Mapping[str, Any]) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """The patches of kustomization ``doc``: ``(key, entry, target)`` for each ``patchesStrategicMerge``,
    ``patches`` and ``patchesJson6902`` entry (``target``: the entry's selector, ``{}`` when it has none)."""
    for key in PATCH_KEYS:
        for entry in list_or_empty(doc.get(key)):
            target = mapping_or_empty(entry.get("target")) if isinstance(entry, Mapping) else {}
            yield key, entry, target


def apply_patches(documents: Iterable[tuple[str, Any]], texts: Mapping[str, str] | None = None) -> UnitObjects:
    """The objects of one unit (``(file, object)`` pairs, kustomizations included) after its kustomizations'
    patches (module docstring); ``texts`` (by file) places what inline patches set on the kustomization's lines."""
    listed = [(os.path.normpath(file), file, doc) for file, doc in documents]
    kustomizations = {norm: doc for norm, _, doc in listed if is_kustomization(norm, doc)}
    patch_files = frozenset(_patch_files(kustomizations))
    if not patch_files and not any(_inline(doc) for doc in kustomizations.values()):
        return UnitObjects([(file, doc) for _, file, doc in listed], {}, frozenset())
    patch_docs: dict[str, list[Any]] = {}
    for norm, _, doc in listed:
        if norm in patch_files:
            patch_docs.setdefault(norm, []).append(doc)
    no_resources = patch_files | kustomizations.keys()
    resources = [(norm, file, doc) for norm, file, doc in listed if norm not in no_resources]
    texts = texts or {}
    inline = {norm: texts[file] for norm, file, _ in listed if norm in kustomizations and file in texts}
    names = {norm: file for norm, file, _ in listed}
    current, deleted, remote = _patch_all(kustomizations, resources, patch_docs, inline, names)
    out = [
        (file, current[id(doc)].doc if id(doc) in current else doc)
        for _, file, doc in resources
        if id(doc) not in deleted
    ]
    out += [(file, doc) for norm, file, doc in listed if norm in kustomizations]
    return UnitObjects(out, {id(obj.doc): obj for obj in current.values()}, patch_files, tuple(remote))


def _patch_all(
    kustomizations: Mapping[str, Mapping[str, Any]],
    resources: list[tuple[str, str, Any]],
    patch_docs: Mapping[str, list[Any]],
    texts: Mapping[str, str],
    names: Mapping[str, str],
) -> tuple[dict[int, PatchedObject], set[int], list[tuple[str, Any]]]:
    """Every patch of the ``kustomizations`` applied to the ``resources`` each builds, inner kustomizations first:
    the patched objects and the objects deleted, by the identity of the original resource, and the strategic-merge
    patches of a kustomization with a remote base that selected no local object (``(file, patch)`` pairs). Files
    are named as ``names`` (normalised path -> the unit's name of the file) names them."""
    current: dict[int, PatchedObject] = {}
    deleted: set[int] = set()
    remote: list[tuple[str, Any]] = []
    by_directory = {os.path.dirname(file): file for file in kustomizations}
    for kustomization in _inner_first(kustomizations, by_directory):
        built = _built(kustomization, kustomizations, by_directory)
        targets = [(file, doc) for norm, file, doc in resources if {norm, os.path.dirname(norm)} & built]
        patches = _patches(kustomization, kustomizations[kustomization], patch_docs, texts.get(kustomization, ""))
        for patch, target, written_in in patches:
            origin = names.get(written_in, written_in)
            selected = False
            for file, doc in targets:
                now = current.get(id(doc))
                if id(doc) in deleted or not _selected(now.doc if now else doc, patch, target):
                    continue
                selected = True
                if now is None:
                    now = current[id(doc)] = PatchedObject(file, copy.deepcopy(doc), {})
                if not _apply(now, patch, origin):
                    deleted.add(id(doc))
            if (
                not selected
                and isinstance(patch, Mapping)
                and next(remote_references(kustomizations[kustomization]), None)
            ):
                remote.append((origin, patch))
    return current, deleted, remote


def _patch_files(kustomizations: Mapping[str, Mapping[str, Any]]) -> Iterator[str]:
    """The files the ``kustomizations`` name as patches, normalised."""
    for file, doc in kustomizations.items():
        for _, entry, _ in patch_entries(doc):
            path = patch_path(entry)
            if path is not None:
                yield os.path.normpath(os.path.join(os.path.dirname(file), path))


def _inline(doc: Mapping[str, Any]) -> bool:
    """Whether kustomization ``doc`` has an inline patch."""
    return any(isinstance(entry, Mapping) and isinstance(entry.get("patch"), str) for _, entry, _ in patch_entries(doc))


def _built(file: str, kustomizations: Mapping[str, Any], by_directory: Mapping[str, str]) -> set[str]:
    """The files kustomization ``file`` builds, through its inner kustomizations (a directory stands for the YAML
    files in it when it holds no kustomization)."""
    found: set[str] = set()
    todo, seen = [file], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for child in kustomization_children(current, kustomizations[current], by_directory):
            if child in kustomizations:
                todo.append(child)
            else:
                found.add(child)
    return found


def _inner_first(kustomizations: Mapping[str, Any], by_directory: Mapping[str, str]) -> list[str]:
    """The kustomizations, each after those it builds (a cycle broken anywhere)."""
    ordered: list[str] = []
    state: dict[str, bool] = {}

    def visit(file: str) -> None:
        if file in state:
            return
        state[file] = False
        for child in kustomization_children(file, kustomizations[file], by_directory):
            if child in kustomizations:
                visit(child)
        state[file] = True
        ordered.append(file)

    for file in sorted(kustomizations):
        visit(file)
    return ordered


def _patches(
    file: str, doc: Mapping[str, Any], patch_docs: Mapping[str, list[Any]], text: str
) -> Iterator[tuple[Any, Mapping[str, Any], str]]:
    """Each patch of kustomization ``file`` (of ``text``): ``(patch, target, file it is written in)``."""
    base = os.path.dirname(file)
    for _, entry, target in patch_entries(doc):
        path = patch_path(entry)
        if path is not None:
            for patch in patch_docs.get(os.path.normpath(os.path.join(base, path)), []):
                yield patch, target, os.path.normpath(os.path.join(base, path))
        elif isinstance(entry, Mapping) and isinstance(entry.get("patch"), str):
            yield from ((patch, target, file) for patch in _inline_patches(entry, text))


def _inline_patches(entry: Mapping[str, Any], text: str) -> list[Any]:
    """The patches written inline in ``entry``, placed on the kustomization's lines (``text``) when it is a
    literal block, else at the value."""
    try:
        patches = load_all(entry["patch"])
    except YamlError:
        return []
    at = entry.value_pos["patch"] if isinstance(entry, YMap) else (1, 1)
    offsets = (
        block_offsets(text, *at) if text and isinstance(entry, YMap) and entry.styles.get("patch") == "|" else None
    )
    for patch in patches:
        _place(patch, offsets, at)
    return patches


def _place(node: Any, offsets: tuple[int, int] | None, at: Position) -> None:
    """Move the positions of ``node``'s tree by ``offsets`` (lines, columns), or all to ``at``."""

    def moved(position: Position) -> Position:
        return (position[0] + offsets[0], position[1] + offsets[1]) if offsets else at

    if isinstance(node, YMap):
        node.line, node.column = moved((node.line, node.column))
        node.key_pos = {key: moved(position) for key, position in node.key_pos.items()}
        node.value_pos = {key: moved(position) for key, position in node.value_pos.items()}
        for value in node.values():
            _place(value, offsets, at)
    elif isinstance(node, YSeq):
        node.line, node.column = moved((node.line, node.column))
        node.item_pos = [moved(position) for position in node.item_pos]
        for value in node:
            _place(value, offsets, at)


def _selected(doc: Mapping[str, Any], patch: Any, target: Mapping[str, Any]) -> bool:
    """Whether ``patch`` (with the entry's ``target``) applies to ``doc``."""
    metadata = mapping_or_empty(doc.get("metadata"))
    if target:
        wanted = {
            "kind": doc.get("kind"),
            "name": metadata.get("name"),
            "namespace": metadata.get("namespace"),
        }
        group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
        wanted.update(group=group, version=version)
        if not all(_matches(target[key], value) for key, value in wanted.items() if key in target):
            return False
        return _labels_match(mapping_or_empty(metadata.get("labels")), target.get("labelSelector"))
    if not isinstance(patch, Mapping):
        return False
    own = mapping_or_empty(patch.get("metadata"))
    if patch.get("kind") != doc.get("kind") or own.get("name") != metadata.get("name"):
        return False
    namespace = own.get("namespace")
    return namespace is None or namespace == metadata.get("namespace")


def _matches(pattern: Any, value: Any) -> bool:
    """Whether a target's field ``pattern`` selects ``value``: kustomize reads each as a whole-value regular
    expression (``descheduler.*``), a plain name being one that matches itself."""
    if not isinstance(pattern, str) or not isinstance(value, str):
        return bool(pattern == value)
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return pattern == value


def _labels_match(labels: Mapping[str, Any], selector: Any) -> bool:
    if not isinstance(selector, str) or not selector.strip():
        return True
    for term in selector.split(","):
        written, equals, value = term.partition("=")
        key, negated, value = written.rstrip("!").strip(), written.endswith("!"), value.lstrip("=").strip()
        if not equals:
            if key not in labels:
                return False
        elif (labels.get(key) == value) is negated:
            return False
    return True


def _apply(patched: PatchedObject, patch: Any, origin: str) -> bool:
    """Apply ``patch`` (written in ``origin``) to ``patched``, a private copy, in place; ``False`` when the patch
    deletes the object."""
    if isinstance(patch, list):
        for operation in patch:
            if isinstance(operation, Mapping):
                _json6902(patched, operation, origin)
    elif isinstance(patch, Mapping):
        if patch.get(_DIRECTIVE) == "delete":
            return False
        _merge(patched, patched.doc, patch, origin)
    return True


def _merge(patched: PatchedObject, into: Any, patch: Mapping[str, Any], origin: str) -> None:
    """Merge the strategic-merge ``patch`` map into the map ``into`` (in place)."""
    if not isinstance(into, YMap):
        return
    if patch.get(_DIRECTIVE) == "replace":
        into.clear()
    for key, value in patch.items():
        if key in (_DIRECTIVE, "$setElementOrder") or key.startswith("$setElementOrder/"):
            continue
        if value is None:
            into.pop(key, None)
            continue
        current = into.get(key)
        if key in into and not isinstance(value, (Mapping, list)) and current == value:
            continue  # set as written: the resource still says it
        if isinstance(value, Mapping) and isinstance(current, YMap) and value.get(_DIRECTIVE) != "replace":
            _merge(patched, current, value, origin)
        elif isinstance(value, list) and isinstance(current, YSeq) and _MERGE_KEYS.get(key):
            _merge_list(patched, current, value, str(_MERGE_KEYS[key]), origin)
        else:
            _set(patched, into, key, value, origin, patch)


def _set(patched: PatchedObject, into: YMap, key: str, value: Any, origin: str, patch: Mapping[str, Any]) -> None:
    into[key] = copy.deepcopy(value)
    into.key_pos[key] = patch.key_pos[key] if isinstance(patch, YMap) else (into.line, into.column)
    into.value_pos[key] = patch.value_pos[key] if isinstance(patch, YMap) else (into.line, into.column)
    patched.origins.setdefault(id(into), {})[key] = origin


def _merge_list(patched: PatchedObject, into: YSeq, items: Sequence[Any], merge_key: str, origin: str) -> None:
    """Merge patch list ``items`` into ``into`` by ``merge_key``: matching items merged, ``$patch: delete`` items
    removed, new ones appended."""
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or merge_key not in item:
            continue
        found = next(
            (i for i, mine in enumerate(into) if isinstance(mine, Mapping) and mine.get(merge_key) == item[merge_key]),
            None,
        )
        if item.get(_DIRECTIVE) == "delete":
            if found is not None:
                del into[found]
                del into.item_pos[found]
            continue
        if found is not None:
            _merge(patched, into[found], item, origin)
            continue
        into.append(copy.deepcopy(item))
        position = items.item_pos[index] if isinstance(items, YSeq) else (into.line, into.column)
        into.item_pos.append(position)
        into.styles.append("")
        patched.origins.setdefault(id(into), {})[len(into) - 1] = origin


def _pointer(text: Any) -> list[str] | None:
    if not isinstance(text, str) or not text.startswith("/"):
        return None
    return [part.replace("~1", "/").replace("~0", "~") for part in text[1:].split("/")]


def _json6902(patched: PatchedObject, operation: Mapping[str, Any], origin: str) -> None:
    """Apply one JSON 6902 ``operation`` to ``patched`` (in place); an operation on a missing path is skipped."""
    op, parts = operation.get("op"), _pointer(operation.get("path"))
    if parts is None or not parts:
        return
    parent = patched.doc
    for part in parts[:-1]:
        parent = _step(parent, part)
        if parent is None:
            return
    last = parts[-1]
    if op in ("copy", "move"):
        source = _pointer(operation.get("from"))
        value = _resolve(patched.doc, source) if source else None
        if value is None:
            return
        if op == "move" and source is not None:
            _remove(_resolve(patched.doc, source[:-1]), source[-1])
        _put(patched, parent, last, copy.deepcopy(value), None, origin, add=True)
    elif op == "remove":
        _remove(parent, last)
    elif op in ("add", "replace") and "value" in operation:
        at = operation.value_pos["value"] if isinstance(operation, YMap) else None
        _put(patched, parent, last, copy.deepcopy(operation["value"]), at, origin, add=op == "add")


def _step(node: Any, part: str) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    return None


def _resolve(node: Any, parts: Sequence[str]) -> Any:
    for part in parts:
        node = _step(node, part)
        if node is None:
            return None
    return node


def _remove(parent: Any, last: str) -> None:
    if isinstance(parent, YMap):
        parent.pop(last, None)
    elif isinstance(parent, YSeq) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
        del parent.item_pos[int(last)]


def _put(
    patched: PatchedObject, parent: Any, last: str, value: Any, at: Position | None, origin: str, *, add: bool
) -> None:
    position = at or (getattr(parent, "line", 1), getattr(parent, "column", 1))
    if isinstance(parent, YMap):
        if not add and last not in parent:
            return
        parent[last] = value
        parent.key_pos[last] = parent.value_pos[last] = position
        patched.origins.setdefault(id(parent), {})[last] = origin
    elif isinstance(parent, YSeq):
        index = len(parent) if last == "-" else int(last) if last.isdigit() else -1
        if index < 0 or index > len(parent) or (not add and index == len(parent)):
            return
        if add:
            parent.insert(index, value)
            parent.item_pos.insert(index, position)
            parent.styles.insert(index, "")
        else:
            parent[index] = value
            parent.item_pos[index] = position
        patched.origins.setdefault(id(parent), {})[index] = origin
