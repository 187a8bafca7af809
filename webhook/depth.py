"""The nesting depth of a JSON text, measured before it is parsed.

Contract: :func:`too_deep` says whether the arrays and objects of ``body`` nest deeper than ``limit`` levels, counting
the brackets outside strings. It never parses or recurses: it drops escaped backslashes and quotes, then the strings
with one regular expression, keeps
the brackets, and removes innermost pairs ``limit`` times at most, stopping as soon as ``limit + 1`` opening brackets
follow each other, so its cost is at most a few scans of the body per level. Brackets that do not pair (not JSON) do
not count; the parser reports those.
"""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "too_deep"]

MAX_DEPTH = 100  # a Kubernetes object nests about 15 levels; the AdmissionReview adds 3
_STRING = re.compile(rb'"[^"]*"')  # once escaped backslashes and quotes are gone, a string has no quote inside
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_OTHERS = bytes(set(range(256)) - set(b"[]{}"))


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` levels in ``body`` (see the module contract)."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False  # not enough opening brackets, in strings or not, to nest that deep (a policy text: no scan)
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")  # C-speed; the regex then never backtracks
    brackets = _STRING.sub(b"", unescaped).translate(_BRACKETS, _OTHERS)
    run = b"[" * (limit + 1)
    for _ in range(limit):
        if run in brackets:
            return True
        inner = brackets.replace(b"[]", b"")
        if inner == brackets:
            return False
        brackets = inner
    return b"[]" in brackets
