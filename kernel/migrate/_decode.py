"""Read a v1alpha1 document the way upstream's decoder does, into clean plain data.

Upstream decodes v1alpha1 non-strictly (docs/policy-api.md#6-v1alpha1): unknown or miscased keys are dropped, ``null``
leaves the zero value (absent), and a value of the wrong JSON type fails the whole decode. :class:`Decoder` walks the
document along the v1alpha1 type in ``desched.api.spec`` and returns the same tree with only known, well-typed
fields, keeping the original mapping keys (so that paths into the source stay exact). In strict mode a type error raises
:class:`~desched.migrate.convert.ConversionError`; otherwise the bad value is read as absent and a ``dropped`` note says
so. Unknown keys are dropped with a note in both modes, as upstream drops them silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from desched.api.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2
from desched.api.types import Field, Kind, Type
from desched.tree import Path
from desched.validation.core import path_key

__all__ = ["ABSENT", "POLICY", "Decoder", "dotted"]


#: Returned for a value that is absent, ``null`` or (non-strict) dropped.
ABSENT: Final = object()

# Master briefly gave v1alpha1 a total limit; no release read it, but policies written against the docs may carry it,
# and the default mode carries it over (docs/policy-api.md#61-top-level).
POLICY: Final = POLICY_V1ALPHA1._replace(
    fields=MappingProxyType(
        {
            **POLICY_V1ALPHA1.fields,
            "maxNoOfPodsToEvictTotal": Field(POLICY_V1ALPHA2.fields["maxNoOfPodsToEvictTotal"].type),
        }
    )
)


def dotted(path: Path) -> str:
    """``("strategies", "X", "params", "states", 0)`` -> ``strategies.X.params.states[0]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(document)"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _go_type(typ: Type) -> str:
    kind = typ.kind
    if kind == Kind.LIST and typ.item is not None:
        return "[]" + _go_type(typ.item)
    if kind == Kind.MAP and typ.item is not None:
        return "map[string]" + _go_type(typ.item)
    if typ.name:
        return typ.name
    return {Kind.BOOL: "bool", Kind.STRING: "string", Kind.INT: "int", Kind.NUMBER: "float64"}.get(kind, kind)


def _zero(typ: Type) -> Any:
    """What Go leaves in a slice element or map value decoded from ``null``."""
    return {
        Kind.BOOL: False,
        Kind.STRING: "",
        Kind.INT: 0,
        Kind.NUMBER: 0,
        Kind.STRUCT: {},
    }.get(typ.kind, ABSENT)


class Decoder:
    """Decode along a spec type; ``fail`` raises (strict), ``drop`` records a note (non-strict, and unknown keys)."""

    __slots__ = ("drop", "fail", "strict")

    def __init__(self, strict: bool, fail: Callable[[str, Path], None], drop: Callable[[str, Path], None]) -> None:
        self.strict = strict
        self.fail = fail
        self.drop = drop

    def decode(self, value: Any, typ: Type, path: Path) -> Any:
        """The clean value, or :data:`ABSENT` for ``null`` and for dropped values."""
        if value is None:
            return ABSENT
        return self._value(value, typ, path)

    def _bad(self, value: Any, typ: Type, path: Path, why: str = "") -> Any:
        reason = why or f"cannot decode {_json_type(value)} into {_go_type(typ)}"
        if self.strict:
            self.fail(f"failed to decode {dotted(path)}: {reason}", path)
        self.drop(f"{dotted(path)} was dropped: {reason}", path)
        return ABSENT

    def _value(self, value: Any, typ: Type, path: Path) -> Any:
        kind = typ.kind
        if kind == Kind.STRUCT:
            return self._struct(value, typ, path)
        if kind == Kind.MAP:
            if not isinstance(value, Mapping) or typ.item is None:
                return self._bad(value, typ, path)
            table: dict[Any, Any] = {}
            for key, item in value.items():
                decoded = self._element(item, typ.item, (*path, path_key(key)))
                if decoded is not ABSENT:
                    table[key] = decoded
            return table
        if kind == Kind.LIST:
            if not isinstance(value, (list, tuple)) or typ.item is None:
                return self._bad(value, typ, path)
            elements = []
            for index, item in enumerate(value):
                decoded = self._element(item, typ.item, (*path, index))
                if decoded is not ABSENT:
                    elements.append(decoded)
            return elements
        if kind == Kind.BOOL:
            return value if isinstance(value, bool) else self._bad(value, typ, path)
        if kind == Kind.STRING:
            return value if isinstance(value, str) else self._bad(value, typ, path)
        if kind == Kind.INT:
            return self._integer(value, typ, path)
        if kind == Kind.NUMBER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return self._bad(value, typ, path)
            if isinstance(value, float) and not math.isfinite(value):
                return self._bad(value, typ, path, f"{value} is not a JSON number")
            return value
        return value

    def _element(self, item: Any, typ: Type, path: Path) -> Any:
        if item is None:
            return _zero(typ)
        return self._value(item, typ, path)

    def _integer(self, value: Any, typ: Type, path: Path) -> Any:
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            number = int(value)
        if number is None:
            return self._bad(value, typ, path)
        if typ.bounds is not None and not typ.bounds[0] <= number <= typ.bounds[1]:
            return self._bad(value, typ, path, f"{number} overflows {_go_type(typ)}")
        return number

    def _struct(self, value: Any, typ: Type, path: Path) -> Any:
        if not isinstance(value, Mapping):
            return self._bad(value, typ, path)
        fields: dict[str, Any] = {}
        for key, item in value.items():
            field = typ.fields.get(key) if isinstance(key, str) else None
            sub = (*path, path_key(key))
            if field is None:
                self.drop(f"{dotted(sub)} was dropped: not a descheduler/v1alpha1 field (upstream ignores it)", sub)
                continue
            decoded = self.decode(item, field.type, sub)
            if decoded is not ABSENT:
                fields[key] = decoded
        return fields
