"""Namespace scopes of plugins, for rules that compare profiles (DS208) and later the eviction scope model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Scope", "overlap", "scope_of"]

_NODE_UTILIZATION = ("LowNodeUtilization", "HighNodeUtilization")


class Scope(NamedTuple):
    """``include`` is ``None`` for "every namespace except ``exclude``"."""

    include: frozenset[str] | None
    exclude: frozenset[str]


def _names(value: Any) -> frozenset[str]:
    if isinstance(value, list):
        return frozenset(item for item in value if isinstance(item, str))
    return frozenset()


def scope_of(plugin: str, args: Mapping[str, Any]) -> Scope:
    """The namespaces a plugin's args let it evict from."""
    key = "evictableNamespaces" if plugin in _NODE_UTILIZATION else "namespaces"
    namespaces = args.get(key)
    if not isinstance(namespaces, dict):
        return Scope(None, frozenset())
    include = _names(namespaces.get("include"))
    return Scope(include or None, _names(namespaces.get("exclude")))


def overlap(a: Scope, b: Scope) -> frozenset[str] | None:
    """Namespaces in both scopes: a finite set (possibly empty), or ``None`` meaning unboundedly many."""
    if a.include is None and b.include is None:
        return None
    if a.include is not None and b.include is not None:
        return a.include & b.include
    finite, other = (a, b) if a.include is not None else (b, a)
    assert finite.include is not None
    return finite.include - other.exclude
