"""Structural check of a policy against :mod:`desched.api.spec`: unknown keys, JSON types, release gating.

:func:`check_structure` returns every :class:`StructureProblem` of a document in source order. Each problem has a
``code``: ``unknown-key`` (DS003), ``wrong-type`` (DS004) or ``version`` (DS006). Plugin args are checked against
their plugin's args type, strictly, as upstream decodes them; args of plugins the registry checked against (upstream's
by default) does not hold are left alone (DS005 reports the name).
"""

import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from desched import versions
from desched.api.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2
from desched.api.types import Kind, Type
from desched.patterns import lazy
from desched.plugins import REGISTRY, Plugin
from desched.tree import Path

__all__ = ["StructureProblem", "check_structure", "closest", "describe"]

_DURATION = lazy(r"[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+|[-+]?0")


class StructureProblem(NamedTuple):
    code: str
    path: Path
    message: str
    at_key: bool = False
    suggestion: str | None = None  #: for an unknown key, the known key it is closest to


def describe(value: Any) -> str:
    """A short JSON-ish name for the type of ``value``, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def _expected(type_: Type) -> str:
    kind = type_.kind
    if kind == Kind.INT:
        return f"an integer ({type_.name})" if type_.name else "an integer"
    if kind == Kind.LIST:
        return "a list"
    if kind in (Kind.MAP, Kind.STRUCT):
        return "a mapping"
    if kind == Kind.DURATION:
        return 'a duration string such as "5m"'
    return {"string": "a string", "boolean": "a boolean", "number": "a number"}.get(kind, kind)


def closest(word: str, choices: list[str]) -> str | None:
    """The choice ``word`` most likely meant: same letters in another case first, then a close spelling."""
    word = str(word)
    lowered = word.lower().replace("_", "").replace("-", "")
    for choice in choices:
        if choice.lower() == lowered:
            return choice
    import difflib  # only needed when something is misspelt

    matches = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
    if not matches:
        matches = difflib.get_close_matches(lowered, [c.lower() for c in choices], n=1, cutoff=0.75)
        if matches:
            return next(c for c in choices if c.lower() == matches[0])
    return matches[0] if matches else None


def _all_versions_fields(type_: Type) -> list[str]:
    return sorted(type_.fields)


class _Checker:
    def __init__(self, target: int, registry: Mapping[str, Plugin]) -> None:
        self.target = target
        self.registry = registry
        self.problems: list[StructureProblem] = []

    def add(self, code: str, path: Path, message: str, at_key: bool = False, suggestion: str | None = None) -> None:
        self.problems.append(StructureProblem(code, path, message, at_key, suggestion))

    def value(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> None:
        """Check ``value`` against ``type_`` as Go's JSON decoding would (and everything nested in it)."""
        if value is None or type_.kind == Kind.ANY:
            return  # JSON null decodes to the zero value
        if _BY_KIND[type_.kind](self, value, type_, path, where, strict) is False:
            self.add("wrong-type", path, f"{_name(path)} must be {_expected(type_)}, got {describe(value)}")

    # One checker per kind of value: True when the value fits, False when its JSON type is wrong (reported by
    # :meth:`value`), None when the type fits but the value does not (reported here).

    def _integer(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> bool | None:
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # YAML 5.0 reaches Go's decoder as JSON 5 (sigs.k8s.io/yaml)
        if not isinstance(value, int) or isinstance(value, bool):
            return False
        if type_.bounds and not type_.bounds[0] <= value <= type_.bounds[1]:
            negative = type_.bounds[0] == 0 and value < 0
            reason = "cannot be negative" if negative else f"is out of range for {type_.name}"
            self.add("wrong-type", path, f"{_name(path)} {reason} (got {value})")
            return None
        return True

    def _number(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> bool | None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            self.add("wrong-type", path, f"{_name(path)} must be a finite number (got {value})")
            return None
        return True

    def _duration(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> bool | None:
        if not isinstance(value, str):
            return False
        if not _DURATION().fullmatch(value):
            hint = "(use units such as 30s, 5m, 1h)"
            self.add("wrong-type", path, f'{_name(path)}: invalid duration "{value}" {hint}')
            return None
        return True

    def _list(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> bool:
        if not isinstance(value, list):
            return False
        assert type_.item is not None
        for index, item in enumerate(value):
            self.value(item, type_.item, (*path, index), where, strict)
        return True

    def _map(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> bool:
        if not isinstance(value, dict):
            return False
        assert type_.item is not None
        for key, item in value.items():
            self.value(item, type_.item, (*path, key), where, strict)
        return True

    def _struct(self, value: Any, type_: Type, path: Path, where: str, strict: bool) -> bool:
        if not isinstance(value, dict):
            return False
        self.struct(value, type_, path, where, strict or type_.strict)
        return True

    def struct(self, value: dict[str, Any], type_: Type, path: Path, where: str, strict: bool) -> None:
        for key, item in value.items():
            key = str(key)
            field = type_.fields.get(key)
            if field is None:
                self.unknown(key, type_, (*path, key), where, strict)
                continue
            if not field.exists_in(self.target):
                if field.since > self.target:
                    when = f"was added in descheduler {versions.render(field.since)}"
                else:
                    assert field.until is not None
                    when = f"was removed in descheduler {versions.render(field.until + 1)}"
                self.add(
                    "version",
                    (*path, key),
                    f'{where}field "{key}" {when}; the target release {versions.render(self.target)} '
                    + ("fails to decode it" if strict else "silently ignores it"),
                    at_key=True,
                )
                continue
            if path == () and key == "profiles" and isinstance(item, list):
                self.profiles(item)
                continue
            self.value(item, field.type, (*path, key), where, strict)

    def unknown(self, key: str, type_: Type, path: Path, where: str, strict: bool) -> None:
        suggestion = closest(key, _all_versions_fields(type_))
        hint = f'; did you mean "{suggestion}"?' if suggestion else ""
        if suggestion and suggestion.lower() == key.lower():
            hint += " (keys are case-sensitive)"
        effect = (
            f'upstream fails to decode it (strict decoding error: unknown field "{_dotted(path, where)}")'
            if strict
            else "upstream silently ignores it"
        )
        self.add("unknown-key", path, f'{where}unknown field "{key}": {effect}{hint}', True, suggestion)

    def profiles(self, profiles: list[Any]) -> None:
        profile_type = POLICY_V1ALPHA2.fields["profiles"].type.item
        assert profile_type is not None
        for index, profile in enumerate(profiles):
            path: Path = ("profiles", index)
            self.value(profile, profile_type, path, "", False)
            if not isinstance(profile, dict) or not isinstance(profile.get("pluginConfig"), list):
                continue
            for entry_index, entry in enumerate(profile["pluginConfig"]):
                if not isinstance(entry, dict):
                    continue
                name = entry.get("name")
                args = entry.get("args")
                plugin = self.registry.get(name) if isinstance(name, str) else None
                if plugin is not None and args is not None:
                    self.value(args, plugin.args, (*path, "pluginConfig", entry_index, "args"), f"{name} args: ", True)


def _is(kind: type) -> Callable[..., bool]:
    """A checker for a scalar kind that only has to be an instance of ``kind``."""

    def check(checker: _Checker, value: Any, *_: Any) -> bool:
        return isinstance(value, kind)

    return check


_BY_KIND: dict[str, Callable[..., bool | None]] = {
    Kind.STRING: _is(str),
    Kind.BOOL: _is(bool),
    Kind.INT: _Checker._integer,
    Kind.NUMBER: _Checker._number,
    Kind.DURATION: _Checker._duration,
    Kind.LIST: _Checker._list,
    Kind.MAP: _Checker._map,
    Kind.STRUCT: _Checker._struct,
}


def _name(path: Path) -> str:
    if not path:
        return "the document"
    last = path[-1]
    return f'"{last}"' if isinstance(last, str) else f"item {last} of {_name(path[:-1])}"


def _dotted(path: Path, where: str) -> str:
    """Go's strict-decoding path: the keys after ``args``, dotted, without list indexes."""
    if "args" not in path:
        return str(path[-1])
    tail = path[path.index("args") + 1 :]
    return ".".join(str(part) for part in tail if isinstance(part, str))


def check_structure(
    policy: dict[str, Any], target: int, v1alpha1: bool = False, registry: Mapping[str, Plugin] = REGISTRY
) -> list[StructureProblem]:
    """Every structural problem of ``policy`` for the ``target`` release (a minor number), the args of the plugins
    of ``registry`` checked against their types."""
    checker = _Checker(target, registry)
    if v1alpha1:
        checker.struct(policy, POLICY_V1ALPHA1, (), "", False)
    else:
        checker.struct(policy, POLICY_V1ALPHA2, (), "", False)
    return checker.problems


def iter_codes(problems: list[StructureProblem], code: str) -> Iterator[StructureProblem]:
    return (problem for problem in problems if problem.code == code)
