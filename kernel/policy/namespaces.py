"""Namespace scopes of plugins, for rules that compare profiles (DS208) and later the eviction scope model."""

from typing import NamedTuple

from desched.plugins.base import Namespaces

__all__ = ["Scope", "overlap", "scope_of"]


class Scope(NamedTuple):
    """``include`` is ``None`` for "every namespace except ``exclude``"."""

    include: frozenset[str] | None
    exclude: frozenset[str]


def scope_of(namespaces: Namespaces) -> Scope:
    """The namespaces a plugin's ``namespaces`` (or ``evictableNamespaces``) let it evict from."""
    return Scope(frozenset(namespaces.include) or None, frozenset(namespaces.exclude))


def overlap(a: Scope, b: Scope) -> frozenset[str] | None:
    """Namespaces in both scopes: a finite set (possibly empty), or ``None`` meaning unboundedly many."""
    if a.include is None and b.include is None:
        return None
    if a.include is not None and b.include is not None:
        return a.include & b.include
    finite, other = (a, b) if a.include is not None else (b, a)
    assert finite.include is not None
    return finite.include - other.exclude
