"""The nesting depth of a decoded JSON value.

Contract: :func:`too_deep` says whether the arrays and objects of ``value`` (what :func:`json.loads` returned) nest
deeper than ``limit`` levels. It never recurses: it walks the containers level by level and stops past the limit, so its
cost is at most one visit of each container's items; given the ``text`` the value was decoded from, it walks nothing
when the text holds at most ``limit`` opening brackets (strings included: every array and object opens with one, so
nothing can nest deeper), which is what an admission request's body mostly holds (a count costs a fraction of a
walk). Decoding itself is safe from any depth (the C decoder raises RecursionError past the interpreter's recursion
limit, which the caller reports the same way), and costs far less than scanning the text for brackets outside strings
did.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "too_deep"]

MAX_DEPTH = 100  # a Kubernetes object nests about 15 levels; the AdmissionReview adds 3


def too_deep(value: Any, limit: int = MAX_DEPTH, text: bytes | None = None) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` levels in ``value``, decoded from ``text`` when given
    (see the module contract)."""
    if text is not None and text.count(b"[") + text.count(b"{") <= limit:
        return False
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        if not level:
            return False
        # One level at a time, the containers only: a comprehension per level, no stack of (item, depth) pairs.
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return bool(level)
