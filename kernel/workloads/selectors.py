"""Label selector *matching* with Kubernetes semantics (``metav1.LabelSelectorAsSelector`` + ``Selector.Matches``).

Validation lives in :mod:`desched.validation.labels`; this module only decides whether a set of labels matches.

* ``matchLabels`` and ``matchExpressions`` are ANDed; each ``matchLabels`` pair is an equality requirement.
* ``In``: the key is present and its value is listed. ``NotIn``: the key is absent or its value is not listed.
  ``Exists``: the key is present. ``DoesNotExist``: the key is absent.
* An empty selector (``{}``, or both fields empty) matches everything (``labels.Everything()``).
* A nil selector (``None``) matches nothing (``labels.Nothing()``), unless the caller says otherwise (``nil_matches``):
  several descheduler args treat an absent selector as "no constraint".
* A selector that ``LabelSelectorAsSelector`` rejects (see ``label_selector_error``), or that is not a mapping at
  all, matches nothing: upstream either fails to build it or skips it.

Compile once with :func:`compile_selector` when one selector is matched against many label sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desched.validation.core import go_key
from desched.validation.labels import label_selector_error
from desched.versions import NEWEST as _NEWEST

__all__ = ["Selector", "compile_selector", "label_map", "matches"]


def label_map(value: Any) -> dict[str, str]:
    """The string-keyed, string-valued pairs of a ``labels``/``annotations`` mapping; anything else is dropped."""
    if not isinstance(value, dict):
        return {}
    return {key: item for key, item in value.items() if isinstance(key, str) and isinstance(item, str)}


class Selector:
    """A compiled label selector. ``kind`` is ``nil``, ``empty``, ``invalid`` or ``normal``.

    ``match_labels`` keeps the equality pairs (usable as index keys); ``expressions`` are ``(key, operator,
    values)`` with ``operator`` one of ``In``, ``NotIn``, ``Exists``, ``DoesNotExist``.
    """

    __slots__ = ("expressions", "kind", "match_labels", "nil_matches")

    def __init__(
        self,
        kind: str,
        match_labels: tuple[tuple[str, str], ...] = (),
        expressions: tuple[tuple[str, str, frozenset[str]], ...] = (),
        nil_matches: bool = False,
    ) -> None:
        self.kind = kind
        self.match_labels = match_labels
        self.expressions = expressions
        self.nil_matches = nil_matches

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement."""
        kind = self.kind
        if kind == "empty":
            return True
        if kind == "nil":
            return self.nil_matches
        if kind == "invalid":
            return False
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        for key, operator, values in self.expressions:
            present = key in labels
            if operator == "In":
                if not present or labels[key] not in values:
                    return False
            elif operator == "NotIn":
                if present and labels[key] in values:
                    return False
            elif operator == "Exists":
                if not present:
                    return False
            elif present:  # DoesNotExist
                return False
        return True

    def __repr__(self) -> str:
        return f"Selector({self.kind}, {self.match_labels!r}, {self.expressions!r})"


def compile_selector(selector: Any, *, nil_matches: bool, target: int = _NEWEST) -> Selector:
    """Compile a decoded ``metav1.LabelSelector`` (see the module docstring for the semantics)."""
    if selector is None:
        return Selector("nil", nil_matches=nil_matches)
    if not isinstance(selector, dict) or label_selector_error(selector, target) is not None:
        return Selector("invalid")
    raw_labels = selector.get("matchLabels")
    raw_expressions = selector.get("matchExpressions")
    pairs: list[tuple[str, str]] = []
    if isinstance(raw_labels, dict):
        for raw_key, raw_value in raw_labels.items():
            if raw_value is not None and not isinstance(raw_value, str):
                return Selector("invalid")  # Go's decoder rejects a non-string label value
            pairs.append((go_key(raw_key), raw_value or ""))
    expressions: list[tuple[str, str, frozenset[str]]] = []
    if isinstance(raw_expressions, list):
        for expression in raw_expressions:
            if not isinstance(expression, dict):
                return Selector("invalid")
            values = expression.get("values")
            listed = frozenset(value for value in values if isinstance(value, str)) if isinstance(values, list) else ()
            expressions.append((str(expression.get("key")), str(expression.get("operator")), frozenset(listed)))
    if not pairs and not expressions:
        return Selector("empty")
    return Selector("normal", tuple(pairs), tuple(expressions))


def matches(selector: Any, labels: Mapping[str, str], *, nil_matches: bool, target: int = _NEWEST) -> bool:
    """Whether ``labels`` match the decoded ``selector`` with Kubernetes semantics.

    >>> matches({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}, {}, nil_matches=False)
    True
    >>> matches(None, {"app": "web"}, nil_matches=False)
    False
    """
    return compile_selector(selector, nil_matches=nil_matches, target=target).matches(labels)
