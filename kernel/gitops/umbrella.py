"""Umbrella charts: a chart whose ``Chart.yaml`` lists the descheduler chart as a dependency
(docs/helm-chart.md#6-umbrella-charts).

Helm hands a subchart only the parent's values under the dependency's ``alias`` (else its ``name``), and ``global``
(helm/helm ``pkg/chartutil`` ``ProcessDependencies`` and ``CoalesceValues``). The values files beside such a
``Chart.yaml`` hold the descheduler's values under that key; a ``deschedulerPolicy`` at their top level is the
umbrella chart's own value and never reaches the descheduler chart. A dependency's ``condition`` (comma-separated
paths in the parent's values) turns the subchart off when the first of its paths that is set holds ``false``.
Charts of ``apiVersion: v1`` list their dependencies in ``requirements.yaml`` beside ``Chart.yaml``.
"""

import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from desched.gitops.wrappers import is_descheduler_chart
from desched.reading.yamlsrc import YamlError, load_all
from desched.tree import list_or_empty, mapping_or_empty, text_or_none

__all__ = ["Dependency", "dependency_beside", "enabled"]

_CHART_FILE_LIMIT = 1 << 20  # a Chart.yaml larger than this is not read


class Dependency(NamedTuple):
    """The descheduler chart as a dependency of the umbrella chart ``parent``: its values sit under ``key`` (the
    alias, else the name), ``version`` is the version constraint written, ``condition`` the one it has, if any;
    ``source`` names where it is declared for messages."""

    parent: str
    key: str
    version: str | None
    condition: str | None
    source: str


def dependency_beside(file: str) -> Dependency | None:
    """The descheduler dependency of the chart whose ``Chart.yaml`` (or ``requirements.yaml``) is beside ``file``,
    whatever that chart's own name (umbrella charts are often named ``descheduler`` too); ``None`` when there is
    none."""
    if file == "-":
        return None
    return _dependency(os.path.dirname(os.path.abspath(file)), os.path.dirname(file))


@lru_cache(maxsize=256)
def _dependency(directory: str, shown: str) -> Dependency | None:
    chart = _read(os.path.join(directory, "Chart.yaml"))
    if chart is None:
        return None  # the descheduler chart itself has no dependencies: any chart that has it as one is an umbrella
    name = chart.get("name")
    parent = name if isinstance(name, str) else "chart"
    declared = os.path.join(shown, "Chart.yaml")
    entries = chart.get("dependencies")
    if not isinstance(entries, list):
        entries = mapping_or_empty(_read(os.path.join(directory, "requirements.yaml"))).get("dependencies")
        declared = os.path.join(shown, "requirements.yaml")
    for entry in map(mapping_or_empty, list_or_empty(entries)):
        if not is_descheduler_chart(entry.get("name"), entry.get("repository")):
            continue
        key = text_or_none(entry.get("alias")) or text_or_none(entry.get("name")) or "descheduler"
        return Dependency(
            parent, key, text_or_none(entry.get("version")), text_or_none(entry.get("condition")), declared
        )
    return None


def _read(path: str) -> dict[str, Any] | None:
    try:
        if os.path.getsize(path) > _CHART_FILE_LIMIT:
            return None
        with open(path, encoding="utf-8") as handle:
            documents = load_all(handle.read())
    except (OSError, UnicodeDecodeError, YamlError):
        return None
    first = documents[0] if documents else None
    return first if isinstance(first, dict) else None


def enabled(dependency: Dependency, values: Mapping[str, Any]) -> bool:
    """Whether the parent's ``values`` leave the dependency on: the first of its condition's paths that is set to a
    boolean decides; a condition none of whose paths is set has no effect."""
    for condition in (dependency.condition or "").split(","):
        node: Any = values
        for part in condition.strip().split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, bool):
            return node
    return True
