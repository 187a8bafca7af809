"""The trees YAML is composed into, and how scalars resolve: shared by both loaders of :mod:`desched.reading.yamlsrc`.

:class:`YMap` and :class:`YSeq` are plain ``dict``/``list`` subclasses that remember where every key and value
stands in the source (1-based line and column), with the limits every loader enforces (:data:`MAX_DEPTH`,
:data:`MAX_EXPANDED_NODES`, spent from a :class:`NodeBudget`). Scalars resolve as YAML 1.1 does in go-yaml v2, which
upstream uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from desched.patterns import lazy

__all__ = [
    "BOOLEANS",
    "CACHE_LIMIT",
    "GO_FLOAT",
    "MAX_DEPTH",
    "MAX_EXPANDED_NODES",
    "PLAIN_CACHE",
    "NodeBudget",
    "Position",
    "YMap",
    "YSeq",
    "from_json",
    "key_text",
    "plain_scalar",
    "resolve_plain",
    "to_float",
    "to_int",
]

_TAG = "tag:yaml.org,2002:"
MAX_DEPTH = 256
# YAML nodes (scalars, keys included, and collections; an alias counts the nodes it stands for) one file may hold,
# with the YAML texts it holds (policies and chart values in ConfigMaps and wrappers): that many nodes take at most
# about 400 MiB as trees (empty mappings, the costliest node), 2.5 s to compose on one core.
MAX_EXPANDED_NODES = 750_000

Position = tuple[int, int]


class NodeBudget:
    """The YAML nodes still allowed for one file: every text read for it (the file, then the YAML texts it holds)
    spends from the same budget, so that :data:`MAX_EXPANDED_NODES` bounds the whole reading."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int = MAX_EXPANDED_NODES) -> None:
        self.limit = limit
        self.left = limit


class YMap(dict[str, Any]):
    """A mapping that knows where it, its keys and its values stand in the source."""

    __slots__ = ("column", "duplicates", "key_pos", "line", "nested_duplicates", "styles", "value_pos")

    def __init__(self, line: int, column: int) -> None:
        super().__init__()
        self.line = line
        self.column = column
        self.key_pos: dict[str, Position] = {}
        self.value_pos: dict[str, Position] = {}
        self.styles: dict[str, str] = {}
        self.duplicates: list[tuple[str, Position]] = []
        # On a document's root: how many duplicate keys the whole document holds; -1 elsewhere (unknown).
        self.nested_duplicates = -1


class YSeq(list[Any]):
    """A sequence that knows where it and each item stand in the source."""

    __slots__ = ("column", "item_pos", "line", "styles")

    def __init__(self, line: int, column: int) -> None:
        super().__init__()
        self.line = line
        self.column = column
        self.item_pos: list[Position] = []
        self.styles: list[str] = []


def from_json(value: Any) -> Any:
    """A decoded JSON value (an object an admission request carries) as the tree the rules read. It has no text, so
    every position is (1, 1) and findings on it are placed by their JSON pointer; JSON has no duplicate keys."""
    if isinstance(value, dict):
        mapping = YMap(1, 1)
        for key, item in value.items():
            mapping[str(key)] = from_json(item)
            mapping.key_pos[str(key)] = mapping.value_pos[str(key)] = (1, 1)
            mapping.styles[str(key)] = ""
        mapping.nested_duplicates = 0
        return mapping
    if isinstance(value, list):
        sequence = YSeq(1, 1)
        for item in value:
            sequence.append(from_json(item))
            sequence.item_pos.append((1, 1))
            sequence.styles.append("")
        return sequence
    return value


BOOLEANS = {
    "yes": True, "Yes": True, "YES": True, "true": True, "True": True, "TRUE": True,
    "on": True, "On": True, "ON": True,
    "no": False, "No": False, "NO": False, "false": False, "False": False, "FALSE": False,
    "off": False, "Off": False, "OFF": False,
}  # fmt: skip
_NULL = {"", "~", "null", "Null", "NULL"}


