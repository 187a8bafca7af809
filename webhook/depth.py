"""The nesting depth of a decoded JSON value.

Contract: :func:`too_deep` says whether the arrays and objects of ``value`` (what :func:`json.loads` returned) nest
deeper than ``limit`` levels. It never recurses: it walks the containers with a stack and stops at the first one past
the limit, so its cost is at most one visit of each container, scalars never looked at. Decoding itself is safe from
any depth (the C decoder raises RecursionError past the interpreter's recursion limit, which the caller reports the
same way), and costs far less than scanning the text for brackets outside strings did.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "too_deep"]

MAX_DEPTH = 100  # a Kubernetes object nests about 15 levels; the AdmissionReview adds 3


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` levels in ``value`` (see the module contract)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
