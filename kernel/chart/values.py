"""Helm's value coalescing, as Helm 3 does it (docs/helm-chart.md#4-user-values-over-the-defaults).

Two operations, each written from Helm's own code (helm/helm v3, ``pkg/cli/values/options.go`` and
``pkg/chartutil/coalesce.go``):

* :func:`merge_sources` merges the user's values sources in their tool's order (``helm -f a -f b``, a Flux
  ``valuesFrom`` list then ``spec.values``, ...): maps merge key by key at every depth, anything else (a scalar, a
  list, ``null``) from a later source replaces what an earlier one set. A ``null`` is kept: it means something only
  against the chart's defaults. (kustomize merges ``valuesInline`` into ``valuesFile`` before Helm sees either, with
  kyaml's ``merge2``: there a ``null`` clears the key instead, and the chart's default stands.)
* :func:`coalesce` lays the merged user values over the chart's ``values.yaml``: a key the user did not set takes the
  chart's default; a user ``null`` deletes the chart's default key; maps coalesce recursively; a user list replaces
  the default list whole; where one side is a map and the other is not, the user's value stands (Helm warns).

Both keep the positions of what the user wrote: when the user's maps are :class:`~desched.reading.yamlnodes.YMap` nodes,
the result is one too, and every value a default supplied is placed at ``at`` (the chart pin), so a finding on it points
there. :class:`Coalesced` lists the paths whose values came from the defaults.
"""

import copy
from collections.abc import Container, Iterable, Mapping
from typing import Any, NamedTuple

from desched.reading.yamlnodes import YMap, YSeq
from desched.reading.yamlsrc import Position
from desched.tree import Path

__all__ = ["Coalesced", "coalesce", "merge_sources"]


class Coalesced(NamedTuple):
    """User values coalesced over chart defaults: the ``values`` Helm renders with, and the paths (in ``values``)
    whose whole subtree came from the defaults, each the outermost such path."""

    values: dict[str, Any]
    defaults: frozenset[Path]


def merge_sources(sources: Iterable[Mapping[str, Any]], clearing: Container[int] = ()) -> dict[str, Any]:
    """The user's values sources merged in order, as Helm merges ``-f`` files (a later source wins; maps merge at
    every depth; a list or ``null`` replaces). The sources whose index is in ``clearing`` are merged as kustomize
    merges ``valuesInline`` into ``valuesFile`` (kyaml ``merge2``): a ``null`` there clears the key and never reaches
    Helm. The sources are not changed; positions of the source that set a key are kept when they are YMaps."""
    merged: dict[str, Any] = {}
    for index, source in enumerate(sources):
        merged = _merge(merged, source, index in clearing)
    return merged


def _merge(base: Mapping[str, Any], over: Mapping[str, Any], clears: bool) -> dict[str, Any]:
    out = _shallow(base if base else over)
    for key, value in over.items():
        current = base.get(key)
        if value is None and clears:
            out.pop(key, None)
            continue
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            value = _merge(current, value, clears)
        out[key] = value
        _place(out, key, over)
    return out


def coalesce(
    values: Mapping[str, Any], defaults: Mapping[str, Any], at: Position | None = None, shared: bool = False
) -> Coalesced:
    """``values`` (the user's, merged) over the chart's ``defaults``, as Helm coalesces them; neither is changed.
    Values the defaults supply are placed at ``at`` when the user's maps carry positions; with ``shared`` (and no
    ``at``) they are the defaults' own subtrees, not copies, and the caller must not change the result."""
    supplied: list[Path] = []
    return Coalesced(_coalesce(values, defaults, at, shared, (), supplied), frozenset(supplied))


def _coalesce(
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    at: Position | None,
    shared: bool,
    path: Path,
    supplied: list[Path],
) -> dict[str, Any]:
    out = _shallow(values)
    for key, default in defaults.items():
        if key not in values:
            if isinstance(out, YMap) and at is not None:
                out[key] = _placed(default, at)
            else:
                out[key] = default if shared else copy.deepcopy(default)
            supplied.append((*path, key))
            if isinstance(out, YMap) and at is not None:
                out.key_pos[key] = out.value_pos[key] = at
                out.styles[key] = ""
        elif values[key] is None:
            del out[key]  # a user null deletes the chart's default
        elif isinstance(default, Mapping) and isinstance(values[key], Mapping):
            out[key] = _coalesce(values[key], default, at, shared, (*path, key), supplied)
        # otherwise the user's value stands: a scalar or list replaces, a map/non-map clash keeps the user's
    return out


def _shallow(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``mapping`` that keeps its positions when it has them."""
    if not isinstance(mapping, YMap):
        return dict(mapping)
    out = YMap(mapping.line, mapping.column)
    out.update(mapping)
    out.key_pos.update(mapping.key_pos)
    out.value_pos.update(mapping.value_pos)
    out.styles.update(mapping.styles)
    out.duplicates = list(mapping.duplicates)
    return out


def _place(out: dict[str, Any], key: str, source: Mapping[str, Any]) -> None:
    """Copy ``key``'s positions from ``source`` to ``out`` when both carry positions."""
    if isinstance(out, YMap) and isinstance(source, YMap) and key in source.key_pos:
        out.key_pos[key], out.value_pos[key] = source.key_pos[key], source.value_pos[key]
        out.styles[key] = source.styles.get(key, "")


def _placed(value: Any, at: Position) -> Any:
    """A default value as a tree whose every position is ``at``."""
    if isinstance(value, Mapping):
        mapping = YMap(*at)
        for key, item in value.items():
            mapping[key] = _placed(item, at)
            mapping.key_pos[key] = mapping.value_pos[key] = at
            mapping.styles[key] = ""
        return mapping
    if isinstance(value, list):
        sequence = YSeq(*at)
        for item in value:
            sequence.append(_placed(item, at))
            sequence.item_pos.append(at)
            sequence.styles.append("")
        return sequence
    return value
