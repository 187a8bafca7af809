"""RemovePodsViolatingNodeAffinity: its validator (docs/policy-api.md#47-removepodsviolatingnodeaffinity).

``nodeAffinityType`` must be non-empty; its values are not checked upstream (see ``vocab.NODE_AFFINITY_TYPES``).
v0.27-v0.33 stop at the first error; v0.34 on aggregate them.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    STRINGS,
    args_struct,
    field,
)
from desched.plugins.base import Namespaces, Plugin, namespaced, selector, texts
from desched.validation.core import ArgError, length
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemovePodsViolatingNodeAffinityArgs`` at release ``target``."""
    errors: list[ArgError] = []
    if length(args.get("nodeAffinityType")) == 0:
        errors.append(ArgError("nodeAffinityType needs to be set", ("nodeAffinityType",)))
    errors.extend(error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None)
    return first_only(errors, target, aggregated_since=34)


#: ``RemovePodsViolatingNodeAffinityArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemovePodsViolatingNodeAffinityArgs",
    namespaces=NAMESPACES_FIELD,
    labelSelector=LABEL_SELECTOR_FIELD,
    nodeAffinityType=field(STRINGS, "requiredDuringSchedulingIgnoredDuringExecution and/or the preferred form."),
)


class RemovePodsViolatingNodeAffinityArgs(NamedTuple):
    """``RemovePodsViolatingNodeAffinityArgs`` as upstream reads it."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None
    node_affinity_type: tuple[str, ...]

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemovePodsViolatingNodeAffinityArgs":
        return cls(
            Namespaces.decode(args.get("namespaces")),
            selector(args.get("labelSelector")),
            texts(args.get("nodeAffinityType")),
        )


PLUGINS = (
    Plugin(
        "RemovePodsViolatingNodeAffinity",
        ("deschedule",),
        ARGS,
        validate,
        decode=RemovePodsViolatingNodeAffinityArgs.decode,
        scope=namespaced,
    ),
)