# The YAML 1.1 implicit types (https://yaml.org/type/) a plain scalar resolves to, keyed by its first character, in
# the order PyYAML's SafeLoader tries them (its ``Resolver.yaml_implicit_resolvers``, which
# tests/kernel/reading/test_yamlsrc.py holds this table equal to). Written here so that the plain block YAML the fast
# scanner reads never imports PyYAML, whose import is a third of a one-file lint; each pattern is compiled when a
# scalar first needs it (a policy's scalars never need the timestamp's, the longest).
def _implicit_resolvers() -> dict[str, list[tuple[str, Callable[[], re.Pattern[str]]]]]:
    digits = "0123456789"
    types = [
        ("bool", "yYnNtTfFoO", r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"),
        (
            "float",
            "-+" + digits + ".",
            r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
            r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        ),
        (
            "int",
            "-+" + digits,
            r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
            r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+",
        ),
        ("merge", "<", r"<<"),
        ("null", "~nN", r"~|null|Null|NULL|"),
        (
            "timestamp",
            digits,
            r"[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
            r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9]"
            r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?",
        ),
        ("value", "=", r"="),
        ("yaml", "!&*", r"!|&|\*"),
    ]
    table: dict[str, list[tuple[str, Callable[[], re.Pattern[str]]]]] = {}
    for kind, firsts, pattern in types:
        implicit = lazy(f"^(?:{pattern})$")
        for first in [*firsts, *([""] if kind == "null" else [])]:
            table.setdefault(first, []).append((_TAG + kind, implicit))
    return table


_RESOLVERS = _implicit_resolvers()
# go-yaml (which upstream uses) also reads exponent forms without a dot, such as 1e3, as floats.
GO_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")


def to_int(text: str) -> int:
    """A YAML 1.1 integer (``0x1f``, ``017``, ``1_000``); raises ``ValueError``."""
    value = text.replace("_", "")
    sign = -1 if value.startswith("-") else 1
    value = value.lstrip("+-")
    if value == "0":
        return 0
    if value.startswith("0b"):
        return sign * int(value[2:], 2)
    if value.startswith("0x"):
        return sign * int(value[2:], 16)
    if value.startswith("0o"):
        return sign * int(value[2:], 8)
    if value.startswith("0"):
        return sign * int(value, 8)
    return sign * int(value)


def to_float(text: str) -> float:
    """A YAML float (``.inf``, ``1.5e3``); raises ``ValueError``."""
    value = text.replace("_", "").lower()
    sign = -1.0 if value.startswith("-") else 1.0
    value = value.lstrip("+-")
    if value == ".inf":
        return sign * float("inf")
    if value == ".nan":
        return float("nan")
    return sign * float(value)


def resolve_plain(text: str) -> Any:
    """Resolve an untagged plain scalar the way YAML 1.1 (PyYAML, go-yaml v2) does."""
    # What the table's patterns would find for the commonest scalars, without compiling them: the words of the bool
    # and null types, and a decimal integer (which no type tried before int matches).
    if text in BOOLEANS:
        return BOOLEANS[text]
    if text in _NULL:
        return None
    if text.isdigit() and text.isascii() and (text[0] != "0" or text == "0"):
        return int(text)
    for tag, pattern in _RESOLVERS.get(text[:1] if text else "", ()):
        if not pattern().match(text):
            continue
        kind = tag[len(_TAG) :]
        if ":" in text:
            return text  # YAML 1.1 base-60 numbers; go-yaml, which upstream uses, reads them as strings
        if kind == "null":
            return None
        if kind == "bool":
            return BOOLEANS[text]
        if kind == "int":
            try:
                return to_int(text)
            except ValueError:
                return text
        if kind == "float":
            try:
                return to_float(text)
            except ValueError:
                return text
        return text  # timestamps, merge keys and values stay strings, as in a JSON round trip
    if GO_FLOAT.match(text):
        return float(text)
    return None if text in _NULL else text


PLAIN_CACHE: dict[str, Any] = {}  # resolved plain scalars; keys and small values repeat across files
CACHE_LIMIT = 50_000  # entries, in this cache and in any other of the loaders'


def plain_scalar(text: str) -> Any:
    """An untagged plain scalar's value, remembered in :data:`PLAIN_CACHE` when short (and while it has room)."""
    try:
        return PLAIN_CACHE[text]
    except KeyError:
        value = resolve_plain(text)
        if len(PLAIN_CACHE) < CACHE_LIMIT and len(text) < 64:
            PLAIN_CACHE[text] = value
        return value


def key_text(value: Any) -> str:
    """Map keys become strings, as in Kubernetes' YAML-to-JSON conversion."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError("collection used as a mapping key")
