"""RemovePodsViolatingNodeTaints: its validator (docs/policy-api.md#48-removepodsviolatingnodetaints).

``includedTaints`` exists from v0.30, and with it the rule that forbids both taint lists at once. v0.27-v0.33 stop at
the first error; v0.34 on aggregate them.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    STRINGS,
    args_struct,
    field,
)
from desched.plugins.base import Namespaces, Plugin, flag, namespaced, selector, texts
from desched.validation.core import ArgError, length
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemovePodsViolatingNodeTaintsArgs`` at release ``target``."""
    errors = [error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None]
    if target >= 30 and length(args.get("excludedTaints")) > 0 and length(args.get("includedTaints")) > 0:
        errors.append(ArgError("either includedTaints or excludedTaints can be set, but not both", ("includedTaints",)))
    return first_only(errors, target, aggregated_since=34)


#: ``RemovePodsViolatingNodeTaintsArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemovePodsViolatingNodeTaintsArgs",
    namespaces=NAMESPACES_FIELD,
    labelSelector=LABEL_SELECTOR_FIELD,
    includePreferNoSchedule=field(BOOL, "Also consider PreferNoSchedule taints."),
    excludedTaints=field(STRINGS, "Taints (key or key=value) to ignore."),
    includedTaints=field(STRINGS, "Only these taints (key or key=value) are considered.", 30),
)


class RemovePodsViolatingNodeTaintsArgs(NamedTuple):
    """``RemovePodsViolatingNodeTaintsArgs`` as upstream reads it; ``included_taints`` is ``None`` when absent (every
    taint counts), which differs from an empty list (none does)."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None
    include_prefer_no_schedule: bool
    excluded_taints: tuple[str, ...]
    included_taints: tuple[str, ...] | None

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemovePodsViolatingNodeTaintsArgs":
        included = args.get("includedTaints")
        return cls(
            Namespaces.decode(args.get("namespaces")),
            selector(args.get("labelSelector")),
            flag(args.get("includePreferNoSchedule")),
            texts(args.get("excludedTaints")),
            None if included is None else texts(included),
        )


PLUGINS = (
    Plugin(
        "RemovePodsViolatingNodeTaints",
        ("deschedule",),
        ARGS,
        validate,
        decode=RemovePodsViolatingNodeTaintsArgs.decode,
        scope=namespaced,
    ),
)
