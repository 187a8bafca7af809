"""The context of files given alone (docs/deploy-units.md#files-in-context): what else ``desched lint`` and ``desched
render`` must read so that each file given on the command line (as pre-commit passes them) is judged in the deploy
units that hold it, exactly as a run over its whole repository judges it.

A file's repository is the nearest folder above it holding ``.git`` or ``.desched.yaml``; a file in no repository
is judged alone. The repository is indexed without parsing it: every YAML file's text is read, and only the
kustomizations and the files naming a Flux or Argo CD group (the deployers) are parsed, which is what the structure
of units is made of (:mod:`desched.gitops.clusters`). A file in a unit brings the unit's files; a file no unit holds
brings every other such loose file (they are judged together). Only the files the given ones reach are read in full.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from desched.gitops.clusters import KUSTOMIZATION_NAMES, clusters
from desched.reading.sources import SourceError, iter_paths, read_text, repository_root
from desched.reading.yamlsrc import YamlError, load_all

__all__ = ["context_files", "without_values"]

#: Text that marks a file holding a deployer (a Flux Kustomization, an Argo CD Application or ApplicationSet).
_DEPLOYER_MARKS = ("kustomize.toolkit.fluxcd.io", "argoproj.io")


def context_files(
    files: Iterable[str], ignore: Iterable[str], configured: Mapping[str, list[str]] | None, base: str | None
) -> list[str]:
    """The other files to read with ``files`` (paths of regular files) so that each is judged in its deploy
    units, as paths from the current directory; ``configured`` and ``base`` are the ``clusters:`` of the
    configuration, as for :func:`desched.gitops.units.deploy_units`."""
    given = {os.path.abspath(file) for file in files}
    roots: dict[str, list[str]] = {}
    for file in sorted(given):
        root = repository_root(file)
        if root is not None:
            roots.setdefault(root, []).append(file)
    found: dict[str, str] = {}
    for root, mine in roots.items():
        for path in _reached(root, mine, list(ignore), configured, base):
            if os.path.abspath(path) not in given:
                found.setdefault(os.path.abspath(path), path)
    return sorted(found.values())


def _reached(
    root: str, files: list[str], ignore: list[str], configured: Mapping[str, list[str]] | None, base: str | None
) -> set[str]:
    """The files of ``root``'s units that hold one of ``files`` (absolute paths)."""
    index = {path: _indexed(path) for path in iter_paths([os.path.relpath(root)], ignore, lambda _p, _r: None)}
    units = clusters(index, configured, base)
    by_absolute = {os.path.abspath(path): path for path in index}
    wanted = {by_absolute.get(file, file) for file in files}
    reached: set[str] = set()
    assigned: set[str] = set()
    for unit in units:
        assigned |= unit.files
        if unit.files & wanted:
            reached |= unit.files
    if wanted - assigned:
        reached |= {path for path in index if path not in assigned}  # a loose file meets every loose file
    return reached


def _indexed(path: str) -> tuple[str, list[Any]]:
    """What the structure of units reads of ``path``: a kustomization's text, the deployers a file holds (an Argo CD
    source deploys a folder only by its ``path``), each without the chart values it may carry."""
    try:
        text = read_text(path)
    except (SourceError, OSError):
        return "", []
    if os.path.basename(path) in KUSTOMIZATION_NAMES:
        return without_values(text), []
    flux, argo = (mark in text for mark in _DEPLOYER_MARKS)
    if not flux and not (argo and "path:" in text):
        return "", []
    try:
        return "", [doc for doc in load_all(without_values(text)) if isinstance(doc, dict)]
    except YamlError:
        return "", []


#: The keys whose blocks hold chart values inline: nothing the structure of units reads.
_VALUES_KEY = re.compile(r"^(?P<indent>[ -]*)(?:valuesInline|valuesObject|values)\s*:\s*(?:[|>][-+0-9]*)?\s*(?:#.*)?$")


def without_values(text: str) -> str:
    """``text`` with the block under each ``valuesInline``, ``valuesObject`` and ``values`` key left out (the key
    stays, empty): the files of a kustomize or Argo CD build are named outside them, and chart values can be large."""
    kept: list[str] = []
    inside: int | None = None  # the indentation of the values key whose block is being left out
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if inside is not None:
            if not stripped or stripped.startswith("#") or indent > inside:
                continue
            inside = None
        match = _VALUES_KEY.match(line)
        if match:
            inside = len(match.group("indent"))
            kept.append(line[: line.index(":") + 1])
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"
