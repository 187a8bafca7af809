"""The vocabulary policy shapes are written in: Go types as seen through JSON, and the argument types plugins share.

A :class:`Type` is a ``kind`` plus bounds, an item/value type or struct fields; a :class:`Field` carries the release
that introduced it (``since``) and, when it was removed, the last release that had it (``until``). ``strict`` marks
structs upstream decodes with unknown-field errors (plugin args); elsewhere upstream drops unknown keys silently. The
policy envelope (:mod:`desched.api.spec`) and every plugin's args (:mod:`desched.plugins`) are written with it;
the structural checker and the JSON Schemas read them.
"""

from types import MappingProxyType
from typing import NamedTuple

__all__ = [
    "ANY",
    "BOOL",
    "DURATION",
    "EVICTABLE_NAMESPACES",
    "INT",
    "INT32_T",
    "INT64_T",
    "LABEL_SELECTOR",
    "LABEL_SELECTOR_FIELD",
    "NAMESPACES",
    "NAMESPACES_FIELD",
    "NUMBER",
    "PRIORITY_THRESHOLD",
    "STRING",
    "STRINGS",
    "THRESHOLDS",
    "UINT",
    "Field",
    "Kind",
    "Type",
    "args_struct",
    "field",
    "list_of",
    "map_of",
    "struct",
]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
UINT64 = (0, 2**64 - 1)


class Kind:
    STRING = "string"
    BOOL = "boolean"
    INT = "integer"
    NUMBER = "number"
    DURATION = "duration"
    LIST = "array"
    MAP = "map"
    STRUCT = "object"
    ANY = "any"


_NO_FIELDS: "MappingProxyType[str, Field]" = MappingProxyType({})


class Type(NamedTuple):
    """A Go type as seen through JSON: ``kind`` plus bounds, item/value type or struct fields."""

    kind: str
    name: str = ""
    bounds: tuple[int, int] | None = None
    item: "Type | None" = None
    fields: "MappingProxyType[str, Field]" = _NO_FIELDS
    strict: bool = False
    description: str = ""


class Field(NamedTuple):
    type: Type
    since: int = 27
    until: int | None = None
    description: str = ""

    def exists_in(self, minor: int) -> bool:
        return self.since <= minor and (self.until is None or minor <= self.until)


def field(type_: Type, description: str = "", since: int = 27, until: int | None = None) -> Field:
    """A field of ``type_`` that exists from release ``since`` to ``until`` (inclusive; ``None``: still there)."""
    return Field(type_, since, until, description)


STRING = Type(Kind.STRING)
BOOL = Type(Kind.BOOL)
INT = Type(Kind.INT, bounds=INT64)
INT32_T = Type(Kind.INT, name="int32", bounds=INT32)
INT64_T = Type(Kind.INT, name="int64", bounds=INT64)
UINT = Type(Kind.INT, name="uint", bounds=UINT64)
NUMBER = Type(Kind.NUMBER)
DURATION = Type(Kind.DURATION, description='A Go duration such as "5m" or "1h30m".')
ANY = Type(Kind.ANY)


def list_of(item: Type) -> Type:
    return Type(Kind.LIST, item=item)


def map_of(value: Type) -> Type:
    return Type(Kind.MAP, item=value)


def struct(name: str, strict: bool, /, **fields: Field) -> Type:
    """A Go struct called ``name``; ``strict`` when upstream decodes it with unknown-field errors."""
    return Type(Kind.STRUCT, name=name, fields=MappingProxyType(fields), strict=strict)


def args_struct(name: str, /, **fields: Field) -> Type:
    """Plugin args: strict, and TypeMeta is inlined, so ``apiVersion`` and ``kind`` are accepted."""
    return struct(
        name,
        True,
        apiVersion=field(STRING, "Ignored TypeMeta field."),
        kind=field(STRING, "Ignored TypeMeta field."),
        **fields,
    )


STRINGS = list_of(STRING)

# --- argument types several plugins share (docs/policy-api.md); strict because they live inside args ----------

NAMESPACES = struct(
    "Namespaces",
    True,
    include=field(STRINGS, "Namespaces to include."),
    exclude=field(STRINGS, "Namespaces to exclude."),
)
LABEL_SELECTOR = struct(
    "LabelSelector",
    True,
    matchLabels=field(map_of(STRING), "Labels the object must carry."),
    matchExpressions=field(
        list_of(
            struct(
                "LabelSelectorRequirement",
                True,
                key=field(STRING),
                operator=field(STRING, "In, NotIn, Exists or DoesNotExist."),
                values=field(STRINGS),
            )
        ),
        "Set-based requirements.",
    ),
)
PRIORITY_THRESHOLD = struct(
    "PriorityThreshold",
    True,
    value=field(INT32_T, "Priority value; pods at or above it are not evicted."),
    name=field(STRING, "PriorityClass whose value is the threshold."),
)
THRESHOLDS = map_of(NUMBER)

NAMESPACES_FIELD = field(NAMESPACES, "Namespaces the plugin considers: include or exclude, not both.")
LABEL_SELECTOR_FIELD = field(LABEL_SELECTOR, "Only pods whose labels match are considered.")
EVICTABLE_NAMESPACES = field(NAMESPACES, "Namespaces whose pods may be evicted; only exclude is supported.")
