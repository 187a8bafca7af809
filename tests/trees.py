"""Comparing composed YAML trees (:mod:`desched.reading.yamlsrc`) in every respect: values, types, key order and
positions."""

from __future__ import annotations

from typing import Any

from desched.reading.yamlsrc import YMap, YSeq

_MAP_FIELDS = ("line", "column", "key_pos", "value_pos", "styles", "duplicates", "nested_duplicates")
_SEQ_FIELDS = ("line", "column", "item_pos", "styles")


def tree_difference(left: Any, right: Any, path: str = "$") -> str | None:
    """Where and how two composed trees (or lists of documents) first differ, or None when they are the same in every
    respect: types, values, key order, positions, styles and duplicates."""
    if type(left) is not type(right):
        return f"{path}: {type(left).__name__} != {type(right).__name__}"
    if isinstance(left, (YMap, YSeq)):
        for field in _MAP_FIELDS if isinstance(left, YMap) else _SEQ_FIELDS:
            mine, theirs = getattr(left, field), getattr(right, field)
            if isinstance(mine, dict):  # in the same order too
                mine, theirs = list(mine.items()), list(theirs.items())
            if mine != theirs:
                return f"{path}.<{field}>: {mine!r} != {theirs!r}"
    if isinstance(left, dict):
        if list(left) != list(right):
            return f"{path}: keys {list(left)!r} != {list(right)!r}"
        pairs: list[tuple[Any, Any, str]] = [(left[k], right[k], f"{path}.{k}") for k in left]
    elif isinstance(left, list):
        if len(left) != len(right):
            return f"{path}: {len(left)} items != {len(right)}"
        pairs = [(a, b, f"{path}[{i}]") for i, (a, b) in enumerate(zip(left, right, strict=True))]
    else:
        same = left == right or (left != left and right != right)  # NaN equals NaN here
        return None if same else f"{path}: {left!r} != {right!r}"
    for a, b, where in pairs:
        found = tree_difference(a, b, where)
        if found is not None:
            return found
    return None
