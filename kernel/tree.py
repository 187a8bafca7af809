"""The shared vocabulary of decoded YAML/JSON trees: one meaning per name, for every package of desched.

* :data:`Path`: where a value sits in a tree (mapping keys and list indexes), as findings and origins carry it.
* :data:`Json`: a decoded object (a mapping from field names to values) that code may build or change;
  :data:`JsonView` the same read-only.
* :func:`mapping_or_empty`, :func:`list_or_empty`, :func:`text_or_none` and :func:`strings`: the lenient readers every
  model uses, where a value of the wrong type reads as absent (the structural rules report it).
* :class:`TextEnum`: an enum whose members are their text, for vocabularies that reach outputs (document shapes,
  evictor checks): they compare, format and serialise as the plain string on every supported Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

__all__ = [
    "Json",
    "JsonView",
    "Path",
    "TextEnum",
    "at_path",
    "list_or_empty",
    "mapping_or_empty",
    "same_namespace",
    "strings",
    "text_or_none",
]

Path = tuple[str | int, ...]
Json = dict[str, Any]
JsonView = Mapping[str, Any]


def mapping_or_empty(value: Any) -> dict[str, Any]:
    """``value`` when it is a dict, else an empty dict (never ``None``)."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty list (never ``None``)."""
    return value if isinstance(value, list) else []


def text_or_none(value: Any) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def same_namespace(left: str | None, right: str | None) -> bool:
    """Whether two objects may be in one namespace: ``None`` (a manifest without a namespace) gets one when applied
    (``kubectl -n``, kustomize's ``namespace:``), so it may be any."""
    return left is None or right is None or left == right


def at_path(tree: Any, path: Path) -> Any:
    """The value at ``path`` (keys and indexes) in a decoded YAML or JSON tree; ``None`` where a step is missing."""
    node = tree
    for part in path:
        if isinstance(part, str) and isinstance(node, dict):
            node = node.get(part)
        elif isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
        else:
            return None
    return node


def strings(value: Any) -> list[str]:
    """The strings of a list, in order; ``[]`` for anything that is not a list."""
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


class TextEnum(str, Enum):
    """An enum whose members are strings that print as their value (``enum.StrEnum`` arrived only in Python 3.11)."""

    __str__ = str.__str__

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)
