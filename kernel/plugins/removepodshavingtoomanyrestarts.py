"""RemovePodsHavingTooManyRestarts: its validator (docs/policy-api.md#410-removepodshavingtoomanyrestarts).

``states`` exists from v0.28. v0.27-v0.33 stop at the first error and print the allowed states in Go's random set
order (this port prints them sorted, as v0.34+ does); v0.34 on aggregate all errors.
"""

from collections.abc import Mapping
from typing import Any, NamedTuple

from desched.api.types import (
    BOOL,
    INT32_T,
    LABEL_SELECTOR_FIELD,
    NAMESPACES_FIELD,
    STRINGS,
    args_struct,
    field,
)
from desched.plugins.base import Namespaces, Plugin, flag, namespaced, selector, texts, whole
from desched.validation.core import ArgError, integer, strings
from desched.validation.gofmt import go_list
from desched.validation.shared import first_only, label_selector_rule, namespaces_rule
from desched.validation.vocab import too_many_restarts_states

__all__ = ["validate"]


def validate(args: dict[Any, Any], target: int) -> list[ArgError]:
    """``ValidateRemovePodsHavingTooManyRestartsArgs`` at release ``target``."""
    errors = [error for error in (namespaces_rule(args), label_selector_rule(args, target)) if error is not None]
    if (integer(args.get("podRestartThreshold")) or 0) < 1:
        errors.append(ArgError("invalid PodsHavingTooManyRestarts threshold", ("podRestartThreshold",)))
    if target >= 28:
        allowed = too_many_restarts_states(target)
        rejected = [index for index, state in strings(args.get("states")) if state not in allowed]
        if rejected:
            errors.append(ArgError(f"states must be one of {go_list(allowed)}", ("states", rejected[0])))
    return first_only(errors, target, aggregated_since=34)


#: ``RemovePodsHavingTooManyRestartsArgs`` as upstream decodes it (strictly).
ARGS = args_struct(
    "RemovePodsHavingTooManyRestartsArgs",
    namespaces=NAMESPACES_FIELD,
    labelSelector=LABEL_SELECTOR_FIELD,
    podRestartThreshold=field(INT32_T, "Evict pods with at least this many restarts."),
    includingInitContainers=field(BOOL, "Count init container restarts too."),
    states=field(STRINGS, "Running and/or CrashLoopBackOff.", 28),
)


class RemovePodsHavingTooManyRestartsArgs(NamedTuple):
    """``RemovePodsHavingTooManyRestartsArgs`` as upstream reads it."""

    namespaces: Namespaces
    label_selector: Mapping[str, Any] | None
    pod_restart_threshold: int
    including_init_containers: bool
    states: tuple[str, ...]

    @classmethod
    def decode(cls, args: Mapping[str, Any]) -> "RemovePodsHavingTooManyRestartsArgs":
        return cls(
            Namespaces.decode(args.get("namespaces")),
            selector(args.get("labelSelector")),
            whole(args.get("podRestartThreshold")) or 0,
            flag(args.get("includingInitContainers")),
            texts(args.get("states")),
        )


PLUGINS = (
    Plugin(
        "RemovePodsHavingTooManyRestarts",
        ("deschedule",),
        ARGS,
        validate,
        decode=RemovePodsHavingTooManyRestartsArgs.decode,
        scope=namespaced,
    ),
)
