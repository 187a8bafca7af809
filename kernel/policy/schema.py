"""Published JSON Schemas (draft 2020-12) for DeschedulerPolicy, generated from :mod:`desched.api.spec`.

:func:`policy_schema` walks the spec for one descheduler release and API version, keeping only the fields that exist
in that release, so a schema tells an editor exactly what the structural checker
(:mod:`desched.policy.structure`) will say: unknown keys are rejected everywhere (``additionalProperties: false``,
strict or not, as the linter flags them), JSON types and integer ranges follow the Go types upstream decodes into,
and every value may be ``null`` (JSON null decodes to Go's zero value), written consistently as
``"type": [<kind>, "null"]``. Plugin args are checked per ``pluginConfig[].name`` with ``allOf``/``if``/``then``.

With ``semantic=True`` (what is published) the schema also carries the small vocabularies and ranges that upstream
validators check (docs/policy-api.md#4-the-plugins): plugin and strategy names, PodLifeTime states for the release,
and so on. With ``semantic=False`` it is purely structural, which is what the tests compare with the structural
checker.

``python -m desched.policy.schema --out schemas`` writes every published file; ``--check`` only compares. Output is
deterministic (``json.dumps(indent=2, sort_keys=True)`` plus a newline, ASCII only). Nothing here imports
``jsonschema``: the generator must stay on the light lint path.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from desched import versions
from desched.api.spec import POLICY_V1ALPHA1, POLICY_V1ALPHA2
from desched.api.types import Field, Kind, Type
from desched.plugins import REGISTRY
from desched.tree import Json
from desched.validation import vocab
from desched.validation.vocab import podlifetime_states

__all__ = [
    "API_VERSIONS",
    "BASE_URL",
    "DRAFT",
    "GO_DURATION_PATTERN",
    "main",
    "outputs",
    "podlifetime_states",
    "policy_schema",
    "render",
    "schema_id",
    "schema_path",
]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_URL = "https://desched.dev/schemas"
API_VERSIONS = ("v1alpha2", "v1alpha1")
KIND = "DeschedulerPolicy"

# Go's time.ParseDuration, as metav1.Duration decodes it: an optional sign, then "0" or one or more decimal numbers
# each followed by a unit. ASCII digits only ([0-9], not \d) so that the pattern means the same in ECMA-262 and Python.
GO_DURATION_PATTERN = "^[-+]?(?:0|(?:(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)$"


# --- vocabularies that upstream validators check: the same lists the validators use (desched.validation.vocab) ------

_NO_EVICTION_POLICIES = (
    "",
    *vocab.NO_EVICTION_POLICIES,
)  # docs/policy-api.md#42-defaultevictor rule 2: "" is the default
# docs/policy-api.md#42-defaultevictor: a resolved priority threshold above this fails the load
_SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
_PERCENT: Json = {"minimum": 0, "maximum": 100}  # docs/policy-api.md#41-shared-argument-types ResourceThresholds


def _enum(values: Iterable[str]) -> list[str | None]:
    """An ``enum`` for a nullable string: null decodes to "", so it is allowed exactly when "" is."""
    allowed: list[str | None] = list(values)
    if "" in allowed:
        allowed.append(None)
    return allowed


# Where semantic keywords go: (struct type name, field name, part of the field schema, keywords for a release). The
# part is "self" (the field's own schema), "items" (list items) or "values" (map values).
_SEMANTIC: tuple[tuple[str, str, str, Callable[[int], Json]], ...] = (
    ("PodLifeTimeArgs", "states", "items", lambda t: {"enum": _enum(podlifetime_states(t))}),
    ("PodLifeTime", "states", "items", lambda t: {"enum": _enum(podlifetime_states(t))}),  # v1alpha1
    ("PodLifeTime", "podStatusPhases", "items", lambda t: {"enum": _enum(podlifetime_states(t))}),  # merged into states
    (
        "RemovePodsViolatingTopologySpreadConstraintArgs",
        "constraints",
        "items",
        lambda t: {"enum": _enum(vocab.TOPOLOGY_CONSTRAINTS)},
    ),
    (
        "RemovePodsHavingTooManyRestartsArgs",
        "states",
        "items",
        lambda t: {"enum": _enum(vocab.TOO_MANY_RESTARTS_STATES)},
    ),
    ("RemovePodsHavingTooManyRestartsArgs", "podRestartThreshold", "self", lambda t: {"minimum": 1}),
    ("PodsHavingTooManyRestarts", "podRestartThreshold", "self", lambda t: {"minimum": 1}),  # v1alpha1
    ("HighNodeUtilizationArgs", "evictionModes", "items", lambda t: {"enum": _enum(vocab.EVICTION_MODES)}),
    ("DefaultEvictorArgs", "noEvictionPolicy", "self", lambda t: {"enum": _enum(_NO_EVICTION_POLICIES)}),
    ("PodProtections", "extraEnabled", "items", lambda t: {"enum": _enum(vocab.EXTRA_POD_PROTECTIONS)}),
    ("PodProtections", "extraEnabled", "self", lambda t: {"uniqueItems": True}),  # rule 7
    ("PodProtections", "defaultDisabled", "items", lambda t: {"enum": _enum(vocab.DEFAULT_POD_PROTECTIONS)}),
    ("PodProtections", "defaultDisabled", "self", lambda t: {"uniqueItems": True}),  # rule 6
    (
        "RemovePodsViolatingNodeAffinityArgs",
        "nodeAffinityType",
        "items",
        lambda t: {"enum": _enum(vocab.NODE_AFFINITY_TYPES)},
    ),
    (
        "StrategyParameters",
        "nodeAffinityType",
        "items",
        lambda t: {"enum": _enum(vocab.NODE_AFFINITY_TYPES)},
    ),  # v1alpha1
    ("PriorityThreshold", "value", "self", lambda t: {"maximum": _SYSTEM_CRITICAL_PRIORITY}),
    ("StrategyParameters", "thresholdPriority", "self", lambda t: {"maximum": _SYSTEM_CRITICAL_PRIORITY}),  # v1alpha1
    ("LowNodeUtilizationArgs", "thresholds", "values", lambda t: dict(_PERCENT)),
    ("LowNodeUtilizationArgs", "targetThresholds", "values", lambda t: dict(_PERCENT)),
    ("HighNodeUtilizationArgs", "thresholds", "values", lambda t: dict(_PERCENT)),
    ("NodeResourceUtilizationThresholds", "thresholds", "values", lambda t: dict(_PERCENT)),  # v1alpha1
    ("NodeResourceUtilizationThresholds", "targetThresholds", "values", lambda t: dict(_PERCENT)),  # v1alpha1
)


def _item(type_: Type) -> Type:
    assert type_.item is not None, type_
    return type_.item


# The pluginConfig entry type: its args are checked per plugin name.
_PLUGIN_CONFIG = _item(_item(POLICY_V1ALPHA2.fields["profiles"].type).fields["pluginConfig"].type)
# v1alpha1 strategy names are the plugin names without the evictor (docs/policy-api.md#62-strategy-entries).
_STRATEGIES = tuple(name for name in REGISTRY if name != "DefaultEvictor")


def _nullable(kind: str) -> Json:
    return {"type": [kind, "null"]}


def _availability(field: Field) -> str:
    """ "(descheduler v0.33+)" for fields younger than the oldest supported release, "" otherwise."""
    if field.until is not None:
        first = versions.render(field.since)
        if field.since == field.until:
            return f"(descheduler {first} only)"
        return f"(descheduler {first} to {versions.render(field.until)})"
    return f"(descheduler {versions.render(field.since)}+)" if field.since > versions.OLDEST else ""


class _Builder:
    """Walks spec types for one release, collecting named struct types into ``$defs``."""

    def __init__(self, target: int, semantic: bool) -> None:
        self.target = target
        self.semantic = semantic
        self.defs: dict[str, Json] = {}
        self.named: dict[str, Type] = {}

    def value(self, type_: Type) -> Json:
        kind = type_.kind
        if kind == Kind.ANY:
            return {}
        if kind in (Kind.STRING, Kind.BOOL, Kind.NUMBER):
            return _nullable(kind)
        if kind == Kind.INT:
            schema = _nullable("integer")
            if type_.bounds is not None:
                schema["minimum"], schema["maximum"] = type_.bounds
            return schema
        if kind == Kind.DURATION:
            return {**_nullable("string"), "pattern": GO_DURATION_PATTERN}
        if kind == Kind.LIST:
            return {**_nullable("array"), "items": self.value(_item(type_))}
        if kind == Kind.MAP:
            return {**_nullable("object"), "additionalProperties": self.value(_item(type_))}
        if kind == Kind.STRUCT:
            return self.ref(type_) if type_.name else self.struct(type_)
        raise ValueError(f"unknown kind {kind!r} in the policy spec")

    def ref(self, type_: Type) -> Json:
        name = type_.name
        known = self.named.get(name)
        if known is None:
            self.named[name] = type_
            self.defs[name] = self.struct(type_)
        elif known is not type_ and known != type_:
            raise ValueError(f"two different struct types are named {name!r}; $defs needs unique names")
        return {"$ref": f"#/$defs/{name}"}

    def struct(self, type_: Type, nullable: bool = True) -> Json:
        properties: Json = {}
        for key, field in type_.fields.items():
            if field.exists_in(self.target):
                properties[key] = self.field(type_, key, field)
        schema: Json = {
            **(_nullable("object") if nullable else {"type": "object"}),
            "additionalProperties": False,
            "properties": properties,
        }
        if type_.name:
            schema["title"] = type_.name
        if type_.description:
            schema["description"] = type_.description
        if type_ is _PLUGIN_CONFIG:
            self.plugin_config(schema)
        return schema

    def field(self, owner: Type, key: str, field: Field) -> Json:
        schema = self.value(field.type)
        words = [text for text in (field.description, field.type.description, _availability(field)) if text]
        if words:
            schema["description"] = " ".join(words)
        if self.semantic:
            for struct_name, field_name, part, keywords in _SEMANTIC:
                if struct_name == owner.name and field_name == key:
                    target = {
                        "self": schema,
                        "items": schema.get("items"),
                        "values": schema.get("additionalProperties"),
                    }
                    sub = target[part]
                    if not isinstance(sub, dict):
                        raise ValueError(f"{owner.name}.{key} has no {part} to constrain")
                    sub.update(keywords(self.target))
        return schema

    def plugin_config(self, schema: Json) -> None:
        """Plugin args are decoded strictly into the args type of the entry's plugin
        (docs/policy-api.md#13-decoding-strictness)."""
        if self.semantic:
            schema["properties"]["name"]["enum"] = _enum(REGISTRY)
        schema["allOf"] = [
            {
                "if": {"properties": {"name": {"const": plugin}}, "required": ["name"]},
                "then": {"properties": {"args": self.ref(args)}},
            }
            for plugin, args in ((name, plugin.args) for name, plugin in REGISTRY.items())
        ]


def schema_path(target: int, api_version: str = "v1alpha2") -> str:
    """Path of a release's schema inside the schemas directory, such as ``v0.36/deschedulerpolicy-v1alpha2.json``."""
    return f"{versions.render(target)}/deschedulerpolicy-{api_version}.json"


def schema_id(target: int, api_version: str = "v1alpha2") -> str:
    return f"{BASE_URL}/{schema_path(target, api_version)}"


def policy_schema(target: int, api_version: str = "v1alpha2", semantic: bool = True) -> Json:
    """The JSON Schema of a DeschedulerPolicy for descheduler ``v0.<target>`` and ``api_version``.

    ``semantic=False`` leaves out what is not structure: the vocabularies and ranges that upstream validators check
    (and the ``name`` enum of plugins, whose unregistered names the structural checker leaves to another rule).
    """
    if not versions.OLDEST <= target <= versions.NEWEST:
        raise ValueError(
            f"unsupported descheduler release v0.{target}: supported are "
            f"{versions.render(versions.OLDEST)} to {versions.render(versions.NEWEST)}"
        )
    if api_version == "v1alpha2":
        spec = POLICY_V1ALPHA2
    elif api_version == "v1alpha1":
        if target >= versions.V1ALPHA1_REMOVED:
            raise ValueError(f"descheduler/v1alpha1 was removed in {versions.render(versions.V1ALPHA1_REMOVED)}")
        spec = POLICY_V1ALPHA1
    else:
        raise ValueError(f"unknown policy API version {api_version!r}: expected one of {', '.join(API_VERSIONS)}")
    builder = _Builder(target, semantic)
    schema = builder.struct(spec, nullable=False)
    properties = schema["properties"]
    properties["apiVersion"] = {"const": f"descheduler/{api_version}", "description": "The policy API version."}
    properties["kind"] = {"const": KIND, "description": "The object kind."}
    if semantic and api_version == "v1alpha1":
        properties["strategies"]["propertyNames"] = {"enum": list(_STRATEGIES)}
    release = versions.render(target)
    flavour = "" if semantic else " Structural only: no enums or value ranges."
    schema.pop("title", None)
    schema.update(
        {
            "$schema": DRAFT,
            "$id": schema_id(target, api_version) if semantic else schema_id(target, f"{api_version}-structural"),
            "title": f"DeschedulerPolicy descheduler/{api_version} for descheduler {release}",
            "description": (
                f"A kubernetes-sigs/descheduler policy file (apiVersion descheduler/{api_version}) as descheduler "
                f"{release} decodes it. Unknown keys are rejected everywhere, including where upstream silently "
                "drops them. Generated by `python -m desched.policy.schema` from kernel/api/spec.py; do not edit."
                + flavour
            ),
            "required": ["apiVersion", "kind"],
        }
    )
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema


def render(schema: Json) -> str:
    """The published text of a schema: stable key order, two-space indent, ASCII, final newline."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def outputs() -> dict[str, str]:
    """Every published file, relative to the schemas directory, with its text."""
    files: dict[str, str] = {}
    for target in range(versions.OLDEST, versions.NEWEST + 1):
        files[schema_path(target)] = render(policy_schema(target))
        if target < versions.V1ALPHA1_REMOVED:
            files[schema_path(target, "v1alpha1")] = render(policy_schema(target, "v1alpha1"))
    files["deschedulerpolicy-v1alpha2.json"] = files[schema_path(versions.NEWEST)]
    return dict(sorted(files.items()))


def _published(out: Path) -> set[str]:
    """Generated-looking files already in ``out`` (so that schemas of dropped releases are removed too)."""
    return {path.relative_to(out).as_posix() for path in out.glob("**/deschedulerpolicy-*.json")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m desched.policy.schema",
        description="Write the DeschedulerPolicy JSON Schemas generated from the spec.",
    )
    parser.add_argument("--out", type=Path, default=Path("schemas"), help="schemas directory (default: schemas)")
    parser.add_argument("--check", action="store_true", help="only report files that differ; exit 1 if any")
    args = parser.parse_args(argv)
    out: Path = args.out
    files = outputs()
    stale = sorted(_published(out) - set(files)) if out.is_dir() else []
    changed = [name for name, text in files.items() if _read(out / name) != text]
    if args.check:
        for name in changed:
            print(f"{out / name}: out of date", file=sys.stderr)
        for name in stale:
            print(f"{out / name}: not generated any more", file=sys.stderr)
        if changed or stale:
            print("run `python -m desched.policy.schema --out schemas` to regenerate", file=sys.stderr)
            return 1
        return 0
    for name in changed:
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[name].encode("ascii"))
    for name in stale:
        (out / name).unlink()
    print(f"{out}: {len(files)} schemas, {len(changed)} written, {len(stale)} removed")
    return 0


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


if __name__ == "__main__":
    sys.exit(main())
