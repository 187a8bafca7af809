"""What Go templates, as Helm 3 runs them, make of values: their truth (:func:`truthy`), how they print a value
(:func:`go_text`), and ``tpl`` over the strings of a tree (:func:`tpl_strings`; docs/helm-chart.md, section 1.4).

``tpl`` is modelled for the actions a values file can mean with the data Helm hands the template: a field chain on
``.Release``, ``.Chart`` or ``.Values`` (``$`` for the root too), comments, and trim markers. Any other action (a
function, a pipeline, a variable, a control structure), and a field whose value desched does not know, makes the
string :data:`UNKNOWN`: its value is known only once Helm renders it, so nothing may be judged of it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from desched.tree import Path

__all__ = ["UNKNOWN", "go_text", "holds_action", "tpl_strings", "truthy"]


class _Unknown:
    """The value of a string ``tpl`` turns into something desched cannot compute."""

    def __repr__(self) -> str:
        return "UNKNOWN"


#: What :func:`tpl_strings` leaves where it cannot evaluate a template.
UNKNOWN: Any = _Unknown()

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_FIELD = re.compile(r"\$?((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_COMMENT = re.compile(r"/\*.*\*/", re.DOTALL)


def truthy(value: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings, maps and lists are false."""
    return (
        value is not None
        and value is not False
        and value != 0
        and not (isinstance(value, (str, Mapping, list)) and not value)
    )


def go_text(value: Any) -> str:
    """A value as a Go template prints it: Helm reads YAML numbers as float64 (``3``, not ``3.0``), booleans as
    ``true``/``false``, a missing value as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def tpl(text: str, data: Mapping[str, Any]) -> Any:
    """``text`` rendered as a template over ``data`` (``Values``, ``Release``, ``Chart``: what desched knows of each;
    a key it does not know is absent), or :data:`UNKNOWN`."""
    out: list[str] = []
    end = 0
    trim_next = False
    for match in _ACTION.finditer(text):
        before = text[end : match.start()]
        before = before.lstrip() if trim_next else before
        out.append(before.rstrip() if match[1] else before)
        trim_next = bool(match[3])
        action = match[2].strip()
        if not _COMMENT.fullmatch(action):
            value = _field(action, data)
            if value is UNKNOWN or isinstance(value, (Mapping, list)):
                return UNKNOWN  # Go prints a map or list its own way (map[a:1]): not a value to judge
            out.append(go_text(value))
        end = match.end()
    rest = text[end:].lstrip() if trim_next else text[end:]
    if "{{" in rest:
        return UNKNOWN  # an action left open: Helm fails to parse it
    return "".join(out) + rest


def _field(action: str, data: Mapping[str, Any]) -> Any:
    """The value a field chain names in ``data``; :data:`UNKNOWN` for any other action or an unknown field."""
    found = _FIELD.fullmatch(action)
    if found is None:
        return UNKNOWN
    value: Any = data
    parts = found[1].split(".")[1:]
    for index, part in enumerate(parts):
        if not isinstance(value, Mapping):
            return UNKNOWN  # Go fails on a field of nil or of a scalar: Helm refuses to render
        if part not in value:
            if value is data or value is data.get("Release") or value is data.get("Chart"):
                return UNKNOWN  # a built-in object's field desched does not know
            return None if index == len(parts) - 1 else UNKNOWN  # a missing value, or a field of it: Helm fails
        value = value[part]
    return value


def holds_action(tree: Any) -> bool:
    """Whether a string of ``tree`` holds a template action (``{{``): only then has ``tpl`` anything to do."""
    if isinstance(tree, str):
        return "{{" in tree
    if isinstance(tree, Mapping):
        return any(holds_action(item) for item in tree.values())
    return isinstance(tree, list) and any(holds_action(item) for item in tree)


def tpl_strings(tree: Any, data: Mapping[str, Any], path: Path = ()) -> tuple[Any, list[Path]]:
    """``tree`` with every string that holds a template action rendered by ``tpl`` over ``data``, and the paths of
    those whose value is :data:`UNKNOWN` (left as written). ``tree`` is not changed: a map or list holding a
    rendered string is a shallow copy (keeping its positions), the rest is shared."""
    if isinstance(tree, str):
        if "{{" not in tree:
            return tree, []
        value = tpl(tree, data)
        return (tree, [path]) if value is UNKNOWN else (value, [])
    if not isinstance(tree, (Mapping, list)):
        return tree, []
    unknown: list[Path] = []
    out: Any = tree
    items = tree.items() if isinstance(tree, Mapping) else enumerate(tree)
    for key, item in list(items):
        new, missed = tpl_strings(item, data, (*path, key))
        unknown.extend(missed)
        if new is not item:
            out = copy.copy(tree) if out is tree else out
            out[key] = new
    return out, unknown
