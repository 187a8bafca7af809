"""RemovePodsViolatingInterPodAntiAffinity: its validator
(docs/policy-api.md#46-removepodsviolatinginterpodantiaffinity): namespaces and labelSelector rules.

v0.27-v0.33 stop at the first error; v0.34 on aggregate both.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    args_struct,
)
from desched.plugins.base import Namespaces, Plugin, namespaced, selector
from desched.validation.core import ArgError
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemovePodsViolatingInterPodAntiAffinityArgs`` at release ``target``."""
    errors = [error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None]
    return first_only(errors, target, aggregated_since=34)


#: ``RemovePodsViolatingInterPodAntiAffinityArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemovePodsViolatingInterPodAntiAffinityArgs", namespaces=NAMESPACES_FIELD, labelSelector=LABEL_SELECTOR_FIELD
)


class RemovePodsViolatingInterPodAntiAffinityArgs(NamedTuple):
    """``RemovePodsViolatingInterPodAntiAffinityArgs`` as upstream reads it."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemovePodsViolatingInterPodAntiAffinityArgs":
        return cls(Namespaces.decode(args.get("namespaces")), selector(args.get("labelSelector")))


PLUGINS = (
    Plugin(
        "RemovePodsViolatingInterPodAntiAffinity",
        ("deschedule",),
        ARGS,
        validate,
        decode=RemovePodsViolatingInterPodAntiAffinityArgs.decode,
        scope=namespaced,
    ),
)
