"""Check a rewritten file against what it must hold, on composed nodes (libyaml's C composer, no Python loader).

:func:`verified` parses the new text and compares its documents with those of the old one: where a substitution is
planned (a converted policy, a ConfigMap key's new text, the chart's ``deschedulerPolicyAPIVersion``) the new node
must read as that data, with scalars resolved the way :mod:`desched.reading.yamlsrc` resolves them; everywhere else the
new node must be the old node (same tags, values and order). :func:`same_data` is the equality of plain YAML data that
both this check and the plan (which keeps what did not change) use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import yaml

from desched.migrate._splice import Path, compose_all
from desched.reading.yamlsrc import BOOLEANS, GO_FLOAT, key_text, to_float, to_int

__all__ = ["same_data", "scalar_value", "verified"]

_TAG = "tag:yaml.org,2002:"
_STR = _TAG + "str"


def scalar_value(node: Any) -> Any:
    """The value of a composed scalar node, as :func:`desched.reading.yamlsrc.load_all` reads it."""
    tag: str = node.tag or ""
    text: str = node.value
    kind = tag[len(_TAG) :] if tag.startswith(_TAG) else ""
    plain = not node.style
    if kind == "str":
        return float(text) if plain and GO_FLOAT.match(text) else text
    if kind == "null":
        return None
    if kind == "bool":
        return BOOLEANS.get(text, text)
    if kind in ("int", "float") and not (plain and ":" in text):
        try:
            return to_int(text) if kind == "int" else to_float(text)
        except ValueError:
            return text
    return text


def _key(node: Any) -> str | None:
    if not isinstance(node, yaml.ScalarNode):
        return None
    return key_text(scalar_value(node))


def same_data(left: Any, right: Any) -> bool:
    """Equal as YAML data: mappings by key set, ``True`` is not ``1``, NaN equals NaN."""
    if isinstance(left, dict):
        return (
            isinstance(right, dict)
            and len(left) == len(right)
            and all(key in right and same_data(value, right[key]) for key, value in left.items())
        )
    if isinstance(left, list):
        return isinstance(right, list) and len(left) == len(right) and all(map(same_data, left, right))
    return _same_scalar(left, right)


def _same_scalar(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    return bool(left == right)


def _reads_as(node: Any, value: Any) -> bool:
    """True when ``node`` holds exactly ``value`` (plain data; keys compared as strings)."""
    if isinstance(value, Mapping):
        if not isinstance(node, yaml.MappingNode) or len(node.value) != len(value):
            return False
        seen: set[str] = set()
        for key_node, item in node.value:
            plain_str = (
                key_node.tag == _STR and isinstance(key_node, yaml.ScalarNode) and not GO_FLOAT.match(key_node.value)
            )
            key = key_node.value if plain_str else _key(key_node)
            if key is None or key in seen or key not in value or not _reads_as(item, value[key]):
                return False
            seen.add(key)
        return True
    if isinstance(value, list):
        return (
            isinstance(node, yaml.SequenceNode)
            and len(node.value) == len(value)
            and all(_reads_as(item, expected) for item, expected in zip(node.value, value, strict=True))
        )
    if not isinstance(node, yaml.ScalarNode):
        return False
    if node.tag == _STR and isinstance(value, str) and (node.style or not GO_FLOAT.match(value)):
        return bool(node.value == value)
    return _same_scalar(scalar_value(node), value)


def _same_node(new: Any, old: Any, seen: set[tuple[int, int]]) -> bool:
    if (id(new), id(old)) in seen:
        return True
    seen.add((id(new), id(old)))
    if type(new) is not type(old) or new.tag != old.tag:
        return False
    if isinstance(new, yaml.ScalarNode):
        return bool(new.value == old.value)
    if len(new.value) != len(old.value):
        return False
    if isinstance(new, yaml.MappingNode):
        return all(
            _same_node(new_key, old_key, seen) and _same_node(new_value, old_value, seen)
            for (new_key, new_value), (old_key, old_value) in zip(new.value, old.value, strict=True)
        )
    return all(_same_node(a, b, seen) for a, b in zip(new.value, old.value, strict=True))


def _walk(new: Any, old: Any, path: Path, subs: Mapping[Path, Any], prefixes: set[Path]) -> bool:
    if path in subs:
        return _reads_as(new, subs[path])
    if path not in prefixes:
        return old is not None and _same_node(new, old, set())
    if isinstance(old, yaml.MappingNode):
        if not isinstance(new, yaml.MappingNode):
            return False
        olds = {_key(key): value for key, value in old.value}
        news: dict[str, Any] = {}
        for key_node, value in new.value:
            key = _key(key_node)
            if key is None or key in news:
                return False
            news[key] = value
        if len(olds) != len(old.value):
            return False
        added = {sub[-1] for sub in subs if len(sub) == len(path) + 1 and sub[: len(path)] == path}
        if set(news) != set(olds) | added:
            return False
        return all(_walk(value, olds.get(key), (*path, key), subs, prefixes) for key, value in news.items())
    if isinstance(old, yaml.SequenceNode):
        return (
            isinstance(new, yaml.SequenceNode)
            and len(new.value) == len(old.value)
            and all(
                _walk(a, b, (*path, i), subs, prefixes)
                for i, (a, b) in enumerate(zip(new.value, old.value, strict=True))
            )
        )
    return False


def verified(text: str, old: list[Any], subs: Mapping[Path, Any]) -> bool:
    """True when the documents of ``text`` are documents ``old`` with the data at each path of ``subs`` replaced.

    Paths start with the document index, then mapping keys (as strings) and sequence indexes.
    """
    try:
        new = compose_all(text)
    except yaml.YAMLError:
        return False
    if len(new) != len(old):
        return False
    prefixes = {path[:stop] for path in subs for stop in range(1, len(path))}
    return all(_walk(a, b, (index,), subs, prefixes) for index, (a, b) in enumerate(zip(new, old, strict=True)))
