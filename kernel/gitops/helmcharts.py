"""Values files of kustomize ``helmCharts`` entries (docs/helm-chart.md#5-values-sources).

kustomize hands the chart of a ``helmCharts`` entry its ``valuesFile`` and ``additionalValuesFiles`` whole, whatever
keys they hold: a values file that sets only ``replicas`` or ``schedule`` is chart values as much as one that sets
``deschedulerPolicy``. :func:`is_values_file` says whether a file is such a values file of the descheduler chart, by
the kustomizations in its directory and the directories above it (kustomize loads no file from outside the
kustomization's own directory tree), up to the root of the repository (the directory holding ``.git``).
"""

from __future__ import annotations

import os
from functools import lru_cache

from desched.gitops.clusters import KUSTOMIZATION_NAMES
from desched.gitops.wrappers import installs
from desched.reading.yamlsrc import YamlError, load_all

__all__ = ["is_values_file"]

_KUSTOMIZATION_LIMIT = 1 << 20  # a kustomization file larger than this is not read


def is_values_file(file: str) -> bool:
    """Whether a kustomize ``helmCharts`` entry of the descheduler chart lists ``file`` as its ``valuesFile`` or
    among its ``additionalValuesFiles``, in a kustomization of ``file``'s directory or one above it (never for
    stdin, ``-``)."""
    if file in ("", "-"):
        return False
    wanted = os.path.abspath(file)
    directory = os.path.dirname(wanted)
    while wanted not in _named_in(directory):
        parent = os.path.dirname(directory)
        if parent == directory or os.path.isdir(os.path.join(directory, ".git")):
            return False
        directory = parent
    return True


@lru_cache(maxsize=256)
def _named_in(directory: str) -> frozenset[str]:
    """The values files (absolute paths) the descheduler ``helmCharts`` entries of ``directory``'s kustomization
    name."""
    for name in KUSTOMIZATION_NAMES:
        path = os.path.join(directory, name)
        documents = _read(path)
        if documents is None:
            continue
        found = (install for doc in documents if isinstance(doc, dict) for install in installs(doc, path))
        return frozenset(str(s.where[0]) for install in found for s in install.sources if s.kind == "file")
    return frozenset()


def _read(path: str) -> list[object] | None:
    """The documents of the file at ``path``; ``None`` when there is none, it is too large or not YAML."""
    try:
        if os.path.getsize(path) > _KUSTOMIZATION_LIMIT:
            return None
        with open(path, encoding="utf-8") as handle:
            return list(load_all(handle.read()))
    except (OSError, UnicodeDecodeError, YamlError):
        return None
